// router/local_port: the AgentPort (router/types) over an agent core running in
// the same machine. It is the one adapter between the channels and today's core
// until the agent port (modules/agent, the core in its own Worker) lands; the
// port's client then satisfies AgentPort itself and this file goes.
//
// It resolves a request without a session to the chat's current session (what
// the agent machine does behind the port), hands the submitter the events it
// asked for (one core listener, dispatching by request id; a request's entry
// goes at its agent_end, or, for an interrupt that joined another request and so
// never starts, when LOCAL_PORT_WATCHES_MAX newer ones push it out), fans the
// core's outbound events out to listeners, and runs the session commands for a
// chat.
import { LOCAL_PORT_WATCHES_MAX } from "budgets";
import { UsageError, type Command, type Output } from "console/types";
import type { AgentEvent, AgentRequest, EventListener, OutEvent } from "core/types";
import { messageOf } from "util/errors";
import type { AgentPort, ChatRef, CommandResult, PortRequest, SubmitOptions } from "router/types";

/** The parts of the core and the session store the adapter uses. */
export interface LocalAgent {
	submit(request: AgentRequest, timeoutMs: number): Promise<number>;
	cancel(requestId: number): boolean;
	addListener(listener: EventListener): void;
	/** The chat's current session id ("" when there is no session store). */
	sessionOf(chat: ChatRef): string;
	/** The session commands of one chat (store/console's sessionCommands). */
	commandsOf(chat: ChatRef): Command[];
}

export class LocalPort implements AgentPort {
	#agent: LocalAgent;
	#watches = new Map<number, SubmitOptions>();
	// Submits not yet given an id, by source: the core may start one (agent_start) before submit resolves.
	#pending: Array<{ key: string; options: SubmitOptions }> = [];
	#outListeners = new Set<(event: OutEvent) => void>();
	#log: (line: string) => void;

	constructor(agent: LocalAgent, log: (line: string) => void) {
		this.#agent = agent;
		this.#log = log;
		agent.addListener((event) => this.#onEvent(event));
	}

	/** The core's publish hook: every outbound event to every listener. */
	publish(event: OutEvent): void {
		for (const listener of this.#outListeners) {
			try {
				listener(event);
			} catch (error) {
				this.#log(`agent port: an outbound-event listener failed: ${messageOf(error)}`);
			}
		}
	}

	onOut(listener: (event: OutEvent) => void): () => void {
		this.#outListeners.add(listener);
		return () => this.#outListeners.delete(listener);
	}

	async submit(request: PortRequest, options: SubmitOptions): Promise<number> {
		const session = request.session_id ?? this.#agent.sessionOf(request.source);
		const full: AgentRequest = { request_id: 0, flags: request.flags, session_id: session, user_text: request.user_text, source: request.source };
		if (request.target) full.target = request.target;
		if (!options.onEvent || !options.events?.length) return this.#agent.submit(full, options.waitMs);
		const entry = { key: sourceKey(full), options };
		this.#pending.push(entry);
		if (this.#pending.length > LOCAL_PORT_WATCHES_MAX) this.#pending.shift();
		try {
			const id = await this.#agent.submit(full, options.waitMs);
			if (!this.#watches.has(id)) this.#watch(id, options);
			return id;
		} finally {
			const at = this.#pending.indexOf(entry);
			if (at >= 0) this.#pending.splice(at, 1);
		}
	}

	async cancel(requestId: number): Promise<number> {
		return this.#agent.cancel(requestId) ? requestId : 0;
	}

	async command(name: string, args: string, chat: ChatRef): Promise<CommandResult> {
		const command = this.#agent.commandsOf(chat).find((c) => c.name === name);
		if (!command) return { lines: [], error: `the agent has no command "${name}" here` };
		const lines: string[] = [];
		const out: Output = { line: (text) => void lines.push(text) };
		try {
			await command.run(args, out);
			return { lines };
		} catch (error) {
			if (error instanceof UsageError) return { lines, usage: true };
			return { lines, error: messageOf(error) };
		}
	}

	#watch(id: number, options: SubmitOptions): void {
		this.#watches.set(id, options);
		if (this.#watches.size > LOCAL_PORT_WATCHES_MAX) this.#watches.delete(this.#watches.keys().next().value as number);
	}

	#onEvent(event: AgentEvent): void {
		let watch = this.#watches.get(event.request_id);
		if (!watch && event.type === "agent_start") {
			const key = sourceKey(event.request);
			const at = this.#pending.findIndex((p) => p.key === key);
			if (at >= 0) {
				watch = this.#pending.splice(at, 1)[0].options;
				this.#watch(event.request_id, watch);
			}
		}
		if (!watch) return;
		if (event.type === "agent_end") this.#watches.delete(event.request_id);
		if (!watch.events?.includes(event.type)) return;
		try {
			watch.onEvent?.(event);
		} catch (error) {
			this.#log(`agent port: an event listener failed on ${event.type}: ${messageOf(error)}`);
		}
	}
}

function sourceKey(request: AgentRequest): string {
	return `${request.source.channel}\n${request.source.chat_id}\n${request.source.message_id}`;
}
