// store/format: the bytes of a session's files (modules/agent/store/FORMAT.md is the
// spec): the data file header, the record frame, the index header and entry;
// encoding them, and scanning a data file read-only for its intact records and
// its damage. Nothing here writes: store/session applies the repairs a scan
// asks for, and store/inspect prints them.
//
// Known limits: a scan holds one 16-byte index entry per record in memory (a
// 150 KiB session of small records is a few KiB); offsets are 32-bit, as
// littlefs's are.
import type { File } from "util/io";
import type { RecordKind } from "core/types";
import { SESSION_RECORD_MAX_BYTES, SESSION_SALVAGE_SCAN_BYTES } from "budgets";
import { crc32 } from "util/crc32";
import { crc32 as nativeCrc32 } from "host/bytes";

export const FORMAT_VERSION = 1;
export const DATA_MAGIC = 0x44535358;   // bytes "XSSD"
export const INDEX_MAGIC = 0x49535358;  // bytes "XSSI"
export const HEADER_BYTES = 16;         // data and index headers alike
export const FRAME_HEADER_BYTES = 24;
export const ENTRY_BYTES = 16;
/** Frame magic: 0xFE never occurs in UTF-8 text, so a search for it after damage rarely stops inside a payload. */
export const FRAME_MAGIC_0 = 0xFE;
export const FRAME_MAGIC_1 = 0x53;
export const FLAG_TURN_COMPLETED = 1;
const SEARCH_BLOCK_BYTES = 4096;        // bytes read per step while searching for the next intact frame

const KINDS: readonly RecordKind[] = ["user", "assistant_tool", "tool_result", "assistant_final", "failure_note"];
/** Kind name -> code (no prototype: "toString" is no kind); one lookup, where indexOf costs ~4,000 instructions in XS. */
const KIND_CODES: Readonly<Record<string, number>> = Object.freeze(KINDS.reduce((codes, kind, i) => {
	codes[kind] = i + 1;
	return codes;
}, Object.create(null) as Record<string, number>));
/** Kind codes on disk: 1..5 in the order of KINDS. */
export function kindCode(kind: RecordKind): number {
	const code = KIND_CODES[kind];
	if (!code) throw new Error(`store: unknown record kind ${String(kind)}`);
	return code;
}
export function kindName(code: number): RecordKind | undefined {
	return KINDS[code - 1];
}

/** One record's frame fields (the payload is separate). */
export interface FrameInfo {
	offset: number;
	kind: number;
	flags: number;
	length: number;
	request_id: number;
	time: number;
	crc: number;
}

function u8(buffer: ArrayBuffer): Uint8Array {
	return new Uint8Array(buffer);
}

/** A data or index header for a generation. */
export function encodeHeader(magic: number, generation: number): Uint8Array {
	const bytes = new Uint8Array(HEADER_BYTES);
	const view = new DataView(bytes.buffer);
	view.setUint32(0, magic, true);
	view.setUint16(4, FORMAT_VERSION, true);
	view.setUint16(6, magic === DATA_MAGIC ? HEADER_BYTES : ENTRY_BYTES, true);
	view.setUint32(8, generation >>> 0, true);
	view.setUint32(12, crc32(bytes, 0, 12), true);
	return bytes;
}

/** The header's generation, or a sentence saying what is wrong with it. */
export function decodeHeader(bytes: Uint8Array, magic: number): { generation: number } | { problem: string } {
	if (bytes.length < HEADER_BYTES) return { problem: `its header is cut short (${bytes.length} of ${HEADER_BYTES} bytes)` };
	const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
	if (view.getUint32(0, true) !== magic) return { problem: "it does not start with the session file magic" };
	if (view.getUint32(12, true) !== crc32(bytes, 0, 12)) return { problem: "its header checksum does not match" };
	if (view.getUint16(4, true) !== FORMAT_VERSION) return { problem: `it has format version ${view.getUint16(4, true)}, this firmware reads ${FORMAT_VERSION}` };
	const second = view.getUint16(6, true);
	if (second !== (magic === DATA_MAGIC ? HEADER_BYTES : ENTRY_BYTES)) return { problem: "its header has an unknown layout" };
	return { generation: view.getUint32(8, true) };
}

