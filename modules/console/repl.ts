// console/repl: the serial console's read-eval-print loop. Takes bytes in (from
// `embedded:io/serial` in main, from a test directly), assembles lines, runs the
// command each line names from the CommandTable, prints through the given writer.
//
// One command runs at a time: lines typed meanwhile wait (at most
// CONSOLE_PENDING_LINES), except commands flagged `concurrent`, which run at once.
// At end of input (or Ctrl-D on an empty line, where asked) the waiting lines still
// run, then onEnd is called; input after that is left unread.
// stop() ends all input processing (before a reboot): receive() then consumes
// nothing more, so bytes not yet taken stay with the caller.
import { CONSOLE_HISTORY_LINES, CONSOLE_LINE_MAX_BYTES, CONSOLE_PENDING_LINES } from "budgets";
import type { ConsoleKind } from "host/platform";
import { LineEditor, type LineEvent } from "console/line";
import type { CommandTable } from "console/table";
import { UsageError, type Output } from "console/types";
import { messageOf } from "util/errors";

export const PROMPT = "xsclaw> ";

export interface ReplOptions {
	table: CommandTable;
	/** Writes console output. Must not throw. */
	write(text: string): void;
	/**
	 * What the console talks to (host/platform's consoleKind). "uart": the console
	 * echoes and edits what is typed and ends lines with CRLF. "tty": the same with
	 * LF line ends (the terminal adds the CR), and Ctrl-D on an empty line ends input.
	 * "pipe": no echo, LF line ends, and Ctrl-D is a byte like any other (ignored).
	 */
	consoleKind: ConsoleKind;
	/** Called once, when input has ended and every waiting line has run. */
	onEnd(): void;
}

export class Repl {
	#options: ReplOptions;
	#editor: LineEditor;
	#newline: string;
	#output: Output;
	#pending: string[] = [];
	#busy = false;
	#ended = false;
	#stopped = false;

	constructor(options: ReplOptions) {
		this.#options = options;
		this.#newline = options.consoleKind === "uart" ? "\r\n" : "\n";
		this.#output = { line: (text) => options.write(text + this.#newline) };
		this.#editor = new LineEditor({
			maxBytes: CONSOLE_LINE_MAX_BYTES,
			historyLines: CONSOLE_HISTORY_LINES,
			prompt: PROMPT,
			echo: options.consoleKind === "pipe" ? undefined : options.write,
			lineEnd: this.#newline,
			endOnCtrlD: options.consoleKind === "tty",
		});
	}

	/** Prints a line (a banner, a notice) outside of any command. */
	get output(): Output {
		return this.#output;
	}

	/** Recent lines, oldest first; lines carrying a secret are never kept. */
	get history(): readonly string[] {
		return this.#editor.history();
	}

	/** False once stop() or end() was called. */
	get accepting(): boolean {
		return !this.#stopped && !this.#ended;
	}

	/** Shows the first prompt. */
	start(): void {
		this.#options.write(PROMPT);
	}

	/** Takes console bytes; returns how many it consumed (fewer only once not accepting). */
	receive(bytes: Uint8Array): number {
		let used = 0;
		while (used < bytes.length && this.accepting) {
			const event = this.#editor.feed(bytes[used++]);
			if (event) this.#accept(event);
		}
		return used;
	}

	/** End of input: the unfinished line runs, then the waiting ones, then onEnd. */
	end(): void {
		if (this.#ended || this.#stopped) return;
		const event = this.#editor.flush();
		if (event) this.#accept(event);
		this.#ended = true;
		this.#finishIfDone();
	}

	/** Takes no more input and runs nothing more (a reboot is coming). */
	stop(): void {
		this.#stopped = true;
		this.#pending.length = 0;
	}

	#accept(event: LineEvent): void {
		if (event.type === "end") return this.end();
		if (event.type === "too_long") return this.#refuse(`that line was longer than ${CONSOLE_LINE_MAX_BYTES} bytes and was ignored: type a shorter one.`);
		if (event.type === "bad_utf8") return this.#refuse("that line was not valid UTF-8 and was ignored: check the terminal's encoding.");
		if (!this.#busy || this.#isConcurrent(event.text)) return this.#run(event.text);
		if (this.#pending.length >= CONSOLE_PENDING_LINES) return this.#refuse(`the console is busy: the line was ignored (${CONSOLE_PENDING_LINES} lines already wait).`);
		this.#pending.push(event.text);
	}

	#isConcurrent(line: string): boolean {
		const resolution = this.#options.table.resolve(line);
		return "command" in resolution && resolution.command.concurrent === true;
	}

	#refuse(message: string): void {
		this.#output.line(message);
		if (!this.#busy) this.#options.write(PROMPT);
	}

	// Runs one line. While an async command runs, #busy holds further lines back.
	#run(line: string): void {
		const concurrent = this.#busy;
		if (!line.trim()) return this.#prompt(concurrent);
		const resolution = this.#options.table.resolve(line);
		if (!("command" in resolution)) {
			this.#editor.remember(line);
			this.#output.line(resolution.hint);
			return this.#prompt(concurrent);
		}
		const { command, args } = resolution;
		if (!command.secret?.(args)) this.#editor.remember(line);
		let result: void | Promise<void>;
		try {
			result = command.run(args, this.#output);
		} catch (error) {
			this.#report(command.name, command.usage, error);
			return this.#prompt(concurrent);
		}
		if (!(result instanceof Promise)) return this.#prompt(concurrent);
		if (concurrent) {
			result.catch((error) => this.#report(command.name, command.usage, error));
			return;
		}
		this.#busy = true;
		result
			.catch((error) => this.#report(command.name, command.usage, error))
			.finally(() => {
				this.#busy = false;
				this.#prompt(false);
				this.#drain();
			});
	}

	#prompt(duringOther: boolean): void {
		if (!duringOther && !this.#stopped) this.#options.write(PROMPT);
	}

	#drain(): void {
		while (!this.#busy && !this.#stopped && this.#pending.length) this.#run(this.#pending.shift()!);
		this.#finishIfDone();
	}

	#finishIfDone(): void {
		if (this.#ended && !this.#busy && !this.#stopped && !this.#pending.length) {
			this.#stopped = true;
			this.#options.onEnd();
		}
	}

	#report(name: string, usage: string, error: unknown): void {
		if (error instanceof UsageError) this.#output.line(`usage: ${name}${usage ? " " + usage : ""}`);
		else this.#output.line(`error: ${messageOf(error)}`);
	}
}
