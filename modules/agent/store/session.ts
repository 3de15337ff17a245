// store/session: one session's pair of files (FORMAT.md): open with recovery,
// append a batch of records, read records back through the index, compact.
//
// Durability rules (littlefs-style): data is written and flushed before the
// index entry that points at it; the data file is the truth and the index a
// cache that open() rebuilds whenever it disagrees. Rewrites (compaction,
// salvage) go to temporary files, flushed, then renamed data first: the data
// rename is the commit point. Files that cannot be read are renamed *.bad and
// kept; nothing is deleted silently. Every recovery logs one line.
//
// open() trusts an index that proves the data file's layout (store/format
// provenIndex: one read of the index, two frame headers) and scans only what
// lies past its last entry; any doubt, or `verify`, scans and CRC-checks the
// whole data file. A record whose bytes fail their CRC when read is left out
// and marks the session `damaged`: the manager then reopens it with `verify`,
// which keeps the original as .bad and rewrites the intact records.
// readLast() costs O(n) whatever the file size.
import type { Directory, File } from "util/io";
import type { RecordKind } from "core/types";
import type { Message } from "llm/types";
import { SESSION_INDEX_SYNC_APPENDS, SESSION_RECORD_MAX_BYTES, SESSION_UNSYNCED_BATCHES_MAX, SESSION_WAITING_FRAMES_MAX_BYTES, SESSION_WRITE_BUFFER_BYTES } from "budgets";
import {
	DATA_MAGIC, ENTRY_BYTES, FLAG_TURN_COMPLETED, FRAME_HEADER_BYTES, HEADER_BYTES, INDEX_MAGIC,
	type Entry, type Scan, decodeEntry, decodeHeader, encodeEntry, encodeHeader, encodeRecordInto,
	frameIntact, decodeFrameHeader, indexDisagreement, kindCode, kindName, provenIndex, readIndexFor, scanData,
} from "store/format";
import { capForStorage, capMessage, surelyOver } from "store/messages";
import { exists, keepAside, writeAtomically } from "util/files";
import { messageOf } from "util/errors";

export const SESSIONS_DIR = "sessions";
/** What a session id looks like (its files are named after it). */
export const SESSION_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;
const WAITING_ENTRIES_START_BYTES = 256;   // the waiting index entries' first buffer: 16 entries, doubled when full

/** A record as appended. */
export interface NewRecord {
	kind: RecordKind;
	message: Message;
	turn_completed: boolean;
	time: number;
	request_id: number;
}

/** A record of a batch: what a NewRecord has, the fields a batch gives all its records optional. */
export interface BatchRecord {
	kind: RecordKind;
	message: Message;
	turn_completed?: boolean;
	time?: number;
	request_id?: number;
}

/** A record as read back; index counts from 0, oldest first. */
export interface StoredRecord extends NewRecord {
	index: number;
}

export type Log = (line: string) => void;

export function paths(id: string) {
	const base = `${SESSIONS_DIR}/${id}`;
	return { data: `${base}.dat`, index: `${base}.idx`, dataTmp: `${base}.dat.tmp`, indexTmp: `${base}.idx.tmp`, blocked: `${base}.blocked` };
}

/** Writes bytes to a new file at path in pieces, flushed: one write per SESSION_WRITE_BUFFER_BYTES. */
function writeWhole(file: File, pieces: Uint8Array[], position = 0): number {
	let buffer = new Uint8Array(SESSION_WRITE_BUFFER_BYTES);
	let used = 0;
	const drain = () => {
		if (!used) return;
		file.write(buffer.subarray(0, used), position);
		position += used;
		used = 0;
	};
	for (const piece of pieces) {
		if (used + piece.length > buffer.length) drain();
		if (piece.length > buffer.length) {
			file.write(piece, position);
			position += piece.length;
			continue;
		}
		buffer.set(piece, used);
		used += piece.length;
	}
	drain();
	return position;
}

function indexFileBytes(generation: number, entries: Uint8Array): Uint8Array[] {
	return [encodeHeader(INDEX_MAGIC, generation), entries];
}

