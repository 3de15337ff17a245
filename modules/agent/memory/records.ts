// memory/records: long-term memory in full mode: records {id, text, tags, created,
// updated} kept in RAM and in one file, rewritten whole (temp, flush, atomic move:
// util/files writeAtomically) on every change. Memory changes are rare and small (a few per
// conversation, the file at most MEMORY_FILE_MAX_BYTES), so a whole rewrite is
// cheaper to get right than a log with compaction, and "old or new" follows from
// the rename alone.
//
// File format of <dir>/records.dat (version 1):
//   line 1: "xsclaw-memory 1 <crc32 of the body, 8 lowercase hex> <body length in bytes>\n"
//   body:   UTF-8 JSON {"next_id": <number>, "records": [{"id": "m<n>", "text": ...,
//           "tags": [...], "created": <ms>, "updated": <ms>}, ...]}, oldest first.
// The header lets open tell a torn or overwritten file from a good one before
// parsing; every record is then checked against the budgets. Anything wrong and the
// file is moved to records.dat.bad and memory starts empty (logged, never thrown).
//
// Ids are "m" + a counter that only grows (next_id), so a forgotten id never comes
// back meaning something else. "12" is accepted for "m12".
import type { Directory } from "util/io";
import { MEMORY_FILE_MAX_BYTES, MEMORY_RECORDS_MAX, MEMORY_RECORD_MAX_BYTES, MEMORY_TOTAL_TEXT_MAX_BYTES } from "budgets";
import { byteLength, decodeText, utf8, writeAtomically } from "util/files";
import { crc32 } from "util/crc32";
import { loadFile, refuseIfUnreadable } from "memory/flash";
import { MemoryIndex, checkedText, normalTags } from "memory/text";
import type { Log, LongTermMemory, MemoryEntry, MemoryUsage } from "memory/types";

export const RECORDS_FILE = "records.dat";
const MAGIC = "xsclaw-memory";
const VERSION = 1;
const HEADER_MAX_BYTES = 64;   // the header line is ~40 bytes; a longer first line is not ours
const HEADER_PATTERN = /^xsclaw-memory 1 ([0-9a-f]{8}) (\d{1,9})$/;
const ID_PATTERN = /^m([1-9]\d{0,8})$/;

interface State {
	nextId: number;
	records: MemoryEntry[];
}

/** The file's bytes for state. */
export function encodeRecords(state: State): ArrayBuffer {
	const body = utf8(JSON.stringify({ next_id: state.nextId, records: state.records }));
	const header = utf8(`${MAGIC} ${VERSION} ${crc32(new Uint8Array(body)).toString(16).padStart(8, "0")} ${body.byteLength}\n`);
	const bytes = new Uint8Array(header.byteLength + body.byteLength);
	bytes.set(new Uint8Array(header), 0);
	bytes.set(new Uint8Array(body), header.byteLength);
	return bytes.buffer;
}

/** The state in bytes, or a phrase saying why they are not a records file. */
export function decodeRecords(bytes: ArrayBuffer): State | string {
	const all = new Uint8Array(bytes);
	const newline = all.subarray(0, HEADER_MAX_BYTES).indexOf(0x0A);
	if (newline < 0) return "it has no xsclaw-memory header";
	const header = decodeText(bytes.slice(0, newline));
	const match = header === undefined ? null : HEADER_PATTERN.exec(header);
	if (!match) return "its header is not xsclaw-memory version 1";
	const body = bytes.slice(newline + 1);
	if (body.byteLength !== Number(match[2])) return `it holds ${body.byteLength} bytes of records where its header says ${match[2]} (torn write)`;
	if (crc32(new Uint8Array(body)) !== parseInt(match[1], 16)) return "its checksum does not match";
	const text = decodeText(body);
	if (text === undefined) return "it is not UTF-8 text";
	let document: unknown;
	try {
		document = JSON.parse(text);
	} catch {
		return "it is not JSON";
	}
	return checkDocument(document);
}

function checkDocument(document: unknown): State | string {
	if (typeof document !== "object" || document === null) return "it is not a records document";
	const { next_id: nextId, records } = document as { next_id?: unknown; records?: unknown };
	if (typeof nextId !== "number" || !Number.isSafeInteger(nextId) || nextId < 1) return "its next_id is not a positive whole number";
	if (!Array.isArray(records)) return "it has no records list";
	if (records.length > MEMORY_RECORDS_MAX) return `it holds ${records.length} records, more than ${MEMORY_RECORDS_MAX}`;
	const seen = new Set<string>();
	const result: MemoryEntry[] = [];
	let total = 0;
	for (const [index, raw] of records.entries()) {
		const problem = checkRecord(raw, nextId, seen);
		if (typeof problem === "string") return `record ${index + 1} ${problem}`;
		total += byteLength(problem.text);
		result.push(problem);
	}
	if (total > MEMORY_TOTAL_TEXT_MAX_BYTES) return `its records hold ${total} bytes of text, more than ${MEMORY_TOTAL_TEXT_MAX_BYTES}`;
	return { nextId, records: result };
}

function checkRecord(raw: unknown, nextId: number, seen: Set<string>): MemoryEntry | string {
	if (typeof raw !== "object" || raw === null) return "is not an object";
	const { id, text, tags, created, updated } = raw as Record<string, unknown>;
	const match = typeof id === "string" ? ID_PATTERN.exec(id) : null;
	if (!match || Number(match[1]) >= nextId) return "has no valid id";
	if (seen.has(id as string)) return `repeats the id ${id}`;
	seen.add(id as string);
	if (typeof text !== "string" || !text.trim() || byteLength(text) > MEMORY_RECORD_MAX_BYTES) return "has no valid text";
	if (!Array.isArray(tags) || !tags.every((t) => typeof t === "string")) return "has no valid tags";
	let normal: string[];
	try {
		normal = normalTags(tags as string[]);
	} catch {
		return "has a tag that is not valid";
	}
	if (normal.length !== tags.length || normal.some((t, i) => t !== tags[i])) return "has a tag that is not valid";
	if (typeof created !== "number" || typeof updated !== "number" || !Number.isFinite(created) || !Number.isFinite(updated)) return "has no valid dates";
	return { id: id as string, text, tags: normal, created, updated };
}

