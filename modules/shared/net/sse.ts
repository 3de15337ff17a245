// net/sse: an incremental parser for server-sent events (the WHATWG
// "text/event-stream" format), fed the onChunk bytes of a streaming response.
//
// Bytes in, events out: `event` ("" when the event has no event field; the
// standard's default type "message" is left to the caller), `data` (its data
// lines joined by "\n"), `id` (the last event ID seen, which persists across
// events). Comments (":...") are ignored, lines may end in CRLF, LF or CR, a
// leading BOM is skipped, and UTF-8 split across chunks is fine because lines
// are decoded only when whole. One event (its pending line plus its data) is
// bounded by SSE_EVENT_MAX_BYTES: more throws HttpError("too_large"), and the
// parser is dead afterwards (until reset()). At end() an unterminated event is
// dropped, as the standard says.
//
// Per event it makes nothing in the common case (onData, one data line whole in
// a chunk): the data goes to the listener as a range of the chunk itself, and
// the event's lines are found by one native scan (host/bytes sseEvent).
import { SSE_EVENT_MAX_BYTES, SSE_LINE_START_BYTES } from "budgets";
import { equal, find, sseEvent } from "host/bytes";
import { ByteBuffer } from "net/bytes";
import { HttpError } from "net/types";
import { decodeUtf8 } from "net/utf8";

export type SseListener = (event: string, data: string, id: string) => void;
/**
 * Where an event's data goes as bytes: push(bytes, start, end) gets its data
 * lines joined by LF as bytes[start, end); bytes is valid only during the call:
 * the input chunk itself when the event's one data line came whole in it (no
 * copy), else the parser's own buffer. (An LLM stream assembler is one.)
 */
export interface SseDataSink {
	push(bytes: Uint8Array, start: number, end: number): void;
}

const CR = 13, LF = 10, COLON = 0x3A, SPACE = 0x20;

// Field names as bytes, compared natively (host/bytes equal) without making strings.
const DATA = new Uint8Array([0x64, 0x61, 0x74, 0x61]), EVENT = new Uint8Array([0x65, 0x76, 0x65, 0x6E, 0x74]);
const ID = new Uint8Array([0x69, 0x64]), RETRY = new Uint8Array([0x72, 0x65, 0x74, 0x72, 0x79]);
const NONE = new Uint8Array(0);

export class SseParser {
	readonly #onEvent: SseListener;
	#onData: SseDataSink | undefined;
	readonly #max: number;
	readonly #overflow: () => never;
	readonly #line: ByteBuffer;   // a line split across chunks
	readonly #data: ByteBuffer;   // data lines of the current event, joined by LF
	#hasData = false;
	// The event's one data line, still in the chunk being pushed: [#heldStart, #heldEnd) of #held.
	// Copied into #data before push() returns or another data line joins it.
	#held: Uint8Array = NONE;
	#heldStart = 0;
	#heldEnd = 0;
	#event = "";
	#lastId = "";
	#pendingCR = false;           // the last chunk ended in CR: a leading LF belongs to it
	#firstLine = true;
	#failed = false;
	#generation = 0;              // reset() counts up: a push() in progress stops reading the old stream
	// Where host/bytes sseEvent puts an event's data range (its buffer read once: XS's getter is slow).
	readonly #range = new Int32Array(2);
	readonly #rangeBuffer = this.#range.buffer as ArrayBuffer;
	/** The last valid "retry:" field, in milliseconds. */
	retryMs: number | undefined = undefined;