export class SessionFile {
	readonly id: string;
	#root: Directory;
	#log: Log;
	#data: File;
	#index: File;
	/** Appends whose index entries were not flushed yet. */
	#unsyncedAppends = 0;
	/** Appends whose data was not flushed yet (see append): waiting in memory, or written. */
	#unsyncedBatches = 0;
	/** The data file's bytes as written: the frames of [#written, #size) wait in #waiting. */
	#written: number;
	/** Frames not written yet, one buffer per batch, in file order from #written (see append). */
	#waiting: Uint8Array<ArrayBuffer>[] = [];
	/** Records whose index entries are in the index file: those of [#indexed, #count) wait in #entriesWaiting. */
	#indexed: number;
	/**
	 * The index entries of [#indexed, #count), ENTRY_BYTES each from 0: written all at
	 * once, right after the data flush that commits their records. Doubled when full:
	 * at most the entries of SESSION_UNSYNCED_BATCHES_MAX batches wait.
	 */
	#entriesWaiting: Uint8Array | undefined;
	#entriesView: DataView | undefined;
	#size: number;
	#count: number;
	#generation: number;
	#closed = false;
	/** A record failed its CRC when read: a whole-file check (open with verify) is due. */
	#damaged = false;
	/**
	 * Sticky error (littlefs habit): set when a write, flush or rename of this
	 * session failed. The files may then hold a part of what was meant, which only
	 * open() can sort out, so every later operation throws instead of appending
	 * after (or reading through) an index that no longer matches.
	 */
	#failed: string | undefined;
	/** What open() found and repaired, one sentence each. */
	readonly findings: string[];

	private constructor(root: Directory, id: string, log: Log, data: File, index: File, size: number, count: number, generation: number, findings: string[]) {
		this.#root = root;
		this.id = id;
		this.#log = log;
		this.#data = data;
		this.#index = index;
		this.#size = size;
		this.#written = size;
		this.#count = count;
		this.#indexed = count;
		this.#generation = generation;
		this.findings = findings;
	}

	/** Creates an empty session's files (each a temp file, flushed, renamed: never a torn header under the real name). */
	static create(root: Directory, id: string): void {
		const p = paths(id);
		root.createDirectory(SESSIONS_DIR);
		writeAtomically(root, p.data, encodeHeader(DATA_MAGIC, 1));
		writeAtomically(root, p.index, encodeHeader(INDEX_MAGIC, 1));
	}

	/**
	 * Opens a session, repairing what a power loss or damage left: never throws
	 * for bad content (a data file that cannot be read is kept as *.bad and the
	 * session starts empty). Throws only when the storage itself fails. With
	 * `verify`, every record's CRC is checked even when the index proves the
	 * layout (after a read found a damaged record).
	 */
	static open(root: Directory, id: string, log: Log, options: { verify?: boolean } = {}): SessionFile {
		const p = paths(id);
		const findings: string[] = [];
		const note = (text: string) => {
			findings.push(text);
			log(`store: session ${id}: ${text}`);
		};
		if (exists(root, p.dataTmp)) {
			if (exists(root, p.data)) {
				root.delete(p.dataTmp);
				note("removed the temporary file of a rewrite that a power loss cut short; the session is as before it");
			} else {
				root.move(p.dataTmp, p.data);
				note("finished a rewrite that a power loss cut between its renames");
			}
		}
		if (exists(root, p.indexTmp)) root.delete(p.indexTmp);   // the index is rebuilt from the data anyway
		if (!exists(root, p.data)) {
			if (exists(root, p.index)) note(`the data file is missing; its index was kept as ${keepAside(root, p.index)} and the session starts empty`);
			SessionFile.create(root, id);
		}
		let data = root.openFile({ path: p.data, mode: "r+" });
		let size = data.status().size;
		const header = decodeHeader(new Uint8Array(data.read(Math.min(HEADER_BYTES, size), 0)), DATA_MAGIC);
		if ("problem" in header) {
			data.close();
			const kept = keepAside(root, p.data);
			const keptIndex = exists(root, p.index) ? ` and ${keepAside(root, p.index)}` : "";
			note(`the data file cannot be read (${header.problem}); it was kept as ${kept}${keptIndex} and the session starts empty`);
			SessionFile.create(root, id);
			data = root.openFile({ path: p.data, mode: "r+" });
			size = data.status().size;
		}
		const generation = "problem" in header ? 1 : header.generation;
		if (!("problem" in header) && !options.verify && exists(root, p.index)) {
			const proven = SessionFile.#openProven(root, id, log, data, size, generation, findings, note);
			if (proven) return proven;
		}
		let scan = scanData(data, size, generation);
		if (scan.holes.length || scan.tail.kind === "garbage") {
			// Damage, not a power loss: keep the original whole, and go on with its intact records.
			const bytes = scan.holes.reduce((n, h) => n + h.bytes, 0) + (scan.tail.kind === "garbage" ? scan.tail.bytes : 0);
			data.close();
			const original = rewrite(root, id, p.data, scan, Array.from({ length: scan.count }, (_, i) => i), generation + 1, true);
			data = root.openFile({ path: p.data, mode: "r+" });
			size = data.status().size;
			const kept = scan.holes.length ? `${scan.holes.length} damaged stretch(es)` : "damaged bytes at the end";
			note(`${kept} (${bytes} bytes) left out; ${scan.count} intact records kept; the original is kept as ${original}`);
			scan = scanData(data, size, generation + 1);
		} else if (scan.tail.kind === "torn") {
			data.setSize(scan.end);
			data.flush();
			size = scan.end;
			note(`cut a record torn by a power loss (${scan.tail.bytes} bytes at offset ${scan.tail.at}); ${scan.count} records intact`);
		}
		const index = SessionFile.#openIndex(root, p.index, scan, note);
		return new SessionFile(root, id, log, data, index, size, scan.count, scan.generation, findings);
	}