/** A whole frame (header + payload) for one record. */
export function encodeFrame(kind: number, flags: number, requestId: number, time: number, payload: Uint8Array): Uint8Array {
	const bytes = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
	bytes.set(payload, FRAME_HEADER_BYTES);
	encodeFrameInto(bytes, new DataView(bytes.buffer, bytes.byteOffset, bytes.length), 0, kind, flags, requestId, time, payload.length);
	return bytes;
}

/**
 * Writes the header of the frame at `at` in bytes, whose payload of `length`
 * bytes is in place after it (view: a DataView of bytes from its index 0, one
 * for every frame of a batch); returns the frame's CRC. Each store and call
 * costs ~800-2,000 instructions in XS, so the four header bytes go as one u32
 * and the CRC is the native one (util/crc32's, without its wrapper).
 */
export function encodeFrameInto(bytes: Uint8Array, view: DataView, at: number, kind: number, flags: number, requestId: number, time: number, length: number): number {
	view.setUint32(at, FRAME_MAGIC_0 | (FRAME_MAGIC_1 << 8) | (kind << 16) | (flags << 24), true);
	view.setUint32(at + 4, length, true);
	view.setUint32(at + 8, requestId >>> 0, true);
	view.setFloat64(at + 12, time, true);
	const crc = nativeCrc32(bytes, at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length, nativeCrc32(bytes, at, at + 20, 0));
	view.setUint32(at + 20, crc, true);
	return crc;
}

/**
 * encodeFrameInto, then the record's index entry into entries at entryAt (its
 * frame at offset `offset` of the data file): one call per record appended.
 */
export function encodeRecordInto(bytes: Uint8Array, view: DataView, at: number, entries: DataView, entryAt: number, offset: number, kind: number, flags: number, requestId: number, time: number, length: number): void {
	const crc = encodeFrameInto(bytes, view, at, kind, flags, requestId, time, length);
	entries.setUint32(entryAt, offset, true);
	entries.setUint32(entryAt + 4, length, true);
	entries.setUint32(entryAt + 8, kind | (flags << 8), true);   // kind, flags, two zero bytes
	entries.setUint32(entryAt + 12, crc, true);
}

/** The frame header's fields when they are plausible (the CRC is not checked here). */
export function decodeFrameHeader(bytes: Uint8Array, offset: number): FrameInfo | undefined {
	if (bytes.length < FRAME_HEADER_BYTES || bytes[0] !== FRAME_MAGIC_0 || bytes[1] !== FRAME_MAGIC_1) return undefined;
	const view = new DataView(bytes.buffer, bytes.byteOffset, FRAME_HEADER_BYTES);
	const length = view.getUint32(4, true);
	if (!kindName(bytes[2]) || (bytes[3] & ~FLAG_TURN_COMPLETED) || length === 0 || length > SESSION_RECORD_MAX_BYTES) return undefined;
	return { offset, kind: bytes[2], flags: bytes[3], length, request_id: view.getUint32(8, true), time: view.getFloat64(12, true), crc: view.getUint32(20, true) };
}

/** True when frame (header + payload bytes) carries the CRC its header claims. */
export function frameIntact(frame: Uint8Array, info: FrameInfo): boolean {
	const crc = crc32(frame, FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + info.length, crc32(frame, 0, 20));
	return crc === info.crc;
}

export function encodeEntry(info: FrameInfo, into: Uint8Array, at: number): void {
	encodeEntryFields(into, new DataView(into.buffer, into.byteOffset, into.length), at, info.offset, info.length, info.kind, info.flags, info.crc);
}

/** An index entry from its fields, into `into` at `at` (view: a DataView of into from its index 0; no FrameInfo object needed). */
export function encodeEntryFields(into: Uint8Array, view: DataView, at: number, offset: number, length: number, kind: number, flags: number, crc: number): void {
	view.setUint32(at, offset, true);
	view.setUint32(at + 4, length, true);
	view.setUint32(at + 8, kind | (flags << 8), true);   // kind, flags, two zero bytes
	view.setUint32(at + 12, crc, true);
}

export interface Entry { offset: number; length: number; kind: number; flags: number; crc: number }

export function decodeEntry(bytes: Uint8Array, at: number): Entry {
	const view = new DataView(bytes.buffer, bytes.byteOffset + at, ENTRY_BYTES);
	return { offset: view.getUint32(0, true), length: view.getUint32(4, true), kind: bytes[at + 8], flags: bytes[at + 9], crc: view.getUint32(12, true) };
}

