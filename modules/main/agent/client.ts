// agent/client: the one typed client of the agent port, in the main machine.
// The console (agent/console), the router and the chat channels use it: ask and
// submit requests, cancel them, read the agent's status, run the agent's
// console commands for a chat, pass setting changes, and hear outbound events.
//
// It owns the calls in flight (at most AGENT_PORT_CALLS_MAX, each with a
// deadline, so nothing waits forever on a machine that hangs). It does not own
// the agent machine: agent/supervisor attaches the client to each new machine
// and detaches it when that machine dies, which ends every call in flight at
// once with the reason as a sentence. While detached, calls fail at once with
// the sentence the supervisor gave.
import Timer from "timer";
import { AGENT_COMMAND_TIMEOUT_MS, AGENT_PORT_CALLS_MAX, AGENT_PORT_LIST_MAX, AGENT_PORT_REPLY_MAX_CHARS, AGENT_REPLY_TIMEOUT_MS } from "budgets";
import { RequestFlag, type AgentEvent, type AgentResponse, type ChatRole, type OutEvent } from "core/types";
import type { OnlineState } from "net/types";
import type { WipeResult } from "util/files";
import { messageOf } from "util/errors";
import { log, logRelayed, maskSecretsDeep } from "util/log";
import {
	PortError, TextParts, readFromAgent,
	type AgentStatus, type ChannelInfo, type ChatRef, type CommandInfo, type FromAgent, type PortRequest, type ToAgent, type WatchableEvent,
} from "agent/protocol";
import type { AgentPort, AskOptions, CommandResult, SubmitOptions } from "agent/types";

export type { AskOptions, CommandResult, SubmitOptions } from "agent/types";

export interface Ready {
	commands: CommandInfo[];
	warnings: string[];
}

export interface AgentClientOptions {
	/** A line about the port itself (a refused or late message); default trace. */
	log?(line: string): void;
	/** Told when an attached machine says it is ready. */
	onReady?(ready: Ready): void;
}

interface Pending {
	/** The reply type that ends the call ("accepted" ends a submit without response). */
	ends: FromAgent["type"];
	resolve(message: FromAgent): void;
	reject(error: Error): void;
	timer: ReturnType<typeof Timer.set>;
	onEvent?(event: AgentEvent): void;
	onAccepted?(requestId: number): void;
	/** A submit whose answer comes as an out_message: the chat it goes to. */
	answersTo?: Answered;
}

/** Where an out_message answer goes (a chat, and the message it answers). */
interface Answered {
	channel: string;
	chat_id: string;
	correlation_id: string;
}

/** The one client of the agent port: the console uses it, and the router and channels through router/types' AgentPort. */
export class AgentClient implements AgentPort {
	#post?: (message: ToAgent) => void;
	#online: OnlineState = "online";
	#channels: ChannelInfo[] = [];
	#down = "the agent is starting; try again in a moment";
	#calls = new Map<number, Pending>();
	// Event listeners by call. They outlive the call itself: a submit nobody
	// waits on ends at "accepted", and its request's events (the streamed text
	// a chat shows as it comes) follow; each is dropped at its agent_end.
	#watchers = new Map<number, (event: AgentEvent) => void>();
	#nextCall = 1;
	// Accepted requests whose answer comes as an out_message, until it came: if
	// the machine dies first, their chats are told so instead of waiting in
	// silence. A chat's out_message ends all of its entries (interrupts that
	// joined a request never get their own). At most AGENT_PORT_CALLS_MAX.
	#unanswered = new Map<number, Answered>();
	#outListeners = new Set<(event: OutEvent) => void>();
	// The parts of a long reply or out message's text, until the message itself (agent/protocol postInParts).
	#parts = new TextParts();
	#log: (line: string) => void;
	#onReady?: (ready: Ready) => void;

	constructor(options: AgentClientOptions = {}) {
		this.#log = options.log ?? log;
		this.#onReady = options.onReady;
	}

	/** True while a machine is attached. */
	get attached(): boolean {
		return this.#post !== undefined;
	}

	/** Calls waiting for a reply. */
	get callsInFlight(): number {
		return this.#calls.size;
	}

