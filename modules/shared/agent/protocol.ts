// agent/protocol: the agent port's messages, the only way the main machine
// (console, config, later channels and router) reaches the agent machine (core,
// LLM runtime, sessions, memory, tools) and back. ARCHITECTURE.md says who owns
// what; modules/shared/agent/NOTES.md why the port looks like this.
//
// Every message is plain data (strings, numbers, booleans, null, arrays and
// objects of them), copied by XS marshalling between the machines. Each side
// checks what it receives with readToAgent / readFromAgent before acting on it:
// a malformed or unknown message is refused with a sentence naming what is
// wrong (a PortError), and the receiver goes on; neither machine ends.
//
// Calls: a message from main with a `call` number (1..2^31) gets exactly one
// final reply carrying the same number ("accepted"+"response" for an ask,
// otherwise one reply), or a "failed" with a sentence. Notifications ("start",
// "setting", "online", "out", "ready", "refused") carry no call.
import { AGENT_COMMAND_LINES_MAX, AGENT_PORT_ID_MAX_CHARS, AGENT_PORT_LABEL_MAX_CHARS, AGENT_PORT_LIST_MAX, AGENT_PORT_REPLY_MAX_CHARS, AGENT_PORT_TEXT_MAX_CHARS, MAX_SUBAGENTS } from "budgets";
import { Channel, type AgentEvent, type AgentResponse, type ChatRole, type OutEvent, type Phase } from "core/types";
import type { HeapFigures } from "host/platform";
import { ONLINE_STATES, type OnlineState } from "net/types";
import type { WipedDirectory } from "util/files";
import { isObject } from "util/values";

/** The agent machine's directories: it wipes them when asked (`wipe`); the main machine does when no agent machine runs. */
export const AGENT_DIRECTORIES: readonly WipedDirectory[] = Object.freeze([
	{ path: "sessions", what: "sessions" },
	{ path: "memory", what: "memory and profile" },
	{ path: "sched", what: "schedules" },
	{ path: "workspace", what: "the agent's files" },
	{ path: "caps", what: "macro tools" },
]);

/** Bumped when a message changes shape; both machines come from one build, so this only names the protocol in errors. */
export const PORT_VERSION = 1;

/** The console's chat: where console requests come from and which session they talk in. */
export const CONSOLE_CHAT = Object.freeze({ channel: Channel.CONSOLE, chat_id: "local" });

export interface ChatRef {
	channel: string;
	chat_id: string;
}

/**
 * A request as a client submits it: core/types' AgentRequest without the id the
 * core assigns. session_id left out means "the current session of the source's
 * chat" (the agent machine owns chats.json and resolves it); "" means none.
 */
export interface PortRequest {
	flags: number;
	session_id?: string;
	user_text: string;
	source: { channel: string; chat_id: string; sender_id: string; message_id: string; cap: string };
	target?: ChatRef;
	/** Who asks, from a channel's pairing (core/types ChatRole); carried for the capability layer. */
	role?: ChatRole;
}

/**
 * The AgentEvent types a submitter may watch (the rest stay in the agent
 * machine), and "tool_execution_failed": only the tool_execution_end events of
 * tools that failed (the console's "… name failed"), so a tool that worked
 * sends no message for its end.
 */
export const WATCHABLE_EVENTS = Object.freeze([
	"agent_start", "turn_start", "message_start", "message_update", "message_end",
	"tool_execution_start", "tool_execution_update", "tool_execution_end", "turn_end", "agent_end", "tool_execution_failed",
] as const);
export type WatchableEvent = (typeof WATCHABLE_EVENTS)[number];

/** A console command the agent machine owns, as the main machine's command table shows it. */
export interface CommandInfo {
	name: string;
	usage: string;
	help: string;
}

export interface AgentStatus {
	phase: Phase;
	in_flight: number;
	queued: number;
	subagents: Array<{ agent_id: string; phase: Phase }>;
	/** The agent machine's own XS heap. */
	heap: HeapFigures;
	/** One line per stored script (caps/automations): state, triggers, counts, last run. */
	automations?: string[];
}

