// core/setup: assembles the agent cores for main.ts (SPEC §1: config -> llm ->
// core -> providers -> tools -> console). It builds the tool registry
// (caps/registry) from the capabilities other areas bring (caps/setup: the
// board's tools, memory, files, scheduler, skills, macros, scripts) plus
// spawn_subagent, puts the tools provider after the other areas' providers, wires the
// optional persistence, gate and outbound hooks, gives the AgentManager a
// subagent profile, and starts the root core. The console reaches the core only
// through the agent port (modules/shared/agent), never through this.
//
// The system prompt starts with CORE_PROMPT: what the firmware lets the agent do
// (tools, delivery, subagent reports), no persona. The persona comes from the
// profile provider (modules/agent/memory), so it is said once and the person can edit it.
// The resulting prompt order: CORE_PROMPT, ## profile, ## memory, (## skills),
// the tool list; the session history; the user message with its volatile block.
//
// Where other areas plug in (all optional, so the firmware runs without them):
// - providers: context providers in prompt order. Stable system-prompt sections
//   first (profile/persona, long-term memory, skills catalogue), then the session
//   history (ProviderFlag.REQUEST_START_ONLY); volatile ones carry ProviderFlag.VOLATILE.
//   The core places each kind where the prompt cache wants it (core/NOTES.md).
// - tools, sources, hooks, visibleGroups: the capability layer (caps/setup).
// - persist, gate: from the session store (modules/agent/store).
// - publish: out_message / agent_stage events (the agent port carries them to
//   the main machine, which prints the console's).
//
// Subagents (AgentManager, up to MAX_SUBAGENTS) share the model, get CORE's
// SUBAGENT_PROMPT and the same registry (their role, subagent, leaves out the
// restricted tools and spawn_subagent: caps/policy), and nothing else: no
// profile, memory or history, no persistence, no gate. Their reports come back to
// the root as requests in the parent's session (core/agents).
import { openKeyValue } from "util/io";
import type { HeapFigures } from "host/platform";
import { AgentManager } from "core/agents";
import { spawnSubagentTool } from "caps/agents";
import { Registry } from "caps/registry";
import type { CapHooks, CapSource, Capability, VisibleGroups } from "caps/types";
import type { Core } from "core/core";
import { heapUsedBytes } from "util/heap";
import { requestIds, type IdStore } from "core/ids";
import { messageOf } from "util/errors";
import type { ChatModel, ContextProvider, OutEvent, Persist, RequestGate } from "core/types";

/**
 * The root agent's framework prompt: the stable start of every prompt (it must
 * not change per request), saying what the firmware expects; no persona.
 */
export const CORE_PROMPT = [
	"You run inside xsclaw, agent firmware on a small board (an ESP32-S3, or its Linux twin), and talk with people over its serial console and chat apps.",
	"- Tools: call the offered tools when a request needs facts from or actions on the board, the time or stored notes; never invent a tool result. A result marked as an error says what failed: tell the person what failed and what they can do about it.",
	"- Delivery: your reply without tool calls is the answer and reaches the person automatically; it may be read on a serial terminal or a phone.",
	"- Subagents: a message wrapped in <subagent_completed agent_id=\"...\"> is the report of a helper you started with spawn_subagent; pass its result on to the person.",
	"- The sections below give your persona and what you know about the user; the end of each user message, after [request context], gives the time and where it came from.",
].join("\n");

/** A subagent's framework prompt: one task, tools, a report for the agent that started it. */
export const SUBAGENT_PROMPT = [
	"You are a subagent inside xsclaw, agent firmware on a small board: another agent gave you one task.",
	"- Do the task with the offered tools; never invent a tool result.",
	"- Your reply without tool calls is your report: it goes back to the agent that started you, not to a person, so make it complete and self-contained, and say what failed if the task could not be done.",
].join("\n");

export interface CoreSetupOptions {
	/** The LLM service (llm/setup's Llm). */
	model: ChatModel;
	firmware: { name: string; version: string; platform: string };
	/** Monotonic milliseconds, and its value when the firmware started. */
	now(): number;
	bootMs: number;
	heap(): HeapFigures;
	/** Wall-clock milliseconds (default Date.now). */
	wallClockMs?(): number;
	/** Warnings and the METRIC line (default util/log: warnings at info, METRIC at debug). */
	log?(line: string): void;
	/** Other areas' context providers, in prompt order (see the note at the top). */
	providers?: ContextProvider[];
	/** The capabilities (caps/setup); names must not clash with spawn_subagent. */
	tools?: Capability[];
	/** Tools that come and go (macros). */
	sources?: CapSource[];
	hooks?: CapHooks[];
	/** Hidden tool groups a session made visible (skills). */
	visibleGroups?: VisibleGroups;
	/** One line per tool call, arguments masked (default: none). */
	toolLog?(line: string): void;
	persist?: Persist;
	gate?: RequestGate;
	/** Outbound events of the root core (out_message, agent_stage). Must not throw. */
	publish?: (event: OutEvent) => void;
	/** Where the root's request ids are reserved (default: the key-value namespace "core"). */
	idStore?: IdStore;
}

const ID_NAMESPACE = "core";

function openIdStore(log: (line: string) => void): IdStore | undefined {
	try {
		return openKeyValue(ID_NAMESPACE);
	} catch (error) {
		log(`core: the key-value namespace "${ID_NAMESPACE}" cannot be opened (${messageOf(error)})`);
		return undefined;
	}
}

export interface CoreSetup {
	/** Owns the root core and the subagents. */
	agents: AgentManager;
	/** The root core: agents.root. */
	core: Core;
	registry: Registry;
}

/** Builds and starts the agent manager and its root core. Throws on a programming error (a clashing tool name, too many providers). */
export function openCore(options: CoreSetupOptions): CoreSetup {
	const wallClockMs = options.wallClockMs ?? (() => Date.now());
	// The spawn tool needs the manager, which needs the toolbox: bound once both exist.
	let manager: AgentManager | undefined;
	const caps: Capability[] = [
		...(options.tools ?? []),
		spawnSubagentTool((task, parent) => {
			if (!manager) throw new Error("the agent is still starting; try again in a moment");
			return manager.spawn(task, parent);
		}),
	];
	const tools = new Registry(caps, { sources: options.sources, hooks: options.hooks, visibleGroups: options.visibleGroups, log: options.toolLog, now: options.now });
	const restricted = new Set(caps.filter((cap) => cap.restricted).map((cap) => cap.definition.function.name));
	const heapBytes = () => heapUsedBytes(options.heap());
	const log = options.log ?? ((line: string) => trace(line + "\n"));
	const shared = { model: options.model, now: options.now, wallNow: wallClockMs, heap: heapBytes, log: options.log };
	const agents = new AgentManager({
		root: {
			...shared,
			agentId: "root",
			systemPrompt: CORE_PROMPT,
			// Unique across reboots: session records name their request.
			nextRequestId: requestIds(options.idStore ?? openIdStore(log), log),
			providers: [...(options.providers ?? []), tools.provider],
			callCap: tools.callCap,
			runsAlone: tools.runsAlone,
			persist: options.persist,
			gate: options.gate,
			publish: options.publish,
		},
		subagent: {
			...shared,
			systemPrompt: SUBAGENT_PROMPT,
			providers: [tools.provider],
			callCap: tools.callCap,
			runsAlone: tools.runsAlone,
		},
		isRestricted: (name) => restricted.has(name),
		log: options.log,
	});
	manager = agents;
	agents.start();
	return { agents, core: agents.root, registry: tools };
}
