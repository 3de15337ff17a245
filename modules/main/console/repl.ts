// console/repl: the serial console's read-eval-print loop. Takes bytes in (from
// `embedded:io/serial` in main, from a test directly), assembles lines, runs the
// command each line names from the CommandTable, prints through the given writer.
//
// One command runs at a time and answers in input order: lines that come while
// one runs wait (at most CONSOLE_PENDING_LINES), except commands flagged
// `concurrent` (cancel, status), which run at once. While that many lines wait,
// receive() takes no more bytes (wantsInput is false): the caller leaves them in
// the port (a pipe's writer then waits; nothing is lost) and calls receive()
// again after onRoom. At end of input (or Ctrl-D on an empty line, where asked)
// the waiting lines still run, then onEnd is called; input after that is left
// unread. stop() ends all input processing (before a reboot): receive() then
// consumes nothing more, so bytes not yet taken stay with the caller.
//
// Output: every line ends with a line end. On a terminal or a UART the prompt
// (and what is typed after it) is erased before a line printed while it shows
// (an answer that arrives later, a notice) and drawn again after it, so output
// never runs onto the prompt's line. On a pipe there is neither echo nor prompt:
// the output is the answers alone.
import { CONSOLE_HISTORY_LINES, CONSOLE_LINE_MAX_BYTES, CONSOLE_PENDING_LINES } from "budgets";
import type { ConsoleKind } from "host/platform";
import { LineEditor, type ByteSource, type LineEvent } from "console/line";
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
	/** Called when lines can be taken again after wantsInput was false (bytes were left unread). Must not throw. */
	onRoom?(): void;
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
	#interactive: boolean;
	/** The prompt ends what is on screen (with what was typed after it). */
	#promptShown = false;
	/** receive() stopped taking bytes because the waiting lines were full. */
	#heldBack = false;
	/** A waiting line restarts the firmware: nothing past it is read. */
	#restartWaits = false;
	/** A command that restarts the firmware runs: nothing past it is read (the restarted console reads it). */
	#restarting = false;

	constructor(options: ReplOptions) {
		this.#options = options;
		this.#newline = options.consoleKind === "uart" ? "\r\n" : "\n";
		this.#interactive = options.consoleKind !== "pipe";
		this.#output = { line: (text) => this.#line(text) };
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

	/** True while receive() takes bytes: accepting, and fewer than CONSOLE_PENDING_LINES lines wait. */
	get wantsInput(): boolean {
		return this.accepting && this.#pending.length < CONSOLE_PENDING_LINES && !this.#restartWaits && !this.#restarting;
	}

	/** Shows the first prompt. */
	start(): void {
		this.#prompt(false);
	}

	/**
	 * Takes console bytes from source.read() (a port's, one byte a call) while
	 * wantsInput, until read() has none: what is left stays in the source (no
	 * array of bytes taken ahead of the lines that would stop the reading).
	 */
	takeFrom(source: ByteSource): void {
		if (!this.wantsInput) return;
		// Each pass ends a line or returns: bounded by the bytes the source holds.
		for (;;) {
			const event = this.#editor.feedFrom(source);
			if (!event) return;
			this.#accept(event);
			if (!this.wantsInput) {
				if (this.accepting) this.#heldBack = true;
				return;
			}
		}
	}

	/** Takes console bytes; returns how many it consumed (fewer once not accepting, or while the waiting lines are full). */
	receive(bytes: Uint8Array): number {
		let used = 0;
		while (used < bytes.length && this.wantsInput) {
			const event = this.#editor.feed(bytes[used++]);
			if (event) this.#accept(event);
		}
		if (used < bytes.length && this.accepting) this.#heldBack = true;
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
		this.#promptShown = false; // the editor ended the line on screen
		if (event.type === "end") return this.end();
		if (event.type === "too_long") return this.#refuse(`that line was longer than ${CONSOLE_LINE_MAX_BYTES} bytes and was ignored: type a shorter one.`);
		if (event.type === "bad_utf8") return this.#refuse("that line was not valid UTF-8 and was ignored: check the terminal's encoding.");
		if (!this.#busy || this.#isConcurrent(event.text)) {
			this.#run(event.text);
			if (!this.wantsInput) this.#heldBack = true;
			return;
		}
		this.#pending.push(event.text); // bounded: receive() stops taking bytes while CONSOLE_PENDING_LINES wait
		const resolution = this.#options.table.resolve(event.text);
		if ("command" in resolution && resolution.command.restarts) this.#restartWaits = true;
		// The caller stops reading now (it reads while wantsInput): ask it to go on once there is room.
		if (!this.wantsInput) this.#heldBack = true;
	}

	#isConcurrent(line: string): boolean {
		const resolution = this.#options.table.resolve(line);
		return "command" in resolution && resolution.command.concurrent === true;
	}

	#refuse(message: string): void {
		this.#output.line(message);
		this.#prompt(this.#busy);
	}

	/** One line of output, kept off the prompt's line (see the file's note). */
	#line(text: string): void {
		const typed = this.#interactive ? this.#editor.typed() : "";
		const open = this.#promptShown || typed !== "";
		if (open) this.#options.write("\r\x1b[K");
		this.#options.write(text + this.#newline);
		if (open) this.#options.write((this.#promptShown ? PROMPT : "") + typed);
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
		this.#restarting = command.restarts === true;
		try {
			result = command.run(args, this.#output);
		} catch (error) {
			this.#restarting = false;
			this.#report(command.name, command.usage, error);
			return this.#prompt(concurrent);
		}
		if (!(result instanceof Promise)) {
			this.#restarting = false;
			return this.#prompt(concurrent);
		}
		if (concurrent) {
			result.catch((error) => this.#report(command.name, command.usage, error));
			return;
		}
		this.#busy = true;
		result
			.catch((error) => this.#report(command.name, command.usage, error))
			.finally(() => {
				this.#busy = false;
				this.#restarting = false;
				this.#prompt(false);
				this.#drain();
			});
	}

	#prompt(duringOther: boolean): void {
		if (duringOther || this.#stopped || !this.#interactive || this.#promptShown) return;
		this.#options.write(PROMPT);
		this.#promptShown = true;
	}

	#drain(): void {
		while (!this.#busy && !this.#stopped && this.#pending.length) this.#run(this.#pending.shift()!);
		if (!this.#pending.length) this.#restartWaits = false;
		if (this.#heldBack && this.wantsInput) {
			this.#heldBack = false;
			try {
				this.#options.onRoom?.();
			} catch (error) {
				this.#output.line(`console: reading input failed: ${messageOf(error)}`);
			}
		}
		this.#finishIfDone();
	}

	#finishIfDone(): void {
		if (this.#ended && !this.#busy && !this.#stopped && !this.#pending.length) {
			this.#stopped = true;
			// The last line on screen ends with a line end: no prompt is left open.
			if (this.#promptShown) this.#options.write(this.#newline);
			this.#promptShown = false;
			this.#options.onEnd();
		}
	}

	#report(name: string, usage: string, error: unknown): void {
		if (error instanceof UsageError) this.#output.line(`usage: ${name}${usage ? " " + usage : ""}`);
		else this.#output.line(`error: ${messageOf(error)}`);
	}
}
