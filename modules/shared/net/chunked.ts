// net/chunked: an incremental decoder for "Transfer-Encoding: chunked" bodies
// (RFC 9112 §7.1), fed any split of the wire bytes.
//
// States follow the grammar: chunk-size [; ext] CRLF, data, CRLF, ... then the
// last chunk "0", optional trailer lines and an empty line. Bare LF is accepted
// where CRLF is expected (as most clients do). Chunk extensions and trailers
// are skipped, bounded by HTTP_CHUNK_LINE_MAX_BYTES and HTTP_HEADER_MAX_BYTES.
// Errors throw HttpError kind "protocol"; after an error the decoder is dead.
//
// The common case, a whole size line without extensions ("1a\r\n") and the
// CRLF after a chunk's data in the same input, is read without stepping the
// state machine byte by byte (in XS each byte read and state change costs an
// interpreted property access): a streamed LLM reply is one small chunk per event.
import { HTTP_CHUNK_LINE_MAX_BYTES, HTTP_CHUNK_SIZE_MAX_DIGITS, HTTP_HEADER_MAX_BYTES } from "budgets";
import { find } from "host/bytes";
import { HttpError } from "net/types";

const enum State {
	Size,          // hex digits of chunk-size
	SizeTail,      // whitespace or ";ext" up to the line end
	SizeLF,        // after CR of the size line
	Data,
	DataCR,        // CRLF after chunk data
	DataLF,
	TrailerStart,  // start of a trailer line (or the final empty line)
	Trailer,       // inside a trailer line
	TrailerLF,     // after CR of a trailer line
	EndLF,         // after CR of the final empty line
	Done,
	Failed,
}

const CR = 13, LF = 10;

function hexValue(b: number): number {
	if (b >= 0x30 && b <= 0x39) return b - 0x30;
	if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
	if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
	return -1;
}

export class ChunkedDecoder {
	#state = State.Size;
	#size = 0;         // chunk-size being read, then bytes of data left
	#digits = 0;
	#lineBytes = 0;    // bytes of the current size line (extensions bounded)
	#trailerBytes = 0;
	#inExtension = false;

	get done(): boolean { return this.#state === State.Done; }

	/** Readies the decoder for another body. */
	reset(): void {
		this.#nextChunk();
		this.#trailerBytes = 0;
	}

	/**
	 * Consumes bytes[start, end) and calls onData with each run of body bytes
	 * (views into bytes). Returns the index after the last byte consumed: end,
	 * or less when the body ended inside the input (the rest belongs to
	 * whatever follows the message). Stops early, returning the index reached,
	 * when onData returns false.
	 */
	feed(bytes: Uint8Array, start: number, end: number, onData: (data: Uint8Array) => boolean | void): number {
		let i = start;
		while (i < end) {
			if (this.#state === State.Size && this.#digits === 0) {
				const next = this.#sizeLine(bytes, i, end);
				if (next > i) {
					i = next;
					continue;
				}
			}
			switch (this.#state) {
			case State.Size: {
				const b = bytes[i];
				const v = hexValue(b);
				if (v >= 0) {
					if (++this.#digits > HTTP_CHUNK_SIZE_MAX_DIGITS) this.#fail("chunk size too large");
					this.#size = this.#size * 16 + v;
					this.#line(1);
					i++;
					break;
				}
				if (!this.#digits) this.#fail("missing chunk size");
				this.#state = State.SizeTail;
				break;
			}
			case State.SizeTail: {
				const b = bytes[i++];
				if (b === CR) this.#state = State.SizeLF;
				else if (b === LF) this.#endSizeLine();
				else if (b === 0x3B || b === 0x20 || b === 0x09 || this.#inExtension) {
					this.#inExtension = true;
					this.#line(1);
				} else this.#fail("bad chunk size line");
				break;
			}
			case State.SizeLF:
				if (bytes[i++] !== LF) this.#fail("bad chunk size line ending");
				this.#endSizeLine();
				break;
			case State.Data: {
				const n = Math.min(this.#size, end - i);
				const more = onData(bytes.subarray(i, i + n));
				i += n;
				this.#size -= n;
				if (more === false) {
					if (!this.#size) this.#state = State.DataCR;
					return i;
				}
				if (!this.#size) {
					if (i + 1 < end && bytes[i] === CR && bytes[i + 1] === LF) {
						i += 2;
						this.#nextChunk();
					} else this.#state = State.DataCR;
				}
				break;
			}
			case State.DataCR: {
				const b = bytes[i++];
				if (b === CR) this.#state = State.DataLF;
				else if (b === LF) this.#nextChunk();
				else this.#fail("missing CRLF after chunk data");
				break;
			}
			case State.DataLF:
				if (bytes[i++] !== LF) this.#fail("missing CRLF after chunk data");
				this.#nextChunk();
				break;
			case State.TrailerStart: {
				const b = bytes[i++];
				this.#trailer();
				if (b === CR) this.#state = State.EndLF;
				else if (b === LF) { this.#state = State.Done; return i; }
				else this.#state = State.Trailer;
				break;
			}
			case State.Trailer: {
				const b = bytes[i++];
				this.#trailer();
				if (b === CR) this.#state = State.TrailerLF;
				else if (b === LF) this.#state = State.TrailerStart;
				break;
			}
			case State.TrailerLF:
				this.#trailer();
				if (bytes[i++] !== LF) this.#fail("bad trailer line ending");
				this.#state = State.TrailerStart;
				break;
			case State.EndLF:
				if (bytes[i++] !== LF) this.#fail("bad end of chunked body");
				this.#state = State.Done;
				return i;
			case State.Done:
				return i;
			default:
				this.#fail("decoder used after an error");
			}
		}
		return i;
	}

	/**
	 * A whole size line at bytes[i] of hex digits alone, ended by CRLF or LF:
	 * its chunk begins (or the trailer, for size 0); returns the index after it.
	 * Anything else (a line cut by end, an extension, a bad line) returns i, and
	 * the state machine reads it byte by byte as before.
	 */
	#sizeLine(bytes: Uint8Array, i: number, end: number): number {
		const limit = Math.min(end, i + HTTP_CHUNK_SIZE_MAX_DIGITS + 2);
		const lf = find(bytes, i, limit, LF);
		if (lf <= i) return i;
		const lineEnd = bytes[lf - 1] === CR ? lf - 1 : lf;
		if (lineEnd === i) return i;
		let size = 0;
		for (let k = i; k < lineEnd; k++) {
			const v = hexValue(bytes[k]);
			if (v < 0) return i;
			size = size * 16 + v;
		}
		this.#size = size;
		this.#state = size ? State.Data : State.TrailerStart;
		return lf + 1;
	}

	#line(n: number): void {
		this.#lineBytes += n;
		if (this.#lineBytes > HTTP_CHUNK_LINE_MAX_BYTES) this.#fail("chunk size line too long");
	}
	#trailer(): void {
		if (++this.#trailerBytes > HTTP_HEADER_MAX_BYTES) this.#fail("chunked trailer too long");
	}
	#endSizeLine(): void {
		this.#state = this.#size ? State.Data : State.TrailerStart;
	}
	#nextChunk(): void {
		this.#state = State.Size;
		this.#size = 0;
		this.#digits = 0;
		this.#lineBytes = 0;
		this.#inExtension = false;
	}
	#fail(why: string): never {
		this.#state = State.Failed;
		throw new HttpError("protocol", `invalid chunked body: ${why}`);
	}
}
