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
// parser is dead afterwards. At end() an unterminated event is dropped, as the
// standard says.
import { SSE_EVENT_MAX_BYTES, SSE_LINE_START_BYTES } from "budgets";
import { ByteBuffer } from "net/bytes";
import { HttpError } from "net/types";
import { decodeUtf8 } from "net/utf8";

export type SseListener = (event: string, data: string, id: string) => void;

const CR = 13, LF = 10, COLON = 0x3A, SPACE = 0x20;

function fieldIs(line: Uint8Array, end: number, name: string): boolean {
	if (end !== name.length) return false;
	for (let i = 0; i < end; i++) if (line[i] !== name.charCodeAt(i)) return false;
	return true;
}

export class SseParser {
	readonly #onEvent: SseListener;
	readonly #max: number;
	readonly #overflow: () => never;
	readonly #line: ByteBuffer;   // a line split across chunks
	readonly #data: ByteBuffer;   // data lines of the current event, joined by LF
	#hasData = false;
	#event = "";
	#lastId = "";
	#pendingCR = false;           // the last chunk ended in CR: a leading LF belongs to it
	#firstLine = true;
	#failed = false;
	/** The last valid "retry:" field, in milliseconds. */
	retryMs: number | undefined = undefined;

	constructor(onEvent: SseListener, maxEventBytes = SSE_EVENT_MAX_BYTES) {
		this.#onEvent = onEvent;
		this.#max = maxEventBytes;
		const overflow = this.#overflow = (): never => {
			this.#failed = true;
			throw new HttpError("too_large", `a server-sent event is larger than ${maxEventBytes} bytes`);
		};
		this.#line = new ByteBuffer(SSE_LINE_START_BYTES, maxEventBytes, overflow);
		this.#data = new ByteBuffer(SSE_LINE_START_BYTES, maxEventBytes, overflow);
	}

	/** Parses more of the stream; calls the listener for each complete event. */
	push(bytes: Uint8Array): void {
		if (this.#failed) throw new HttpError("protocol", "the event stream parser was used after an error");
		const end = bytes.length;
		let i = 0;
		if (this.#pendingCR && i < end) {
			this.#pendingCR = false;
			if (bytes[0] === LF) i = 1;
		}
		while (i < end) {
			let j = i;
			while (j < end && bytes[j] !== LF && bytes[j] !== CR) j++;
			if (j === end) {
				this.#line.append(bytes, i, end);
				this.#checkSize();
				return;
			}
			if (this.#line.length) {
				this.#line.append(bytes, i, j);
				this.#checkSize();
				const whole = this.#line.view();
				this.#line.clear();
				this.#processLine(whole);
			} else this.#processLine(bytes.subarray(i, j));
			if (bytes[j] === CR) {
				if (j + 1 < end) {
					if (bytes[j + 1] === LF) j++;
				} else this.#pendingCR = true;
			}
			i = j + 1;
		}
	}

	/** The stream ended: an event without its blank line is dropped. */
	end(): void {
		this.#line.clear();
		this.#resetEvent();
		this.#pendingCR = false;
	}

	#checkSize(): void {
		if (this.#line.length + this.#data.length > this.#max) this.#overflow();
	}

	#processLine(line: Uint8Array): void {
		if (this.#firstLine) {
			this.#firstLine = false;
			if (line.length >= 3 && line[0] === 0xEF && line[1] === 0xBB && line[2] === 0xBF) line = line.subarray(3);
		}
		if (!line.length) return this.#dispatch();
		if (line[0] === COLON) return; // comment
		let colon = line.indexOf(COLON);
		if (colon < 0) colon = line.length;
		let valueStart = colon + 1;
		if (valueStart < line.length && line[valueStart] === SPACE) valueStart++;
		const value = valueStart < line.length ? line.subarray(valueStart) : new Uint8Array(0);
		if (fieldIs(line, colon, "data")) {
			if (this.#hasData) this.#data.appendByte(LF);
			this.#data.append(value);
			this.#hasData = true;
			this.#checkSize();
		} else if (fieldIs(line, colon, "event")) this.#event = decodeUtf8(value);
		else if (fieldIs(line, colon, "id")) {
			if (value.indexOf(0) < 0) this.#lastId = decodeUtf8(value);
		} else if (fieldIs(line, colon, "retry")) {
			if (value.length && value.length <= 10 && value.every((b) => b >= 0x30 && b <= 0x39)) this.retryMs = Number(decodeUtf8(value));
		}
		// other fields are ignored
	}

	#dispatch(): void {
		if (!this.#hasData) {
			this.#event = "";
			return;
		}
		const data = decodeUtf8(this.#data.view());
		const event = this.#event;
		this.#resetEvent();
		this.#onEvent(event, data, this.#lastId);
	}

	#resetEvent(): void {
		this.#data.clear();
		this.#hasData = false;
		this.#event = "";
	}
}