	/**
	 * The session when its index proves the data file (format provenIndex): only
	 * the bytes after the last listed record are scanned. A batch whose index
	 * write was lost gets its entries added; a torn record is cut. Undefined when
	 * the index proves nothing or the bytes after it are damage (not a power
	 * loss): then the whole file is scanned.
	 */
	static #openProven(root: Directory, id: string, log: Log, data: File, size: number, generation: number, findings: string[], note: (text: string) => void): SessionFile | undefined {
		const index = root.openFile({ path: paths(id).index, mode: "r+" });
		let keep = false;
		try {
			const proven = provenIndex(index, data, size, generation);
			if (!proven) return undefined;
			let count = proven.count;
			if (proven.end < size) {
				const tail = scanData(data, size, generation, proven.end);
				if (tail.holes.length || tail.tail.kind === "garbage") return undefined;
				if (tail.count) {
					index.write(tail.entries, HEADER_BYTES + count * ENTRY_BYTES);
					index.flush();
					count += tail.count;
					note(`the index lacked the last ${tail.count} record(s) (a crash or power loss before their index entries were written): added them`);
				}
				if (tail.tail.kind === "torn") {
					data.setSize(tail.end);
					data.flush();
					note(`cut a record torn by a power loss (${tail.tail.bytes} bytes at offset ${tail.tail.at}); ${count} records intact`);
				}
				size = tail.end;
			}
			keep = true;
			return new SessionFile(root, id, log, data, index, size, count, generation, findings);
		} finally {
			if (!keep) index.close();
		}
	}

	static #openIndex(root: Directory, path: string, scan: Scan, note: (text: string) => void): File {
		let index: File;
		let current: Uint8Array | undefined;
		let size = 0;
		if (exists(root, path)) {
			index = root.openFile({ path, mode: "r+" });
			({ bytes: current, size } = readIndexFor(index, scan));
		} else {
			index = root.openFile({ path, mode: "w+" });
		}
		const why = indexDisagreement(current, scan, size);
		if (why) {
			const end = writeWhole(index, indexFileBytes(scan.generation, scan.entries));
			index.setSize(end);
			index.flush();
			// A new session cut by a power loss before its index was written: nothing to report.
			const quiet = scan.count === 0 && (!current || current.length < HEADER_BYTES);
			if (!quiet) note(`${why}: rebuilt it from the data file (${scan.count} records)`);
		}
		return index;
	}

	/**
	 * Records and newest record time of a session that is not open, reading only:
	 * from the index when its generation is the data's and its last entry ends
	 * exactly where the data file ends (checked against that frame's header), else
	 * from a scan of the data (a power loss between a batch's data and index
	 * writes leaves an index that is behind). Damage is reported by open(), not here.
	 */
	static peek(root: Directory, id: string): { records: number; last: number } {
		const p = paths(id);
		const data = root.openFile({ path: p.data, mode: "r" });
		try {
			const size = data.status().size;
			const header = decodeHeader(new Uint8Array(data.read(Math.min(HEADER_BYTES, size), 0)), DATA_MAGIC);
			if ("problem" in header) return { records: 0, last: 0 };
			const frameTime = (entry: Entry) => decodeFrameHeader(new Uint8Array(data.read(FRAME_HEADER_BYTES, entry.offset)), entry.offset);
			if (exists(root, p.index)) {
				const index = root.openFile({ path: p.index, mode: "r" });
				try {
					const indexSize = index.status().size;
					const indexHeader = decodeHeader(new Uint8Array(index.read(Math.min(HEADER_BYTES, indexSize), 0)), INDEX_MAGIC);
					const count = (indexSize - HEADER_BYTES) / ENTRY_BYTES;
					if (!("problem" in indexHeader) && indexHeader.generation === header.generation && Number.isInteger(count)) {
						if (count === 0 && size === HEADER_BYTES) return { records: 0, last: 0 };
						if (count > 0) {
							const entry = decodeEntry(new Uint8Array(index.read(ENTRY_BYTES, HEADER_BYTES + (count - 1) * ENTRY_BYTES)), 0);
							const info = entry.offset + FRAME_HEADER_BYTES + entry.length === size ? frameTime(entry) : undefined;
							if (info && info.crc === entry.crc) return { records: count, last: info.time };
						}
					}
				} finally {
					index.close();
				}
			}
			const scan = scanData(data, size, header.generation);
			return { records: scan.count, last: scan.count ? frameTime(decodeEntry(scan.entries, (scan.count - 1) * ENTRY_BYTES))?.time ?? 0 : 0 };
		} finally {
			data.close();
		}
	}

	get count(): number { return this.#count; }
	get size(): number { return this.#size; }
	get generation(): number { return this.#generation; }
	/** A read found a record whose bytes fail their CRC: reopen with verify to find and keep aside the damage. */
	get damaged(): boolean { return this.#damaged; }

	/** Marker of a session that compaction could not bring under the limit. */
	get blocked(): boolean {
		return exists(this.#root, paths(this.id).blocked);
	}

	/**
	 * Appends records. Their frames and index entries wait in memory until the data is
	 * committed: then every waiting frame goes out in one data write, the data is
	 * flushed (the commit point), and every waiting index entry goes out in one index
	 * write. That is when `commit` is set (store/sessions: a USER batch, a turn's
	 * last), when SESSION_UNSYNCED_BATCHES_MAX batches wait, and at close; frames over
	 * SESSION_WAITING_FRAMES_MAX_BYTES are written (not flushed) without waiting. The
	 * index is flushed right after a data flush once SESSION_INDEX_SYNC_APPENDS appends
	 * wait, and at close. A flush commits everything written before it, in order: a
	 * crash or power loss leaves the data as its last flush left it (littlefs, and lin
	 * for the frames that waited in memory) or with later writes too (a page cache),
	 * always a prefix of the appends plus at most one torn frame, and an index that is
	 * never ahead of the flushed data; open() completes an index that lost its tail by
	 * scanning only the data after it (#openProven). A tool round so costs no write and
	 * no flash commit (an fsync on lin) of its own, and a process killed between turns
	 * leaves both files whole. Throws when storage fails; the session must then be
	 * closed and reopened (open() repairs whatever part landed).
	 */
	append(records: NewRecord[], commit = true): number[] {
		return this.#append(records, false, 0, 0, commit);
	}

	/**
	 * append() for one batch of the core's (core/types ContextRecord): every record
	 * gets time and request_id, the last one turn_completed when turnCompleted.
	 * Returns each record's payload length (its stored JSON's bytes); cappedLast
	 * then says how many of them had to be capped (their payload is not JSON.stringify
	 * of the message).
	 */
	appendBatch(records: readonly BatchRecord[], turnCompleted: boolean, time: number, requestId: number, commit: boolean): number[] {
		return this.#append(records, turnCompleted, time, requestId, commit);
	}

	/** How many records of the last append were capped for storage (SESSION_RECORD_MAX_BYTES). */
	get cappedLast(): number { return this.#cappedLast; }
	#cappedLast = 0;

	/** The frames of records in one buffer (fields a record lacks come from the arguments), written as append() says. */
	#append(records: readonly BatchRecord[], lastCompleted: boolean, time: number, requestId: number, commit: boolean): number[] {
		this.#check();
		const lengths: number[] = [];
		if (!records.length) return lengths;
		// The payloads first (one JSON text each; capped only when over the limit), then one buffer for all frames.
		const payloads: ArrayBuffer[] = [];
		let total = 0, capped = 0;
		for (let i = 0; i < records.length; i++) {
			const record = records[i];
			// A message surely over the limit (a long reply) is capped before its whole JSON is made.
			const over = surelyOver(record.message, SESSION_RECORD_MAX_BYTES);
			let payload = ArrayBuffer.fromString(JSON.stringify(over ? capForStorage(record.message, SESSION_RECORD_MAX_BYTES) : record.message));
			if (over) capped++;
			else if (payload.byteLength > SESSION_RECORD_MAX_BYTES) {
				payload = ArrayBuffer.fromString(JSON.stringify(capForStorage(record.message, SESSION_RECORD_MAX_BYTES)));
				capped++;
			}
			// Checked before anything is written: a frame above the limit would read back as damage.
			if (payload.byteLength > SESSION_RECORD_MAX_BYTES) throw new Error(`store: a ${record.kind} record of ${payload.byteLength} bytes is over the ${SESSION_RECORD_MAX_BYTES}-byte record limit even after capping`);
			payloads.push(payload);
			lengths.push(payload.byteLength);
			total += FRAME_HEADER_BYTES + payload.byteLength;
		}
		const unsynced = this.#unsyncedBatches + 1;
		const flush = commit || unsynced >= SESSION_UNSYNCED_BATCHES_MAX;
		// Written now (flushed or not): the waiting frames go first, in the same buffer.
		const size = this.#size, written = this.#written, waiting = this.#waiting;
		const waitingBytes = size - written;
		const write = flush || waitingBytes + total > SESSION_WAITING_FRAMES_MAX_BYTES;
		const start = write ? waitingBytes : 0;
		const all = new Uint8Array(start + total), frames = new DataView(all.buffer);
		if (write && waitingBytes) {
			for (let i = 0, at = 0; i < waiting.length; i++) {
				all.set(waiting[i], at);
				at += waiting[i].length;
			}
		}
		const entryAt = (this.#count - this.#indexed) * ENTRY_BYTES, entryEnd = entryAt + records.length * ENTRY_BYTES;
		let index = this.#entriesView;
		if (!index || index.byteLength < entryEnd) index = this.#entriesRoom(entryEnd);
		// all[0] is at #written when the waiting frames go too, else at #size.
		const base = size - start;
		let at = start;
		for (let i = 0; i < records.length; i++) {
			const record = records[i];
			const kind = kindCode(record.kind), length = lengths[i];
			const flags = (record.turn_completed ?? (lastCompleted && i === records.length - 1)) ? FLAG_TURN_COMPLETED : 0;
			all.set(new Uint8Array(payloads[i]), at + FRAME_HEADER_BYTES);
			encodeRecordInto(all, frames, at, index, entryAt + i * ENTRY_BYTES, base + at, kind, flags, record.request_id ?? requestId, record.time ?? time, length);
			at += FRAME_HEADER_BYTES + length;
		}
		this.#size = size + total;
		this.#count += records.length;
		this.#unsyncedBatches = unsynced;
		this.#unsyncedAppends++;
		this.#cappedLast = capped;
		if (!write) {
			waiting.push(all);
			return lengths;
		}
		// #guard's rule inline (no closure per append): a throw makes the error sticky.
		try {
			this.#data.write(all, written);
			this.#written = size + total;
			if (waitingBytes) waiting.length = 0;
			if (flush) this.#flushData();
			if (!this.#unsyncedBatches && this.#unsyncedAppends >= SESSION_INDEX_SYNC_APPENDS) this.#flushIndex();
		} catch (error) {
			this.#failed = messageOf(error);
			throw error;
		}
		return lengths;
	}

	/** Appends whose data waits for a flush (a power loss on the device would lose them). */
	get unsynced(): number { return this.#unsyncedBatches; }

	/** Writes and flushes the data appended since the last flush, then the index: everything appended is committed. */
	sync(): void {
		this.#check();
		this.#guard(() => {
			if (this.#unsyncedBatches) this.#flushData();
			if (this.#unsyncedAppends) this.#flushIndex();
		});
	}

	/** Writes the waiting frames (one write), flushes the data, then writes the waiting index entries (one write). */
	#flushData(): void {
		if (this.#written < this.#size) {
			const waiting = this.#waiting;
			let all = waiting[0];
			if (waiting.length > 1) {
				all = new Uint8Array(this.#size - this.#written);
				let at = 0;
				for (const piece of waiting) {
					all.set(piece, at);
					at += piece.length;
				}
			}
			this.#data.write(all, this.#written);
			this.#written = this.#size;
			waiting.length = 0;
		}
		this.#data.flush();
		this.#unsyncedBatches = 0;
		// The index entries only after the data they list was flushed.
		const waiting = this.#count - this.#indexed;
		if (waiting > 0) {
			this.#index.write(this.#entriesWaiting!.subarray(0, waiting * ENTRY_BYTES), HEADER_BYTES + this.#indexed * ENTRY_BYTES);
			this.#indexed = this.#count;
		}
	}

	/** Flushes the index: callers flush the data first (which writes the index entries). */
	#flushIndex(): void {
		this.#index.flush();
		this.#unsyncedAppends = 0;
	}

	/** Room for `bytes` of waiting index entries (those waiting kept): #entriesWaiting grown; its DataView. */
	#entriesRoom(bytes: number): DataView {
		const waiting = this.#entriesWaiting;
		let size = waiting ? waiting.length * 2 : WAITING_ENTRIES_START_BYTES;
		while (size < bytes) size *= 2;
		const grown = new Uint8Array(size);
		if (waiting) grown.set(waiting.subarray(0, (this.#count - this.#indexed) * ENTRY_BYTES));
		this.#entriesWaiting = grown;
		return this.#entriesView = new DataView(grown.buffer);
	}

	/** Index entry `index` (< count): from the index file, or from those waiting to be written. */
	#entry(index: number): Entry {
		if (index >= this.#indexed) return decodeEntry(this.#entriesWaiting!, (index - this.#indexed) * ENTRY_BYTES);
		return decodeEntry(new Uint8Array(this.#index.read(ENTRY_BYTES, HEADER_BYTES + index * ENTRY_BYTES)), 0);
	}

	/** The `length` bytes at data offset `offset`: from the file, or from the frames waiting to be written (a copy). */
	#dataBytes(length: number, offset: number): Uint8Array<ArrayBuffer> {
		if (offset < this.#written) return new Uint8Array(this.#data.read(length, offset));
		let from = this.#written;
		for (const piece of this.#waiting) {
			if (offset < from + piece.length) return piece.slice(offset - from, offset - from + length);
			from += piece.length;
		}
		return new Uint8Array(0);
	}

	/** The kinds of records [from, to), from the index alone (no record is read). */
	kinds(from = 0, to = this.#count): RecordKind[] {
		this.#check();
		return this.#entries(Math.max(0, from), Math.min(this.#count, to)).map((e) => kindName(e.kind)!);
	}

	/** The stored bytes of records [from, to) (each one's frame, its header too), from the index alone. */
	sizes(from = 0, to = this.#count): number[] {
		this.#check();
		return this.#entries(Math.max(0, from), Math.min(this.#count, to)).map((e) => FRAME_HEADER_BYTES + e.length);
	}

	/** Index entries [from, to): one read of the index file for those in it, the rest from those waiting. */
	#entries(from: number, to: number): Entry[] {
		const list: Entry[] = [];
		const written = Math.min(to, this.#indexed);
		if (from < written) {
			const bytes = new Uint8Array(this.#index.read((written - from) * ENTRY_BYTES, HEADER_BYTES + from * ENTRY_BYTES));
			for (let i = 0; i + ENTRY_BYTES <= bytes.length; i += ENTRY_BYTES) list.push(decodeEntry(bytes, i));
		}
		for (let i = Math.max(from, this.#indexed); i < to; i++) list.push(this.#entry(i));
		return list;
	}

	/**
	 * Records [from, to), oldest first, read through the index: O(to - from).
	 * A record whose bytes no longer match its CRC is left out with a log line.
	 */
	read(from: number, to: number): StoredRecord[] {
		this.#check();
		from = Math.max(0, from);
		to = Math.min(this.#count, to);
		const records: StoredRecord[] = [];
		for (const [i, entry] of this.#entries(from, to).entries()) {
			const record = this.#decode(entry, from + i);
			if (record) records.push(record);
		}
		return records;
	}

	/**
	 * The message of record `index`, capped to capBytes (store/messages capMessage;
	 * a stored JSON text that fits is the message as it is, so it is not measured
	 * again), or undefined when it cannot be read (left out with a log line, as read() does).
	 */
	message(index: number, capBytes: number): Message | undefined {
		this.#check();
		if (index < 0 || index >= this.#count) return undefined;
		const record = this.#decode(this.#entry(index), index);
		if (!record) return undefined;
		return this.#lastLength <= capBytes ? record.message : capMessage(record.message, capBytes);
	}

	/** The payload length of the record #decode read last. */
	#lastLength = 0;

	/** The last n records before `before` (default: all), oldest first. */
	readLast(n: number, before = this.#count): StoredRecord[] {
		return this.read(before - n, before);
	}

	#decode(entry: Entry, index: number): StoredRecord | undefined {
		const total = FRAME_HEADER_BYTES + entry.length;
		let problem = "";
		if (entry.offset + total > this.#size) {
			problem = "its index entry points past the end of the data file";
			this.#damaged = true;
		}
		else {
			const frame = this.#dataBytes(total, entry.offset);
			this.#lastLength = entry.length;
			const info = decodeFrameHeader(frame, entry.offset);
			if (!info || info.crc !== entry.crc || info.length !== entry.length || !frameIntact(frame, info)) {
				problem = "its bytes do not match their checksum";
				this.#damaged = true;
			}
			else {
				try {
					const message = JSON.parse(String.fromArrayBuffer(frame.buffer.slice(FRAME_HEADER_BYTES) as ArrayBuffer)) as unknown;
					const wrong = messageProblem(message, kindName(info.kind)!);
					if (wrong) throw new Error(wrong);
					return { index, kind: kindName(info.kind)!, message: message as Message, turn_completed: !!(info.flags & FLAG_TURN_COMPLETED), time: info.time, request_id: info.request_id };
				} catch (error) {
					problem = `its text is not a stored message (${messageOf(error)})`;
				}
			}
		}
		this.#log(`store: session ${this.id}: record ${index} was left out: ${problem}; run tools/session-inspect to look at the file`);
		return undefined;
	}

	/**
	 * Rewrites the session keeping the records at `keep` (indexes, ascending),
	 * through temporary files and renames: a power loss leaves the old or the
	 * new session, never a mix. Returns the data file sizes before and after.
	 */
	compact(keep: number[]): { before: number; after: number } {
		this.#check();
		// Internal callers only; checked because a wrong list would silently reorder or repeat records.
		if (keep.some((k, n) => !Number.isInteger(k) || k < 0 || k >= this.#count || (n > 0 && k <= keep[n - 1]))) throw new Error(`store: session ${this.id}: compact() needs ascending record indexes below ${this.#count}`);
		// The rewrite reads the data through a handle of its own, which sees only committed bytes on littlefs.
		this.sync();
		const before = this.#size;
		const p = paths(this.id);
		const scan: Scan = {
			generation: this.#generation,
			entries: new Uint8Array(this.#index.read(this.#count * ENTRY_BYTES, HEADER_BYTES)),
			count: this.#count,
			holes: [],
			tail: { kind: "clean" },
			end: this.#size,
		};
		this.#guard(() => {
			this.#data.close();
			this.#index.close();
			rewrite(this.#root, this.id, p.data, scan, keep, this.#generation + 1, false);
			this.#data = this.#root.openFile({ path: p.data, mode: "r+" });
			this.#index = this.#root.openFile({ path: p.index, mode: "r+" });
		});
		this.#unsyncedAppends = 0;   // the rewritten files were flushed whole
		this.#unsyncedBatches = 0;
		this.#size = this.#written = this.#data.status().size;
		this.#count = this.#indexed = keep.length;
		this.#generation++;
		return { before, after: this.#size };
	}

	/** Writes the blocked marker (a small text file; its presence is what counts). */
	block(reason: string): void {
		writeAtomically(this.#root, paths(this.id).blocked, ArrayBuffer.fromString(reason));
	}

	close(): void {
		if (this.#closed) return;
		this.#closed = true;
		// What was appended since the last flushes, data first (a failed session's are settled by the next open).
		if (!this.#failed) {
			try {
				if (this.#unsyncedBatches) this.#flushData();
				if (this.#unsyncedAppends) this.#flushIndex();
			} catch { /* open() keeps what landed: a prefix of the appends, the index completed from the data */ }
		}
		try { this.#data.close(); } catch { /* already unusable: nothing left to release */ }
		try { this.#index.close(); } catch { /* as above */ }
	}

	get closed(): boolean { return this.#closed; }

	/** Why this session refuses further use until it is reopened; undefined while it is healthy. */
	get failed(): string | undefined { return this.#failed; }

	#check(): void {
		if (this.#closed) throw new Error(`store: session ${this.id} is closed`);
		if (this.#failed) throw new Error(`store: session ${this.id} had a failed write (${this.#failed}); it must be closed and opened again, which repairs it`);
	}

	/** Runs storage writes; a throw makes the error sticky (see #failed) and is passed on. */
	#guard(writes: () => void): void {
		try {
			writes();
		} catch (error) {
			this.#failed = messageOf(error);
			throw error;
		}
	}
}

/**
 * Why a parsed payload is not the message its kind stores, or "" when it is.
 * Only a bug (or a crafted file with valid CRCs) gets here; the history and the
 * console read these fields without further checks.
 */
export function messageProblem(message: unknown, kind: RecordKind): string {
	if (typeof message !== "object" || message === null || Array.isArray(message)) return "it is not a JSON object";
	const m = message as { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown };
	const role = kind === "user" ? "user" : kind === "tool_result" ? "tool" : "assistant";
	if (m.role !== role) return `a ${kind} record must hold a ${role} message`;
	if (!(typeof m.content === "string" || m.content === null || m.content === undefined || Array.isArray(m.content))) return "its content is neither text nor a list of parts";
	if (Array.isArray(m.content) && !m.content.every((p) => typeof p === "object" && p !== null && (p.type === "text" ? typeof p.text === "string" : p.type === "image_url"))) return "its content has a part that is not text or an image";
	if (kind === "tool_result" && typeof m.tool_call_id !== "string") return "a tool result must name its tool call";
	if (m.tool_calls !== undefined && !(Array.isArray(m.tool_calls) && m.tool_calls.every((c) =>
		typeof c === "object" && c !== null && typeof c.id === "string" && typeof c.function === "object" && c.function !== null &&
		typeof c.function.name === "string" && typeof c.function.arguments === "string"))) return "its tool calls are malformed";
	if (kind === "assistant_tool" && !Array.isArray(m.tool_calls)) return "an assistant_tool record must hold tool calls";
	return "";
}

/**
 * Writes the records at `keep` of a data file into <data>.tmp and its index into
 * <index>.tmp (each flushed), then renames data first, index second. A power
 * loss before the data rename leaves the old session (open() drops the temp
 * files); between the renames, the new data with the old index, whose
 * generation differs, so open() rebuilds it. With keepOriginal the old data file
 * is renamed *.bad instead of replaced (salvage after damage).
 */
function rewrite(root: Directory, id: string, dataPath: string, scan: Scan, keep: number[], generation: number, keepOriginal: boolean): string | undefined {
	const p = paths(id);
	const source = root.openFile({ path: dataPath, mode: "r" });
	const entries = new Uint8Array(keep.length * ENTRY_BYTES);
	try {
		const out = root.openFile({ path: p.dataTmp, mode: "w" });
		try {
			let position = 0;
			let pending: Uint8Array[] = [encodeHeader(DATA_MAGIC, generation)];
			let pendingBytes = HEADER_BYTES;
			const drain = () => {
				position = writeWhole(out, pending, position);
				pending = [];
				pendingBytes = 0;
			};
			let offset = HEADER_BYTES;
			for (const [n, i] of keep.entries()) {
				const entry = decodeEntry(scan.entries, i * ENTRY_BYTES);
				const frame = new Uint8Array(source.read(FRAME_HEADER_BYTES + entry.length, entry.offset));
				encodeEntry({ ...entry, offset, request_id: 0, time: 0 }, entries, n * ENTRY_BYTES);
				offset += frame.length;
				if (pendingBytes + frame.length > SESSION_WRITE_BUFFER_BYTES) drain();
				pending.push(frame);
				pendingBytes += frame.length;
			}
			drain();
			out.flush();
		} finally {
			out.close();
		}
		const index = root.openFile({ path: p.indexTmp, mode: "w" });
		try {
			writeWhole(index, indexFileBytes(generation, entries));
			index.flush();
		} finally {
			index.close();
		}
	} finally {
		source.close();
	}
	const kept = keepOriginal ? keepAside(root, dataPath) : undefined;
	root.move(p.dataTmp, dataPath);
	root.move(p.indexTmp, p.index);
	return kept;
}
