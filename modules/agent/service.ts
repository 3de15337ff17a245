// agent/service: the agent machine's end of the port. It reads every message
// from the main machine (agent/protocol's readToAgent), answers each call
// exactly once, and refuses what it cannot read with a sentence; a bad message
// never ends the machine.
//
// The first message is "start" with the agent's settings: the service builds
// its SettingsMirror and opens the agent (agent/machine's openAgent, or a test's
// fake) through `open`, then posts "ready" with the console commands the agent
// owns. Messages before "start" are answered with "failed". "start" and
// "online" carry the Wi-Fi station's state: the agent's own name lookups (the
// LLM's HTTP client) wait on it through `online`, as the main machine's wait
// on the station (net/online).
//
// A submit without session_id talks in the current session of its chat (the
// agent owns chats.json). A submit that wants its response waits for it here
// (core.receiveFor) and cancels the request when response_ms pass without one,
// so a forgotten request never holds the core. Watched events of a request are
// forwarded until its agent_end; the core builds only the types some watch
// names (its listener's filter), so the LLM's streamed deltas cost nothing
// while nobody watches them; those watched wait up to AGENT_PORT_DELTA_HOLD_MS
// and cross joined. Other watched events wait for the end of the machine's
// callback (see `queue` below). "accepted" goes only to a submit that wants it.
import Timer from "timer";
import { AGENT_COMMAND_LINES_MAX, AGENT_PORT_CALLS_MAX, AGENT_PORT_LIST_MAX, AGENT_PORT_DELTA_HOLD_MS, AGENT_PORT_EVENTS_HELD_MAX, AGENT_PORT_TEXT_MAX_CHARS } from "budgets";
import { UsageError, type Command } from "console/types";
import type { CoreStatus } from "core/core";
import { ResponseTimeout } from "core/mailbox";
import { RequestFlag, type AgentEvent, type AgentRequest, type AgentResponse, type ChatRole, type OutEvent, type ToolOutcome } from "core/types";
import type { HeapFigures } from "host/platform";
import type { ToolDefinition } from "llm/types";
import { OnlineWaiters, type OnlineGate } from "net/online";
import { wellFormed } from "net/utf8";
import type { OnlineState } from "net/types";
import { messageOf } from "util/errors";
import type { WipeResult } from "util/files";
import { log as logLine } from "util/log";
import { CONSOLE_CHAT, PortError, postInParts, readToAgent, type ChannelInfo, type ChatRef, type CommandInfo, type FromAgent, type PortRequest, type ToAgent, type WatchableEvent } from "agent/protocol";
import { SettingsMirror } from "agent/settings";

/** The part of the root Core the port uses. */
export interface PortCore {
	submit(request: AgentRequest, timeoutMs: number): Promise<number>;
	receiveFor(requestId: number, timeoutMs: number): Promise<AgentResponse>;
	cancel(requestId: number): boolean;
	readonly inFlightId: number;
	status(): CoreStatus;
	/** hears: which event types to build and pass (core/types EventFilter). */
	addListener(listener: (event: AgentEvent) => void, hears?: (type: AgentEvent["type"]) => boolean): void;
}

/** What the agent machine is made of, as the port sees it (agent/machine builds it). */
export interface AgentParts {
	core: PortCore;
	/** The running subagents. */
	subagents(): CoreStatus[];
	/** The current session of a chat ("" when sessions are not available). */
	sessionFor(chat: ChatRef): string;
	/** The console commands the agent owns, acting for chat. */
	commands(chat: ChatRef): Command[];
	/** Runs a tool for request without the LLM (the toolbox's checks apply). */
	callCap(name: string, argumentsJson: string, request: AgentRequest): Promise<ToolOutcome>;
	/** The board's own tools a role may run (their definitions), for the MCP server. */
	listTools?(role: ChatRole): ToolDefinition[];
	/** Runs a stored script for a router rule (caps/automations); never throws. Absent: no stored scripts in this build. */
	runScript?(name: string, data: { text: string; channel: string; chat_id: string }): { ok: boolean; text: string };
	/** One line per stored script, for status. */
	automationLines?(): string[];
	heap(): HeapFigures;
	/** Collects the agent machine's garbage (status with collect). */
	collect(): void;
	/** Sentences for the person (a part that works only partly). */
	warnings: string[];
	/** Stops the cores (requests in flight end cancelled) and closes the files. */
	stop(): void;
	/** After stop: deletes the agent's storage directories (factory-reset). */
	wipe(): WipeResult;
}

