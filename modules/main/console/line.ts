// console/line: turns console bytes into lines. Owns the line buffer (bounded),
// backspace (BS or DEL) and Ctrl-U, CR / LF / CRLF line ends, the history of recent
// lines recalled with the up and down arrows (ESC [ A / ESC [ B, or ESC O A / B),
// and, where asked, Ctrl-D on an empty line as the end of input.
//
// With echo (a raw terminal: a UART, or a tty on lin), it draws what the person
// types; without (a pipe), no one is watching. Other control bytes are ignored.
// Limits: no cursor movement within the line (left/right arrows are ignored); a
// character deleted by backspace is assumed to be one column wide.
import { CONSOLE_ESCAPE_MAX_BYTES } from "budgets";

export type LineEvent =
	| { type: "line"; text: string }
	| { type: "too_long" }          // the line passed maxBytes; it was dropped whole
	| { type: "bad_utf8" }          // the line was not UTF-8; it was dropped
	| { type: "end" };              // Ctrl-D on an empty line (with endOnCtrlD): input is over

export interface LineEditorOptions {
	maxBytes: number;
	historyLines: number;
	/** Redrawn in front of a recalled line. */
	prompt: string;
	/** Draws typed characters back to the terminal; omit when nothing should show. */
	echo?: (text: string) => void;
	/** What echo draws for a line end: "\r\n" (the default) on a UART, "\n" where
	 * the terminal's output processing adds the carriage return. */
	lineEnd?: string;
	/** Ctrl-D (0x04) on an empty line ends input, as a terminal's end of file does;
	 * on a line with text, or without this, it is ignored. */
	endOnCtrlD?: boolean;
}


/** Where feedFrom() reads bytes: read() gives the next byte, or anything else (undefined) when there is none. */
export interface ByteSource {
	read(): unknown;
}

const enum State { Text, AfterCR, Escape, Sequence, Overflow }

export class LineEditor {
	#options: LineEditorOptions;
	#lineEnd: string;
	#buffer: Uint8Array;
	#max: number;   // the buffer's length, read per byte (a field, not the typed array's getter)
	#length = 0;
	#state = State.Text;
	#escapeLength = 0;
	#history: string[] = [];
	#recall = 0;          // index into history; history.length is the line being typed
	#draft = "";          // the line being typed, kept while older lines are recalled

	constructor(options: LineEditorOptions) {
		this.#options = options;
		this.#lineEnd = options.lineEnd ?? "\r\n";
		this.#buffer = new Uint8Array(options.maxBytes);
		this.#max = options.maxBytes;
	}

