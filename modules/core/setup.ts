// core/setup: assembles the root agent core for main.ts (SPEC §1: config -> llm ->
// core -> providers -> tools -> console). It builds the tools table from the
// built-in tools plus those other areas bring, puts the tools provider after the
// other areas' providers, wires the optional persistence and gate hooks, starts
// the core, and returns the console's `ask`/`cancel` commands and `status` line.
//
// Where other areas plug in (all optional, so the firmware runs without them):
// - providers: context providers in prompt order. Stable system-prompt sections
//   first (profile/persona, long-term memory, skills catalogue), then the session
//   history (ProviderFlag.REQUEST_START_ONLY); volatile ones carry ProviderFlag.VOLATILE.
//   The core places each kind where the prompt cache wants it (core/NOTES.md).
// - tools: ToolSpecs of other areas (memory, profile, files, ...) join the table.
// - persist, gate: from the session store (modules/store).
// - session: the console's current session id ("" = none: nothing is persisted).
import type { HeapFigures } from "host/platform";
import type { Command } from "console/types";
import { basicTools } from "core/basic_tools";
import { coreConsole, type AgentConsole } from "core/console";
import { AgentManager } from "core/agents";
import type { Core } from "core/core";
import { toolbox, type ToolPolicy, type Toolbox } from "core/tools";
import type { ChatModel, ContextProvider, Persist, RequestGate, ToolSpec } from "core/types";

/** The persona: the stable start of every prompt, so it must not change per request. */
export const PERSONA = [
	"You are xsclaw, an assistant that lives in a small ESP32-S3 board (or its Linux twin) and talks with people over the serial console and chat apps.",
	"Answer briefly and plainly: your replies may be read on a serial terminal or a phone.",
	"Use your tools when a question needs facts about the board, the time or stored notes; never invent tool results.",
	"When a tool fails, say what failed and what the person can do about it.",
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
	/** The METRIC line and warnings (default trace). */
	log?(line: string): void;
	/** Other areas' context providers, in prompt order (see the note at the top). */
	providers?: ContextProvider[];
	/** Other areas' tools; names must not clash with get_time and system_info. */
	tools?: ToolSpec[];
	/** Default: restricted tools are refused for subagent and cron requests. */
	policy?: ToolPolicy;
	persist?: Persist;
	gate?: RequestGate;
	/** The console's current session id; default: none (""). */
	session?(): string;
	/** The console's chat id in request sources (the session store's console chat). */
	consoleChatId?: string;
}

export interface CoreSetup {
	/** Owns the root core (and, once a spawn tool exists, the subagents). */
	agents: AgentManager;
	/** The root core: agents.root. */
	core: Core;
	toolbox: Toolbox;
	/** `ask` and `cancel`, for the console's table. */
	commands: Command[];
	/** For console/system's `status`. */
	statusLines: Array<() => string>;
}

/** The narrow view of the Core that the console uses (core/console). */
export function consoleView(core: Core): AgentConsole {
	return {
		submit: (request, timeoutMs) => core.submit(request, timeoutMs),
		receiveFor: (id, timeoutMs) => core.receiveFor(id, timeoutMs),
		cancel: (id) => core.cancel(id),
		phase: () => core.phase,
		queueDepth: () => core.queueDepth,
		inFlight: () => core.inFlightId,
		watch(listener) {
			core.addListener(listener);
			return () => core.removeListener(listener);
		},
	};
}

/** Builds and starts the agent manager and its root core. Throws on a programming error (a clashing tool name, too many providers). */
export function openCore(options: CoreSetupOptions): CoreSetup {
	const wallClockMs = options.wallClockMs ?? (() => Date.now());
	const tools = toolbox([
		...basicTools({ wallClockMs, now: options.now, bootMs: options.bootMs, heap: options.heap, firmware: options.firmware }),
		...(options.tools ?? []),
	], options.policy);
	const heapBytes = () => {
		const h = options.heap();
		return h.chunkUsed + h.slotUsed;
	};
	const agents = new AgentManager({
		root: {
			agentId: "root",
			model: options.model,
			systemPrompt: PERSONA,
			providers: [...(options.providers ?? []), tools.provider],
			callCap: tools.callCap,
			runsAlone: tools.runsAlone,
			persist: options.persist,
			gate: options.gate,
			now: options.now,
			wallNow: wallClockMs,
			heap: heapBytes,
			log: options.log,
		},
		// No subagent cores yet: spawn() refuses until a spawn tool and a subagent profile exist.
	});
	agents.start();
	const core = agents.root;
	const { commands, statusLines } = coreConsole({ core: consoleView(core), session: options.session ?? (() => ""), chatId: options.consoleChatId });
	return { agents, core, toolbox: tools, commands, statusLines };
}
