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
	/** The firmware restarts after it: the console reads no line past it, so the restarted console runs them. */
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