/** A chat channel of the main machine as the agent sees it: send_message's targets. */
export interface ChannelInfo {
	name: string;
	running: boolean;
	/** Why it does not run, as a sentence saying what to do (when it does not). */
	off?: string;
	/** Its paired chats' ids (the console's: its one chat). */
	chats: string[];
}

// ---- main -> agent ----

export type ToAgent =
	/** First message after the Worker is created: the settings the agent reads (agent/settings), whether the board is online, and the chat channels. */
	| { type: "start"; settings: Record<string, string>; online: OnlineState; channels: ChannelInfo[] }
	/** A chat channel started or stopped, or its paired chats changed: every channel, as in start. */
	| { type: "channels"; channels: ChannelInfo[] }
	/** A setting changed on the console (value null: unset). */
	| { type: "setting"; name: string; value: string | null }
	/** The Wi-Fi station's state changed: the agent's name lookups (the LLM's) wait for "online" (net/online). */
	| { type: "online"; state: OnlineState }
	/**
	 * Queue a request; replies "accepted" (or "failed"), then, if response, "response"
	 * (with response, accepted false leaves "accepted" out: nobody waits on it).
	 * wait_ms: how long to wait for room in the queue.
	 */
	| { type: "submit"; call: number; request: PortRequest; wait_ms: number; response: boolean; response_ms: number; events: WatchableEvent[]; accepted?: boolean }
	/** Cancel a request (0: the one in flight); replies "cancelled". */
	| { type: "cancel"; call: number; request_id: number }
	/** The agent's phase, queue and heap; collect: garbage-collect its heap first, so the figures are what is live. */
	| { type: "status"; call: number; collect?: boolean }
	/** Run a tool without the LLM (a router call_cap rule) for request; replies "cap_result". */
	| { type: "call_cap"; call: number; name: string; args: Record<string, unknown>; request: PortRequest }
	/** The tools a role may run, as the board offers them to an MCP client (the board's own, not remote ones); replies "tools". */
	| { type: "list_tools"; call: number; role: ChatRole }
	/** Run a stored script for a router rule (it must have the router trigger), without the LLM; replies "script_result". */
	| { type: "run_script"; call: number; name: string; data: { text: string; channel: string; chat_id: string } }
	/** Run one of the agent's console commands for a chat; replies "command_result". */
	| { type: "command"; call: number; name: string; args: string; chat: ChatRef }
	/** Stop the cores and close the files (before a reboot); replies "stopped". */
	| { type: "stop"; call: number }
	/** Stop as for "stop", then delete the agent's storage directories (factory-reset); replies "wiped". */
	| { type: "wipe"; call: number }
	/** The supervisor's heartbeat (agent/supervisor): replies "pong" at once; a machine that does not within AGENT_HEARTBEAT_DEADLINE_MS hangs. */
	| { type: "ping"; call: number };

// ---- agent -> main ----

export type FromAgent =
	/** The agent machine is open; commands for the console's table, warnings for the person. */
	| { type: "ready"; commands: CommandInfo[]; warnings: string[] }
	| { type: "accepted"; call: number; request_id: number }
	/**
	 * A piece of the next "response" or "out" message's text, which is longer than
	 * one text field (AGENT_PORT_TEXT_MAX_CHARS): the pieces come first, in order,
	 * and that message carries the last one and how many came before (`parts`).
	 * index counts from 0: a 0 drops the pieces of a text that never ended.
	 */
	| { type: "part"; index: number; text: string }
	| { type: "response"; call: number; response: AgentResponse; parts?: number }
	/** A watched event of a submitted request. */
	| { type: "event"; call: number; event: AgentEvent }
	/** An outbound event for a channel (an answer nobody waits for, a stage message). */
	| { type: "out"; event: OutEvent; parts?: number }
	/** request_id: what was cancelled, 0 when nothing matched. */
	| { type: "cancelled"; call: number; request_id: number }
	| { type: "status"; call: number; status: AgentStatus }
	/** error: the command failed with this sentence; usage: its arguments did not fit its usage (main prints the usage). */
	| { type: "command_result"; call: number; lines: string[]; error?: string; usage?: boolean }
	| { type: "stopped"; call: number }
	| { type: "pong"; call: number }
	/** What the wipe deleted ("sessions (3 files)") and a sentence for each directory it could not. */
	| { type: "wiped"; call: number; wiped: string[]; errors: string[] }
	/** The tool's result text. */
	| { type: "cap_result"; call: number; content: string }
	/** list_tools' answer: each tool's definition ({name, description, parameters}) as JSON text. */
	| { type: "tools"; call: number; tools: string[] }
	/** A stored script's run: its result, or why it did not run or failed. */
	| { type: "script_result"; call: number; ok: boolean; text: string }
	/** A call that could not be done, with a sentence for a person. */
	| { type: "failed"; call: number; error: string }
	/** A message that could not even be read (no usable call number). */
	| { type: "refused"; error: string }
	/** A log line of the agent machine, for main to write where its own go (the board's console). */
	| { type: "log"; line: string };

