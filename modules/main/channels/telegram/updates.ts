// channels/telegram/updates: reads getUpdates' result (a list of Update objects)
// into the few fields the channel uses. Telegram's objects carry far more; what
// is not needed is ignored. Checked strictly: an update whose message lacks what
// a reply needs is skipped with a reason (logged by the channel), and its
// update_id still moves the offset on, so a malformed update is never fetched
// again and never ends the channel. Fuzzed in test/unit/telegram_fuzz.
import { TELEGRAM_TEXT_MAX_CHARS, TELEGRAM_UPDATES_LIMIT } from "budgets";
import { isObject } from "util/values";

export type ChatType = "private" | "group" | "supergroup" | "channel";
const CHAT_TYPES: readonly ChatType[] = ["private", "group", "supergroup", "channel"];

export interface IncomingMessage {
	message_id: number;
	/** Decimal text of the chat id (ids may exceed 32 bits; they fit a double). */
	chat_id: string;
	chat_type: ChatType;
	sender_id: string;
	/** first name or username, for `telegram list`. */
	sender_name: string;
	text: string;
	/** Entities of type mention/bot_command: [offset, length] in UTF-16 units, as Telegram counts. */
	mentions: Array<{ type: "mention" | "bot_command"; offset: number; length: number }>;
	/** The sender id of the message this one replies to, when it replies to one. */
	reply_to_sender_id?: string;
}

export interface ParsedUpdate {
	update_id: number;
	/** undefined with skipped set: nothing to answer. */
	message?: IncomingMessage;
	/** Why nothing is answered (a non-text message, a malformed one). */
	skipped?: string;
}

export interface ParsedUpdates {
	updates: ParsedUpdate[];
	/** The offset for the next getUpdates: the highest update_id + 1, or the one given when none. */
	next_offset: number;
	/** Entries without a usable update_id (cannot even be confirmed). */
	unreadable: number;
}

function isId(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value);
}

function readMessage(value: unknown): IncomingMessage | string {
	if (!isObject(value)) return "the message is not an object";
	const chat = value.chat;
	const from = value.from;
	if (!isId(value.message_id) || value.message_id <= 0) return "the message has no message_id";
	if (!isObject(chat) || !isId(chat.id)) return "the message has no chat id";
	if (!CHAT_TYPES.includes(chat.type as ChatType)) return "the message's chat has no known type";
	if (typeof value.text !== "string") return "the message has no text (only text messages are answered)";
	if (!isObject(from) || !isId(from.id)) return "the message has no sender";
	const text = value.text.length > TELEGRAM_TEXT_MAX_CHARS ? value.text.slice(0, TELEGRAM_TEXT_MAX_CHARS) : value.text;
	const name = typeof from.username === "string" ? from.username : typeof from.first_name === "string" ? from.first_name : "";
	const mentions: IncomingMessage["mentions"] = [];
	if (Array.isArray(value.entities)) {
		for (const entity of value.entities.slice(0, 32)) {
			if (!isObject(entity) || (entity.type !== "mention" && entity.type !== "bot_command")) continue;
			if (!isId(entity.offset) || !isId(entity.length) || entity.offset < 0 || entity.length <= 0 || entity.offset + entity.length > text.length) continue;
			mentions.push({ type: entity.type, offset: entity.offset, length: entity.length });
		}
	}
	const message: IncomingMessage = {
		message_id: value.message_id, chat_id: String(chat.id), chat_type: chat.type as ChatType,
		sender_id: String(from.id), sender_name: name.slice(0, 64), text, mentions,
	};
	const reply = value.reply_to_message;
	if (isObject(reply) && isObject(reply.from) && isId(reply.from.id)) message.reply_to_sender_id = String(reply.from.id);
	return message;
}

/**
 * The first update's update_id in the start of a getUpdates answer (what
 * BotApi.head read of one too large to take whole), or undefined. Telegram
 * writes update_id as each update's first member, so it is in the first bytes.
 */
export function firstUpdateId(head: string): number | undefined {
	const found = /"update_id"\s*:\s*(\d{1,16})\b/.exec(head);
	const id = found ? Number(found[1]) : NaN;
	return Number.isSafeInteger(id) ? id : undefined;
}

/** Reads getUpdates' result. Throws a TypeError with a sentence when it is not a list. */
export function parseUpdates(result: unknown, offset: number): ParsedUpdates {
	if (!Array.isArray(result)) throw new TypeError("Telegram's getUpdates result is not a list");
	const updates: ParsedUpdate[] = [];
	let next = offset;
	let unreadable = 0;
	// More than asked for is Telegram's bug or an attack: read only what was asked; the rest comes again.
	for (const value of result.slice(0, TELEGRAM_UPDATES_LIMIT)) {
		if (!isObject(value) || !isId(value.update_id) || value.update_id < 0) {
			unreadable++;
			continue;
		}
		const id = value.update_id;
		if (id < offset) continue; // already confirmed: a server that ignores offset must not make us answer twice
		next = Math.max(next, id + 1);
		if (value.message === undefined) {
			updates.push({ update_id: id, skipped: "not a message (edits, channel posts and the like are not answered)" });
			continue;
		}
		const message = readMessage(value.message);
		updates.push(typeof message === "string" ? { update_id: id, skipped: message } : { update_id: id, message });
	}
	return { updates, next_offset: next, unreadable };
}
