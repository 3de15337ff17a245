// memory/profile: the editable profile: the persona (how the assistant behaves) and
// the user notes (what the user told it about themselves), each one bounded text
// file in the memory directory (persona.md, user_notes.md), changed power-loss
// safely (util/files writeAtomically). Without a persona file the built-in DEFAULT_PERSONA is
// used; setting the persona to empty text goes back to it. A file that is not
// UTF-8 text or is over its limit is moved to <name>.bad on open and the default
// (persona) or nothing (notes) is used.
import type { Directory } from "util/io";
import { PROFILE_NOTES_MAX_BYTES, PROFILE_PERSONA_MAX_BYTES } from "budgets";
import { byteLength, exists, utf8, writeAtomically } from "util/files";
import { loadFile, refuseIfUnreadable, textFile } from "memory/flash";
import type { Log } from "memory/types";

export type ProfileField = "persona" | "user_notes";
export const PROFILE_FIELDS: readonly ProfileField[] = ["persona", "user_notes"];

export const DEFAULT_PERSONA =
	"You are xsclaw, a small assistant running on an ESP32-S3 board. Answer briefly and plainly, in the user's language. " +
	"Use your tools when they help, and say what failed and what the user can do when something goes wrong. " +
	"Save lasting facts with memory_write, and what the user tells you about themselves with profile_update (user_notes).";

const FILES: Record<ProfileField, { path: string; maxBytes: number; label: string }> = {
	persona: { path: "persona.md", maxBytes: PROFILE_PERSONA_MAX_BYTES, label: "the persona" },
	user_notes: { path: "user_notes.md", maxBytes: PROFILE_NOTES_MAX_BYTES, label: "the user notes" },
};

export class Profile {
	#directory: Directory;
	#values: Record<ProfileField, string> = { persona: "", user_notes: "" };
	/** Why a field's file could not be read at open; while set, changes to it are refused (they would replace it). */
	#unreadable: Partial<Record<ProfileField, string>> = {};
	/** The prompt section, made when first asked after a change (update) and kept until the next. */
	#context: string | undefined = undefined;

	/** Reads both files. Never throws: problems are logged and defaults used. */
	constructor(directory: Directory, log: Log) {
		this.#directory = directory;
		for (const field of PROFILE_FIELDS) {
			const { path, maxBytes } = FILES[field];
			const fallback = field === "persona" ? "the built-in persona is used" : "the user notes start empty";
			const unreadable = (why: string) => { this.#unreadable[field] = why; };
			this.#values[field] = (loadFile(directory, { path, maxBytes, decode: textFile, area: "profile", fallback, unreadable }, log) ?? "").trim();
		}
	}

	/** The persona in effect (the built-in one when none is saved). */
	get persona(): string {
		return this.#values.persona || DEFAULT_PERSONA;
	}

	/** True when the persona is the built-in one. */
	get personaIsDefault(): boolean {
		return !this.#values.persona;
	}

	/** "" when there are none. */
	get userNotes(): string {
		return this.#values.user_notes;
	}

	/**
	 * Replaces or appends to (on a new line) a field and saves it. Empty text with
	 * replace clears it (the persona goes back to the default). Throws a sentence
	 * when the result is over the field's limit; nothing changes then.
	 */
	update(field: ProfileField, text: string, mode: "replace" | "append" = "replace"): string {
		const spec = FILES[field];
		if (!spec) throw new Error(`"${field}" is not a profile field: use persona or user_notes.`);
		const added = text.trim();
		if (mode === "append" && !added) throw new Error(`there is nothing to add to ${spec.label}: give the text.`);
		const current = this.#values[field];
		const next = mode === "append" ? (current ? current + "\n" + added : added) : added;
		const size = byteLength(next);
		if (size > spec.maxBytes)
			throw new Error(`${spec.label} would be ${size} bytes; at most ${spec.maxBytes} fit: shorten the text, or replace ${spec.label} instead of appending.`);
		refuseIfUnreadable(spec.path, this.#unreadable[field]);
		if (next) writeAtomically(this.#directory, spec.path, utf8(next + "\n"));
		else if (exists(this.#directory, spec.path)) this.#directory.delete(spec.path);
		this.#values[field] = next;
		this.#context = undefined;
		return next || (field === "persona" ? DEFAULT_PERSONA : "");
	}

	/** The prompt section: the persona, then the user notes when there are any (and withNotes). */
	context(withNotes = true): string {
		if (!withNotes) return this.persona;
		if (this.#context === undefined) {
			const notes = this.userNotes;
			this.#context = notes ? `${this.persona}\n\nWhat the user told you about themselves (user notes):\n${notes}` : this.persona;
		}
		return this.#context;
	}
}