/**
 * Opens the agent from its settings; publish carries outbound events to the
 * main machine; online holds name lookups until the board is online; channels
 * says which chat channels run now (the main machine tells every change).
 */
export type OpenAgent = (settings: SettingsMirror, publish: (event: OutEvent) => void, online: OnlineGate, channels: () => readonly ChannelInfo[]) => AgentParts;

export interface ServiceOptions {
	post(message: FromAgent): void;
	open: OpenAgent;
	/** Lines about the port (refusals); default trace. */
	log?(line: string): void;
}

/** The core's request for a port request: no session_id means the chat's current session. */
function agentRequest(agent: AgentParts, given: PortRequest): AgentRequest {
	const request: AgentRequest = {
		request_id: 0,
		flags: given.flags,
		session_id: given.session_id ?? agent.sessionFor(given.source),
		// Where every person's text enters the agent (channels, console, the router): repaired once here.
		user_text: wellFormed(given.user_text),
		source: given.source,
	};
	if (given.target) request.target = given.target;
	// The chat's role from its pairing: without it a paired owner's chat would run as a user.
	if (given.role) request.role = given.role;
	return request;
}

function sourceKey(request: AgentRequest): string {
	return `${request.source.channel}\n${request.source.chat_id}\n${request.source.message_id}`;
}