/** A message one side refused; its message is a sentence naming what is wrong. */
export class PortError extends Error {
	override name = "PortError";
	/** The call the message carried, when it had a usable one (so the refusal can answer it). */
	readonly call: number;
	constructor(message: string, call = 0) {
		super(message);
		this.call = call;
	}
}

// ---- checking ----

type Fields = Record<string, unknown>;

// Reads one message's fields; every failure names the message type and the field.
class Reader {
	readonly type: string;
	readonly call: number;
	constructor(readonly message: Fields, readonly from: string) {
		this.type = String(message.type);
		this.call = isCall(message.call) ? message.call : 0;
	}
	fail(what: string): never {
		throw new PortError(`the agent port refused a "${this.type}" message ${this.from}: ${what}`, this.call);
	}
	string(value: unknown, name: string, max = AGENT_PORT_TEXT_MAX_CHARS): string {
		if (typeof value !== "string") this.fail(`${name} must be a string`);
		if (value.length > max) this.fail(`${name} is ${value.length} characters, more than ${max}`);
		return value;
	}
	count(value: unknown, name: string): number {
		if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0x7fffffff) this.fail(`${name} must be a whole number from 0`);
		return value;
	}
	boolean(value: unknown, name: string): boolean {
		if (typeof value !== "boolean") this.fail(`${name} must be true or false`);
		return value;
	}
	object(value: unknown, name: string): Fields {
		if (!isObject(value)) this.fail(`${name} must be an object`);
		return value;
	}
	list(value: unknown, name: string, max: number): unknown[] {
		if (!Array.isArray(value)) this.fail(`${name} must be a list`);
		if (value.length > max) this.fail(`${name} has ${value.length} entries, more than ${max}`);
		return value;
	}
	callNumber(): number {
		if (!isCall(this.message.call)) this.fail("call must be a whole number from 1");
		return this.message.call;
	}
	chat(value: unknown, name: string): ChatRef {
		const chat = this.object(value, name);
		return { channel: this.string(chat.channel, `${name}.channel`, AGENT_PORT_ID_MAX_CHARS), chat_id: this.string(chat.chat_id, `${name}.chat_id`, AGENT_PORT_ID_MAX_CHARS) };
	}
}


function isCall(value: unknown): value is number {
	return typeof value === "number" && Number.isInteger(value) && value > 0 && value <= 0x7fffffff;
}

function opening(message: unknown, from: string): Reader {
	if (!isObject(message)) throw new PortError(`the agent port refused a message ${from}: it is not an object with a type`);
	if (typeof message.type !== "string") throw new PortError(`the agent port refused a message ${from}: it has no type`, isCall(message.call) ? message.call : 0);
	return new Reader(message, from);
}

function unknownType(r: Reader): never {
	const shown = r.type.length > 40 ? r.type.slice(0, 40) + "…" : r.type;
	throw new PortError(`the agent port (version ${PORT_VERSION}) does not know the message type "${shown}" ${r.from}; both machines must come from the same build`, r.call);
}

