// memory/light: long-term memory in light mode: one MEMORY.md a person can read and
// edit, at most MEMORY_LIGHT_MAX_BYTES. The same tools map onto it:
//   memory_write  appends "- <text> #tag ..." (with id: replaces that line)
//   memory_read   returns line <id>
//   memory_search ranks lines as full mode ranks records ("#word"s are the tags)
//   memory_forget removes line <id>, or the one line containing the given text
// Ids are line numbers (1 = the first line), so forgetting a line renumbers the
// ones below it; every answer names the current number. Blank lines and markdown
// headings ("# ...") keep their numbers but are not memories. No dates are kept.
// Changes rewrite the file power-loss safely (util/files writeAtomically). A file that is not
// UTF-8 text or is over the limit is moved to MEMORY.md.bad on open.
import type { Directory } from "util/io";
import { MEMORY_LIGHT_MAX_BYTES } from "budgets";
import { byteLength, utf8, writeAtomically } from "util/files";
import { loadFile, refuseIfUnreadable, textFile } from "memory/flash";
import { MemoryIndex, checkedText, normalTags } from "memory/text";
import type { Log, LongTermMemory, MemoryEntry, MemoryUsage } from "memory/types";
import { lines as textLines } from "util/text";

export const LIGHT_FILE = "MEMORY.md";
const PROMPT_HEADER = `Notes from ${LIGHT_FILE} (line number: text); memory_forget with the number removes a wrong one:`;
const RELEVANT_HEADER = `More lines of ${LIGHT_FILE} that may matter to this message (line number: text):`;
const renderForPrompt = (e: MemoryEntry) => `${e.id}: ${e.text}`;
const HEADING = /^#{1,6}(\s|$)/;
const TAG_IN_LINE = /(?:^|\s)#([^\s#,]+)/g;
const BULLET = /^[-*]\s+/;

function isEntry(line: string): boolean {
	return line.trim().length > 0 && !HEADING.test(line.trim());
}

function entryOf(line: string, index: number): MemoryEntry {
	const tags: string[] = [];
	for (const match of line.matchAll(TAG_IN_LINE)) {
		const tag = match[1].toLowerCase();
		if (!tags.includes(tag)) tags.push(tag);
	}
	return { id: String(index + 1), text: line.trim().replace(BULLET, ""), tags, created: 0, updated: 0 };
}

export class LightMemory implements LongTermMemory {
	readonly mode = "light" as const;
	#directory: Directory;
	#lines: string[] = [];
	/** The entries' index for the prompt sections and search; made again after each change (#commit). */
	#index: MemoryIndex | undefined = undefined;
	/** Why MEMORY.md could not be read at open; while set, changes are refused (they would replace it). */
	#unreadable: string | undefined;

