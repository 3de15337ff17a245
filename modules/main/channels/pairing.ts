// channels/pairing: who may talk to the board (secure by default), one piece for
// every chat channel (Telegram, QQ), each with its own store. Only
// paired chats reach the agent. A one-time code, printed on the console, pairs a
// chat that sends `/pair CODE`; the first paired chat is the owner, later ones
// users. A code expires after PAIRING_CODE_TTL_MS. Wrong guesses are counted
// per chat: after PAIRING_ATTEMPTS_MAX a chat's next guess is read only after
// PAIRING_GUESS_DELAY_MS, doubling with each further wrong one up to an hour,
// and a guess sent before is not read at all. Wrong guesses never void the code
// (they did once: five from any chats, and a stranger could keep the owner from
// pairing). With 31^8 codes (about 40 bits) living 10 minutes, even 10,000
// chats guessing 5 times each have one chance in 17 million.
//
// What unpaired chats are sent is rate-limited (mayHint, mayAnswerPair):
// PAIRING_HINTS_PER_HOUR answers to all of them together; the hint at most once
// per chat per PAIRING_HINT_INTERVAL_MS; a refused /pair is answered for each
// guess read, else (no code, a chat waiting) once per chat per interval too.
//
// Revoking the owner leaves no owner: the next chat that pairs becomes it (no
// user is promoted behind the owner's back).
//
// The owner is a person. A group paired with /pair gives the role to the member
// who sent it (sender_id); the group's other members are users, unless the
// owner says otherwise on the console (`NAME members CHAT owner`). A group
// saved without sender_id (paired before this rule) has only users until then.
//
// Codes come from util/random (host/random: getrandom on lin, the hardware RNG
// on the board), never Math.random, which XS seeds alike on every lin start.
import {
	PAIRING_HINT_INTERVAL_MS, PAIRING_HINTS_PER_HOUR, PAIRING_ATTEMPTS_MAX, PAIRING_CODE_CHARS,
	PAIRING_CODE_TTL_MS, PAIRING_CHATS_MAX, PAIRING_UNPAIRED_TRACKED_MAX,
	PAIRING_GUESS_DELAY_MS, PAIRING_GUESS_DELAY_MAX_MS, PAIRING_GUESSERS_TRACKED_MAX,
} from "budgets";
import type { ChatRole } from "router/types";
import { isObject } from "util/values";
import { randomCode } from "util/random";

export interface PairedChat {
	chat_id: string;
	role: ChatRole;
	name: string;
	paired_ms: number;
	/** A group: the member who paired it, who has role. */
	sender_id?: string;
	/** A group: its other members' role ("user" unless the owner set it). */
	members?: ChatRole;
}

