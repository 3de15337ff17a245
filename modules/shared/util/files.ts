// util/files: the file habits the session store and memory share, on an
// embedded:storage/files Directory: whole-file replacement that a power loss
// cannot tear (write <path>.tmp, flush, close, move over <path>: the move is an
// atomic rename on littlefs and on the lin host), the clean-up of a temp file an
// interrupted replacement left, reading a bounded file whole, keeping a damaged
// file aside as <path>.bad for a person to look at, checking that bytes are
// UTF-8 text, and wiping directories (factory-reset: each machine wipes its own).
//
// Known limits: the durability of the directory entry after a rename is the
// filesystem's (littlefs commits it atomically; on lin it is rename(2) without a
// directory fsync, which the host's fault injection does not model).
import type { Directory } from "util/io";
import { FACTORY_RESET_MAX_ENTRIES, STORAGE_BAD_COPIES_MAX } from "budgets";
import { messageOf } from "util/errors";

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

/**
 * True when path exists. A missing file is false; any other failure (an IO
 * error) throws, so that a caller never takes a broken flash for an empty one
 * and writes a fresh file over real data.
 *
 * A missing file is told from a failing one without reading the error's text,
 * which differs between targets and builds (lin: "... not found"; littlefs:
 * "No directory entry" in a debug build, "LFS ERR -2" in a release one): when
 * status() throws, the entry's directory is listed. A name that is not listed
 * is missing; a listed one, or a directory that cannot be listed although it
 * exists, is a real failure and rethrows. Only the failure path lists.
 */
export function exists(directory: Directory, path: string): boolean {
	try {
		directory.status(path);
		return true;
	} catch (error) {
		if (isMissing(directory, path)) return false;
		throw error;
	}
}

/** Whether path's name is absent from its directory (listing it; the parents up the path likewise). */
function isMissing(directory: Directory, path: string): boolean {
	const cut = path.lastIndexOf("/");
	const parent = cut < 0 ? "" : path.slice(0, cut), name = path.slice(cut + 1);
	let names: Iterable<string>;
	try {
		names = parent ? directory.scan(parent) : directory.scan();
	} catch {
		// The directory cannot be listed: missing when it is not there itself.
		return parent !== "" && !exists(directory, parent);
	}
	for (const entry of names) if (entry === name) return false;
	return true;
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

/**
 * Replaces path with bytes: <path>.tmp written and flushed, then moved over path.
 * After a power loss path is the old or the new version, never a mix. Throws
 * (leaving path as it was, and trying to remove the temp file) when it cannot.
 */
export function writeAtomically(directory: Directory, path: string, bytes: ArrayBufferLike | ArrayBufferView): void {
	const temp = path + TEMP_SUFFIX;
	try {
		const file = directory.openFile({ path: temp, mode: "w" });
		try {
			file.write(bytes as ArrayBuffer, 0);
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

/** Deletes <path>.tmp when an interrupted writeAtomically left it (path is still the truth); true when it did. */
export function staleTempRemoved(directory: Directory, path: string): boolean {
	return exists(directory, path + TEMP_SUFFIX) && directory.delete(path + TEMP_SUFFIX);
}

/**
 * Renames a damaged file to a free <path>.bad, .bad1, ... name (at most
 * STORAGE_BAD_COPIES_MAX; then the last is replaced) and returns that name.
 * Throws only when the filesystem does.
 */
export function keepAside(directory: Directory, path: string): string {
	let target = path + BAD_SUFFIX;
	for (let i = 1; i < STORAGE_BAD_COPIES_MAX && exists(directory, target); i++) target = `${path}${BAD_SUFFIX}${i}`;
	directory.move(path, target);
	return target;
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

/** A directory a factory reset wipes, with what a person calls it. */
export interface WipedDirectory { path: string; what: string }

/** What a wipe did: "sessions (3 files)" for each directory wiped, and a sentence for each that failed. */
export interface WipeResult { wiped: string[]; errors: string[] }

/** Deletes path below directory and all it holds; returns the files deleted. Bounded by budget.left entries. */
function removeTree(directory: Directory, path: string, budget: { left: number }): number {
	let files = 0;
	if (directory.status(path).isDirectory()) {
		for (const name of [...directory.scan(path)]) {
			if (--budget.left < 0) throw new Error(`more than ${FACTORY_RESET_MAX_ENTRIES} files under ${path}`);
			files += removeTree(directory, `${path}/${name}`, budget);
		}
	} else {
		files++;
	}
	directory.delete(path);
	return files;
}

/** Deletes each of directories that exists, at most FACTORY_RESET_MAX_ENTRIES entries in all; a failure is reported and the rest still wiped. */
export function wipeDirectories(directory: Directory, directories: readonly WipedDirectory[]): WipeResult {
	const result: WipeResult = { wiped: [], errors: [] };
	const budget = { left: FACTORY_RESET_MAX_ENTRIES };
	for (const { path, what } of directories) {
		if (!exists(directory, path)) continue;
		try {
			const files = removeTree(directory, path, budget);
			result.wiped.push(`${what} (${files} file${files === 1 ? "" : "s"})`);
		} catch (error) {
			result.errors.push(`${what} could not be wiped completely (${messageOf(error)})`);
		}
	}
	return result;
}
