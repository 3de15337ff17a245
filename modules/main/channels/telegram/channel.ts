// channels/telegram/channel: the Telegram channel (SPEC §8). It owns the poll
// loop, the chats' work in flight (requests for /stop, streamed replies, typing)
// and the outboxes; the pairing and the saved offset live in its StateFile.
//
// Inbound: getUpdates long polls (abortable); each batch's next offset is saved
// before any of its updates is acted on (store.ts says why). An update is
// dropped unless its chat is paired (an unpaired chat gets the rate-limited hint
// and can /pair); group chats are answered only when addressed (@bot, a reply to
// the bot, /command@bot). Commands are handled here; other text goes to the
// router as an in_message with the chat's role, which usually submits it to the
// agent with every flag on: a message in a chat whose request runs steers it.
//
// Outbound: the router hands this channel's out_message and agent_stage events
// to deliver(). Per chat, an outbox runs one call at a time, at most one per
// TELEGRAM_CHAT_SEND_INTERVAL_MS. Progress (stage messages, streamed previews)
// waits only while fewer than TELEGRAM_CHAT_OUTBOX_MAX calls wait, else it is
// skipped; answers and the channel's own replies may wait up to
// TELEGRAM_CHAT_ANSWERS_MAX (more are dropped, logged), so progress never
// crowds out an answer. A reply is streamed: text deltas are shown by sending a
// message and editing it at most once per TELEGRAM_EDIT_INTERVAL_MS; the final
// text replaces it (first chunk) and the rest follows in chunks of 4096. HTML
// first; a 400 (Telegram could not parse the markup) is retried as plain text.
// A 429 waits retry_after; network errors back off; 401/404 (bad token) and 409
// (another poller) stop polling with a sentence on the console.
//
// /stop: the chat's outbox is emptied at once (what waits is dropped and
// counted; a call already on its way finishes, no retry follows), its previews
// and typing end, the StopGate drops what the stopped requests still send, and
// the confirmation goes first: the chat hears nothing more from them.
import {
	TELEGRAM_BACKOFF_MAX_MS, TELEGRAM_BACKOFF_START_MS, TELEGRAM_CHAT_ANSWERS_MAX, TELEGRAM_CHAT_OUTBOX_MAX, TELEGRAM_CHAT_SEND_INTERVAL_MS, TELEGRAM_CHATS_TRACKED_MAX,
	TELEGRAM_EDIT_INTERVAL_MS, TELEGRAM_MESSAGE_MAX_CHARS, TELEGRAM_POLL_MARGIN_MS, TELEGRAM_POLL_TIMEOUT_S, TELEGRAM_REQUESTS_PER_CHAT_MAX, TELEGRAM_SEND_RETRIES,
	TELEGRAM_TYPING_INTERVAL_MS, TELEGRAM_TYPING_MAX_MS, TELEGRAM_UPDATE_BODY_MAX_BYTES, TELEGRAM_UPDATE_HEAD_BYTES, TELEGRAM_UPDATES_LIMIT,
	TELEGRAM_POLL_MIN_INTERVAL_MS,
} from "budgets";
import type { AgentEvent, OutEvent } from "core/types";
import { Aborter } from "net/abort";
import type { AgentPort, InMessage, OutboundSink, ChatRole, RouteOutcome } from "router/types";
import type { Watch } from "router/router";
import { messageOf } from "util/errors";
import { maskSecretsGrowing } from "util/log";
import { clip } from "util/text";
import { BotApiError, readBotUser, type BotUser, type CallOptions } from "channels/telegram/api";
import { chunk, fitUnits, toHtml } from "channels/telegram/format";
import { dropQueued, helpText, pairChat, sessionReply, stopReply, StopGate } from "channels/chat";
import { Sleeps, type Timers } from "channels/sleeps";
import type { Pairing } from "channels/pairing";
import type { StateFile } from "channels/telegram/store";
import { firstUpdateId, parseUpdates, type IncomingMessage } from "channels/telegram/updates";

/** This channel's name in requests, events and bindings. */
export const CHANNEL = "telegram";

