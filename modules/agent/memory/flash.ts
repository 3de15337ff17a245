// memory/flash: how memory and the profile open their files, one step for all of
// them (records.dat, MEMORY.md, persona.md, user_notes.md): a temp file left by an
// interrupted change is dropped (the old file is the truth), the file is read
// whole up to its limit and decoded, and a file that does not decode is kept
// aside as <name>.bad so a person can look at it. Each of these logs one line and
// the caller starts from its fallback. A file that is there but cannot be read (an
// IO error) is left alone, and the caller refuses changes to it until a restart. Changes are written with util/files
// writeAtomically (temp, flush, atomic move), as the session store's small files are.
import type { Directory } from "util/io";
import { decodeText, keepAside, readWhole, staleTempRemoved } from "util/files";
import type { Log } from "memory/types";
import { messageOf } from "util/errors";

export interface LoadSpec<T> {
	path: string;
	maxBytes: number;
	/** The content, or a phrase saying why the bytes are not a valid file ("it is not UTF-8 text"). */
	decode(bytes: ArrayBuffer): { value: T } | { problem: string };
	/** The log line's prefix: "memory" or "profile". */
	area: string;
	/** What the caller uses instead, as the end of a sentence: "long-term memory starts empty". */
	fallback: string;
	/**
	 * Called when the file is there but could not be read (an IO error, not
	 * damage): the caller must then refuse changes (refuseIfUnreadable), since a
	 * change would write its fallback over the real file.
	 */
	unreadable(why: string): void;
}

/**
 * The decoded file, or undefined when it is missing, damaged (kept aside) or
 * unreadable (all but "missing" logged with spec.fallback). Never throws.
 */
export function loadFile<T>(directory: Directory, spec: LoadSpec<T>, log: Log): T | undefined {
	const { path, area, fallback } = spec;
	try {
		if (staleTempRemoved(directory, path)) log(`${area}: an unfinished change to ${path} was discarded (power lost mid-write); the last saved version is used.`);
		const read = readWhole(directory, path, spec.maxBytes);
		if (read.kind === "missing") return undefined;
		const decoded = read.kind === "too_big" ? { problem: `it is ${read.size} bytes, more than ${spec.maxBytes}` } : spec.decode(read.bytes);
		if ("value" in decoded) return decoded.value;
		const bad = keepAside(directory, path);
		log(`${area}: ${path} is damaged (${decoded.problem}); it was kept as ${bad} and ${fallback}.`);
	} catch (error) {
		const why = messageOf(error);
		spec.unreadable(why);
		log(`${area}: ${path} could not be read (${why}); ${fallback}, and changes are refused until a restart reads it, so that it is not overwritten.`);
	}
	return undefined;
}

/** Throws the sentence for a change to a file that loadFile could not read (why set); returns when why is undefined. */
export function refuseIfUnreadable(path: string, why: string | undefined): void {
	if (why !== undefined) throw new Error(`${path} could not be read when the board started (${why}), so nothing is saved over it: restart the board and try again.`);
}

/** decode for a text file: its UTF-8 text. */
export function textFile(bytes: ArrayBuffer): { value: string } | { problem: string } {
	const text = decodeText(bytes);
	return text === undefined ? { problem: "it is not UTF-8 text" } : { value: text };
}