	/** Opens (or starts) MEMORY.md in directory. Never throws: problems are logged and memory starts empty. */
	constructor(directory: Directory, log: Log) {
		this.#directory = directory;
		const unreadable = (why: string) => { this.#unreadable = why; };
		const text = loadFile(directory, { path: LIGHT_FILE, maxBytes: MEMORY_LIGHT_MAX_BYTES, decode: textFile, area: "memory", fallback: "long-term memory starts empty", unreadable }, log);
		if (!text) return;
		this.#lines = textLines(text);
		if (this.#lines[this.#lines.length - 1] === "") this.#lines.pop();
	}

	write(text: string, tags?: readonly string[], id?: string): MemoryEntry {
		const checked = checkedText(text).replace(/\s*[\r\n]+\s*/g, " ");
		const normal = normalTags(tags ?? []).filter((t) => !new RegExp(`(^|\\s)#${escape(t)}(\\s|$)`, "i").test(checked));
		const line = `- ${checked}${normal.length ? " " + normal.map((t) => "#" + t).join(" ") : ""}`;
		checkedText(line);   // the tags count against the line's bytes too
		const lines = this.#lines.slice();
		let index: number;
		if (id !== undefined) {
			index = this.#lineIndex(id);
			lines[index] = line;
		} else {
			index = lines.push(line) - 1;
		}
		this.#commit(lines);
		return entryOf(line, index);
	}

	read(id: string): MemoryEntry {
		const index = this.#lineIndex(id);
		return entryOf(this.#lines[index], index);
	}

	search(query: string, tag: string | undefined, limit: number): MemoryEntry[] {
		return this.#indexed().rank(query, tag, limit).map(copyOf);
	}

	forget(id: string): MemoryEntry {
		const index = /^\s*\d+\s*$/.test(id) ? this.#lineIndex(id) : this.#matchingLine(id);
		const entry = entryOf(this.#lines[index], index);
		const lines = this.#lines.slice();
		lines.splice(index, 1);
		this.#commit(lines);
		return entry;
	}

	list(): MemoryEntry[] {
		return this.#indexed().entries.map(copyOf);
	}

	usage(): MemoryUsage {
		return { entries: this.#indexed().entries.length, maxEntries: 0, bytes: this.#lines.length ? byteLength(this.#text(this.#lines)) : 0, maxBytes: MEMORY_LIGHT_MAX_BYTES };
	}

	context(budgetBytes: number): string | undefined {
		return this.#indexed().context(budgetBytes);
	}

	relevant(hint: string, stableBudgetBytes: number, budgetBytes: number): string | undefined {
		return this.#indexed().relevant(hint, stableBudgetBytes, budgetBytes);
	}

	#indexed(): MemoryIndex {
		if (this.#index) return this.#index;
		const entries: MemoryEntry[] = [];
		this.#lines.forEach((line, index) => {
			if (isEntry(line)) entries.push(entryOf(line, index));
		});
		return (this.#index = new MemoryIndex(entries, renderForPrompt, PROMPT_HEADER, RELEVANT_HEADER));
	}

	#text(lines: readonly string[]): string {
		return lines.join("\n") + "\n";
	}

	#lineIndex(id: string): number {
		const n = Number(id.trim());
		if (!/^\d+$/.test(id.trim()) || n < 1 || n > this.#lines.length || !isEntry(this.#lines[n - 1]))
			throw new Error(`there is no memory at line "${id}" of ${LIGHT_FILE}: search the memories to find the right line number.`);
		return n - 1;
	}

	#matchingLine(text: string): number {
		const wanted = text.trim().toLowerCase();
		if (!wanted) throw new Error("say which memory to forget: give its line number or some of its text.");
		const found: number[] = [];
		this.#lines.forEach((line, index) => {
			if (isEntry(line) && line.toLowerCase().includes(wanted)) found.push(index);
		});
		if (!found.length) throw new Error(`no line of ${LIGHT_FILE} contains "${text.trim()}": search the memories to find the line number.`);
		if (found.length > 1)
			throw new Error(`${found.length} lines contain "${text.trim()}" (lines ${found.map((i) => i + 1).join(", ")}): give the line number of the one to forget.`);
		return found[0];
	}

	// Writes first, then takes the new lines: a failed write leaves RAM as flash is.
	#commit(lines: string[]): void {
		const text = lines.length ? this.#text(lines) : "";
		const size = byteLength(text);
		if (size > MEMORY_LIGHT_MAX_BYTES)
			throw new Error(`${LIGHT_FILE} would grow to ${size} bytes; it holds at most ${MEMORY_LIGHT_MAX_BYTES}: forget lines that no longer matter, then save again.`);
		refuseIfUnreadable(LIGHT_FILE, this.#unreadable);
		writeAtomically(this.#directory, LIGHT_FILE, utf8(text));
		this.#lines = lines;
		this.#index = undefined;
	}
}

/** A copy the caller may change: the index's entries stay as they are. */
function copyOf(entry: MemoryEntry): MemoryEntry {
	return { ...entry, tags: entry.tags.slice() };
}

function escape(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
