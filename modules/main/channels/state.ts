// channels/state: a chat channel's one small state file (telegram/state.json,
// qq/state.json), replaced whole and power-loss safely (util/files):
// {"version": 1, ...the channel's fields}. A damaged file is kept aside as .bad
// and the channel starts from its empty state (unpaired: safe, the console prints
// a new pairing code), with a warning naming the channel.
import type { Directory } from "util/io";
import { isObject } from "util/values";
import { decodeText, keepAside, readWhole, staleTempRemoved, utf8, writeAtomically } from "util/files";

export const STATE_FILE = "state.json";

export interface StateFileOptions<T> {
	/** The channel's name and folder ("telegram", "qq"), for the warning. */
	name: string;
	maxBytes: number;
	/** Checks the file's text: a sentence on what is wrong, or the state. */
	read(text: string): T | string;
	empty: T;
	warn(line: string): void;
}

/** A state file's text as its JSON object with version 1, or a sentence on what is wrong. */
export function readVersioned(text: string): Record<string, unknown> | string {
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		return "it is not JSON";
	}
	if (!isObject(json) || json.version !== 1) return "it has no version 1";
	return json;
}

export class ChannelStateFile<T extends object> {
	readonly #directory: Directory;
	#state: T;

	/** Opens the channel's state.json; warns when it was damaged (kept aside) and the state starts empty. IO errors throw. */
	constructor(directory: Directory, options: StateFileOptions<T>) {
		this.#directory = directory;
		this.#state = options.empty;
		staleTempRemoved(directory, STATE_FILE);
		const read = readWhole(directory, STATE_FILE, options.maxBytes);
		if (read.kind === "missing") return;
		const text = read.kind === "ok" ? decodeText(read.bytes) : undefined;
		const state = text === undefined ? (read.kind === "too_big" ? "it is too large" : "it is not UTF-8 text") : options.read(text);
		if (typeof state === "string") {
			const aside = keepAside(directory, STATE_FILE);
			options.warn(`${options.name}: the saved state was damaged (${state}); it is kept as ${options.name}/${aside}, and every chat must pair again`);
			return;
		}
		this.#state = state;
	}

	get state(): Readonly<T> {
		return this.#state;
	}

	/** Replaces the file with changes applied. Throws when the storage cannot (the state in memory then stays as it was). */
	update(change: Partial<T>): void {
		const next = { ...this.#state, ...change };
		writeAtomically(this.#directory, STATE_FILE, utf8(JSON.stringify({ version: 1, ...next })));
		this.#state = next;
	}
}
