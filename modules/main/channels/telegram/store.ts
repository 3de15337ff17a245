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
import { TELEGRAM_PAIRING_FILE_MAX_BYTES } from "budgets";
import { readPairedChats, type PairedChat } from "channels/pairing";
import { ChannelStateFile, readVersioned, STATE_FILE } from "channels/state";

export { STATE_FILE };

export type { PairedChat };

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
	const json = readVersioned(text);
	if (typeof json === "string") return json;
	if (!isCount(json.bot_id) || !isCount(json.offset)) return "bot_id or offset is not a whole number";
	const chats = readPairedChats(json.chats, /^-?\d{1,20}$/);
	if (typeof chats === "string") return chats;
	return { bot_id: json.bot_id, offset: json.offset, chats };
}

/** telegram/state.json (channels/state). */
export class StateFile extends ChannelStateFile<TelegramState> {
	constructor(directory: Directory, warn: (line: string) => void) {
		super(directory, { name: "telegram", maxBytes: TELEGRAM_PAIRING_FILE_MAX_BYTES, read: readState, empty: { bot_id: 0, offset: 0, chats: [] }, warn });
	}
}
