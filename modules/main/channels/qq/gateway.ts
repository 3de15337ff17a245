// channels/qq/gateway: one QQ gateway session over the WebSocket client
// (net/websocket), kept up across drops. Sources: modules/main/channels/qq/NOTES.md.
//
//   GET /gateway -> connect -> Hello (op 10, heartbeat_interval)
//     -> Identify (op 2: "QQBot <token>", intents, shard [0, 1])  or, with a
//        session id and a sequence number kept from before, Resume (op 6)
//     -> READY (session_id) | RESUMED -> dispatches (op 0) with s kept
//   Heartbeat (op 1, d = the last s or null) every heartbeat_interval; a beat
//   with the previous one still unacknowledged (op 11) counts as a dead link.
//   Reconnect (op 7): close, connect again and Resume at once.
//   Invalid Session (op 9): the session is forgotten; a fresh Identify follows.
//   A drop: Resume on the next connection, after a back-off that doubles per
//   failed attempt (QQ_BACKOFF_START_MS .. QQ_BACKOFF_MAX_MS) and resets once a
//   session is READY or RESUMED again.
//   Close codes (QQ's WebSocket error list): 4009 resumes; 4006, 4007 and
//   4900-4913 identify anew; 4914/4915 (bot taken down or banned) and
//   4010-4014 (shard, version, intents) stop with a sentence.
// A dispatch whose s is not above the last one is a repeat (a Resume's replay
// of what was already handled) and is dropped, so nothing is handled twice.
import {
	QQ_BACKOFF_MAX_MS, QQ_BACKOFF_START_MS, QQ_HEARTBEAT_MAX_MS, QQ_HEARTBEAT_MIN_MS, QQ_HELLO_TIMEOUT_MS,
} from "budgets";
import type { AbortSignalLike } from "net/types";
import { Aborter } from "net/abort";
import { messageOf } from "util/errors";
import { WebSocketError, type OpenWebSocket, type WebSocketLike } from "net/websocket/types";
import { QqApiError } from "channels/qq/api";
import { Sleeps, type Timers } from "channels/sleeps";
import { GatewayPayloadError, Op, parseGatewayPayload, readHello, readReady, type GatewayPayload } from "channels/qq/payload";

/** The WebSocket as the gateway uses it (net/websocket/client's WebSocketClient). */
export type GatewaySocket = WebSocketLike;
export type OpenSocket = OpenWebSocket;

export interface GatewayOptions {
	api: { token(signal?: AbortSignalLike): Promise<string>; gatewayUrl(signal?: AbortSignalLike): Promise<string> };
	open: OpenSocket;
	intents: number;
	timers: Timers;
	log(line: string): void;
	/** Lines for the person at the console (connected, lost, stopped and why). */
	notify(line: string): void;
	/** A dispatch other than READY/RESUMED, once per sequence number. Must not throw. */
	onDispatch(t: string, d: unknown): void;
}

export type GatewayHealth = "starting" | "connected" | "retrying" | "stopped";

/** Why one connection ended and what the next should do. */
interface Ending {
	/** Resume on the next connection (else Identify). */
	resume: boolean;
	/** Connect again at once (Reconnect asked for it). */
	now?: boolean;
	/** A sentence: do not connect again. */
	fatal?: string;
	problem?: string;
	/** The connection failed on a message it could not read (invalid UTF-8, too large): resume past it. */
	skipUnreadable?: boolean;
}

const CLOSE_RECONNECT = 4000; // our close before connecting again: not 1000, so the session stays resumable

export class QqGateway {
	readonly #o: GatewayOptions;
	readonly #aborter = new Aborter();
	readonly #sleeps: Sleeps;
	#stopped = false;
	#running?: Promise<void>;
	#socket?: GatewaySocket;
	#sessionId = "";
	#seq: number | undefined;
	#username = "";
	#health: GatewayHealth = "starting";
	#lastProblem = "";
	/** Counts: connections opened, Identify and Resume sent, heartbeats. */
	readonly counts = { connections: 0, identify: 0, resume: 0, heartbeats: 0 };

	constructor(options: GatewayOptions) {
		this.#o = options;
		this.#sleeps = new Sleeps(options.timers);
	}