	/** Takes one byte; returns an event when it ends a line. */
	feed(byte: number): LineEvent | undefined {
		switch (this.#state) {
			case State.Escape:
				this.#state = byte === 0x5b || byte === 0x4f ? State.Sequence : State.Text;   // "[" or "O"
				return undefined;
			case State.Sequence:
				if (byte >= 0x40 && byte <= 0x7e) {
					this.#state = State.Text;
					if (byte === 0x41) this.#move(-1);          // "A": up
					else if (byte === 0x42) this.#move(1);      // "B": down
				}
				else if (++this.#escapeLength > CONSOLE_ESCAPE_MAX_BYTES) this.#state = State.Text;
				return undefined;
			case State.AfterCR:
				this.#state = State.Text;
				if (byte === 0x0a) return undefined;           // CRLF is one line end
				break;
			case State.Overflow:
				if (byte !== 0x0d && byte !== 0x0a) return undefined;
				this.#state = byte === 0x0d ? State.AfterCR : State.Text;
				this.#length = 0;
				this.#recall = this.#history.length;
				this.#echo(this.#lineEnd);
				return { type: "too_long" };
		}
		if (byte === 0x0d || byte === 0x0a) {
			this.#state = byte === 0x0d ? State.AfterCR : State.Text;
			this.#echo(this.#lineEnd);
			return this.#take();
		}
		if (byte === 0x1b) {
			this.#state = State.Escape;
			this.#escapeLength = 0;
		}
		else if (byte === 0x08 || byte === 0x7f) this.#erase();
		else if (byte === 0x15) this.#replace("");      // Ctrl-U
		else if (byte === 0x04 && this.#options.endOnCtrlD && !this.#length) {
			this.#echo(this.#lineEnd);                   // what follows starts on a line of its own
			return { type: "end" };
		}
		else if (byte === 0x09) this.#append(0x20);     // a tab is a space
		else if (byte >= 0x20) this.#append(byte);
		return undefined;
	}

	/**
	 * Takes bytes from source.read() until one ends a line (its event, as feed()
	 * gives it) or read() has no more (undefined). Text typed on a pipe is stored
	 * here without a call per byte: a console line came byte by byte through
	 * feed(), and those calls were most of the main machine's work for an `ask`.
	 * Bounded by the bytes the source holds.
	 */
	feedFrom(source: ByteSource): LineEvent | undefined {
		const buffer = this.#buffer, max = this.#max, plain = !this.#options.echo;
		let length = this.#length, text = this.#state === State.Text;
		for (;;) {
			const byte = source.read();
			if (typeof byte !== "number") {
				this.#length = length;
				return undefined;
			}
			if (plain && text && byte >= 0x20 && byte !== 0x7f && length < max) {
				buffer[length++] = byte;
				continue;
			}
			this.#length = length;
			const event = this.feed(byte);
			if (event) return event;
			length = this.#length;
			text = this.#state === State.Text;
		}
	}

	/** End of input: the unfinished line, if any. */
	flush(): LineEvent | undefined {
		const overflowed = this.#state === State.Overflow;
		this.#state = State.Text;
		if (overflowed) {
			this.#length = 0;
			return { type: "too_long" };
		}
		return this.#length ? this.#take() : undefined;
	}

	/** Adds a line to the history (blank lines and repeats of the last one are not). */
	remember(line: string): void {
		if (line.trim() && this.#history.at(-1) !== line) {
			this.#history.push(line);
			if (this.#history.length > this.#options.historyLines) this.#history.shift();
		}
		this.#recall = this.#history.length;
	}

	/** What has been typed on the current line so far ("" when nothing, or not UTF-8 yet). */
	typed(): string {
		return this.#text();
	}

	/** Recent lines, oldest first. */
	history(): readonly string[] {
		return this.#history;
	}

	#take(): LineEvent {
		const bytes = this.#buffer.slice(0, this.#length).buffer;
		this.#length = 0;
		this.#recall = this.#history.length;
		try {
			return { type: "line", text: String.fromArrayBuffer(bytes) };
		} catch {
			return { type: "bad_utf8" };
		}
	}

	#append(byte: number): void {
		if (this.#length === this.#max) {
			this.#state = State.Overflow;
			return;
		}
		this.#buffer[this.#length++] = byte;
		if (!this.#options.echo) return;   // a pipe: no string per byte
		if (byte < 0x80) this.#echo(String.fromCharCode(byte));
		else this.#echoCompletedCharacter();
	}

	// Echoes a multi-byte character once its last byte has arrived.
	#echoCompletedCharacter(): void {
		if (!this.#options.echo) return;
		let start = this.#length - 1;
		while (start > 0 && (this.#buffer[start] & 0xc0) === 0x80) start--;
		const lead = this.#buffer[start];
		const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
		if (this.#length - start !== size) return;
		try {
			this.#echo(String.fromArrayBuffer(this.#buffer.slice(start, this.#length).buffer));
		} catch {
			this.#echo("?");   // a malformed sequence: the line will be refused at its end
		}
	}

	#erase(): void {
		if (!this.#length) return;
		do this.#length--;
		while (this.#length > 0 && (this.#buffer[this.#length] & 0xc0) === 0x80);
		this.#echo("\b \b");
	}

	#move(step: number): void {
		const next = this.#recall + step;
		if (next < 0 || next > this.#history.length) return;
		if (this.#recall === this.#history.length) this.#draft = this.#text();
		this.#recall = next;
		this.#replace(next === this.#history.length ? this.#draft : this.#history[next]);
	}

	#text(): string {
		try {
			return String.fromArrayBuffer(this.#buffer.slice(0, this.#length).buffer);
		} catch {
			return "";
		}
	}

	#replace(text: string): void {
		const bytes = new Uint8Array(ArrayBuffer.fromString(text));
		this.#length = Math.min(bytes.length, this.#buffer.length);
		this.#buffer.set(bytes.subarray(0, this.#length));
		this.#echo("\r\x1b[K" + this.#options.prompt + text);
	}

	#echo(text: string): void {
		this.#options.echo?.(text);
	}
}