/** Where a channel keeps its paired chats (its state file); update throws when the storage cannot. */
export interface PairingStore {
	readonly state: { readonly chats: readonly PairedChat[] };
	update(change: { chats: PairedChat[] }): void;
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Checks a saved list of paired chats (ids by the channel's pattern); a sentence on what is wrong, or the chats. */
export function readPairedChats(list: unknown, validId: RegExp): PairedChat[] | string {
	if (!Array.isArray(list) || list.length > PAIRING_CHATS_MAX) return "chats is not a list of paired chats";
	const chats: PairedChat[] = [];
	for (const chat of list) {
		if (!isObject(chat) || typeof chat.chat_id !== "string" || !validId.test(chat.chat_id)) return "a chat has no chat_id";
		if (chat.role !== "owner" && chat.role !== "user") return `chat ${chat.chat_id} has no role`;
		if (typeof chat.name !== "string" || !isCount(chat.paired_ms)) return `chat ${chat.chat_id} has no name or time`;
		if (chat.sender_id !== undefined && !(typeof chat.sender_id === "string" && chat.sender_id.length <= 128)) return `chat ${chat.chat_id} has a bad sender_id`;
		if (chat.members !== undefined && chat.members !== "owner" && chat.members !== "user") return `chat ${chat.chat_id} has a bad members role`;
		const read: PairedChat = { chat_id: chat.chat_id, role: chat.role, name: chat.name.slice(0, 64), paired_ms: chat.paired_ms };
		if (chat.sender_id !== undefined) read.sender_id = chat.sender_id;
		if (chat.members !== undefined) read.members = chat.members;
		chats.push(read);
	}
	return chats;
}

// No 0/O, 1/I/L: a code is read off a console and typed on a phone.
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const HOUR_MS = 3_600_000;

export type PairOutcome =
	| { ok: true; role: ChatRole; already?: boolean }
	/** checked: the guess was read (false: no code now, or the chat must wait). */
	| { ok: false; reason: string; checked: boolean };

export class Pairing {
	readonly #file: PairingStore;
	readonly #now: () => number;
	readonly #wallNow: () => number;
	readonly #console: string;
	readonly #isGroup: (chatId: string) => boolean;
	#code?: { text: string; expires: number };
	#hints = new Map<string, number>();
	#hourStart = 0;
	#hoursHints = 0;
	/** Per chat: wrong codes sent, and until when its next guess is not read. */
	#guesses = new Map<string, { wrong: number; until: number }>();

	/**
	 * now: monotonic ms (expiry, hint limits); wallNow: the time saved with a
	 * pairing; consoleName: the channel's console command ("telegram", "qq") the
	 * sentences name.
	 */
	constructor(file: PairingStore, now: () => number, wallNow: () => number = () => Date.now(), consoleName = "telegram", isGroup: (chatId: string) => boolean = (id) => id.startsWith("-") || id.startsWith("group:")) {
		this.#isGroup = isGroup;
		this.#file = file;
		this.#now = now;
		this.#wallNow = wallNow;
		this.#console = consoleName;
	}

	/** A new one-time code (the previous one stops working). */
	newCode(): string {
		const text = randomCode(ALPHABET, PAIRING_CODE_CHARS);
		this.#code = { text, expires: this.#now() + PAIRING_CODE_TTL_MS };
		return text;
	}

	/** Seconds the current code still works, 0 when there is none. */
	codeSecondsLeft(): number {
		if (!this.#code) return 0;
		return Math.max(0, Math.ceil((this.#code.expires - this.#now()) / 1000));
	}

	list(): readonly PairedChat[] {
		return this.#file.state.chats;
	}

	/** The owner's private chats: where a secret for the owner (a web login code) may go. Never a group, where users read along. */
	ownerChats(): string[] {
		return this.#file.state.chats.filter((c) => c.role === "owner" && c.sender_id === undefined && !this.#isGroup(c.chat_id)).map((c) => c.chat_id);
	}

	/**
	 * The role of a message's sender, undefined when the chat is not paired.
	 * senderId is given for a group's messages (undefined: a private chat, whose
	 * one person has the chat's role): the member who paired the group has its
	 * role, the others the group's members role (user unless set).
	 */
	roleOf(chatId: string, senderId?: string): ChatRole | undefined {
		const chat = this.#file.state.chats.find((c) => c.chat_id === chatId);
		if (!chat) return undefined;
		if (senderId === undefined) return chat.role;
		if (chat.sender_id !== undefined && chat.sender_id === senderId) return chat.role;
		return chat.members === "owner" ? chat.role : "user";
	}

	/** Sets a paired group's members role (the console's `NAME members CHAT ROLE`); a sentence when it cannot. Saving may throw. */
	setMembers(chatId: string, members: ChatRole): string | undefined {
		const chats = this.#file.state.chats;
		const chat = chats.find((c) => c.chat_id === chatId);
		if (!chat) return `chat ${chatId} is not paired`;
		if (chat.sender_id === undefined && !this.#isGroup(chatId)) return `chat ${chatId} is a private chat: its one person has its role (${chat.role})`;
		this.#file.update({ chats: chats.map((c) => (c === chat ? { ...c, members } : c)) });
		return undefined;
	}

	/**
	 * Tries a code sent from a chat. Saving may throw (storage); the code is then
	 * still valid. A refusal says whether the guess was read (checked).
	 */
	pair(chatId: string, name: string, code: string, senderId?: string): PairOutcome {
		const known = this.roleOf(chatId, senderId);
		if (known) return { ok: true, role: known, already: true };
		const now = this.#now();
		const guesses = this.#guesses.get(chatId);
		if (guesses && guesses.until > now) {
			const minutes = Math.ceil((guesses.until - now) / 60_000);
			return { ok: false, reason: `too many wrong codes from this chat: the next one is read in ${minutes} min`, checked: false };
		}
		const current = this.#code;
		if (!current || current.expires <= now) {
			this.#code = undefined;
			return { ok: false, reason: `there is no valid pairing code now: run \`${this.#console} pair\` on the board's console for a new one, then send /pair CODE`, checked: false };
		}
		if (code.trim().toUpperCase() !== current.text) {
			this.#wrongGuess(chatId, guesses, now);
			return { ok: false, reason: `that code is wrong: check it on the board's console (\`${this.#console} pair\` prints a new one)`, checked: true };
		}
		const chats = this.#file.state.chats;
		if (chats.length >= PAIRING_CHATS_MAX) {
			return { ok: false, reason: `${PAIRING_CHATS_MAX} chats are paired already: revoke one with \`${this.#console} revoke CHAT\` on the console first`, checked: true };
		}
		const role: ChatRole = chats.some((c) => c.role === "owner") ? "user" : "owner";
		const paired: PairedChat = { chat_id: chatId, role, name, paired_ms: this.#wallNow() };
		if (senderId !== undefined) {
			paired.sender_id = senderId;
			paired.members = "user";
		}
		this.#file.update({ chats: [...chats, paired] });
		this.#code = undefined;
		this.#guesses.delete(chatId);
		return { ok: true, role };
	}

	// A chat's wrong code: counted; past the free ones its next guess waits, doubling.
	#wrongGuess(chatId: string, guesses: { wrong: number; until: number } | undefined, now: number): void {
		const entry = guesses ?? { wrong: 0, until: 0 };
		entry.wrong++;
		if (entry.wrong >= PAIRING_ATTEMPTS_MAX) {
			const doublings = Math.min(entry.wrong - PAIRING_ATTEMPTS_MAX, 12);
			entry.until = now + Math.min(PAIRING_GUESS_DELAY_MS * 2 ** doublings, PAIRING_GUESS_DELAY_MAX_MS);
		}
		this.#guesses.delete(chatId);
		this.#guesses.set(chatId, entry);
		if (this.#guesses.size > PAIRING_GUESSERS_TRACKED_MAX) {
			// The oldest chat not waiting is forgotten (one that waits keeps its wait); if all wait, the oldest.
			let forget: string | undefined;
			for (const [id, g] of this.#guesses) {
				if (g.until <= now) {
					forget = id;
					break;
				}
			}
			this.#guesses.delete(forget ?? (this.#guesses.keys().next().value as string));
		}
	}

	/**
	 * True when the refusal of a /pair from an unpaired chat may be sent (and
	 * counts it): a guess that was read is answered while the hour's budget
	 * lasts; any other refusal (no code, a chat that must wait) as the hint is.
	 */
	mayAnswerPair(chatId: string, checked: boolean): boolean {
		return checked ? this.#spend() : this.#perChat(`${chatId}\n/pair`);
	}

	/** Unpairs a chat; false when it was not paired. Saving may throw. */
	revoke(chatId: string): boolean {
		const chats = this.#file.state.chats;
		if (!chats.some((c) => c.chat_id === chatId)) return false;
		this.#file.update({ chats: chats.filter((c) => c.chat_id !== chatId) });
		return true;
	}

	/** True when an unpaired chat may be sent the hint now (and counts it). */
	mayHint(chatId: string): boolean {
		return this.#perChat(chatId);
	}

	// At most once per key per PAIRING_HINT_INTERVAL_MS, within the hour's budget.
	#perChat(key: string): boolean {
		const now = this.#now();
		const last = this.#hints.get(key);
		if (last !== undefined && now - last < PAIRING_HINT_INTERVAL_MS) return false;
		if (!this.#spend()) return false;
		this.#hints.delete(key);
		this.#hints.set(key, now);
		if (this.#hints.size > PAIRING_UNPAIRED_TRACKED_MAX) this.#hints.delete(this.#hints.keys().next().value as string);
		return true;
	}

	// One answer to an unpaired chat out of the hour's PAIRING_HINTS_PER_HOUR; false when they are spent.
	#spend(): boolean {
		const now = this.#now();
		if (now - this.#hourStart >= HOUR_MS) {
			this.#hourStart = now;
			this.#hoursHints = 0;
		}
		if (this.#hoursHints >= PAIRING_HINTS_PER_HOUR) return false;
		this.#hoursHints++;
		return true;
	}
}