	/**
	 * With onData, each event's data goes there as bytes instead (nothing is
	 * decoded: not the data, the event name, the id or retry), for a reader that wants
	 * only a few values out of it (llm/scan).
	 */
	constructor(onEvent: SseListener, maxEventBytes = SSE_EVENT_MAX_BYTES, onData?: SseDataSink) {
		this.#onEvent = onEvent;
		this.#onData = onData;
		this.#max = maxEventBytes;
		const overflow = this.#overflow = (): never => {
			this.#failed = true;
			throw new HttpError("too_large", `a server-sent event is larger than ${maxEventBytes} bytes`);
		};
		this.#line = new ByteBuffer(SSE_LINE_START_BYTES, maxEventBytes, overflow);
		this.#data = new ByteBuffer(SSE_LINE_START_BYTES, maxEventBytes, overflow);
	}

	/**
	 * A new stream from the start (its BOM, a fresh event, no last id or retry),
	 * as a new parser would read it, keeping the buffers: one parser serves a
	 * connection's or a backend's streams one after another. With onData, events
	 * go there from now on.
	 */
	reset(onData?: SseDataSink): void {
		this.end();
		this.#generation++;
		if (onData) this.#onData = onData;
		this.#lastId = "";
		this.retryMs = undefined;
		this.#firstLine = true;
		this.#failed = false;
	}

	/** Ends the stream and lets go of the data sink (until the next reset(sink)): a kept parser must not keep its last reader alive. */
	release(): void {
		this.reset();
		this.#onData = undefined;
	}

	/** Whether a data sink is set (a parser kept for reuse is free when not). */
	get inUse(): boolean { return this.#onData !== undefined; }

	/** Parses more of the stream; calls the listener for each complete event. */
	push(bytes: Uint8Array): void {
		if (this.#failed) throw new HttpError("protocol", "the event stream parser was used after an error");
		try {
			this.#push(bytes);
		} finally {
			if (this.#held !== NONE) this.#keepHeld();
		}
	}

	#push(bytes: Uint8Array): void {
		const end = bytes.length, generation = this.#generation;
		const onData = this.#onData;
		let i = 0;
		if (this.#pendingCR && i < end) {
			this.#pendingCR = false;
			if (bytes[0] === LF) i = 1;
		}
		while (i < end) {
			// Between events with a data sink: a whole event in one native scan, its data line handed over as a range of the chunk.
			if (onData && !this.#hasData && !this.#line.length && !this.#firstLine) {
				// Event after event while each is whole in the chunk (a listener leaves the parser between events, or resets it).
				const range = this.#range, rangeBuffer = this.#rangeBuffer, max = this.#max;
				for (;;) {
					const next = sseEvent(bytes, i, end, rangeBuffer);
					if (next < 0) break;
					const start = range[0], stop = range[1];
					i = next;
					if (start >= 0) {
						if (stop - start > max) this.#overflow();
						onData.push(bytes, start, stop);
						if (this.#generation !== generation) return; // a listener reset the parser
					}
					if (i >= end) return;
				}
			}
			let j = find(bytes, i, end, LF, CR);
			if (j < 0) {
				this.#line.append(bytes, i, end);
				this.#checkSize();
				return;
			}
			if (this.#line.length) {
				this.#line.append(bytes, i, j);
				this.#checkSize();
				const whole = this.#line.view();
				this.#line.clear();
				this.#processLine(whole, 0, whole.length, false);
			} else this.#processLine(bytes, i, j, true);
			if (bytes[j] === CR) {
				if (j + 1 < end) {
					if (bytes[j + 1] === LF) j++;
				} else this.#pendingCR = true;
			}
			i = j + 1;
			if (this.#generation !== generation) return; // a listener reset the parser: the rest of this chunk is not the new stream's
		}
	}

	/** The stream ended: an event without its blank line is dropped. */
	end(): void {
		this.#line.clear();
		this.#resetEvent();
		this.#pendingCR = false;
	}

	#checkSize(): void {
		if (this.#line.length + this.#data.length + this.#heldEnd - this.#heldStart > this.#max) this.#overflow();
	}

	/** The held data line goes into #data: its chunk is about to go away, or another line joins it. */
	#keepHeld(): void {
		const held = this.#held;
		this.#held = NONE;
		this.#data.append(held, this.#heldStart, this.#heldEnd);
		this.#heldStart = this.#heldEnd = 0;
	}

	/** One line: line[start, end), without its end of line; inChunk: line is the chunk being pushed (it may be held). */
	#processLine(line: Uint8Array, start: number, end: number, inChunk: boolean): void {
		if (this.#firstLine) {
			this.#firstLine = false;
			if (end - start >= 3 && line[start] === 0xEF && line[start + 1] === 0xBB && line[start + 2] === 0xBF) start += 3;
		}
		if (start === end) return this.#dispatch();
		if (line[start] === COLON) return; // comment
		let colon = find(line, start, end, COLON);
		if (colon < 0) colon = end;
		let valueStart = colon + 1;
		if (valueStart < end && line[valueStart] === SPACE) valueStart++;
		if (valueStart > end) valueStart = end;
		if (colon - start === 4 && equal(line, start, colon, DATA)) {
			if (this.#hasData) {
				if (this.#held !== NONE) this.#keepHeld();
				this.#data.appendByte(LF);
			} else if (inChunk) {
				// The common case: an event's one data line, whole in this chunk: no copy unless it outlives the chunk.
				this.#held = line;
				this.#heldStart = valueStart;
				this.#heldEnd = end;
				this.#hasData = true;
				this.#checkSize();
				return;
			}
			this.#data.append(line, valueStart, end);
			this.#hasData = true;
			this.#checkSize();
		} else if (this.#onData) {
			// bytes only: the event name, id and retry are not needed
		} else if (colon - start === 5 && equal(line, start, colon, EVENT)) this.#event = decodeUtf8(line, valueStart, end);
		else if (colon - start === 2 && equal(line, start, colon, ID)) {
			if (find(line, valueStart, end, 0) < 0) this.#lastId = decodeUtf8(line, valueStart, end);
		} else if (colon - start === 5 && equal(line, start, colon, RETRY)) {
			let digits = end > valueStart && end - valueStart <= 10;
			for (let k = valueStart; k < end && digits; k++) digits = line[k] >= 0x30 && line[k] <= 0x39;
			if (digits) this.retryMs = Number(decodeUtf8(line, valueStart, end));
		}
		// other fields are ignored
	}

	#dispatch(): void {
		if (!this.#hasData) {
			this.#event = "";
			return;
		}
		const onData = this.#onData;
		if (onData) {
			try {
				if (this.#held !== NONE) onData.push(this.#held, this.#heldStart, this.#heldEnd);
				else onData.push(this.#data.bytes, 0, this.#data.length);
			} finally {
				this.#resetEvent();
			}
			return;
		}
		if (this.#held !== NONE) this.#keepHeld();
		const data = decodeUtf8(this.#data.view());
		const event = this.#event;
		this.#resetEvent();
		this.#onEvent(event, data, this.#lastId);
	}

	#resetEvent(): void {
		this.#data.clear();
		this.#held = NONE;
		this.#heldStart = this.#heldEnd = 0;
		this.#hasData = false;
		this.#event = "";
	}
}