/** Reads and checks the whole frame at offset; undefined when it is not an intact frame. */
export function readFrame(file: File, offset: number, size: number): { info: FrameInfo; frame: Uint8Array } | undefined {
	if (offset + FRAME_HEADER_BYTES > size) return undefined;
	const head = u8(file.read(FRAME_HEADER_BYTES, offset));
	const info = decodeFrameHeader(head, offset);
	if (!info || offset + FRAME_HEADER_BYTES + info.length > size) return undefined;
	const frame = new Uint8Array(FRAME_HEADER_BYTES + info.length);
	frame.set(head, 0);
	frame.set(u8(file.read(info.length, offset + FRAME_HEADER_BYTES)), FRAME_HEADER_BYTES);
	return frameIntact(frame, info) ? { info, frame } : undefined;
}

/** What a scan found after the last intact record. */
export type Tail =
	| { kind: "clean" }
	/** A record cut short by a power loss: a prefix of a plausible frame that runs past the end. */
	| { kind: "torn"; at: number; bytes: number }
	/** Bytes that are no record at all (damage, not a power loss). */
	| { kind: "garbage"; at: number; bytes: number };

export interface Scan {
	generation: number;
	/** Index entries of the intact records, in file order, ENTRY_BYTES each. */
	entries: Uint8Array;
	count: number;
	/** Damaged stretches inside the file, each followed by intact records. */
	holes: { at: number; bytes: number }[];
	tail: Tail;
	/** Where the last intact record ends. */
	end: number;
}

/** True when bytes could be the start of a frame cut short at the end of the file. */
function looksTorn(file: File, at: number, size: number): boolean {
	const n = Math.min(FRAME_HEADER_BYTES, size - at);
	const head = u8(file.read(n, at));
	if (head[0] !== FRAME_MAGIC_0 || (n > 1 && head[1] !== FRAME_MAGIC_1)) return false;
	if (n < 8) return true;   // too short to hold the length: a header prefix
	const length = new DataView(head.buffer).getUint32(4, true);
	return length > 0 && length <= SESSION_RECORD_MAX_BYTES && at + FRAME_HEADER_BYTES + length > size;
}

/** The offset of the next intact frame in (from, size), searching at most SESSION_SALVAGE_SCAN_BYTES. */
function nextIntactFrame(file: File, from: number, size: number): number | undefined {
	const limit = Math.min(size, from + SESSION_SALVAGE_SCAN_BYTES);
	for (let block = from + 1; block < limit; block += SEARCH_BLOCK_BYTES) {
		const bytes = u8(file.read(Math.min(SEARCH_BLOCK_BYTES + 1, limit - block), block));
		for (let i = 0; i < bytes.length && block + i < limit; i++) {
			if (bytes[i] !== FRAME_MAGIC_0) continue;
			if (i + 1 < bytes.length && bytes[i + 1] !== FRAME_MAGIC_1) continue;
			if (readFrame(file, block + i, size)) return block + i;
		}
	}
	return undefined;
}

/**
 * Scans a data file whose header is valid (generation given) from the first
 * record (or from `from`, a frame boundary) to the end, checking every
 * record's CRC. Reads only; O(bytes scanned).
 */
export function scanData(file: File, size: number, generation: number, from = HEADER_BYTES): Scan {
	let entries = new Uint8Array(ENTRY_BYTES * 64);
	let count = 0;
	const holes: { at: number; bytes: number }[] = [];
	let at = from;
	let tail: Tail = { kind: "clean" };
	// Each step either consumes an intact frame or jumps past a hole, so `at` grows: bounded by size.
	while (at < size) {
		const frame = readFrame(file, at, size);
		if (frame) {
			if ((count + 1) * ENTRY_BYTES > entries.length) {
				const grown = new Uint8Array(entries.length * 2);
				grown.set(entries);
				entries = grown;
			}
			encodeEntry(frame.info, entries, count * ENTRY_BYTES);
			count++;
			at += FRAME_HEADER_BYTES + frame.info.length;
			continue;
		}
		const next = nextIntactFrame(file, at, size);
		if (next === undefined) {
			tail = looksTorn(file, at, size) ? { kind: "torn", at, bytes: size - at } : { kind: "garbage", at, bytes: size - at };
			break;
		}
		holes.push({ at, bytes: next - at });
		at = next;
	}
	const end = tail.kind === "clean" ? size : tail.at;
	return { generation, entries: entries.subarray(0, count * ENTRY_BYTES), count, holes, tail, end };
}

