// channels/qq/channel: the QQ channel (SPEC §8). It owns the gateway session
// (channels/qq/gateway), the chats' recent messages (the passive-reply targets),
// their requests in flight (for /stop) and their outboxes; the pairing is the
// shared channels/pairing over this channel's state file.
//
// Inbound: C2C_MESSAGE_CREATE and GROUP_AT_MESSAGE_CREATE. A message id seen
// before is dropped (QQ may deliver one twice). An unpaired chat's text goes
// nowhere but /pair (and a rate-limited hint); a paired chat's commands (/stop,
// /new, /session, /help) are handled here, anything else goes to the router as
// an in_message with the chat's role, which usually submits it to the agent
// with every flag on: a message in a chat whose request runs steers it.
//
// Outbound: QQ allows passive replies only: each names a received message
// (msg_id) and a msg_seq, at most QQ_REPLIES_PER_MESSAGE_MAX per message,
// within 60 minutes (C2C) or 5 minutes (group) of it. An answer goes to the
// chat's newest message that still has room; it is split at
// QQ_MESSAGE_MAX_CHARS into at most the replies left (the last piece says it
// was cut). A retry after a network error or 5xx reuses its msg_seq, so QQ
// refuses a duplicate instead of showing the text twice. agent_stage events are
// not sent: each would spend one of the five replies.
//
// /stop empties the chat's outbox (counted; a reply on its way finishes, its
// remaining pieces do not follow), the StopGate drops what the stopped requests
// still send, and the confirmation goes first (as telegram/channel).
import {
	QQ_C2C_REPLY_WINDOW_MS, QQ_GROUP_REPLY_WINDOW_MS, QQ_MESSAGE_MAX_CHARS, QQ_RECENT_MESSAGES_PER_CHAT, QQ_REPLIES_PER_MESSAGE_MAX,
	QQ_REPLY_WINDOW_MARGIN_MS, QQ_SEEN_IDS_MAX, QQ_SEND_RETRIES, QQ_SEND_RETRY_START_MS, QQ_CHAT_OUTBOX_MAX, QQ_CHATS_TRACKED_MAX,
	QQ_REQUESTS_PER_CHAT_MAX,
} from "budgets";
import type { AgentEvent, OutEvent } from "core/types";
import type { Watch } from "router/router";
import type { AgentPort, InMessage, OutboundSink, ChatRole, RouteOutcome } from "router/types";
import { messageOf } from "util/errors";
import type { Pairing } from "channels/pairing";
import { dropQueued, helpText, pairChat, sessionReply, stopReply, StopGate } from "channels/chat";
import { Sleeps } from "channels/sleeps";
import { chunk, fitUnits, units } from "channels/telegram/format";
import { QqApiError, type Timers } from "channels/qq/api";
import type { GatewayHealth } from "channels/qq/gateway";
import { GatewayPayloadError, messagesPath, parseMessage, type QqMessage } from "channels/qq/payload";

/** This channel's name in requests, events and bindings. */
export const CHANNEL = "qq";

export const PAIRING_HINT = "This board answers paired chats only. To pair this chat, send /pair CODE with the code its console prints (`qq pair` there makes one).";

const CUT_NOTE = "\n… (cut: QQ allows 5 replies to one message; ask for the rest)";

/** The API as the channel uses it (channels/qq/api's QqApi; a fake in tests). */
export interface QqSender {
	send(path: string, body: Record<string, unknown>): Promise<unknown>;
}

export interface QqChannelOptions {
	api: QqSender;
	router: { publish(message: InMessage, watch?: Watch): Promise<RouteOutcome> };
	/** The router's cancel and command (setup gives the router: a /stop and a /session pass through it as messages do). */
	port: Pick<AgentPort, "cancel" | "command">;
	pairing: Pairing;
	timers: Timers;
	/** Monotonic ms. */
	now(): number;
	log(line: string): void;
	notify(line: string): void;
	/** The gateway's health for status lines (the gateway is the setup's). */
	health?: () => { health: GatewayHealth; username: string; problem: string };
}

interface Received {
	id: string;
	at: number;
	windowMs: number;
	/** msg_seq values used so far. */
	replies: number;
}

interface ChatWork {
	recent: Received[];
	requests: Set<number>;
	tail: Promise<void>;
	/** Replies of the current epoch waiting or on their way. */
	pending: number;
	/** /stop starts a new epoch: the replies queued before it are dropped. */
	epoch: number;
	/** The epoch of the reply on its way, -1 when none is. */
	sending: number;
}

export class QqChannel implements OutboundSink {
	readonly #o: QqChannelOptions;
	readonly #chats = new Map<string, ChatWork>();
	readonly #seen = new Set<string>();
	readonly #sleeps: Sleeps;
	#stopped = false;
	/** Replies sent (counted for status and tests). */
	sent = 0;
	readonly #gate = new StopGate();
	/** Waiting replies /stop dropped from outboxes. */
	#droppedQueued = 0;

	constructor(options: QqChannelOptions) {
		this.#o = options;
		this.#sleeps = new Sleeps(options.timers);
	}

