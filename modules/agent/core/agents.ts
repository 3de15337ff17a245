// core/agents: the agent manager. It owns the root core and up to MAX_SUBAGENTS
// further cores, each created for one task and freed when that task ends. A
// subagent reports back through the root's queue, as a USER_INTERRUPT request
// in the parent's session wrapping `<subagent_completed agent_id="...">`, so the
// root core needs no special case for it (seed 000 §9.2).
//
// Policy: a subagent's requests have source channel "subagent", which caps/policy
// answers with role subagent (no restricted tools, no spawn_subagent); the
// manager also wraps the subagent's callCap with isRestricted (when given), so a
// registry built without that policy still cannot run them. A request from a
// subagent cannot spawn another one. The spawn_subagent tool is caps/agents.
//
// Known limits: subagents run session-less (session_id ""): nothing of theirs is
// persisted, and a reboot forgets a task in progress (its parent gets no report).
// Cancelling the parent request does not cancel its subagents (cancel(agentId)
// does); their reports still arrive. A parent without a session gets the report
// as a session-less request, without the conversation it came from.
import { MAX_SUBAGENTS, SUBAGENT_REPORT_MAX_CHARS, SUBAGENT_REPORT_SUBMIT_TIMEOUT_MS } from "budgets";
import { Core, targetOf, type CoreOptions, type CoreStatus } from "core/core";
import { Channel, RequestFlag, type AgentRequest, type CallCap, type CompletionSummary } from "core/types";
import { messageOf } from "util/errors";
import { clip } from "util/text";
import { log } from "util/log";

export interface AgentManagerOptions {
	/** The root core (agentId defaults to "root"). */
	root: Omit<CoreOptions, "agentId"> & { agentId?: string };
	/**
	 * What every subagent core is made of (the manager sets agentId "sub-<n>").
	 * Give it providers without session history; its callCap is wrapped with
	 * isRestricted. Without this option spawn() refuses.
	 */
	subagent?: Omit<CoreOptions, "agentId">;
	/** Names of tools a subagent may never run (Capability.restricted). */
	isRestricted?: (toolName: string) => boolean;
	/** Warnings (default: the root's log, else trace). */
	log?: (line: string) => void;
}

/** Wraps callCap so that restricted tools answer with an is_error result instead of running. */
export function refuseRestricted(callCap: CallCap, isRestricted: (toolName: string) => boolean): CallCap {
	return (call, context) => {
		if (isRestricted(call.name)) return { content: `the tool ${call.name} is not available to subagents`, is_error: true };
		return callCap(call, context);
	};
}

/** The user text a subagent's result reaches the root session with. */
export function subagentReport(agentId: string, summary: Pick<CompletionSummary, "ok" | "final_text" | "error">): string {
	const body = summary.ok ? summary.final_text || "(the subagent finished without a text)" : `the subagent failed: ${summary.error ?? "unknown error"}`;
	const clipped = clip(body, SUBAGENT_REPORT_MAX_CHARS);
	return `<subagent_completed agent_id="${agentId}">\n${clipped}\n</subagent_completed>`;
}

export class AgentManager {
	readonly root: Core;
	readonly #options: AgentManagerOptions;
	readonly #subagents = new Map<string, Core>();
	readonly #log: (line: string) => void;
	#spawned = 0;

	constructor(options: AgentManagerOptions) {
		this.#options = options;
		this.#log = options.log ?? options.root.log ?? log;
		this.root = new Core({ ...options.root, agentId: options.root.agentId ?? "root" });
	}

	start(): void {
		this.root.start();
	}

	/** Stops every core (requests in flight end cancelled). */
	stop(): void {
		for (const core of this.#subagents.values()) core.stop();
		this.#subagents.clear();
		this.root.stop();
	}

	/** The running subagents. */
	subagents(): CoreStatus[] {
		return [...this.#subagents.values()].map((core) => core.status());
	}

	/** Cancels a subagent's task (it still reports back, with "request cancelled"). */
	cancel(agentId: string): boolean {
		return this.#subagents.get(agentId)?.cancel(0) ?? false;
	}

	/**
	 * Starts a subagent on task for the parent request and resolves with its agent
	 * id. Rejects with a sentence when a subagent asks, when all MAX_SUBAGENTS slots
	 * are taken, or when subagents are not set up.
	 */
	async spawn(task: string, parent: AgentRequest): Promise<string> {
		const template = this.#options.subagent;
		if (!template) throw new Error("subagents are not set up on this firmware; do the task yourself");
		if (parent.source.channel === Channel.SUBAGENT) throw new Error("a subagent cannot start another subagent; do the task yourself");
		if (typeof task !== "string" || !task.trim()) throw new Error("the subagent needs a task: say what it should do");
		if (this.#subagents.size >= MAX_SUBAGENTS) {
			throw new Error(`all ${MAX_SUBAGENTS} subagents are busy; wait for one to report back, then try again`);
		}
		const agentId = `sub-${++this.#spawned}`;
		const isRestricted = this.#options.isRestricted;
		const core = new Core({
			...template,
			agentId,
			callCap: isRestricted ? refuseRestricted(template.callCap, isRestricted) : template.callCap,
		});
		core.addCompletionObserver((summary) => this.#report(agentId, core, parent, summary));
		this.#subagents.set(agentId, core);
		core.start();
		try {
			await core.submit({
				request_id: 0,
				flags: RequestFlag.SKIP_RESPONSE_QUEUE,
				session_id: "",
				user_text: task,
				source: { channel: Channel.SUBAGENT, chat_id: agentId, sender_id: parent.source.sender_id, message_id: "", cap: "subagent" },
			});
		} catch (error) {
			this.#subagents.delete(agentId);
			core.stop();
			throw error;
		}
		return agentId;
	}

	/** A subagent finished: free its slot, then hand its result to the root session. */
	#report(agentId: string, core: Core, parent: AgentRequest, summary: CompletionSummary): void {
		this.#subagents.delete(agentId);
		// After the observer returns: the core is still finishing this request.
		Promise.resolve().then(() => core.stop());
		const report: AgentRequest = {
			request_id: 0,
			flags: RequestFlag.USER_INTERRUPT | RequestFlag.SKIP_RESPONSE_QUEUE | RequestFlag.PUBLISH_OUT_MESSAGE |
				(parent.flags & RequestFlag.PUBLISH_STAGE_MESSAGE),
			session_id: parent.session_id,
			user_text: subagentReport(agentId, summary),
			source: { channel: parent.source.channel, chat_id: parent.source.chat_id, sender_id: agentId, message_id: "", cap: "subagent" },
			target: targetOf(parent),
		};
		this.root.submit(report, SUBAGENT_REPORT_SUBMIT_TIMEOUT_MS).catch((error) => {
			this.#log(`agents: the report of ${agentId} could not reach the root agent: ${messageOf(error)}`);
		});
	}
}