function readRequest(r: Reader, value: unknown): PortRequest {
	const request = r.object(value, "request");
	const source = r.object(request.source, "request.source");
	const result: PortRequest = {
		flags: r.count(request.flags, "request.flags"),
		user_text: r.string(request.user_text, "request.user_text"),
		source: {
			channel: r.string(source.channel, "request.source.channel", AGENT_PORT_ID_MAX_CHARS),
			chat_id: r.string(source.chat_id, "request.source.chat_id", AGENT_PORT_ID_MAX_CHARS),
			sender_id: r.string(source.sender_id ?? "", "request.source.sender_id", AGENT_PORT_ID_MAX_CHARS),
			message_id: r.string(source.message_id ?? "", "request.source.message_id", AGENT_PORT_ID_MAX_CHARS),
			cap: r.string(source.cap ?? "", "request.source.cap", AGENT_PORT_ID_MAX_CHARS),
		},
	};
	if (request.session_id !== undefined) result.session_id = r.string(request.session_id, "request.session_id", AGENT_PORT_ID_MAX_CHARS);
	if (request.target !== undefined) result.target = r.chat(request.target, "request.target");
	if (request.role !== undefined) {
		if (request.role !== "owner" && request.role !== "user") r.fail("request.role must be owner or user");
		result.role = request.role;
	}
	return result;
}

/** Checks a message the agent machine received. Throws a PortError with a sentence. */
export function readToAgent(message: unknown): ToAgent {
	const r = opening(message, "for the agent");
	const m = r.message;
	switch (m.type) {
		case "start": {
			const given = r.object(m.settings, "settings");
			const names = Object.keys(given);
			if (names.length > AGENT_PORT_LIST_MAX) r.fail(`settings has ${names.length} entries, more than ${AGENT_PORT_LIST_MAX}`);
			const settings: Record<string, string> = {};
			for (const name of names) settings[r.string(name, "a setting's name", AGENT_PORT_ID_MAX_CHARS)] = r.string(given[name], `settings.${name}`);
			return { type: "start", settings, online: readOnline(r, m.online), channels: readChannels(r, m.channels) };
		}
		case "channels":
			return { type: "channels", channels: readChannels(r, m.channels) };
		case "online":
			return { type: "online", state: readOnline(r, m.state) };
		case "setting":
			if (m.value !== null) r.string(m.value, "value");
			return { type: "setting", name: r.string(m.name, "name", AGENT_PORT_ID_MAX_CHARS), value: m.value as string | null };
		case "submit": {
			const call = r.callNumber();
			const events = r.list(m.events ?? [], "events", WATCHABLE_EVENTS.length).map((e) => {
				if (!WATCHABLE_EVENTS.includes(e as WatchableEvent)) r.fail(`events names "${String(e)}", which is not an event a submitter can watch`);
				return e as WatchableEvent;
			});
			return {
				type: "submit", call, request: readRequest(r, m.request), wait_ms: r.count(m.wait_ms, "wait_ms"),
				response: r.boolean(m.response, "response"), response_ms: r.count(m.response_ms ?? 0, "response_ms"), events,
				...(m.accepted === undefined ? {} : { accepted: r.boolean(m.accepted, "accepted") }),
			};
		}
		case "cancel":
			return { type: "cancel", call: r.callNumber(), request_id: r.count(m.request_id, "request_id") };
		case "status":
			return { type: "status", call: r.callNumber(), ...(m.collect === undefined ? {} : { collect: r.boolean(m.collect, "collect") }) };
		case "command":
			return {
				type: "command", call: r.callNumber(), name: r.string(m.name, "name", AGENT_PORT_ID_MAX_CHARS), args: r.string(m.args, "args"),
				chat: r.chat(m.chat, "chat"),
			};
		case "stop":
			return { type: "stop", call: r.callNumber() };
		case "wipe":
			return { type: "wipe", call: r.callNumber() };
		case "ping":
			return { type: "ping", call: r.callNumber() };
		case "run_script": {
			const call = r.callNumber();
			const data = r.object(m.data, "data");
			return {
				type: "run_script", call, name: r.string(m.name, "name", AGENT_PORT_ID_MAX_CHARS),
				data: { text: r.string(data.text, "data.text"), channel: r.string(data.channel, "data.channel", AGENT_PORT_ID_MAX_CHARS), chat_id: r.string(data.chat_id, "data.chat_id", AGENT_PORT_ID_MAX_CHARS) },
			};
		}
		case "call_cap": {
			const call = r.callNumber();
			const args = r.object(m.args, "args");
			r.string(JSON.stringify(args), "args as JSON");
			return { type: "call_cap", call, name: r.string(m.name, "name", AGENT_PORT_ID_MAX_CHARS), args, request: readRequest(r, m.request) };
		}
		case "list_tools": {
			const call = r.callNumber();
			if (m.role !== "owner" && m.role !== "user") r.fail("role must be owner or user");
			return { type: "list_tools", call, role: m.role as ChatRole };
		}
		default:
			return unknownType(r);
	}
}

