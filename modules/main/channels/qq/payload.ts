// channels/qq/payload: the QQ gateway's payloads and events as the channel uses
// them (modules/main/channels/qq/NOTES.md gives the sources). Every payload is one
// JSON text {op, d, s, t}; parseGatewayPayload checks its shape, parseMessage
// takes the few fields of C2C_MESSAGE_CREATE and GROUP_AT_MESSAGE_CREATE. Both
// throw a GatewayPayloadError with a sentence for anything else, never another
// error: the gateway logs it and goes on.
import { QQ_PAYLOAD_MAX_BYTES, QQ_TEXT_MAX_CHARS } from "budgets";
import { isObject } from "util/values";

/** Gateway opcodes (QQ bot docs, "opcode"). */
export const Op = Object.freeze({
	DISPATCH: 0,
	HEARTBEAT: 1,
	IDENTIFY: 2,
	RESUME: 6,
	RECONNECT: 7,
	INVALID_SESSION: 9,
	HELLO: 10,
	HEARTBEAT_ACK: 11,
});

/** The intent bit for C2C_MESSAGE_CREATE and GROUP_AT_MESSAGE_CREATE (GROUP_AND_C2C_EVENT). */
export const GROUP_AND_C2C_EVENT = 1 << 25;

export class GatewayPayloadError extends Error {
	override name = "GatewayPayloadError";
}

export interface GatewayPayload {
	op: number;
	d: unknown;
	/** The sequence number of a dispatch; undefined when absent. */
	s?: number;
	/** The event name of a dispatch. */
	t?: string;
}

/** A received message the channel may answer. chat_id: "c2c:OPENID" or "group:GROUP_OPENID". */
export interface QqMessage {
	kind: "c2c" | "group";
	/** The message's id: the msg_id of every passive reply to it. */
	id: string;
	chat_id: string;
	/** The sender's openid (user_openid in C2C, member_openid in a group). */
	sender_id: string;
	text: string;
}

const ID = /^[\x21-\x7e]{1,128}$/;

/** Reads one gateway text frame. */
export function parseGatewayPayload(text: string): GatewayPayload {
	if (text.length > QQ_PAYLOAD_MAX_BYTES) throw new GatewayPayloadError(`a gateway payload of ${text.length} characters is over ${QQ_PAYLOAD_MAX_BYTES}`);
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		throw new GatewayPayloadError(`a gateway payload is not JSON (${text.length} characters)`);
	}
	if (!isObject(json)) throw new GatewayPayloadError("a gateway payload is not a JSON object");
	const op = json.op;
	if (typeof op !== "number" || !Number.isInteger(op) || op < 0 || op > 255) throw new GatewayPayloadError("a gateway payload has no opcode");
	const payload: GatewayPayload = { op, d: json.d };
	if (json.s !== undefined && json.s !== null) {
		if (typeof json.s !== "number" || !Number.isSafeInteger(json.s) || json.s < 0) throw new GatewayPayloadError(`a gateway payload (op ${op}) has a sequence number that is not a whole number`);
		payload.s = json.s;
	}
	if (json.t !== undefined && json.t !== null) {
		if (typeof json.t !== "string" || json.t.length > 64) throw new GatewayPayloadError(`a gateway payload (op ${op}) has an event name that is not a short string`);
		payload.t = json.t;
	}
	if (op === Op.DISPATCH && payload.t === undefined) throw new GatewayPayloadError("a dispatch has no event name");
	return payload;
}

/** Hello's heartbeat_interval in ms. */
export function readHello(d: unknown): number {
	const interval = isObject(d) ? d.heartbeat_interval : undefined;
	if (typeof interval !== "number" || !(interval > 0) || !Number.isFinite(interval)) throw new GatewayPayloadError("Hello has no heartbeat_interval");
	return interval;
}

/** READY's session id and the bot's name. */
export function readReady(d: unknown): { session_id: string; username: string } {
	if (!isObject(d) || typeof d.session_id !== "string" || !d.session_id || d.session_id.length > 128) throw new GatewayPayloadError("READY has no session_id");
	const user = isObject(d.user) ? d.user : {};
	return { session_id: d.session_id, username: typeof user.username === "string" ? user.username.slice(0, 64) : "" };
}

/** The message of a C2C_MESSAGE_CREATE or GROUP_AT_MESSAGE_CREATE dispatch. */
export function parseMessage(t: string, d: unknown): QqMessage {
	const group = t === "GROUP_AT_MESSAGE_CREATE";
	if (!group && t !== "C2C_MESSAGE_CREATE") throw new GatewayPayloadError(`${t} is not a message event`);
	if (!isObject(d)) throw new GatewayPayloadError(`${t} has no event object`);
	if (typeof d.id !== "string" || !ID.test(d.id)) throw new GatewayPayloadError(`${t} has no message id`);
	const author = isObject(d.author) ? d.author : {};
	const sender = group ? author.member_openid : author.user_openid;
	if (typeof sender !== "string" || !ID.test(sender)) throw new GatewayPayloadError(`${t} has no sender openid`);
	let chat = sender;
	if (group) {
		if (typeof d.group_openid !== "string" || !ID.test(d.group_openid)) throw new GatewayPayloadError(`${t} has no group_openid`);
		chat = d.group_openid;
	}
	const content = typeof d.content === "string" ? d.content : "";
	return {
		kind: group ? "group" : "c2c",
		id: d.id,
		chat_id: `${group ? "group" : "c2c"}:${chat}`,
		sender_id: sender,
		// A group @ message starts with a space where the mention was.
		text: content.slice(0, QQ_TEXT_MAX_CHARS).trim(),
	};
}

/** The send path for a chat id ("c2c:X" -> /v2/users/X/messages, "group:X" -> /v2/groups/X/messages). */
export function messagesPath(chatId: string): string {
	const colon = chatId.indexOf(":");
	const kind = chatId.slice(0, colon), id = chatId.slice(colon + 1);
	if (colon < 0 || !ID.test(id) || !/^[0-9A-Za-z_-]+$/.test(id)) throw new GatewayPayloadError(`${chatId.slice(0, 80)} is not a QQ chat id`);
	if (kind === "c2c") return `/v2/users/${id}/messages`;
	if (kind === "group") return `/v2/groups/${id}/messages`;
	throw new GatewayPayloadError(`${chatId.slice(0, 80)} is not a QQ chat id`);
}
