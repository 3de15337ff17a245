// channels/telegram/pairing: who may talk to the board (secure by default). Only
// paired chats reach the agent. A one-time code, printed on the console, pairs a
// chat that sends `/pair CODE`; the first paired chat is the owner, later ones
// users. A code expires after TELEGRAM_PAIR_CODE_TTL_MS and dies after
// TELEGRAM_PAIR_ATTEMPTS_MAX wrong guesses from all chats together, so guessing
// 40 bits five times is hopeless. Unpaired chats get a short hint, at most once
// per chat per TELEGRAM_HINT_INTERVAL_MS and TELEGRAM_HINTS_PER_HOUR overall.
//
// Revoking the owner leaves no owner: the next chat that pairs becomes it (no
// user is promoted behind the owner's back).
//
// Known limit: codes come from Math.random (XS has no crypto RNG on lin; the
// device's comes from the hardware RNG through the same call); the attempt limit,
// not the generator, is what stops guessing.
import {
	TELEGRAM_HINT_INTERVAL_MS, TELEGRAM_HINTS_PER_HOUR, TELEGRAM_PAIR_ATTEMPTS_MAX, TELEGRAM_PAIR_CODE_CHARS,
	TELEGRAM_PAIR_CODE_TTL_MS, TELEGRAM_PAIRED_CHATS_MAX, TELEGRAM_UNPAIRED_TRACKED_MAX,
} from "budgets";
import type { Role } from "router/types";
import type { PairedChat, StateFile } from "channels/telegram/store";

// No 0/O, 1/I/L: a code is read off a console and typed on a phone.
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const HOUR_MS = 3_600_000;

export type PairOutcome =
	| { ok: true; role: Role; already?: boolean }
	| { ok: false; reason: string };

export class Pairing {
	readonly #file: StateFile;
	readonly #now: () => number;
	readonly #wallNow: () => number;
	#code?: { text: string; expires: number; wrong: number };
	#hints = new Map<string, number>();
	#hourStart = 0;
	#hoursHints = 0;

	/** now: monotonic ms (expiry, hint limits); wallNow: the time saved with a pairing. */
	constructor(file: StateFile, now: () => number, wallNow: () => number = () => Date.now()) {
		this.#file = file;
		this.#now = now;
		this.#wallNow = wallNow;
	}

	/** A new one-time code (the previous one stops working). */
	newCode(random: () => number = Math.random): string {
		let text = "";
		for (let i = 0; i < TELEGRAM_PAIR_CODE_CHARS; i++) text += ALPHABET[Math.floor(random() * ALPHABET.length) % ALPHABET.length];
		this.#code = { text, expires: this.#now() + TELEGRAM_PAIR_CODE_TTL_MS, wrong: 0 };
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

	/** The chat's role, undefined when it is not paired. */
	roleOf(chatId: string): Role | undefined {
		return this.#file.state.chats.find((c) => c.chat_id === chatId)?.role;
	}

	/** Tries a code sent from a chat. Saving may throw (storage); the code is then still valid. */
	pair(chatId: string, name: string, code: string): PairOutcome {
		const known = this.roleOf(chatId);
		if (known) return { ok: true, role: known, already: true };
		const current = this.#code;
		if (!current || current.expires <= this.#now()) {
			this.#code = undefined;
			return { ok: false, reason: "there is no valid pairing code now: run `telegram pair` on the board's console for a new one, then send /pair CODE" };
		}
		if (code.trim().toUpperCase() !== current.text) {
			current.wrong++;
			if (current.wrong >= TELEGRAM_PAIR_ATTEMPTS_MAX) this.#code = undefined;
			return { ok: false, reason: "that code is wrong: check it on the board's console (`telegram pair` prints a new one)" };
		}
		const chats = this.#file.state.chats;
		if (chats.length >= TELEGRAM_PAIRED_CHATS_MAX) {
			return { ok: false, reason: `${TELEGRAM_PAIRED_CHATS_MAX} chats are paired already: revoke one with \`telegram revoke CHAT\` on the console first` };
		}
		const role: Role = chats.some((c) => c.role === "owner") ? "user" : "owner";
		this.#file.update({ chats: [...chats, { chat_id: chatId, role, name, paired_ms: this.#wallNow() }] });
		this.#code = undefined;
		return { ok: true, role };
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
		const now = this.#now();
		const last = this.#hints.get(chatId);
		if (last !== undefined && now - last < TELEGRAM_HINT_INTERVAL_MS) return false;
		if (now - this.#hourStart >= HOUR_MS) {
			this.#hourStart = now;
			this.#hoursHints = 0;
		}
		if (this.#hoursHints >= TELEGRAM_HINTS_PER_HOUR) return false;
		this.#hoursHints++;
		this.#hints.delete(chatId);
		this.#hints.set(chatId, now);
		if (this.#hints.size > TELEGRAM_UNPAIRED_TRACKED_MAX) this.#hints.delete(this.#hints.keys().next().value as string);
		return true;
	}
}