function readChannels(r: Reader, value: unknown): ChannelInfo[] {
	return r.list(value, "channels", AGENT_PORT_LIST_MAX).map((item, i) => {
		const c = r.object(item, `channels[${i}]`);
		const info: ChannelInfo = {
			name: r.string(c.name, `channels[${i}].name`, AGENT_PORT_ID_MAX_CHARS),
			running: r.boolean(c.running, `channels[${i}].running`),
			chats: r.list(c.chats, `channels[${i}].chats`, AGENT_PORT_LIST_MAX).map((id, j) => r.string(id, `channels[${i}].chats[${j}]`, AGENT_PORT_ID_MAX_CHARS)),
		};
		if (c.off !== undefined) info.off = r.string(c.off, `channels[${i}].off`);
		return info;
	});
}

function readOnline(r: Reader, value: unknown): OnlineState {
	if (!ONLINE_STATES.includes(value as OnlineState)) r.fail(`the online state must be one of ${ONLINE_STATES.join(", ")}`);
	return value as OnlineState;
}

function readResponse(r: Reader, value: unknown): AgentResponse {
	const response = r.object(value, "response");
	const result: AgentResponse = {
		request_id: r.count(response.request_id, "response.request_id"),
		session_id: r.string(response.session_id, "response.session_id", AGENT_PORT_ID_MAX_CHARS),
		ok: r.boolean(response.ok, "response.ok"),
		text: r.string(response.text, "response.text"),
	};
	if (response.error !== undefined) result.error = r.string(response.error, "response.error");
	return result;
}

function readHeap(r: Reader, value: unknown): HeapFigures {
	const heap = r.object(value, "status.heap");
	const figure = (name: keyof HeapFigures) => r.count(heap[name], `status.heap.${name}`);
	return {
		chunkUsed: figure("chunkUsed"), chunkPeak: figure("chunkPeak"), chunkSize: figure("chunkSize"),
		slotUsed: figure("slotUsed"), slotPeak: figure("slotPeak"), slotSize: figure("slotSize"), sockets: figure("sockets"),
	};
}

const PHASES: readonly Phase[] = ["IDLE", "BEFORE_BUILDING_CONTEXT", "BUILDING_CONTEXT", "BEFORE_LLM_HTTP", "IN_LLM_HTTP", "AFTER_LLM_BEFORE_TOOL", "RUNNING_TOOL", "FINALIZING"];

function readPhase(r: Reader, value: unknown, name: string): Phase {
	if (!PHASES.includes(value as Phase)) r.fail(`${name} is not a phase of the agent core`);
	return value as Phase;
}