	get health(): GatewayHealth { return this.#health; }
	get username(): string { return this.#username; }
	get sessionId(): string { return this.#sessionId; }
	get seq(): number | undefined { return this.#seq; }
	get lastProblem(): string { return this.#lastProblem; }

	start(): void {
		if (this.#running) return;
		this.#running = this.#loop().catch((error) => this.#o.log(`qq: the gateway loop ended: ${messageOf(error)}`));
	}

	async stop(): Promise<void> {
		this.#stopped = true;
		this.#health = "stopped";
		this.#aborter.abort("qq stopped");
		this.#sleeps.stop();
		this.#socket?.close(1000, "stopping");
		await this.#running;
	}

	async #loop(): Promise<void> {
		let backoff = QQ_BACKOFF_START_MS;
		let url = "";
		while (!this.#stopped) {
			let ending: Ending;
			try {
				url ||= await this.#o.api.gatewayUrl(this.#aborter.signal);
				ending = await this.#connection(url);
			} catch (error) {
				if (this.#stopped) break;
				if (error instanceof QqApiError && error.kind === "auth") {
					ending = { resume: false, fatal: `${error.message}: the QQ channel stopped. Set the AppID and AppSecret from q.qq.com (development settings) with \`config set qq.app_id ID\` and \`config set qq.app_secret SECRET\`, then \`qq restart\`.` };
				} else {
					ending = { resume: true, problem: messageOf(error) };
					url = ""; // ask /gateway again next time
				}
			}
			if (this.#stopped) break;
			if (ending.fatal) {
				this.#health = "stopped";
				this.#lastProblem = ending.fatal;
				this.#o.notify(`qq: ${ending.fatal}`);
				return;
			}
			if (!ending.resume) {
				this.#sessionId = "";
				this.#seq = undefined;
			} else if (ending.skipUnreadable && this.#seq !== undefined) {
				// A Resume replays from the last event read: the unreadable one would
				// come again, fail the connection again, and hold up every later
				// message. It is the next dispatch, so the Resume starts after it.
				this.#seq++;
				this.#o.log(`qq: event ${this.#seq} could not be read and is skipped`);
			}
			if (this.#health === "connected") backoff = QQ_BACKOFF_START_MS;
			const problem = ending.problem ?? "the gateway connection ended";
			if (this.#health !== "retrying" || problem !== this.#lastProblem) this.#o.log(`qq: ${problem}; connecting again${ending.now ? "" : ` in ${Math.round(backoff / 1000)} s`}`);
			if (this.#health === "connected" && !ending.now) this.#o.notify(`qq: lost the gateway (${problem}); reconnecting`);
			this.#health = "retrying";
			this.#lastProblem = problem;
			if (!ending.now) {
				await this.#sleeps.sleep(backoff);
				backoff = Math.min(backoff * 2, QQ_BACKOFF_MAX_MS);
			}
		}
	}

	// One WebSocket connection, from open to close; resolves with what to do next.
	async #connection(url: string): Promise<Ending> {
		let ending: Ending | undefined;
		let heartbeat: unknown = undefined;
		let waitTimer: unknown = undefined;
		let acked = true;
		const timers = this.#o.timers;
		const end = (next: Ending, code = CLOSE_RECONNECT) => {
			if (ending) return;
			ending = next;
			socket.close(code, "");
		};
		const send = (payload: object) => socket.send(JSON.stringify(payload));
		const clearWait = () => {
			if (waitTimer !== undefined) timers.clear(waitTimer);
			waitTimer = undefined;
		};
		const waitFor = (what: string) => {
			clearWait();
			waitTimer = timers.set(() => { waitTimer = undefined; end({ resume: true, problem: `no ${what} from the gateway within ${QQ_HELLO_TIMEOUT_MS / 1000} s` }); }, QQ_HELLO_TIMEOUT_MS);
		};
		const beat = () => {
			if (ending) return;
			if (!acked) return end({ resume: true, problem: "the gateway did not acknowledge a heartbeat" });
			acked = false;
			this.counts.heartbeats++;
			send({ op: Op.HEARTBEAT, d: this.#seq ?? null });
		};
		const onPayload = async (payload: GatewayPayload) => {
			switch (payload.op) {
				case Op.HELLO: {
					const interval = Math.min(QQ_HEARTBEAT_MAX_MS, Math.max(QQ_HEARTBEAT_MIN_MS, readHello(payload.d)));
					if (heartbeat !== undefined) timers.clear(heartbeat);
					heartbeat = timers.set(function tick() { beat(); heartbeat = timers.set(tick, interval); }, interval);
					const token = `QQBot ${await this.#o.api.token(this.#aborter.signal)}`;
					if (ending) return;
					if (this.#sessionId && this.#seq !== undefined) {
						this.counts.resume++;
						send({ op: Op.RESUME, d: { token, session_id: this.#sessionId, seq: this.#seq } });
						waitFor("RESUMED");
					} else {
						this.counts.identify++;
						send({ op: Op.IDENTIFY, d: { token, intents: this.#o.intents, shard: [0, 1], properties: { $os: "xsclaw", $browser: "xsclaw", $device: "xsclaw" } } });
						waitFor("READY");
					}
					return;
				}
				case Op.HEARTBEAT_ACK:
					acked = true;
					return;
				case Op.HEARTBEAT:
					// The server asks for a beat now.
					send({ op: Op.HEARTBEAT, d: this.#seq ?? null });
					return;
				case Op.RECONNECT:
					return end({ resume: true, now: true, problem: "the gateway asked for a reconnect" });
				case Op.INVALID_SESSION:
					return end({ resume: false, now: true, problem: "the gateway refused the session (Invalid Session); identifying anew" });
				case Op.DISPATCH:
					return this.#dispatch(payload, clearWait);
				default:
					this.#o.log(`qq: gateway opcode ${payload.op} ignored`);
			}
		};
		const onMessage = (data: string | Uint8Array) => {
			if (ending) return;
			if (typeof data !== "string") return this.#o.log("qq: a binary gateway frame was ignored");
			let payload: GatewayPayload;
			try {
				payload = parseGatewayPayload(data);
			} catch (error) {
				return this.#o.log(`qq: ${messageOf(error)}; ignored`);
			}
			onPayload(payload).catch((error) => {
				if (error instanceof QqApiError && error.kind === "auth") {
					end({ resume: false, fatal: `${error.message}: the QQ channel stopped. Set the AppID and AppSecret from q.qq.com with \`config set qq.app_id ID\` and \`config set qq.app_secret SECRET\`, then \`qq restart\`.` });
				} else if (error instanceof GatewayPayloadError) {
					this.#o.log(`qq: ${error.message}; ignored`);
				} else {
					end({ resume: true, problem: messageOf(error) });
				}
			});
		};
		const socket = this.#o.open(url, onMessage, this.#aborter.signal);
		this.#socket = socket;
		this.counts.connections++;
		waitFor("Hello");
		try {
			await socket.opened;
		} catch {
			// the close below says why
		}
		const close = await socket.closed;
		this.#socket = undefined;
		clearWait();
		if (heartbeat !== undefined) timers.clear(heartbeat);
		if (ending) return ending;
		return this.#closeEnding(close);
	}

	#dispatch(payload: GatewayPayload, ready: () => void): void {
		const s = payload.s;
		const t = payload.t as string;
		if (t === "READY") {
			const info = readReady(payload.d);
			this.#sessionId = info.session_id;
			this.#username = info.username;
			if (s !== undefined) this.#seq = s;
			ready();
			this.#connected(`qq: connected${info.username ? ` as ${info.username}` : ""}`);
			return;
		}
		if (t === "RESUMED") {
			if (s !== undefined && (this.#seq === undefined || s > this.#seq)) this.#seq = s;
			ready();
			this.#connected("qq: gateway session resumed");
			return;
		}
		if (s !== undefined) {
			if (this.#seq !== undefined && s <= this.#seq) {
				this.#o.log(`qq: dispatch ${t} #${s} was handled already; dropped`);
				return;
			}
			this.#seq = s;
		}
		this.#o.onDispatch(t, payload.d);
	}

	#connected(line: string): void {
		const was = this.#health;
		this.#health = "connected";
		this.#lastProblem = "";
		if (was !== "connected") this.#o.notify(line);
	}

	#closeEnding(close: { code: number; reason: string; error?: Error }): Ending {
		const code = close.code;
		const why = close.error ? messageOf(close.error) : `the gateway closed the connection (${code}${close.reason ? `: ${close.reason.slice(0, 100)}` : ""})`;
		if (code === 4914) return { resume: false, fatal: "QQ says the bot is taken down and may only use the sandbox (close 4914): the QQ channel stopped. Set `config set qq.sandbox true`, or publish the bot on q.qq.com, then `qq restart`." };
		if (code === 4915) return { resume: false, fatal: "QQ says the bot is banned (close 4915): the QQ channel stopped. Ask QQ to lift the ban on q.qq.com, then `qq restart`." };
		if (code >= 4010 && code <= 4014) return { resume: false, fatal: `QQ refused the connection's shard, version or intents (close ${code}): the QQ channel stopped. Check that the bot may receive group and C2C messages on q.qq.com, then \`qq restart\`.` };
		if (code === 4006 || code === 4007 || (code >= 4900 && code <= 4913) || code === 4001 || code === 4002) return { resume: false, problem: why };
		// 1007 (not UTF-8) and 1009 (too large): we failed the connection over a message we could not read.
		if (close.error instanceof WebSocketError && (close.error.closeCode === 1007 || close.error.closeCode === 1009)) return { resume: true, problem: why, skipUnreadable: true };
		return { resume: true, problem: why };
	}
}
