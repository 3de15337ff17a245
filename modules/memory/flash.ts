// memory/flash: the few file operations memory and profile need, done power-loss
// safely, plus the checks that tell a readable file from a damaged one.
//
// Every change is "write <name>.tmp, flush, close, move over <name>": the move is an
// atomic rename on both hosts (littlefs and POSIX), so after a power loss the file
// is the old or the new version, never a mix. A <name>.tmp found on open is the
// remains of an interrupted change: the old file is still the truth, so the temp is
// deleted (staleTempRemoved). A file that fails its checks is moved aside to
// <name>.bad (replacing an older one) so a person can look at it, and the caller
// starts from empty.
//
// Limits: the directory entry's durability after the rename is the filesystem's
// (littlefs commits it atomically; on lin the host's move is a rename(2)).
import type { Directory } from "embedded:storage/files";

export const TEMP_SUFFIX = ".tmp";
export const BAD_SUFFIX = ".bad";

/** The UTF-8 bytes of text. */
export function utf8(text: string): ArrayBuffer {
	return ArrayBuffer.fromString(text);
}

/** UTF-8 length of text in bytes. */
export function byteLength(text: string): number {
	return ArrayBuffer.fromString(text).byteLength;
}

/** True when the file exists; other failures (IO, bad path) throw. */
export function exists(directory: Directory, path: string): boolean {
	try {
		directory.status(path);
		return true;
	} catch (error) {
		if (error instanceof Error && error.message.includes("not found")) return false;
		throw error;
	}
}

export type ReadResult =
	| { kind: "missing" }
	| { kind: "ok"; bytes: ArrayBuffer }
	/** The file is there but is larger than the caller allows; it was not read. */
	| { kind: "too_big"; size: number };

/** Reads a whole file of at most maxBytes. IO errors throw. */
export function readWhole(directory: Directory, path: string, maxBytes: number): ReadResult {
	if (!exists(directory, path)) return { kind: "missing" };
	const file = directory.openFile({ path, mode: "r" });
	try {
		const size = file.status().size;
		if (size > maxBytes) return { kind: "too_big", size };
		return { kind: "ok", bytes: size ? file.read(size, 0) : new ArrayBuffer(0) };
	} finally {
		file.close();
	}
}

/** Replaces path with bytes: temp, flush, atomic move. Throws (leaving path as it was) when it cannot. */
export function writeAtomically(directory: Directory, path: string, bytes: ArrayBuffer): void {
	const temp = path + TEMP_SUFFIX;
	try {
		const file = directory.openFile({ path: temp, mode: "w" });
		try {
			file.write(bytes, 0);
			file.flush();
		} finally {
			file.close();
		}
		directory.move(temp, path);
	} catch (error) {
		try {
			directory.delete(temp);
		} catch {
			// The temp is removed on the next open anyway; the write's own error is the one to report.
		}
		throw error;
	}
}

/** Deletes path + ".tmp" when an interrupted write left it; true when it did. */
export function staleTempRemoved(directory: Directory, path: string): boolean {
	return exists(directory, path + TEMP_SUFFIX) && directory.delete(path + TEMP_SUFFIX);
}

/** Moves a damaged file to path + ".bad"; returns that name. Throws only when the filesystem does. */
export function keepAside(directory: Directory, path: string): string {
	directory.move(path, path + BAD_SUFFIX);
	return path + BAD_SUFFIX;
}

/**
 * The text of bytes when they are valid UTF-8 without NUL characters (what a text
 * file we wrote always is), else undefined. Checked by hand because what XS does
 * with invalid UTF-8 in String.fromArrayBuffer is not something to rely on.
 */
export function decodeText(bytes: ArrayBuffer): string | undefined {
	const b = new Uint8Array(bytes);
	for (let i = 0; i < b.length;) {
		const c = b[i];
		if (c === 0) return undefined;
		const extra = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
		if (extra < 0 || i + extra > b.length - 1) return undefined;
		for (let k = 1; k <= extra; k++) if ((b[i + k] & 0xC0) !== 0x80) return undefined;
		// Overlong three-byte forms, surrogates, and code points past U+10FFFF.
		if (c === 0xE0 && b[i + 1] < 0xA0) return undefined;
		if (c === 0xED && b[i + 1] >= 0xA0) return undefined;
		if (c === 0xF0 && b[i + 1] < 0x90) return undefined;
		if (c === 0xF4 && b[i + 1] >= 0x90) return undefined;
		i += extra + 1;
	}
	return String.fromArrayBuffer(bytes);
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE 802.3, as zlib) of bytes. */
export function crc32(bytes: ArrayBuffer | Uint8Array): number {
	if (!crcTable) {
		crcTable = new Uint32Array(256);
		for (let n = 0; n < 256; n++) {
			let c = n;
			for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
			crcTable[n] = c >>> 0;
		}
	}
	const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
	let crc = 0xFFFFFFFF;
	for (let i = 0; i < b.length; i++) crc = crcTable[(crc ^ b[i]) & 0xFF] ^ (crc >>> 8);
	return (crc ^ 0xFFFFFFFF) >>> 0;
}