/** Checks a message the main machine received. Throws a PortError with a sentence. */
export function readFromAgent(message: unknown): FromAgent {
	const r = opening(message, "from the agent");
	const m = r.message;
	switch (m.type) {
		case "ready":
			return {
				type: "ready",
				commands: r.list(m.commands, "commands", AGENT_PORT_LIST_MAX).map((value, i) => {
					const c = r.object(value, `commands[${i}]`);
					return {
						name: r.string(c.name, `commands[${i}].name`, AGENT_PORT_ID_MAX_CHARS), usage: r.string(c.usage, `commands[${i}].usage`, AGENT_PORT_ID_MAX_CHARS),
						help: r.string(c.help, `commands[${i}].help`),
					};
				}),
				warnings: r.list(m.warnings, "warnings", AGENT_PORT_LIST_MAX).map((w, i) => r.string(w, `warnings[${i}]`)),
			};
		case "log":
			return { type: "log", line: r.string(m.line, "line") };
		case "accepted":
			return { type: "accepted", call: r.callNumber(), request_id: r.count(m.request_id, "request_id") };
		case "part":
			return { type: "part", index: r.count(m.index, "index"), text: r.string(m.text, "text") };
		case "response": {
			const result: FromAgent = { type: "response", call: r.callNumber(), response: readResponse(r, m.response) };
			if (m.parts !== undefined) result.parts = readParts(r, m.parts);
			return result;
		}
		case "event": {
			const call = r.callNumber();
			const event = r.object(m.event, "event");
			if (!WATCHABLE_EVENTS.includes(event.type as WatchableEvent) || event.type === "tool_execution_failed") r.fail("event.type is not an agent event");
			r.count(event.request_id, "event.request_id");
			// The rest is the core's own plain data, read by whoever watches that type.
			return { type: "event", call, event: event as unknown as AgentEvent };
		}
		case "out": {
			const event = r.object(m.event, "event");
			if (event.type !== "out_message" && event.type !== "agent_stage") r.fail("event.type must be out_message or agent_stage");
			r.string(event.channel, "event.channel", AGENT_PORT_ID_MAX_CHARS);
			r.string(event.chat_id, "event.chat_id", AGENT_PORT_ID_MAX_CHARS);
			r.string(event.text, "event.text");
			r.count(event.request_id, "event.request_id");
			if (event.type === "out_message") {
				r.string(event.correlation_id, "event.correlation_id", AGENT_PORT_ID_MAX_CHARS);
				if (event.label !== undefined) r.string(event.label, "event.label", AGENT_PORT_LABEL_MAX_CHARS);
			}
			const result: FromAgent = { type: "out", event: event as unknown as OutEvent };
			if (m.parts !== undefined) result.parts = readParts(r, m.parts);
			return result;
		}
		case "cancelled":
			return { type: "cancelled", call: r.callNumber(), request_id: r.count(m.request_id, "request_id") };
		case "status": {
			const call = r.callNumber();
			const s = r.object(m.status, "status");
			return {
				type: "status", call,
				status: {
					phase: readPhase(r, s.phase, "status.phase"), in_flight: r.count(s.in_flight, "status.in_flight"), queued: r.count(s.queued, "status.queued"),
					subagents: r.list(s.subagents, "status.subagents", MAX_SUBAGENTS).map((value, i) => {
						const sub = r.object(value, `status.subagents[${i}]`);
						return { agent_id: r.string(sub.agent_id, `status.subagents[${i}].agent_id`, AGENT_PORT_ID_MAX_CHARS), phase: readPhase(r, sub.phase, `status.subagents[${i}].phase`) };
					}),
					heap: readHeap(r, s.heap),
					...(s.automations === undefined ? {} : { automations: r.list(s.automations, "status.automations", AGENT_PORT_LIST_MAX).map((line, i) => r.string(line, `status.automations[${i}]`)) }),
				},
			};
		}
		case "command_result": {
			const result: FromAgent = {
				type: "command_result", call: r.callNumber(),
				lines: r.list(m.lines, "lines", AGENT_COMMAND_LINES_MAX + 1).map((line, i) => r.string(line, `lines[${i}]`)),
			};
			if (m.error !== undefined) result.error = r.string(m.error, "error");
			if (m.usage !== undefined) result.usage = r.boolean(m.usage, "usage");
			return result;
		}
		case "stopped":
			return { type: "stopped", call: r.callNumber() };
		case "pong":
			return { type: "pong", call: r.callNumber() };
		case "wiped":
			return {
				type: "wiped", call: r.callNumber(),
				wiped: r.list(m.wiped, "wiped", AGENT_PORT_LIST_MAX).map((line, i) => r.string(line, `wiped[${i}]`)),
				errors: r.list(m.errors, "errors", AGENT_PORT_LIST_MAX).map((line, i) => r.string(line, `errors[${i}]`)),
			};
		case "cap_result":
			return { type: "cap_result", call: r.callNumber(), content: r.string(m.content, "content") };
		case "tools":
			return { type: "tools", call: r.callNumber(), tools: r.list(m.tools, "tools", AGENT_PORT_LIST_MAX).map((t, i) => r.string(t, `tools[${i}]`)) };
		case "script_result":
			return { type: "script_result", call: r.callNumber(), ok: r.boolean(m.ok, "ok"), text: r.string(m.text, "text") };
		case "failed":
			return { type: "failed", call: r.callNumber(), error: r.string(m.error, "error") };
		case "refused":
			return { type: "refused", error: r.string(m.error, "error") };
		default:
			return unknownType(r);
	}
}