/** Serves the port; returns the function that takes each message (self.onmessage). */
export function serveAgent(options: ServiceOptions): (message: unknown) => void {
	const log = options.log ?? logLine;
	let parts: AgentParts | undefined;
	let settings: SettingsMirror | undefined;
	let stopped = false;
	let online: OnlineState = "online";
	let channels: readonly ChannelInfo[] = [];
	const waiters = new OnlineWaiters(Timer, () => online);
	type Watch = { call: number; types: readonly WatchableEvent[] };
	const watched = new Map<number, Watch>();
	// Watches of submits not yet given an id, by source: the core may start a
	// request (agent_start) before its submit settles.
	const pending: Array<{ key: string; watch: Watch }> = [];
	// Every watch in force, and how many of them name each type: the core builds
	// only the events some watch hears (a streamed delta nobody watches costs nothing).
	const live = new Set<Watch>();
	const named = new Map<string, number>();
	const hold = (w: Watch, step: 1 | -1) => {
		if (step === 1) {
			if (live.has(w)) return;
			live.add(w);
		} else if (!live.delete(w)) return;
		for (const type of w.types) {
			const n = (named.get(type) ?? 0) + step;
			if (n) named.set(type, n);
			else named.delete(type);
		}
	};
	const hears = (type: AgentEvent["type"]): boolean => {
		if (!live.size) return false;
		// agent_end ends a watch; agent_start matches a pending one to its request.
		if (type === "agent_end" || (type === "agent_start" && pending.length)) return true;
		return named.has(type) || (type === "tool_execution_end" && named.has("tool_execution_failed"));
	};
	const watch = (id: number, w: Watch) => {
		watched.set(id, w);
		hold(w, 1);
		// Bounded: a request that ended before its submit settled leaves an entry behind.
		if (watched.size > AGENT_PORT_CALLS_MAX) unwatch(watched.keys().next().value as number);
	};
	const unwatch = (id: number) => {
		const w = watched.get(id);
		if (!w) return;
		watched.delete(id);
		hold(w, -1);
	};

	// A message that cannot be copied (a bug) is logged, never thrown into the core.
	// A reply or out message longer than one text field crosses in parts (agent/protocol postInParts).
	const postOne = (message: FromAgent) => options.post(message);
	const send = (message: FromAgent) => {
		try {
			postInParts(message, postOne);
		} catch (error) {
			log(`agent port: a "${message.type}" message could not be sent: ${messageOf(error)}`);
		}
	};
	// Watched events (a tool's start) wait in `outbox` for the end of this
	// machine's callback (a Timer of 0 ms) and cross with whatever else it posts
	// meanwhile: the main machine is woken once, after this machine's work (a
	// tool's start is emitted before the tool runs, and the next LLM request is
	// built and sent in the same callback), not in the middle of it, where its
	// wake-up costs this thread's caches. Replies and out events go at once,
	// the waiting events first, so the order stays.
	const outbox: FromAgent[] = [];
	let outboxTimer: ReturnType<typeof Timer.set> | undefined;
	const flush = () => {
		if (outboxTimer !== undefined) Timer.clear(outboxTimer);
		outboxTimer = undefined;
		for (let i = 0; i < outbox.length; i++) send(outbox[i]);
		outbox.length = 0;
	};
	const outboxEnded = () => {
		outboxTimer = undefined;
		flush();
	};
	const queue = (message: FromAgent) => {
		outbox.push(message);
		if (outbox.length >= AGENT_PORT_EVENTS_HELD_MAX) flush();
		else if (outboxTimer === undefined) outboxTimer = Timer.set(outboxEnded, 0);
	};
	// Streamed deltas (message_update) of one watch wait up to AGENT_PORT_DELTA_HOLD_MS
	// and cross as one event, their texts joined: a reply's 40-odd deltas are a few
	// messages, not one each (each wakes the main machine). Whatever else is posted
	// sends the held delta first, so the order stays.
	let held: { call: number; event: Extract<AgentEvent, { type: "message_update" }>; text: string } | undefined;
	let holdTimer: ReturnType<typeof Timer.set> | undefined;
	const release = () => {
		if (holdTimer !== undefined) Timer.clear(holdTimer);
		holdTimer = undefined;
		const h = held;
		held = undefined;
		if (h) queue({ type: "event", call: h.call, event: { ...h.event, delta: { type: h.event.delta.type, text: h.text } } });
	};
	const holdEnded = () => {
		holdTimer = undefined;
		release();
		flush();
	};
	const post = (message: FromAgent) => {
		if (held) release();
		outbox.push(message);
		flush();
	};
	const postEvent = (message: FromAgent) => {
		if (held) release();
		queue(message);
	};
	const postDelta = (call: number, event: Extract<AgentEvent, { type: "message_update" }>) => {
		const h = held;
		if (h && h.call === call && h.event.request_id === event.request_id && h.event.delta.type === event.delta.type && h.text.length + event.delta.text.length <= AGENT_PORT_TEXT_MAX_CHARS) {
			h.text += event.delta.text;
			return;
		}
		release();
		held = { call, event, text: event.delta.text };
		holdTimer = Timer.set(holdEnded, AGENT_PORT_DELTA_HOLD_MS);
	};
	const fail = (call: number, error: string) => post({ type: "failed", call, error });

	const onEvent = (event: AgentEvent) => {
		let w = watched.get(event.request_id);
		if (!w && event.type === "agent_start") {
			const at = pending.findIndex((p) => p.key === sourceKey(event.request));
			if (at >= 0) watch(event.request_id, (w = pending.splice(at, 1)[0].watch));
		}
		if (!w) return;
		if (event.type === "message_update") {
			if (w.types.includes("message_update")) postDelta(w.call, event);
		} else if (w.types.includes(event.type) || (event.type === "tool_execution_end" && event.is_error && w.types.includes("tool_execution_failed"))) {
			postEvent({ type: "event", call: w.call, event });
		}
		if (event.type === "agent_end") unwatch(event.request_id);
	};

	function start(message: Extract<ToAgent, { type: "start" }>): void {
		if (settings) throw new PortError("the agent port refused a second \"start\": the agent machine is already open");
		settings = new SettingsMirror(message.settings, log);
		online = message.online;
		channels = message.channels;
		parts = options.open(settings, (event) => post({ type: "out", event }), waiters.gate, () => channels);
		parts.core.addListener(onEvent, hears);
		const commands: CommandInfo[] = parts.commands(CONSOLE_CHAT).map((c) => ({
			name: c.name, usage: c.usage, help: c.help,
		}));
		post({ type: "ready", commands, warnings: parts.warnings });
	}

	async function submit(agent: AgentParts, m: Extract<ToAgent, { type: "submit" }>): Promise<void> {
		const { request: given, call } = m;
		if (m.response && given.flags & RequestFlag.SKIP_RESPONSE_QUEUE) {
			return fail(call, "a request with SKIP_RESPONSE_QUEUE has no response to wait for; submit it without response");
		}
		let request: AgentRequest;
		try {
			// A chat's first session may find no room (store/sessions' rule for many chats): the sentence is its answer.
			request = agentRequest(agent, given);
		} catch (error) {
			return fail(call, messageOf(error));
		}
		const entry = m.events.length ? { key: sourceKey(request), watch: { call, types: m.events } } : undefined;
		if (entry) {
			pending.push(entry);
			hold(entry.watch, 1);
			if (pending.length > AGENT_PORT_CALLS_MAX) hold(pending.shift()!.watch, -1);
		}
		let id: number;
		try {
			id = await agent.core.submit(request, m.wait_ms);
		} catch (error) {
			// Never queued, so never started: its watch goes.
			if (entry) hold(entry.watch, -1);
			return fail(call, messageOf(error));
		} finally {
			const at = entry ? pending.indexOf(entry) : -1;
			if (at >= 0) pending.splice(at, 1);
		}
		if (entry && !watched.has(id)) watch(id, entry.watch);
		if (!m.response || m.accepted !== false) post({ type: "accepted", call, request_id: id });
		if (!m.response) return;
		let response: AgentResponse;
		try {
			response = await agent.core.receiveFor(id, m.response_ms);
		} catch (error) {
			// Nobody would read the answer any more: stop the work instead of parking it.
			agent.core.cancel(id);
			unwatch(id);
			if (error instanceof ResponseTimeout) {
				return fail(call, `no answer within ${Math.round(m.response_ms / 1000)} s, so the request was cancelled; try again, or check the LLM with llm test.`);
			}
			return fail(call, `${messageOf(error)}; request ${id} was cancelled, try again`);
		}
		post({ type: "response", call, response });
	}

	async function callCap(agent: AgentParts, m: Extract<ToAgent, { type: "call_cap" }>): Promise<void> {
		let outcome: ToolOutcome;
		try {
			outcome = await agent.callCap(m.name, JSON.stringify(m.args), agentRequest(agent, m.request));
		} catch (error) {
			return fail(m.call, messageOf(error));
		}
		if (outcome.is_error) fail(m.call, outcome.content);
		else post({ type: "cap_result", call: m.call, content: outcome.content });
	}

	async function command(agent: AgentParts, m: Extract<ToAgent, { type: "command" }>): Promise<void> {
		const found = agent.commands(m.chat).find((c) => c.name === m.name);
		if (!found) return fail(m.call, `the agent has no command "${m.name}"; type help`);
		const lines: string[] = [];
		let cut = 0;
		const out = { line: (text: string) => (lines.length < AGENT_COMMAND_LINES_MAX ? void lines.push(text) : void cut++) };
		const finish = (extra: { error?: string; usage?: boolean } = {}) => {
			if (cut) lines.push(`… ${cut} more line${cut === 1 ? "" : "s"} not shown`);
			post({ type: "command_result", call: m.call, lines, ...extra });
		};
		try {
			await found.run(m.args, out);
		} catch (error) {
			return finish(error instanceof UsageError ? { usage: true } : { error: messageOf(error) });
		}
		finish();
	}

	function handle(agent: AgentParts, m: Exclude<ToAgent, { type: "start" }>): void {
		switch (m.type) {
			case "setting":
				settings!.apply(m.name, m.value ?? undefined);
				return;
			case "online":
				online = m.state;
				waiters.settle();
				return;
			case "channels":
				channels = m.channels;
				return;
			case "submit":
				void submit(agent, m);
				return;
			case "cancel": {
				const id = m.request_id || agent.core.inFlightId;
				post({ type: "cancelled", call: m.call, request_id: id && agent.core.cancel(id) ? id : 0 });
				return;
			}
			case "ping":
				// The supervisor's heartbeat: this machine's loop turns.
				post({ type: "pong", call: m.call });
				return;
			case "status": {
				if (m.collect) agent.collect();
				const root = agent.core.status();
				post({
					type: "status", call: m.call,
					status: {
						phase: root.phase, in_flight: root.in_flight, queued: root.queued,
						subagents: agent.subagents().map((s) => ({ agent_id: s.agent_id, phase: s.phase })),
						heap: agent.heap(),
						...(agent.automationLines ? { automations: agent.automationLines().slice(0, AGENT_PORT_LIST_MAX).map((line) => line.slice(0, AGENT_PORT_TEXT_MAX_CHARS)) } : {}),
					},
				});
				return;
			}
			case "command":
				void command(agent, m);
				return;
			case "call_cap":
				void callCap(agent, m);
				return;
			case "list_tools": {
				const tools: string[] = [];
				for (const tool of agent.listTools?.(m.role) ?? []) {
					const text = JSON.stringify(tool.function);
					if (text.length <= AGENT_PORT_TEXT_MAX_CHARS && tools.length < AGENT_PORT_LIST_MAX) tools.push(text);
				}
				post({ type: "tools", call: m.call, tools });
				return;
			}
			case "run_script": {
				if (!agent.runScript) return fail(m.call, "this build runs no stored scripts (its scripts cannot be bounded)");
				const outcome = agent.runScript(m.name, m.data);
				post({ type: "script_result", call: m.call, ok: outcome.ok, text: outcome.text.slice(0, AGENT_PORT_TEXT_MAX_CHARS) });
				return;
			}
			case "stop":
				if (!stopped) {
					stopped = true;
					agent.stop();
				}
				post({ type: "stopped", call: m.call });
				return;
			case "wipe": {
				// The files are closed first, so nothing writes into a wiped directory.
				if (!stopped) {
					stopped = true;
					agent.stop();
				}
				const { wiped, errors } = agent.wipe();
				post({ type: "wiped", call: m.call, wiped, errors });
				return;
			}
		}
	}

	return (raw: unknown) => {
		let message: ToAgent;
		try {
			message = readToAgent(raw);
			if (message.type === "start") return start(message);
			if (!parts) throw new PortError(`the agent machine is not open yet, so it cannot take a "${message.type}"; try again in a moment`, "call" in message ? message.call : 0);
			if (stopped && message.type !== "stop" && message.type !== "wipe" && message.type !== "setting") {
				throw new PortError(`the agent has stopped for a reboot, so it cannot take a "${message.type}"`, "call" in message ? message.call : 0);
			}
			handle(parts, message);
		} catch (error) {
			if (!(error instanceof PortError)) throw error;
			log(`agent port: ${error.message}`);
			if (error.call) fail(error.call, error.message);
			else post({ type: "refused", error: error.message });
		}
	};
}
