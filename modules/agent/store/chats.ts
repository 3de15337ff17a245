// store/chats: which session each channel's chat talks in, kept in
// sessions/chats.json ("<channel>:<chat_id>" -> session id, and which chat made
// each session: the per-chat quotas of store/sessions read it). Written whole to
// a temp file, flushed, renamed; a file that cannot be read is kept aside and
// chats start new sessions. At most SESSION_CHATS_MAX chats are remembered, the
// oldest mapping forgotten first (its chat starts a new session next time).
import { SESSION_CHATS_FILE_MAX_BYTES, SESSION_CHATS_MAX, SESSIONS_MAX } from "budgets";
import { SESSIONS_DIR, SESSION_ID_PATTERN, type Log } from "store/session";
import { decodeText, keepAside, readWhole, staleTempRemoved, writeAtomically } from "util/files";
import { messageOf } from "util/errors";
import type { Directory } from "util/io";

const CHATS_PATH = `${SESSIONS_DIR}/chats.json`;

export class ChatSessions {
	readonly #root: Directory;
	readonly #log: Log;
	/** "<channel>:<chat_id>" -> id, in insertion order (oldest first). */
	readonly #chats = new Map<string, string>();
	/** id -> the "<channel>:<chat_id>" whose new session it was (kept in chats.json; sessions made before it was kept have none). */
	readonly #made = new Map<string, string>();

	constructor(root: Directory, log: Log) {
		this.#root = root;
		this.#log = log;
		this.#load();
	}

	#load(): void {
		staleTempRemoved(this.#root, CHATS_PATH);   // an unfinished save: the old map stands
		try {
			const read = readWhole(this.#root, CHATS_PATH, SESSION_CHATS_FILE_MAX_BYTES);
			if (read.kind === "missing") return;
			if (read.kind === "too_big") throw new Error(`it is ${read.size} bytes, more than ${SESSION_CHATS_FILE_MAX_BYTES}`);
			const text = decodeText(read.bytes);
			if (text === undefined) throw new Error("it is not UTF-8 text");
			const parsed = JSON.parse(text) as { chats?: unknown };
			if (!parsed || typeof parsed.chats !== "object" || parsed.chats === null || Array.isArray(parsed.chats)) throw new Error("it has no chats object");
			for (const [key, id] of Object.entries(parsed.chats as Record<string, unknown>)) {
				if (typeof id === "string" && SESSION_ID_PATTERN.test(id)) this.#chats.set(key, id);
			}
			// Absent in files written before the per-chat quotas: those sessions have no maker.
			const made = (parsed as { made?: unknown }).made;
			if (made && typeof made === "object" && !Array.isArray(made)) {
				for (const [id, key] of Object.entries(made as Record<string, unknown>)) {
					if (this.#made.size >= SESSIONS_MAX * 2) break;
					if (typeof key === "string" && SESSION_ID_PATTERN.test(id)) this.#made.set(id, key);
				}
			}
		} catch (error) {
			const kept = keepAside(this.#root, CHATS_PATH);
			this.#log(`store: the chat-to-session map cannot be read (${messageOf(error)}); it was kept as ${kept} and chats start new sessions`);
		}
	}

	#save(): void {
		writeAtomically(this.#root, CHATS_PATH, ArrayBuffer.fromString(JSON.stringify({ version: 1, chats: Object.fromEntries(this.#chats), made: Object.fromEntries(this.#made) })));
	}

	/** The session the chat ("<channel>:<chat_id>") talks in, if any. */
	sessionOf(key: string): string | undefined {
		return this.#chats.get(key);
	}

	/** Which chat made the session, if known. */
	makerOf(id: string): string | undefined {
		return this.#made.get(id);
	}

	/** Notes that the chat made the session (saved with the next map()). */
	made(id: string, key: string): void {
		this.#made.set(id, key);
	}

	/**
	 * Makes id the chat's session and saves the map. Returns the session the chat
	 * left when no chat talks in it any more (as the map stood before its oldest
	 * entries beyond SESSION_CHATS_MAX were forgotten), else undefined.
	 */
	map(key: string, id: string): string | undefined {
		const previous = this.#chats.get(key);
		this.#chats.delete(key);
		this.#chats.set(key, id);
		const left = previous && previous !== id && !this.talkedIn(previous) ? previous : undefined;
		// Bounded: the oldest mapping goes first (its chat starts a new session next time).
		for (const oldest of this.#chats.keys()) {
			if (this.#chats.size <= SESSION_CHATS_MAX) break;
			this.#chats.delete(oldest);
		}
		this.#save();
		return left;
	}

	/** Whether some chat talks in the session (maps to it). */
	talkedIn(id: string): boolean {
		for (const mapped of this.#chats.values()) if (mapped === id) return true;
		return false;
	}

	/** The sessions some chat talks in. */
	current(): Set<string> {
		return new Set(this.#chats.values());
	}

	/** A deleted session: no chat talks in it and none made it any more (saved when that changed anything). */
	forget(id: string): void {
		let changed = this.#made.delete(id);
		for (const [key, value] of [...this.#chats]) {
			if (value === id) {
				this.#chats.delete(key);
				changed = true;
			}
		}
		if (changed) this.#save();
	}
}