/**
 * The bytes of an index file that can agree with scan: at most its header and
 * scan.count entries. A longer index disagrees by its size alone, so a damaged or
 * huge index file is never read whole. Pass the result to indexDisagreement.
 */
export function readIndexFor(file: File, scan: Scan): { bytes: Uint8Array; size: number } {
	const size = file.status().size;
	return { bytes: new Uint8Array(file.read(Math.min(size, HEADER_BYTES + scan.count * ENTRY_BYTES), 0)), size };
}

/**
 * Why an index file does not describe a scan, or undefined when it does. index
 * holds the file's first bytes (readIndexFor), size its whole length (default:
 * index.length).
 */
export function indexDisagreement(index: Uint8Array | undefined, scan: Scan, size = index?.length ?? 0): string | undefined {
	if (!index) return "the index file is missing";
	const header = decodeHeader(index, INDEX_MAGIC);
	if ("problem" in header) return `the index file is unreadable (${header.problem})`;
	if (header.generation !== scan.generation) return "the index belongs to an older copy of the data file (a rewrite was cut between its two renames)";
	const body = size - HEADER_BYTES;
	if (body % ENTRY_BYTES) return `the index ends in a partial entry (${body % ENTRY_BYTES} bytes)`;
	const count = body / ENTRY_BYTES;
	if (count > scan.count) return `the index lists ${count} records, the data file holds ${scan.count}`;
	for (let i = 0; i < count * ENTRY_BYTES; i++) {
		if (index[HEADER_BYTES + i] !== scan.entries[i]) return `index entry ${Math.floor(i / ENTRY_BYTES)} does not point at its record`;
	}
	if (count < scan.count) return `the index lists ${count} records, the data file holds ${scan.count}`;
	return undefined;
}

/**
 * The index entries when the index proves the data file's records up to some
 * offset without reading them: its header is valid with the data's generation,
 * it holds whole entries only, no more than the data file could hold, each
 * entry is a plausible frame starting where the previous one ended (the first
 * right after the data header), the last ends within the data file, and the
 * first and last frames' headers in the data file carry the CRCs and lengths
 * their entries say. `end` is where the last listed record ends; the data file
 * may hold more after it (a batch whose index write a power loss cut), which
 * the caller scans. Undefined when any of this fails: then only a full scan
 * can say what the files hold. Costs one read of the index and two frame
 * headers, whatever the data file's size.
 */
export function provenIndex(index: File, data: File, dataSize: number, generation: number): { entries: Uint8Array; count: number; end: number } | undefined {
	const size = index.status().size;
	const count = (size - HEADER_BYTES) / ENTRY_BYTES;
	// Every frame is at least FRAME_HEADER_BYTES + 1 bytes: a longer index is not read at all.
	if (!Number.isInteger(count) || count < 0 || count > (dataSize - HEADER_BYTES) / (FRAME_HEADER_BYTES + 1)) return undefined;
	const bytes = new Uint8Array(index.read(size, 0));
	const header = decodeHeader(bytes, INDEX_MAGIC);
	if ("problem" in header || header.generation !== generation) return undefined;
	const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
	let end = HEADER_BYTES;
	for (let at = HEADER_BYTES; at < bytes.length; at += ENTRY_BYTES) {
		const length = view.getUint32(at + 4, true);
		if (view.getUint32(at, true) !== end || length === 0 || length > SESSION_RECORD_MAX_BYTES || !kindName(bytes[at + 8]) ||
			(bytes[at + 9] & ~FLAG_TURN_COMPLETED) || bytes[at + 10] || bytes[at + 11]) return undefined;
		end += FRAME_HEADER_BYTES + length;
		if (end > dataSize) return undefined;
	}
	const entries = bytes.subarray(HEADER_BYTES);
	for (const i of count ? [0, count - 1] : []) {
		const entry = decodeEntry(entries, i * ENTRY_BYTES);
		const info = decodeFrameHeader(u8(data.read(FRAME_HEADER_BYTES, entry.offset)), entry.offset);
		if (!info || info.crc !== entry.crc || info.length !== entry.length || info.kind !== entry.kind || info.flags !== entry.flags) return undefined;
	}
	return { entries, count, end };
}