/** The Bot API client as the channel uses it (channels/telegram/api's BotApi; a fake in tests). */
export interface BotApiLike {
	call(method: string, params: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
	/** The first maxBytes bytes of a method's answer as text (BotApi.head). */
	head(method: string, params: Record<string, unknown>, maxBytes: number, options?: CallOptions): Promise<string>;
}

const ALLOWED_UPDATES = ["message"];

export type { Timers };

export interface TelegramChannelOptions {
	api: BotApiLike;
	router: { publish(message: InMessage, watch?: Watch): Promise<RouteOutcome> };
	/** The router's cancel and command (setup gives the router: a /stop and a /session pass through it as messages do). */
	port: Pick<AgentPort, "cancel" | "command">;
	pairing: Pairing;
	state: StateFile;
	timers: Timers;
	/** Monotonic ms. */
	now(): number;
	/** Log lines (stderr on lin). */
	log(line: string): void;
	/** Lines for the person at the console (connected, paired, stopped and why). */
	notify(line: string): void;
	/** getUpdates' timeout in seconds (default TELEGRAM_POLL_TIMEOUT_S). */
	pollTimeoutS?: number;
}

export const COMMANDS = Object.freeze([
	{ command: "start", description: "what this bot is and how to pair" },
	{ command: "help", description: "the commands" },
	{ command: "stop", description: "stop the answer in progress" },
	{ command: "new", description: "start a new conversation" },
	{ command: "session", description: "this chat's conversation" },
	{ command: "pair", description: "pair this chat with a code from the board's console" },
]);

export const PAIRING_HINT = "This board answers paired chats only. To pair this chat, send /pair CODE with the code its console prints (`telegram pair` there makes one).";


interface Tracked {
	started: boolean;
	/** Submitted while another request of the chat ran: it may have joined that one (an interrupt) and never start. */
	steering: boolean;
}

interface Stream {
	chatId: string;
	text: string;
	shown: string;
	messageId?: number;
	lastEditMs: number;
	timer?: unknown;
	done: boolean;
}

interface ChatWork {
	requests: Map<number, Tracked>;
	tail: Promise<void>;
	/** Calls of the current epoch waiting or on their way. */
	pending: number;
	/** /stop starts a new epoch: the calls queued before it are dropped. */
	epoch: number;
	/** The epoch of the call on its way, -1 when none is. */
	sending: number;
	/** Texts of the channel's own replies waiting in the outbox: the same one is not queued twice. */
	waitingReplies: Set<string>;
	lastSendMs: number;
	typingTimer?: unknown;
	typingSince: number;
}

type PollHealth = "starting" | "polling" | "retrying" | "stopped";

export class TelegramChannel implements OutboundSink {
	readonly #o: TelegramChannelOptions;
	readonly #chats = new Map<string, ChatWork>();
	readonly #streams = new Map<number, Stream>();
	readonly #sleeps: Sleeps;
	#aborter = new Aborter();
	#stopped = false;
	#running?: Promise<void>;
	#bot?: BotUser;
	#offset = 0;
	/** Updates asked for per poll: TELEGRAM_UPDATES_LIMIT, fewer while the waiting ones are over the cap together. */
	#limit = TELEGRAM_UPDATES_LIMIT;
	/** The offset whose one-update answer was unreadable once (the second time it is skipped). */
	#malformedAt = -1;
	#health: PollHealth = "starting";
	#lastProblem = "";
	readonly #gate = new StopGate();
	/** Waiting calls /stop dropped from outboxes. */
	#droppedQueued = 0;

	constructor(options: TelegramChannelOptions) {
		this.#o = options;
		this.#sleeps = new Sleeps(options.timers);
	}

	get bot(): BotUser | undefined {
		return this.#bot;
	}