// ---- a long text in parts ----

/** The most parts one text crosses in (its last piece in the message itself). */
const PARTS_MAX = Math.ceil(AGENT_PORT_REPLY_MAX_CHARS / AGENT_PORT_TEXT_MAX_CHARS) + 1; // one more: a piece cut before a surrogate pair is one character short

function readParts(r: Reader, value: unknown): number {
	const parts = r.count(value, "parts");
	if (parts < 1 || parts >= PARTS_MAX) r.fail(`parts must be from 1 to ${PARTS_MAX - 1}`);
	return parts;
}

/** Where text may be cut at or before `at` without splitting a surrogate pair. */
function cutAt(text: string, at: number): number {
	const unit = text.charCodeAt(at - 1);
	return unit >= 0xd800 && unit <= 0xdbff ? at - 1 : at;
}

/**
 * A message for the port: a "response" or "out" whose text is longer than one
 * field goes as "part" messages (each post()ed in order) and the message itself
 * with the last piece and their count. A text over AGENT_PORT_REPLY_MAX_CHARS is
 * cut there with a note (the reply cap keeps any LLM text under it).
 */
export function postInParts(message: FromAgent, post: (message: FromAgent) => void): void {
	const text = message.type === "response" ? message.response.text : message.type === "out" ? message.event.text : "";
	if (text.length <= AGENT_PORT_TEXT_MAX_CHARS) return post(message);
	// Over the bound: cut, with a note after the last piece (no copy of the whole text is made).
	const note = text.length > AGENT_PORT_REPLY_MAX_CHARS ? `\n[… ${text.length} characters; the rest was left out]` : "";
	const end = note ? cutAt(text, AGENT_PORT_REPLY_MAX_CHARS - note.length) : text.length;
	let from = 0, parts = 0;
	while (end - from > AGENT_PORT_TEXT_MAX_CHARS - note.length) {
		const cut = cutAt(text, Math.min(end, from + AGENT_PORT_TEXT_MAX_CHARS));
		post({ type: "part", index: parts, text: text.slice(from, cut) });
		from = cut;
		parts++;
	}
	const last = note ? text.slice(from, end) + note : text.slice(from);
	if (message.type === "response") post({ ...message, response: { ...message.response, text: last }, parts });
	else if (message.type === "out") post({ ...message, event: { ...message.event, text: last }, parts });
}

/**
 * The receiving side of postInParts: parts wait here until the message they
 * belong to, which gets the whole text. Parts that do not add up (one lost to a
 * full queue, or over the whole text's bound) make that message a PortError;
 * the parts of a text that never ended are dropped by the next text's first.
 */
export class TextParts {
	#parts: string[] = [];
	#chars = 0;

	/** Takes a "part"; false when it does not follow the parts so far or they are over the bound (all are dropped). */
	add(index: number, text: string): boolean {
		if (index === 0) this.clear();
		this.#chars += text.length;
		if (index !== this.#parts.length || this.#chars > AGENT_PORT_REPLY_MAX_CHARS || this.#parts.length >= PARTS_MAX) {
			this.clear();
			return false;
		}
		this.#parts.push(text);
		return true;
	}

	/** How many parts wait. */
	get waiting(): number { return this.#parts.length; }

	clear(): void {
		this.#parts = [];
		this.#chars = 0;
	}

	/** The message with its whole text (the parts before it joined to its own). Throws a PortError when they do not add up. */
	join(message: FromAgent): FromAgent {
		const parts = message.type === "response" || message.type === "out" ? message.parts ?? 0 : 0;
		const waiting = this.#parts;
		this.clear();
		if (!parts) return message;
		if (parts !== waiting.length) {
			const call = message.type === "response" ? message.call : 0;
			throw new PortError(`the agent port refused a "${message.type}" message from the agent: it said ${parts} parts of its text came first, and ${waiting.length} did`, call);
		}
		waiting.push(message.type === "response" ? message.response.text : (message as Extract<FromAgent, { type: "out" }>).event.text);
		const text = waiting.join("");
		if (message.type === "response") return { type: "response", call: message.call, response: { ...message.response, text } };
		const out = message as Extract<FromAgent, { type: "out" }>;
		return { type: "out", event: { ...out.event, text } };
	}
}
