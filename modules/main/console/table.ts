// console/table: the console's command table. Modules add their commands with
// add(...); resolve() finds the command a line names (two-word names first), and
// turns a line that names none into a one-line hint for the person typing (with
// the nearest command's name when one is close: a typo, not a guess).
import type { Command } from "console/types";
import { clip, editDistance, nearest } from "util/text";

const NAME_PATTERN = /^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*)?$/;
const SHOWN_UNKNOWN_CHARS = 32;   // an unknown word is echoed at most this long
const FIRST_WORDS = /^(\S*)(?:\s+(\S+))?/;

export type Resolution = { command: Command; args: string } | { hint: string };

export class CommandTable {
	#commands: Command[] = [];
	/** The same commands by name: every line typed looks up one or two names. */
	#byName = new Map<string, Command>();

	/** Adds commands; throws on a malformed or duplicate name, adding none of them. */
	add(...commands: Command[]): void {
		const names = new Set<string>();
		for (const command of commands) {
			if (!NAME_PATTERN.test(command.name)) throw new Error(`console: command name "${command.name}" must be one or two lowercase words.`);
			if (this.#byName.has(command.name) || names.has(command.name)) throw new Error(`console: command "${command.name}" is already in the table.`);
			names.add(command.name);
		}
		this.#commands.push(...commands);
		for (const command of commands) this.#byName.set(command.name, command);
	}

	/** Every command, in the order added (the order of `help`). */
	list(): readonly Command[] {
		return this.#commands;
	}

	/** The command a non-empty line names and the rest of the line, or a hint. */
	resolve(line: string): Resolution {
		const trimmed = line.trim();
		// The first two words, one regular-expression run (XS's split with one runs at every character).
		const [, first = "", second] = FIRST_WORDS.exec(trimmed) ?? [];
		const afterFirst = trimmed.slice(first.length).trimStart();
		const pair = second === undefined ? undefined : this.#byName.get(`${first} ${second}`);
		if (pair) return { command: pair, args: afterFirst.slice(second!.length).trim() };
		const single = this.#byName.get(first);
		if (single) return { command: single, args: afterFirst };
		const group = this.#commands.filter((c) => c.name.startsWith(first + " ")).map((c) => c.name.slice(first.length + 1));
		if (group.length) {
			const near = second === undefined ? undefined : close(second, group);
			return { hint: `${first} needs one of: ${group.join(", ")}${near ? ` — did you mean ${first} ${near}?` : ""} — type help ${first}` };
		}
		const shown = clip(first, SHOWN_UNKNOWN_CHARS + 1);
		const near = close(first, new Set(this.#commands.map((c) => FIRST_WORDS.exec(c.name)![1])));
		return { hint: `unknown command: ${shown}${near ? ` — did you mean ${near}?` : ""} — type help` };
	}
}

/** The candidate a word is a typo of: the nearest, when one letter differs in a short word, two or a third in a longer one. */
function close(word: string, candidates: Iterable<string>): string | undefined {
	if (word.length > SHOWN_UNKNOWN_CHARS) return undefined;
	const best = nearest(word, candidates);
	const allowed = word.length < 4 ? 1 : Math.max(2, Math.floor(word.length / 3));
	return best !== undefined && editDistance(word, best) <= allowed ? best : undefined;
}