	/** One line per fact for `telegram status`. */
	status(): string[] {
		const lines = [`telegram: ${this.#health}${this.#bot ? ` as @${this.#bot.username}` : ""}, offset ${this.#offset}`];
		if (this.#lastProblem) lines.push(`last problem: ${this.#lastProblem}`);
		const busy = [...this.#chats].filter(([, w]) => w.requests.size).map(([id, w]) => `${id} (${w.requests.size})`);
		lines.push(`chats with requests in flight: ${busy.length ? busy.join(", ") : "none"}`);
		if (this.#droppedQueued || this.#gate.dropped) lines.push(`dropped after /stop: ${this.#droppedQueued} waiting messages, ${this.#gate.dropped} late ones`);
		return lines;
	}

	/** Starts polling (once). */
	start(): void {
		if (this.#running) return;
		this.#offset = this.#o.state.state.offset;
		this.#running = this.#poll().catch((error) => {
			this.#o.log(`telegram: the poll loop ended: ${messageOf(error)}`);
		});
	}

	/** Stops polling and outbound work; resolves when the poll loop has ended. */
	async stop(): Promise<void> {
		this.#stopped = true;
		this.#health = "stopped";
		this.#aborter.abort("telegram stopped");
		this.#sleeps.stop();
		for (const work of this.#chats.values()) this.#stopTyping(work);
		for (const stream of this.#streams.values()) if (stream.timer !== undefined) this.#o.timers.clear(stream.timer);
		await this.#running;
	}

	// ---- inbound ----

	async #poll(): Promise<void> {
		let backoff = TELEGRAM_BACKOFF_START_MS;
		const timeoutS = this.#o.pollTimeoutS ?? TELEGRAM_POLL_TIMEOUT_S;
		while (!this.#stopped) {
			const started = this.#o.now();
			let offset = this.#offset;
			try {
				if (!this.#bot) await this.#identify();
				offset = this.#offset;
				const limit = this.#limit;
				try {
					const result = await this.#o.api.call("getUpdates", {
						offset, limit, timeout: timeoutS, allowed_updates: ALLOWED_UPDATES,
					}, { signal: this.#aborter.signal, timeoutMs: timeoutS * 1000 + TELEGRAM_POLL_MARGIN_MS, maxBodyBytes: TELEGRAM_UPDATE_BODY_MAX_BYTES });
					this.#polling();
					backoff = TELEGRAM_BACKOFF_START_MS;
					await this.#batch(result, limit);
				} catch (error) {
					if (!(error instanceof BotApiError && (error.kind === "too_large" || error.kind === "malformed"))) throw error;
					this.#polling();
					// Narrowed to one update at a time: ask again at once (this happens once per update read).
					if (await this.#unreadable(error, offset, limit)) continue;
				}
			} catch (error) {
				if (this.#stopped) break;
				const fatal = this.#fatal(error);
				if (fatal) {
					this.#health = "stopped";
					this.#lastProblem = fatal;
					this.#o.notify(`telegram: ${fatal}`);
					return;
				}
				const problem = messageOf(error);
				const retryAfter = error instanceof BotApiError ? error.retryAfterMs : undefined;
				const wait = retryAfter ?? backoff;
				if (retryAfter === undefined) backoff = Math.min(backoff * 2, TELEGRAM_BACKOFF_MAX_MS);
				if (this.#health !== "retrying" || problem !== this.#lastProblem) {
					this.#o.log(`telegram: ${problem}; polling again in ${Math.round(wait / 1000)} s`);
				}
				if (this.#health !== "retrying") this.#o.notify(`telegram: cannot reach Telegram (${problem}); retrying`);
				this.#health = "retrying";
				this.#lastProblem = problem;
				await this.#sleep(wait);
			}
			// Nothing new: the next poll waits, so a server that answers at once is not asked hundreds of times a second.
			if (this.#offset === offset && !this.#stopped) await this.#sleep(Math.max(0, started + TELEGRAM_POLL_MIN_INTERVAL_MS - this.#o.now()));
		}
	}

	#polling(): void {
		if (this.#health === "polling") return;
		if (this.#health === "retrying") this.#o.notify("telegram: reachable again; polling");
		this.#health = "polling";
	}

	/**
	 * getUpdates' answer could not be taken whole (over the cap, or not the Bot
	 * API's JSON): read fewer updates at a time, and skip, with a log line naming
	 * it, one update that cannot be read alone, so no update ever stops the
	 * channel (an unreadable answer is asked for once more first: it may have been
	 * a glitch). Resolves true when the next poll may follow at once (narrowed to
	 * one update); throws when the update's id cannot be learnt (the caller backs off).
	 */
	async #unreadable(error: BotApiError, offset: number, limit: number): Promise<boolean> {
		if (limit > 1) {
			this.#limit = 1;
			this.#o.log(`telegram: ${error.message}; reading the waiting updates from offset ${offset} one at a time`);
			return true;
		}
		if (error.kind === "malformed" && this.#malformedAt !== offset) {
			this.#malformedAt = offset;
			this.#o.log(`telegram: ${error.message}; asking for update ${offset} again`);
			return false;
		}
		const head = await this.#o.api.head("getUpdates", { offset, limit: 1, timeout: 0, allowed_updates: ALLOWED_UPDATES }, TELEGRAM_UPDATE_HEAD_BYTES, { signal: this.#aborter.signal });
		const id = firstUpdateId(head);
		if (id === undefined || id < offset) throw new BotApiError("malformed", `${error.message}, and the update_id of the one update asked for cannot be read from its start`);
		const why = error.kind === "too_large" ? `it alone is over the ${TELEGRAM_UPDATE_BODY_MAX_BYTES}-byte cap of a getUpdates answer` : `Telegram's answer with it is not readable (${error.message})`;
		this.#o.log(`telegram: update ${id} skipped: ${why}`);
		this.#advance(id + 1);
		return false;
	}

	// The offset moves on, saved before any update below it is acted on (a reboot never acts on them again).
	#advance(next: number): void {
		if (next === this.#offset) return;
		this.#offset = next;
		try {
			this.#o.state.update({ offset: next });
		} catch (error) {
			this.#o.log(`telegram: saving the update offset failed (after a reboot some messages may be answered again): ${messageOf(error)}`);
		}
	}

	// A sentence for errors that retrying cannot fix, else undefined.
	#fatal(error: unknown): string | undefined {
		if (!(error instanceof BotApiError) || error.kind !== "api") return undefined;
		if (error.code === 401 || error.code === 404) {
			return "Telegram refused the bot token (401 Unauthorized): polling stopped. Set the token BotFather gave you with `config set telegram.token TOKEN`, then `telegram restart`.";
		}
		if (error.code === 409) {
			return "another program is already reading this bot's updates (409 Conflict: a second board, a script, or a webhook): polling stopped. Stop the other one (or delete the webhook), then `telegram restart`.";
		}
		return undefined;
	}

	async #identify(): Promise<void> {
		const bot = readBotUser(await this.#o.api.call("getMe", {}, { signal: this.#aborter.signal }));
		const saved = this.#o.state.state;
		if (saved.bot_id !== bot.id) {
			// Offsets belong to one bot: another token starts from Telegram's unconfirmed updates.
			this.#offset = 0;
			try {
				this.#o.state.update({ bot_id: bot.id, offset: 0 });
			} catch (error) {
				this.#o.log(`telegram: saving the bot id failed: ${messageOf(error)}`);
			}
		}
		this.#bot = bot;
		try {
			await this.#o.api.call("setMyCommands", { commands: COMMANDS }, { signal: this.#aborter.signal });
		} catch (error) {
			if (this.#stopped) throw error;
			this.#o.log(`telegram: setMyCommands failed (the command menu may be missing): ${messageOf(error)}`);
		}
		this.#o.notify(`telegram: connected as @${bot.username}`);
	}

	// One getUpdates answer: the offset moves past it first, then each update is handled. Throws a BotApiError("malformed") when it is not a list.
	async #batch(result: unknown, limit: number): Promise<void> {
		let parsed;
		try {
			parsed = parseUpdates(result, this.#offset);
		} catch (error) {
			throw new BotApiError("malformed", messageOf(error));
		}
		if (parsed.unreadable) this.#o.log(`telegram: ${parsed.unreadable} update(s) without an update_id were skipped`);
		if (limit < TELEGRAM_UPDATES_LIMIT) {
			const ids = parsed.updates.map((u) => u.update_id);
			if (ids.length) this.#o.log(`telegram: read update${ids.length > 1 ? `s ${ids[0]}..${ids.at(-1)}` : ` ${ids[0]}`} (${limit} at a time while the waiting ones are over the cap together)`);
			this.#limit = Math.min(TELEGRAM_UPDATES_LIMIT, limit * 2);
		}
		this.#advance(parsed.next_offset);
		for (const update of parsed.updates) {
			if (this.#stopped) return;
			if (!update.message) {
				this.#o.log(`telegram: update ${update.update_id} skipped: ${update.skipped}`);
				continue;
			}
			try {
				await this.#handle(update.message);
			} catch (error) {
				this.#o.log(`telegram: update ${update.update_id} failed: ${messageOf(error)}`);
			}
		}
	}

	// The text addressed to the bot, or undefined when a group message is for others.
	#addressed(message: IncomingMessage): string | undefined {
		if (message.chat_type === "private") return message.text;
		if (message.chat_type === "channel" || !this.#bot) return undefined;
		const handle = `@${this.#bot.username}`.toLowerCase();
		let addressed = message.reply_to_sender_id === String(this.#bot.id);
		for (const m of message.mentions) {
			const piece = message.text.slice(m.offset, m.offset + m.length).toLowerCase();
			if (m.type === "mention" && piece === handle) addressed = true;
			if (m.type === "bot_command" && m.offset === 0 && piece.endsWith(handle)) addressed = true;
		}
		if (!addressed) return undefined;
		return message.text.replace(new RegExp(`\\s*@${this.#bot.username}\\b`, "ig"), "").trim() || message.text;
	}

	async #handle(message: IncomingMessage): Promise<void> {
		const text = this.#addressed(message);
		if (text === undefined) return;
		const chatId = message.chat_id;
		const command = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{1,64}))?(?:\s+([\s\S]*))?$/.exec(text.trim());
		if (command?.[2] && this.#bot && command[2].toLowerCase() !== this.#bot.username.toLowerCase()) return; // for another bot
		const name = command?.[1].toLowerCase();
		const args = (command?.[3] ?? "").trim();
		// In a group the sender's role: the member who paired it has the chat's role, the others are users unless the owner said otherwise.
		const role = this.#o.pairing.roleOf(chatId, message.chat_type === "private" ? undefined : message.sender_id);
		if (name === "pair") return this.#pair(message, args);
		if (!role) {
			if (this.#o.pairing.mayHint(chatId)) this.#reply(chatId, PAIRING_HINT);
			else this.#o.log(`telegram: message from unpaired chat ${chatId} ignored`);
			return;
		}
		switch (name) {
			case "start":
			case "help":
				return this.#reply(chatId, helpText(role));
			case "stop":
				return this.#stopChat(chatId);
			case "new":
			case "session":
				return this.#reply(chatId, await sessionReply(this.#o.port, CHANNEL, chatId, role, name === "new" ? "new" : args));
		}
		await this.#ask(message, text, role);
	}

	async #pair(message: IncomingMessage, code: string): Promise<void> {
		const outcome = pairChat(this.#o.pairing, message.chat_id, message.sender_name, code, this.#o.log, CHANNEL, message.chat_type === "private" ? undefined : message.sender_id);
		if (outcome.paired) this.#o.notify(`telegram: chat ${message.chat_id} (${message.sender_name || "no name"}) paired as ${outcome.paired}`);
		if (outcome.reply) this.#reply(message.chat_id, outcome.reply);
	}


	async #stopChat(chatId: string): Promise<void> {
		const work = this.#chats.get(chatId);
		const ids = work ? [...work.requests.keys()] : [];
		let dropped = 0;
		if (work) {
			dropped = dropQueued(work);
			work.waitingReplies.clear();
			this.#droppedQueued += dropped;
		}
		for (const [id, stream] of this.#streams) {
			if (stream.chatId !== chatId) continue;
			stream.done = true;
			if (stream.timer !== undefined) this.#o.timers.clear(stream.timer);
			this.#streams.delete(id);
		}
		const stopped = await this.#gate.cancel(this.#o.port, chatId, ids, this.#o.log, CHANNEL);
		if (work) {
			for (const id of ids) work.requests.delete(id);
			this.#stopTyping(work);
		}
		if (dropped) this.#o.log(`telegram: /stop in chat ${chatId}: ${dropped} waiting message(s) dropped`);
		this.#reply(chatId, stopReply(stopped > 0 || ids.length > 0, dropped));
	}

	async #ask(message: IncomingMessage, text: string, role: ChatRole): Promise<void> {
		const chatId = message.chat_id;
		const work = this.#work(chatId);
		if (!work) return this.#reply(chatId, "The board is answering too many chats at once; try again in a minute.");
		const steering = [...work.requests.values()].some((t) => t.started);
		let requestId = 0;
		const outcome = await this.#o.router.publish({
			type: "in_message", channel: CHANNEL, chat_id: chatId, sender_id: message.sender_id, message_id: String(message.message_id), text, role,
		}, {
			events: ["agent_start", "message_start", "message_update", "agent_end"],
			onEvent: (event) => this.#onEvent(chatId, event),
		});
		if (outcome.kind === "failed") return this.#reply(chatId, outcome.error);
		if (outcome.kind !== "agent") return;
		requestId = outcome.request_id;
		if (!work.requests.has(requestId)) this.#track(work, requestId, { started: false, steering });
		this.#startTyping(chatId, work);
	}

	#work(chatId: string): ChatWork | undefined {
		let work = this.#chats.get(chatId);
		if (work) return work;
		if (this.#chats.size >= TELEGRAM_CHATS_TRACKED_MAX) {
			const idle = [...this.#chats].find(([, w]) => !w.requests.size && !w.pending);
			if (!idle) return undefined;
			this.#chats.delete(idle[0]);
		}
		work = { requests: new Map(), tail: Promise.resolve(), pending: 0, epoch: 0, sending: -1, waitingReplies: new Set(), lastSendMs: -Infinity, typingSince: 0 };
		this.#chats.set(chatId, work);
		return work;
	}

	#track(work: ChatWork, id: number, tracked: Tracked): void {
		work.requests.set(id, tracked);
		if (work.requests.size > TELEGRAM_REQUESTS_PER_CHAT_MAX) work.requests.delete(work.requests.keys().next().value as number);
	}

	// Events of a request this channel submitted (may come before submit resolves).
	#onEvent(chatId: string, event: AgentEvent): void {
		const work = this.#chats.get(chatId);
		if (!work) return;
		const id = event.request_id;
		switch (event.type) {
			case "agent_start":
				this.#track(work, id, { started: true, steering: false });
				this.#startTyping(chatId, work);
				return;
			case "message_start": {
				// A new round or a retried attempt: the preview starts over.
				const stream = this.#streams.get(id);
				if (stream) stream.text = "";
				return;
			}
			case "message_update": {
				if (event.delta.type !== "text" || this.#gate.stopped(chatId, id)) return;
				let stream = this.#streams.get(id);
				if (!stream) {
					stream = { chatId, text: "", shown: "", lastEditMs: -Infinity, done: false };
					this.#streams.set(id, stream);
				}
				if (stream.done) return;
				stream.text += event.delta.text;
				this.#scheduleEdit(stream);
				return;
			}
			case "agent_end":
				this.#finish(work, id);
				return;
		}
	}

	// A request ended: forget it, and the interrupts that joined it (they never start).
	#finish(work: ChatWork, id: number): void {
		work.requests.delete(id);
		for (const [other, tracked] of work.requests) if (tracked.steering && !tracked.started && other > id) work.requests.delete(other);
		if (!work.requests.size) this.#stopTyping(work);
	}

	// ---- outbound ----

	/** From the router: this channel's out_message and agent_stage events. */
	deliver(event: OutEvent): void {
		if (this.#stopped) return;
		const work = this.#work(event.chat_id);
		if (!work) {
			this.#o.log(`telegram: dropped ${event.type} for chat ${event.chat_id}: too many chats in flight`);
			return;
		}
		if (this.#gate.drops(event)) {
			if (event.type === "out_message" && event.request_id) this.#finish(work, event.request_id);
			return;
		}
		if (event.type === "agent_stage") {
			this.#enqueue(event.chat_id, work, () => this.#sendText(event.chat_id, `… ${event.text}`, false), "progress");
			return;
		}
		const stream = this.#streams.get(event.request_id);
		if (stream) {
			stream.done = true;
			if (stream.timer !== undefined) this.#o.timers.clear(stream.timer);
			this.#streams.delete(event.request_id);
		}
		if (event.request_id) this.#finish(work, event.request_id);
		const chunks = chunk(event.text || "(empty answer)");
		this.#enqueue(event.chat_id, work, async () => {
			for (let i = 0; i < chunks.length; i++) {
				if (i === 0 && stream?.messageId !== undefined) await this.#finalEdit(event.chat_id, stream.messageId, chunks[0], stream.shown === chunks[0]);
				else await this.#sendText(event.chat_id, chunks[i], true);
			}
		});
	}

	#reply(chatId: string, text: string): void {
		const work = this.#work(chatId);
		if (!work) {
			this.#o.log(`telegram: dropped a reply to chat ${chatId}: too many chats in flight`);
			return;
		}
		// A burst of messages refused alike (the agent is busy) gets that sentence
		// once, not once each: repeats would fill the outbox and crowd out answers.
		if (work.waitingReplies.has(text)) return;
		work.waitingReplies.add(text);
		const queued = this.#enqueue(chatId, work, () => {
			work.waitingReplies.delete(text);
			return this.#sendText(chatId, text, false);
		}, "answer");
		if (!queued) work.waitingReplies.delete(text);
	}

	#scheduleEdit(stream: Stream): void {
		if (stream.timer !== undefined || stream.done) return;
		const wait = Math.max(0, stream.lastEditMs + TELEGRAM_EDIT_INTERVAL_MS - this.#o.now());
		stream.timer = this.#o.timers.set(() => {
			stream.timer = undefined;
			const work = this.#chats.get(stream.chatId);
			if (!work || stream.done) return;
			// At most one preview waits in the outbox: it takes the newest text when it runs.
			this.#enqueue(stream.chatId, work, async () => {
				// Never a secret, nor the start of one that is still arriving.
				const shown = fitUnits(clip(maskSecretsGrowing(stream.text), TELEGRAM_MESSAGE_MAX_CHARS), TELEGRAM_MESSAGE_MAX_CHARS);
				if (stream.done || !shown.trim() || shown === stream.shown) return;
				stream.lastEditMs = this.#o.now();
				stream.shown = shown;
				if (stream.messageId === undefined) stream.messageId = await this.#sendText(stream.chatId, shown, false);
				else await this.#editText(stream.chatId, stream.messageId, shown, false);
			}, "progress");
		}, wait);
	}

	/** Queues op in the chat's outbox; false when there is no room for its kind (progress skipped; an answer dropped, logged). */
	#enqueue(chatId: string, work: ChatWork, op: () => Promise<unknown>, kind: "answer" | "progress" = "answer"): boolean {
		if (kind === "progress" && work.pending >= TELEGRAM_CHAT_OUTBOX_MAX) return false;
		if (work.pending >= TELEGRAM_CHAT_ANSWERS_MAX) {
			this.#o.log(`telegram: chat ${chatId} has ${work.pending} messages waiting; one more was dropped`);
			return false;
		}
		const epoch = work.epoch;
		work.pending++;
		work.tail = work.tail.then(async () => {
			try {
				// Dropped by a /stop since it was queued (counted there).
				if (this.#stopped || epoch !== work.epoch) return;
				work.sending = epoch;
				await op();
			} catch (error) {
				if (epoch === work.epoch) this.#o.log(`telegram: sending to chat ${chatId} failed: ${messageOf(error)}`);
			} finally {
				work.sending = -1;
				if (epoch === work.epoch) work.pending--;
			}
		});
		return true;
	}

	// Resolves with the new message's id.
	async #sendText(chatId: string, text: string, html: boolean): Promise<number | undefined> {
		const result = await this.#formatted(chatId, "sendMessage", { chat_id: chatId, text }, text, html);
		const id = (result as { message_id?: unknown } | undefined)?.message_id;
		return typeof id === "number" ? id : undefined;
	}

	/**
	 * The answer into its streamed preview. When Telegram refused every attempt
	 * with 429 or a 5xx (it answered, so the preview was left as it was), the
	 * answer goes as a new message: the person must not be left with a preview.
	 * Other failures (a 400, a dropped connection after which the edit may have
	 * landed), and a preview that already shows the whole text (only its
	 * formatting was to change), are not repeated as a new message, which would
	 * say it twice.
	 */
	async #finalEdit(chatId: string, messageId: number, text: string, shown: boolean): Promise<void> {
		try {
			await this.#editText(chatId, messageId, text, true);
		} catch (error) {
			if (shown || this.#stopped || !(error instanceof BotApiError && error.kind === "api" && (error.code === 429 || error.code >= 500))) throw error;
			this.#o.log(`telegram: the answer could not replace its preview in chat ${chatId} (${messageOf(error)}); sending it as a new message`);
			await this.#sendText(chatId, text, true);
		}
	}

	async #editText(chatId: string, messageId: number, text: string, html: boolean): Promise<void> {
		await this.#formatted(chatId, "editMessageText", { chat_id: chatId, message_id: messageId, text }, text, html);
	}

	// HTML first; a 400 (the markup was refused) once more as plain text.
	async #formatted(chatId: string, method: string, params: Record<string, unknown>, text: string, html: boolean): Promise<unknown> {
		if (html) {
			try {
				return await this.#outbound(chatId, method, { ...params, text: toHtml(text), parse_mode: "HTML" });
			} catch (error) {
				if (!(error instanceof BotApiError && error.kind === "api" && error.code === 400)) throw error;
				this.#o.log(`telegram: ${messageOf(error)}; sending it as plain text`);
			}
		}
		return this.#outbound(chatId, method, params);
	}

	// One outbound call: the chat's send interval, 429s waited out, network errors retried, all bounded.
	async #outbound(chatId: string, method: string, params: Record<string, unknown>): Promise<unknown> {
		const work = this.#chats.get(chatId);
		let lastError: unknown;
		for (let attempt = 1; attempt <= TELEGRAM_SEND_RETRIES && !this.#stopped; attempt++) {
			if (work) {
				const wait = work.lastSendMs + TELEGRAM_CHAT_SEND_INTERVAL_MS - this.#o.now();
				if (wait > 0) await this.#sleep(wait);
				// A /stop meanwhile: this call is not made (nor another attempt).
				if (work.sending !== work.epoch) throw new Error("dropped by /stop");
				work.lastSendMs = this.#o.now();
			}
			try {
				return await this.#o.api.call(method, params, { signal: this.#aborter.signal });
			} catch (error) {
				lastError = error;
				if (!(error instanceof BotApiError) || error.kind === "aborted") throw error;
				if (error.kind === "api" && error.retryAfterMs === undefined && error.code !== 429 && error.code < 500) throw error;
				const wait = error.retryAfterMs ?? TELEGRAM_BACKOFF_START_MS * attempt;
				this.#o.log(`telegram: ${error.message}; ${method} again in ${Math.round(wait / 1000)} s`);
				await this.#sleep(wait);
			}
		}
		throw lastError ?? new Error("telegram stopped");
	}

	#startTyping(chatId: string, work: ChatWork): void {
		if (work.typingTimer !== undefined || this.#stopped) return;
		work.typingSince = this.#o.now();
		const tick = () => {
			if (this.#stopped || !work.requests.size || this.#o.now() - work.typingSince > TELEGRAM_TYPING_MAX_MS) {
				this.#stopTyping(work);
				return;
			}
			this.#o.api.call("sendChatAction", { chat_id: chatId, action: "typing" }, { signal: this.#aborter.signal }).catch((error) => {
				if (!this.#stopped) this.#o.log(`telegram: typing in chat ${chatId}: ${messageOf(error)}`);
			});
			work.typingTimer = this.#o.timers.set(tick, TELEGRAM_TYPING_INTERVAL_MS);
		};
		tick();
	}

	#stopTyping(work: ChatWork): void {
		if (work.typingTimer !== undefined) this.#o.timers.clear(work.typingTimer);
		work.typingTimer = undefined;
	}

	#sleep(ms: number): Promise<void> {
		return this.#sleeps.sleep(ms);
	}
}
