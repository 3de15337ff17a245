// channels/telegram/store: what the Telegram channel keeps on flash, in one small
// file, telegram/state.json, replaced whole and power-loss safely (util/files):
//   {"version": 1, "bot_id": 123, "offset": 456,
//    "chats": [{"chat_id": "42", "role": "owner", "name": "ann", "paired_ms": 1760000000000}]}
// - offset: the next getUpdates offset. The channel saves it BEFORE it acts on a
//   batch, so after a reboot or a power loss nothing already fetched is acted on
//   twice (at most once: an update whose handling a power loss cut short is not
//   retried). bot_id: the bot the offset belongs to (offsets are per bot; a new
//   token starts from Telegram's own unconfirmed updates).
// - chats: the paired chats; the first paired is the owner, later ones users.
// A damaged file is kept aside as .bad and the channel starts unpaired (safe: the
// console prints a new pairing code), with a warning.
import type { Directory } from "util/io";
import { TELEGRAM_PAIRED_CHATS_MAX, TELEGRAM_PAIRING_FILE_MAX_BYTES } from "budgets";
import { isObject } from "util/values";
import type { Role } from "router/types";
import { decodeText, keepAside, readWhole, staleTempRemoved, utf8, writeAtomically } from "util/files";

export const STATE_FILE = "state.json";

export interface PairedChat {
	chat_id: string;
	role: Role;
	name: string;
	paired_ms: number;
}

export interface TelegramState {
	bot_id: number;
	offset: number;
	chats: PairedChat[];
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Checks the file's JSON; a sentence on what is wrong, or the state. */
export function readState(text: string): TelegramState | string {
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		return "it is not JSON";
	}
	if (!isObject(json) || json.version !== 1) return "it has no version 1";
	if (!isCount(json.bot_id) || !isCount(json.offset)) return "bot_id or offset is not a whole number";
	if (!Array.isArray(json.chats) || json.chats.length > TELEGRAM_PAIRED_CHATS_MAX) return "chats is not a list of paired chats";
	const chats: PairedChat[] = [];
	for (const chat of json.chats) {
		if (!isObject(chat) || typeof chat.chat_id !== "string" || !/^-?\d{1,20}$/.test(chat.chat_id)) return "a chat has no chat_id";
		if (chat.role !== "owner" && chat.role !== "user") return `chat ${chat.chat_id} has no role`;
		if (typeof chat.name !== "string" || !isCount(chat.paired_ms)) return `chat ${chat.chat_id} has no name or time`;
		chats.push({ chat_id: chat.chat_id, role: chat.role, name: chat.name.slice(0, 64), paired_ms: chat.paired_ms });
	}
	return { bot_id: json.bot_id, offset: json.offset, chats };
}

export class StateFile {
	readonly #directory: Directory;
	#state: TelegramState = { bot_id: 0, offset: 0, chats: [] };

	/** Opens telegram/state.json; warning set when it was damaged (kept aside) and the state starts empty. IO errors throw. */
	constructor(directory: Directory, readonly warn: (line: string) => void) {
		this.#directory = directory;
		staleTempRemoved(directory, STATE_FILE);
		const read = readWhole(directory, STATE_FILE, TELEGRAM_PAIRING_FILE_MAX_BYTES);
		if (read.kind === "missing") return;
		const text = read.kind === "ok" ? decodeText(read.bytes) : undefined;
		const state = text === undefined ? (read.kind === "too_big" ? "it is too large" : "it is not UTF-8 text") : readState(text);
		if (typeof state === "string") {
			const aside = keepAside(directory, STATE_FILE);
			warn(`telegram: the saved state was damaged (${state}); it is kept as telegram/${aside}, and every chat must pair again`);
			return;
		}
		this.#state = state;
	}

	get state(): Readonly<TelegramState> {
		return this.#state;
	}

	/** Replaces the file with changes applied. Throws when the storage cannot (the state in memory then stays as it was). */
	update(change: Partial<TelegramState>): void {
		const next = { ...this.#state, ...change };
		writeAtomically(this.#directory, STATE_FILE, utf8(JSON.stringify({ version: 1, ...next })));
		this.#state = next;
	}
}