	/** Attaches a new agent machine and sends it the settings it starts with, the online state and the chat channels. */
	attach(post: (message: ToAgent) => void, settings: Record<string, string>): void {
		this.#post = post;
		this.#send({ type: "start", settings, online: this.#online, channels: this.#channels });
	}

	/** The machine is gone: every call in flight fails now with reason, and so do new ones until the next attach. */
	detach(reason: string): void {
		this.#post = undefined;
		this.#down = reason;
		const calls = [...this.#calls.values()];
		this.#calls.clear();
		this.#watchers.clear();
		for (const call of calls) {
			Timer.clear(call.timer);
			call.reject(new Error(reason));
		}
		// One sentence per chat whose answer will not come.
		const chats = new Map<string, [number, Answered]>();
		for (const [id, to] of this.#unanswered) chats.set(`${to.channel}\n${to.chat_id}`, [id, to]);
		this.#unanswered.clear();
		for (const [id, to] of chats.values()) this.#tellOut({ type: "out_message", ...to, text: reason, request_id: id });
	}

	/** Takes one message from the agent machine (its onmessage). Never throws. */
	receive(message: unknown): void {
		let reply: FromAgent;
		try {
			reply = readFromAgent(message);
			if (reply.type === "part") {
				if (!this.#parts.add(reply.index, reply.text)) this.#log(`agent port: a long text's parts did not follow each other or were over ${AGENT_PORT_REPLY_MAX_CHARS} characters; they were dropped`);
				return;
			}
			if (reply.type === "response" || reply.type === "out") reply = this.#parts.join(reply);
			// What reaches a person (answers, out events, command lines, errors) has
			// every secret setting masked: the agent machine knows only its own.
			// Streamed deltas stay as they are (a secret may span two); a preview masks the whole.
			if (reply.type !== "event") reply = maskSecretsDeep(reply);
		} catch (error) {
			this.#log(`agent port: ${messageOf(error)}`);
			if (error instanceof PortError && error.call) this.#end(error.call, undefined, error);
			return;
		}
		switch (reply.type) {
			case "ready":
				this.#onReady?.({ commands: reply.commands, warnings: reply.warnings });
				return;
			case "out": {
				const event = reply.event;
				if (event.type === "out_message") {
					for (const [id, to] of this.#unanswered) if (to.channel === event.channel && to.chat_id === event.chat_id) this.#unanswered.delete(id);
				}
				this.#tellOut(event);
				return;
			}
			case "refused":
				this.#log(`agent port: the agent refused a message: ${reply.error}`);
				return;
			case "log":
				logRelayed(reply.line);
				return;
			case "event":
				this.#watchers.get(reply.call)?.(reply.event);
				if (reply.event.type === "agent_end") this.#watchers.delete(reply.call);
				return;
			case "accepted": {
				const call = this.#calls.get(reply.call);
				call?.onAccepted?.(reply.request_id);
				if (call?.answersTo) {
					this.#unanswered.set(reply.request_id, call.answersTo);
					if (this.#unanswered.size > AGENT_PORT_CALLS_MAX) this.#unanswered.delete(this.#unanswered.keys().next().value as number);
				}
				if (call?.ends !== "accepted") return;
				break;
			}
			case "part": // joined above
				return;
		}
		this.#end(reply.call, reply);
	}

	#tellOut(event: OutEvent): void {
		for (const listener of this.#outListeners) {
			try {
				listener(event);
			} catch (error) {
				this.#log(`agent port: an outbound-event listener failed: ${messageOf(error)}`);
			}
		}
	}

	/**
	 * Hears outbound events (answers nobody waits for, stage messages); returns
	 * the removal. Listeners must not throw. When the agent machine dies, each
	 * chat still waiting for an out_message answer gets one with the reason.
	 */
	onOut(listener: (event: OutEvent) => void): () => void {
		this.#outListeners.add(listener);
		return () => this.#outListeners.delete(listener);
	}

	/** Submits a request and waits for its answer. Rejects with a sentence (queue full, no answer in time, the agent stopped). */
	async ask(request: PortRequest, options: AskOptions): Promise<AgentResponse> {
		const reply = await this.#call("response", options.waitMs + options.responseMs + AGENT_REPLY_TIMEOUT_MS, (call) => ({
			type: "submit", call, request, wait_ms: options.waitMs, response: true, response_ms: options.responseMs, events: options.events ?? [],
			accepted: options.onAccepted !== undefined,
		}), options);
		return (reply as Extract<FromAgent, { type: "response" }>).response;
	}

	/** Submits a request nobody waits for here (its answer comes as an out event); resolves with its id. */
	async submit(request: PortRequest, options: SubmitOptions): Promise<number> {
		const to = request.target ?? request.source;
		const answersTo = request.flags & RequestFlag.PUBLISH_OUT_MESSAGE ? { channel: to.channel, chat_id: to.chat_id, correlation_id: request.source.message_id } : undefined;
		const reply = await this.#call("accepted", options.waitMs + AGENT_REPLY_TIMEOUT_MS, (call) => ({
			type: "submit", call, request, wait_ms: options.waitMs, response: false, response_ms: 0, events: options.events ?? [],
		}), { ...options, answersTo });
		return (reply as Extract<FromAgent, { type: "accepted" }>).request_id;
	}

	/** Cancels a request (0: the one in flight); resolves with the id cancelled, 0 when nothing matched. */
	async cancel(requestId: number): Promise<number> {
		const reply = await this.#call("cancelled", AGENT_REPLY_TIMEOUT_MS, (call) => ({ type: "cancel", call, request_id: requestId }));
		return (reply as Extract<FromAgent, { type: "cancelled" }>).request_id;
	}

	/** The agent's status; collect: its heap garbage-collected first, so the figures are what is live. */
	async status({ collect = false }: { collect?: boolean } = {}): Promise<AgentStatus> {
		const reply = await this.#call("status", AGENT_REPLY_TIMEOUT_MS, (call) => ({ type: "status", call, collect }));
		return (reply as Extract<FromAgent, { type: "status" }>).status;
	}

	/** Runs a tool without the LLM for request (a router call_cap rule); resolves with its result, rejects with a sentence. */
	async callCap(name: string, args: Record<string, unknown>, request: PortRequest): Promise<string> {
		const reply = await this.#call("cap_result", AGENT_COMMAND_TIMEOUT_MS, (call) => ({ type: "call_cap", call, name, args, request }));
		return (reply as Extract<FromAgent, { type: "cap_result" }>).content;
	}

	/** The board's own tools a role may run, each definition's JSON text (the MCP server's tools/list). */
	async listTools(role: ChatRole): Promise<string[]> {
		const reply = await this.#call("tools", AGENT_REPLY_TIMEOUT_MS, (call) => ({ type: "list_tools", call, role }));
		return (reply as Extract<FromAgent, { type: "tools" }>).tools;
	}

	/** Runs a stored script for a router rule (it must have the router trigger); resolves with its result, rejects with why it did not run or failed. */
	async runScript(name: string, data: { text: string; channel: string; chat_id: string }): Promise<string> {
		const reply = await this.#call("script_result", AGENT_COMMAND_TIMEOUT_MS, (call) => ({ type: "run_script", call, name, data }));
		const { ok, text } = reply as Extract<FromAgent, { type: "script_result" }>;
		if (!ok) throw new Error(text);
		return text;
	}

	/** Runs one of the agent's console commands for a chat. */
	async command(name: string, args: string, chat: ChatRef): Promise<CommandResult> {
		const reply = await this.#call("command_result", AGENT_COMMAND_TIMEOUT_MS, (call) => ({ type: "command", call, name, args, chat }));
		const { lines, error, usage } = reply as Extract<FromAgent, { type: "command_result" }>;
		return { lines, error, usage };
	}

	/** Tells the agent a setting changed (value undefined: unset). Dropped while no machine is attached: the next one starts with every setting. */
	setting(name: string, value: string | undefined): void {
		if (this.#post) this.#send({ type: "setting", name, value: value ?? null });
	}

	/** Tells the agent whether the board is online (net/online); a machine attached later starts with the latest state. */
	online(state: OnlineState): void {
		if (state === this.#online) return;
		this.#online = state;
		if (this.#post) this.#send({ type: "online", state });
	}

	/** Tells the agent which chat channels run and their paired chats; a machine attached later starts with the latest. */
	channels(channels: ChannelInfo[]): void {
		const list = channels.slice(0, AGENT_PORT_LIST_MAX).map((c) => ({ ...c, chats: c.chats.slice(0, AGENT_PORT_LIST_MAX) }));
		if (JSON.stringify(list) === JSON.stringify(this.#channels)) return;
		this.#channels = list;
		if (this.#post) this.#send({ type: "channels", channels: list });
	}

	/** Asks the agent to stop, then delete its storage directories (factory-reset); resolves with what it wiped. */
	async wipe(): Promise<WipeResult> {
		const { wiped, errors } = await this.#call("wiped", AGENT_REPLY_TIMEOUT_MS, (call) => ({ type: "wipe", call })) as Extract<FromAgent, { type: "wiped" }>;
		return { wiped, errors };
	}

	/** The supervisor's heartbeat: resolves when the machine answers (it is not counted against AGENT_PORT_CALLS_MAX: a busy agent still answers it). */
	async ping(timeoutMs: number): Promise<void> {
		await this.#call("pong", timeoutMs, (call) => ({ type: "ping", call }));
	}

	/** Asks the agent to stop its cores and close its files; resolves when it has. */
	async stop(): Promise<void> {
		await this.#call("stopped", AGENT_REPLY_TIMEOUT_MS, (call) => ({ type: "stop", call }));
	}

	#send(message: ToAgent): void {
		if (!this.#post) throw new Error(this.#down);
		this.#post(message);
	}

	#call(ends: FromAgent["type"], timeoutMs: number, make: (call: number) => ToAgent, hooks: Partial<Pick<Pending, "onEvent" | "onAccepted" | "answersTo">> = {}): Promise<FromAgent> {
		if (!this.#post) return Promise.reject(new Error(this.#down));
		if (this.#calls.size >= AGENT_PORT_CALLS_MAX + (ends === "pong" ? 1 : 0)) {
			return Promise.reject(new Error(`the agent already has ${AGENT_PORT_CALLS_MAX} requests to answer; wait for some to finish, then try again`));
		}
		const call = this.#nextCall;
		this.#nextCall = this.#nextCall >= 0x7fffffff ? 1 : this.#nextCall + 1;
		return new Promise<FromAgent>((resolve, reject) => {
			const timer = Timer.set(() => {
				this.#calls.delete(call);
				reject(new Error(`the agent did not answer within ${Math.round(timeoutMs / 1000)} s; it may be stuck: check status, or reboot`));
			}, timeoutMs);
			this.#calls.set(call, { ends, resolve, reject, timer, onEvent: hooks.onEvent, onAccepted: hooks.onAccepted, answersTo: hooks.answersTo });
			if (hooks.onEvent) {
				this.#watchers.set(call, hooks.onEvent);
				// Bounded: a request whose agent_end never came (its machine died) leaves one behind.
				if (this.#watchers.size > AGENT_PORT_CALLS_MAX) this.#watchers.delete(this.#watchers.keys().next().value as number);
			}
			try {
				this.#send(make(call));
			} catch (error) {
				this.#end(call, undefined, new Error(`the message could not reach the agent: ${messageOf(error)}`));
			}
		});
	}

	// Ends a call with a reply (a "failed" one rejects) or an error.
	#end(callId: number, reply?: FromAgent, error?: Error): void {
		const call = this.#calls.get(callId);
		if (!call) {
			if (reply) this.#log(`agent port: a "${reply.type}" reply came for call ${callId}, which nobody waits for any more`);
			return;
		}
		this.#calls.delete(callId);
		Timer.clear(call.timer);
		// A call that failed has no request whose events could follow.
		if (error || reply!.type === "failed") this.#watchers.delete(callId);
		if (error) call.reject(error);
		else if (reply!.type === "failed") call.reject(new Error(reply!.error));
		else if (reply!.type !== call.ends) call.reject(new Error(`the agent answered with "${reply!.type}" where "${call.ends}" was due; both machines must come from the same build`));
		else call.resolve(reply!);
	}
}