	status(): string[] {
		const h = this.#o.health?.();
		const lines = [`qq: ${h?.health ?? "stopped"}${h?.username ? ` as ${h.username}` : ""}`];
		if (h?.problem) lines.push(`last problem: ${h.problem}`);
		const busy = [...this.#chats].filter(([, w]) => w.requests.size).map(([id, w]) => `${id} (${w.requests.size})`);
		lines.push(`chats with requests in flight: ${busy.length ? busy.join(", ") : "none"}; replies sent: ${this.sent}`);
		if (this.#droppedQueued || this.#gate.dropped) lines.push(`dropped after /stop: ${this.#droppedQueued} waiting replies, ${this.#gate.dropped} late ones`);
		return lines;
	}

	async stop(): Promise<void> {
		this.#stopped = true;
		this.#sleeps.stop();
		await Promise.all([...this.#chats.values()].map((w) => w.tail));
	}

	/** From the gateway: one dispatch (a message event, or another to ignore). */
	onDispatch(t: string, d: unknown): void {
		if (t !== "C2C_MESSAGE_CREATE" && t !== "GROUP_AT_MESSAGE_CREATE") return;
		let message: QqMessage;
		try {
			message = parseMessage(t, d);
		} catch (error) {
			this.#o.log(`qq: ${error instanceof GatewayPayloadError ? error.message : messageOf(error)}; skipped`);
			return;
		}
		if (this.#seen.has(message.id)) {
			this.#o.log(`qq: message ${message.id} came again; dropped`);
			return;
		}
		this.#seen.add(message.id);
		if (this.#seen.size > QQ_SEEN_IDS_MAX) this.#seen.delete(this.#seen.values().next().value as string);
		this.#handle(message).catch((error) => this.#o.log(`qq: message ${message.id} failed: ${messageOf(error)}`));
	}

	// ---- inbound ----

	async #handle(message: QqMessage): Promise<void> {
		const chatId = message.chat_id;
		const work = this.#work(chatId);
		if (!work) return this.#o.log(`qq: message in chat ${chatId} dropped: too many chats in flight`);
		work.recent.unshift({ id: message.id, at: this.#o.now(), windowMs: message.kind === "group" ? QQ_GROUP_REPLY_WINDOW_MS : QQ_C2C_REPLY_WINDOW_MS, replies: 0 });
		if (work.recent.length > QQ_RECENT_MESSAGES_PER_CHAT) work.recent.length = QQ_RECENT_MESSAGES_PER_CHAT;
		const text = message.text;
		const command = /^\/([A-Za-z0-9_]{1,32})(?:\s+([\s\S]*))?$/.exec(text);
		const name = command?.[1].toLowerCase();
		const args = (command?.[2] ?? "").trim();
		// In a group the sender's role: the member who paired it has the chat's role, the others are users unless the owner said otherwise.
		const role = this.#o.pairing.roleOf(chatId, message.kind === "group" ? message.sender_id : undefined);
		if (name === "pair") return this.#pair(message, args);
		if (!role) {
			if (this.#o.pairing.mayHint(chatId)) this.#reply(chatId, PAIRING_HINT);
			else this.#o.log(`qq: message from unpaired chat ${chatId} ignored`);
			return;
		}
		if (!text) return this.#o.log(`qq: message ${message.id} has no text; skipped`);
		switch (name) {
			case "start":
			case "help":
				return this.#reply(chatId, helpText(role));
			case "stop":
				return this.#stopChat(chatId, work);
			case "new":
			case "session":
				return this.#reply(chatId, await sessionReply(this.#o.port, CHANNEL, chatId, role, name === "new" ? "new" : args));
		}
		await this.#ask(message, role, work);
	}

	async #pair(message: QqMessage, code: string): Promise<void> {
		const outcome = pairChat(this.#o.pairing, message.chat_id, message.kind === "group" ? "group" : "", code, this.#o.log, CHANNEL, message.kind === "group" ? message.sender_id : undefined);
		if (outcome.paired) this.#o.notify(`qq: chat ${message.chat_id} paired as ${outcome.paired}`);
		if (outcome.reply) this.#reply(message.chat_id, outcome.reply);
	}


	async #stopChat(chatId: string, work: ChatWork): Promise<void> {
		const ids = [...work.requests];
		const dropped = dropQueued(work);
		this.#droppedQueued += dropped;
		const stopped = await this.#gate.cancel(this.#o.port, chatId, ids, this.#o.log, CHANNEL);
		for (const id of ids) work.requests.delete(id);
		if (dropped) this.#o.log(`qq: /stop in chat ${chatId}: ${dropped} waiting reply(ies) dropped`);
		this.#reply(chatId, stopReply(stopped > 0 || ids.length > 0, dropped));
	}

	async #ask(message: QqMessage, role: ChatRole, work: ChatWork): Promise<void> {
		const chatId = message.chat_id;
		const outcome = await this.#o.router.publish({
			type: "in_message", channel: CHANNEL, chat_id: chatId, sender_id: message.sender_id, message_id: message.id, text: message.text, role,
		}, {
			events: ["agent_start", "agent_end"],
			onEvent: (event) => this.#onEvent(work, event),
		});
		if (outcome.kind === "failed") return this.#reply(chatId, outcome.error);
		if (outcome.kind === "agent") this.#track(work, outcome.request_id);
	}

	#onEvent(work: ChatWork, event: AgentEvent): void {
		if (event.type === "agent_start") this.#track(work, event.request_id);
		else if (event.type === "agent_end") work.requests.delete(event.request_id);
	}

	#track(work: ChatWork, id: number): void {
		work.requests.add(id);
		if (work.requests.size > QQ_REQUESTS_PER_CHAT_MAX) work.requests.delete(work.requests.values().next().value as number);
	}

	#work(chatId: string): ChatWork | undefined {
		let work = this.#chats.get(chatId);
		if (work) return work;
		if (this.#chats.size >= QQ_CHATS_TRACKED_MAX) {
			const now = this.#o.now();
			const idle = [...this.#chats].find(([, w]) => !w.requests.size && !w.pending && !w.recent.some((r) => now < r.at + r.windowMs));
			if (!idle) return undefined;
			this.#chats.delete(idle[0]);
		}
		work = { recent: [], requests: new Set(), tail: Promise.resolve(), pending: 0, epoch: 0, sending: -1 };
		this.#chats.set(chatId, work);
		return work;
	}

	// ---- outbound ----

	/** From the router: this channel's out_message events (agent_stage is not sent: see the file's head). */
	deliver(event: OutEvent): void {
		if (this.#stopped || event.type !== "out_message") return;
		const work = this.#chats.get(event.chat_id);
		if (event.request_id && work) work.requests.delete(event.request_id);
		if (this.#gate.drops(event)) return;
		this.#reply(event.chat_id, event.text || "(empty answer)");
	}

	// The chat's newest message a reply may still answer, or undefined.
	#target(work: ChatWork): Received | undefined {
		const now = this.#o.now();
		return work.recent.find((r) => r.replies < QQ_REPLIES_PER_MESSAGE_MAX && now < r.at + r.windowMs - QQ_REPLY_WINDOW_MARGIN_MS);
	}

	#reply(chatId: string, text: string): void {
		const work = this.#chats.get(chatId);
		if (!work) return this.#o.log(`qq: a reply to chat ${chatId} was dropped: no message of that chat to answer`);
		if (work.pending >= QQ_CHAT_OUTBOX_MAX) return this.#o.log(`qq: chat ${chatId} has ${work.pending} replies waiting; one more was dropped`);
		const epoch = work.epoch;
		work.pending++;
		work.tail = work.tail.then(async () => {
			try {
				// Dropped by a /stop since it was queued (counted there).
				if (this.#stopped || epoch !== work.epoch) return;
				work.sending = epoch;
				await this.#sendAll(chatId, work, text);
			} catch (error) {
				this.#o.log(`qq: replying in chat ${chatId} failed: ${messageOf(error)}`);
			} finally {
				work.sending = -1;
				if (epoch === work.epoch) work.pending--;
			}
		});
	}

	async #sendAll(chatId: string, work: ChatWork, text: string): Promise<void> {
		const target = this.#target(work);
		if (!target) {
			this.#o.log(`qq: an answer in chat ${chatId} was dropped: QQ's reply window for its messages has closed (5 replies, or ${QQ_GROUP_REPLY_WINDOW_MS / 60_000} min in a group, ${QQ_C2C_REPLY_WINDOW_MS / 60_000} min in C2C)`);
			return;
		}
		const left = QQ_REPLIES_PER_MESSAGE_MAX - target.replies;
		let pieces = chunk(text, QQ_MESSAGE_MAX_CHARS);
		if (pieces.length > left) {
			const last = fitUnits(pieces[left - 1], QQ_MESSAGE_MAX_CHARS - units(CUT_NOTE)) + CUT_NOTE;
			pieces = [...pieces.slice(0, left - 1), last];
		}
		for (const content of pieces) {
			if (this.#stopped || work.sending !== work.epoch) return;
			const seq = ++target.replies;
			await this.#send(chatId, { content, msg_type: 0, msg_id: target.id, msg_seq: seq });
		}
	}

	// One reply: network errors and 5xx retried with the same msg_seq (QQ refuses a repeat), bounded.
	async #send(chatId: string, body: Record<string, unknown>): Promise<void> {
		const path = messagesPath(chatId);
		for (let attempt = 1; ; attempt++) {
			try {
				await this.#o.api.send(path, body);
				this.sent++;
				return;
			} catch (error) {
				const retry = error instanceof QqApiError && (error.kind === "network" || (error.kind === "api" && (error.status >= 500 || error.status === 429 || error.status === 401)));
				if (!retry || attempt >= QQ_SEND_RETRIES || this.#stopped) throw error;
				const wait = QQ_SEND_RETRY_START_MS * attempt;
				this.#o.log(`qq: ${messageOf(error)}; sending again in ${Math.round(wait / 1000)} s`);
				await this.#sleeps.sleep(wait);
			}
		}
	}
}