export class FullMemory implements LongTermMemory {
	readonly mode = "full" as const;
	#directory: Directory;
	#state: State = { nextId: 1, records: [] };
	/** The records' index for the prompt sections and search; made again after each change (#commit). */
	#index: MemoryIndex | undefined = undefined;
	#now: () => number;
	/** Why the records file could not be read at open; while set, changes are refused (they would replace it). */
	#unreadable: string | undefined;

	/** Opens (or starts) the records file in directory. Never throws: problems are logged and memory starts empty. */
	constructor(directory: Directory, log: Log, now: () => number = Date.now) {
		this.#directory = directory;
		this.#now = now;
		const decode = (bytes: ArrayBuffer) => {
			const state = decodeRecords(bytes);
			return typeof state === "string" ? { problem: state } : { value: state };
		};
		const unreadable = (why: string) => { this.#unreadable = why; };
		this.#state = loadFile(directory, { path: RECORDS_FILE, maxBytes: MEMORY_FILE_MAX_BYTES, decode, area: "memory", fallback: "long-term memory starts empty", unreadable }, log) ?? { nextId: 1, records: [] };
	}

	write(text: string, tags?: readonly string[], id?: string): MemoryEntry {
		const checked = checkedText(text);
		const normal = normalTags(tags ?? []);
		const now = this.#now();
		const records = this.#state.records.slice();
		let nextId = this.#state.nextId;
		let entry: MemoryEntry;
		if (id !== undefined) {
			const index = this.#indexOf(id);
			entry = { ...records[index], text: checked, tags: tags ? normal : records[index].tags, updated: now };
			records[index] = entry;
		} else {
			if (records.length >= MEMORY_RECORDS_MAX)
				throw new Error(`long-term memory is full (${MEMORY_RECORDS_MAX} memories): forget one that no longer matters, then save again.`);
			entry = { id: "m" + nextId, text: checked, tags: normal, created: now, updated: now };
			nextId++;
			records.push(entry);
		}
		const total = records.reduce((sum, r) => sum + byteLength(r.text), 0);
		if (total > MEMORY_TOTAL_TEXT_MAX_BYTES)
			throw new Error(`long-term memory is full (${MEMORY_TOTAL_TEXT_MAX_BYTES} bytes of text): forget or shorten memories that no longer matter, then save again.`);
		this.#commit({ nextId, records });
		return { ...entry, tags: entry.tags.slice() };
	}

	read(id: string): MemoryEntry {
		const entry = this.#state.records[this.#indexOf(id)];
		return { ...entry, tags: entry.tags.slice() };
	}

	search(query: string, tag: string | undefined, limit: number): MemoryEntry[] {
		return this.#indexed().rank(query, tag, limit).map((e) => ({ ...e, tags: e.tags.slice() }));
	}

	forget(id: string): MemoryEntry {
		const index = this.#indexOf(id);
		const records = this.#state.records.slice();
		const [entry] = records.splice(index, 1);
		this.#commit({ nextId: this.#state.nextId, records });
		return entry;
	}

	list(): MemoryEntry[] {
		return this.#state.records.map((e) => ({ ...e, tags: e.tags.slice() }));
	}

	usage(): MemoryUsage {
		const bytes = this.#state.records.reduce((sum, r) => sum + byteLength(r.text), 0);
		return { entries: this.#state.records.length, maxEntries: MEMORY_RECORDS_MAX, bytes, maxBytes: MEMORY_TOTAL_TEXT_MAX_BYTES };
	}

	context(budgetBytes: number): string | undefined {
		return this.#indexed().context(budgetBytes);
	}

	relevant(hint: string, stableBudgetBytes: number, budgetBytes: number): string | undefined {
		return this.#indexed().relevant(hint, stableBudgetBytes, budgetBytes);
	}

	#indexed(): MemoryIndex {
		return this.#index ?? (this.#index = new MemoryIndex(this.#state.records, renderForPrompt, PROMPT_HEADER, RELEVANT_HEADER));
	}

	#indexOf(id: string): number {
		const wanted = /^\d+$/.test(id.trim()) ? "m" + id.trim() : id.trim().toLowerCase();
		const index = this.#state.records.findIndex((r) => r.id === wanted);
		if (index < 0) throw new Error(`there is no memory with id "${id}": search the memories to find the right id.`);
		return index;
	}

	// Writes first, then takes the new state: a failed write leaves RAM as flash is.
	#commit(state: State): void {
		refuseIfUnreadable(RECORDS_FILE, this.#unreadable);
		writeAtomically(this.#directory, RECORDS_FILE, encodeRecords(state));
		this.#state = state;
		this.#index = undefined;
	}
}

const PROMPT_HEADER = "Facts saved with memory_write (id: text #tags); memory_forget removes a wrong one:";
const RELEVANT_HEADER = "More saved facts that may matter to this message (id: text #tags):";

function renderForPrompt(entry: MemoryEntry): string {
	const text = entry.text.replace(/\s+/g, " ");
	return `- ${entry.id}: ${text}${entry.tags.length ? " " + entry.tags.map((t) => "#" + t).join(" ") : ""}`;
}

