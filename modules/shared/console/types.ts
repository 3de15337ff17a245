// console/types: the contract between the console and the commands other modules
// add to it. A command is one declarative table entry; the console never
// special-cases a command by name.

/** Where a command prints. Each call is one line; never pass a secret unmasked. */
export interface Output {
	line(text: string): void;
}

export interface Command {
	/** One word ("status") or two ("config set"); two-word names form a group ("config"). */
	readonly name: string;
	/** What follows the name, e.g. "KEY VALUE"; "" when nothing does. */
	readonly usage: string;
	/** One line for `help`. */
	readonly help: string;
	/**
	 * Runs at once even while another command is still busy. Only for commands
	 * that look at or stop what runs (cancel, status): every other command answers
	 * in input order, so its answer never depends on a line that came later.
	 */
	readonly concurrent?: boolean;
	/** The firmware restarts (or stops) after it: the console reads no line past it, so a restarted console runs them. */
	readonly restarts?: boolean;
	/** True when this line carries a secret: the line is kept out of history. */
	readonly secret?: (args: string) => boolean;
	/**
	 * Runs the command with the rest of the line (trimmed). May be async: the prompt
	 * returns when it settles. Throw UsageError for wrong arguments (the console prints
	 * the usage), or an Error whose message is a sentence saying what to do next.
	 */
	run(args: string, out: Output): void | Promise<void>;
}

/** Thrown by a command whose arguments do not fit its usage. */
export class UsageError extends Error {
	override name = "UsageError";
	constructor() {
		super("wrong arguments");
	}
}

/** The whitespace-separated words of args (one regular-expression run per word: XS's split with one runs at every character). */
export function words(args: string): string[] {
	return args.match(/\S+/g) ?? [];
}

/**
 * The words of args where a word may be quoted to hold spaces: "My Home Net" or
 * 'pass word' (inside double quotes \" and \\ stand for " and \). A quote only
 * opens at the start of a word (pa"ss is one word as typed). quoted: some word was.
 * Throws a sentence when a quote is not closed.
 */
export function quotedWords(args: string): { words: string[]; quoted: boolean } {
	const out: string[] = [];
	let quoted = false;
	let i = 0;
	// Each pass takes one word: bounded by the length of args.
	while (i < args.length) {
		while (i < args.length && /\s/.test(args[i])) i++;
		if (i >= args.length) break;
		const quote = args[i];
		if (quote === '"' || quote === "'") {
			let word = "";
			let j = i + 1;
			for (; j < args.length && args[j] !== quote; j++) {
				if (quote === '"' && args[j] === "\\" && (args[j + 1] === '"' || args[j + 1] === "\\")) j++;
				word += args[j];
			}
			if (j >= args.length) throw new Error(`a ${quote === '"' ? "double" : "single"} quote is not closed; close it, e.g. "My Home Net"`);
			if (j + 1 < args.length && !/\s/.test(args[j + 1])) throw new Error(`a closing quote must end the word; put a space after it`);
			out.push(word);
			quoted = true;
			i = j + 1;
		} else {
			let j = i;
			while (j < args.length && !/\s/.test(args[j])) j++;
			out.push(args.slice(i, j));
			i = j;
		}
	}
	return { words: out, quoted };
}
