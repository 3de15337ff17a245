// net/response: an incremental HTTP/1.1 response parser (RFC 9112), fed any
// split of the wire bytes. It finds the head (bounded by HTTP_HEADER_MAX_BYTES),
// skips 1xx interim responses, then frames the body by Content-Length, chunked
// transfer coding or the connection's close, and hands body bytes on as views.
//
// It knows nothing of sockets: the caller feeds bytes, signals the end of the
// stream with end(), and reads `complete` / `keepAlive`. Errors throw HttpError
// (kind "protocol", or "too_large" for an oversized head); the parser is dead
// afterwards. Bytes after the end of the message are not consumed: feed()
// returns how many it took, and a caller that gets fewer back knows the
// connection carries junk and must not be reused.
import { HTTP_HEAD_START_BYTES, HTTP_HEADER_MAX_BYTES, HTTP_INTERIM_RESPONSES_MAX } from "budgets";
import { find } from "host/bytes";
import { ByteBuffer } from "net/bytes";
import { ChunkedDecoder } from "net/chunked";
import { HttpError } from "net/types";
import { decodeUtf8, encodeUtf8 } from "net/utf8";

export interface ResponseHead {
	status: number;
	reason: string;
	/** Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1. */
	minor: number;
	/** Lower-case names; repeated headers joined with ", ". */
	headers: Record<string, string>;
}

type BodyFraming = "none" | "length" | "chunked" | "close";

export interface ResponseEvents {
	/** The final (non-1xx) head. May throw to refuse the response (e.g. over a cap). */
	onHead(head: ResponseHead): void;
	/** Body bytes, a view valid only during the call. Never empty. */
	onBody(bytes: Uint8Array): void;
}

const LF = 10, CR = 13, SPACE = 0x20, TAB = 9, COLON = 0x3A;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: (.*))?$/;
// Made once: XS compiles a regular expression literal each time it is evaluated.
const LENGTH_DIGITS = /^\d{1,15}$/;

const enum State { Head, Body, Done, Failed }

function protocolError(why: string): HttpError {
	return new HttpError("protocol", `invalid HTTP response: ${why}`);
}

/**
 * Whether a comma-separated header value (e.g. Connection) lists token (lower
 * case), in any case. Looks for token itself rather than splitting the list:
 * strings cost heap in XS, and most values never contain it.
 */
export function hasToken(value: string, token: string): boolean {
	const lower = value.toLowerCase();
	for (let at = lower.indexOf(token); at >= 0; at = lower.indexOf(token, at + 1)) {
		const before = lower.lastIndexOf(",", at) + 1;
		let after = lower.indexOf(",", at + token.length);
		if (after < 0) after = lower.length;
		if (lower.slice(before, after).trim() === token) return true;
	}
	return false;
}

// RFC 9110 token characters, by byte.
const TOKEN_BYTES = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TOKEN_BYTES[c.charCodeAt(0)] = 1;

/** Whether bytes[start, end) is a token (non-empty) in which no letter is upper case; -1 when it is no token. */
function tokenCase(bytes: Uint8Array, start: number, end: number): number {
	if (start >= end) return -1;
	let lower = 1;
	for (let i = start; i < end; i++) {
		const b = bytes[i];
		if (b >= 128 || !TOKEN_BYTES[b]) return -1;
		if (b >= 0x41 && b <= 0x5A) lower = 0;
	}
	return lower;
}

/** parseHeadBytes of a head given as text (as decodeUtf8 made it from the wire). */
export function parseHead(text: string): ResponseHead {
	return parseHeadBytes(encodeUtf8(text));
}

/**
 * Parses a finished head from its bytes: the status line and header lines
 * (lines end in LF or CRLF; empty lines before the status line and between
 * headers are skipped). Only the names, values and reason become strings,
 * each decoded as UTF-8 (invalid sequences become U+FFFD).
 */
export function parseHeadBytes(bytes: Uint8Array, start = 0, end = bytes.length): ResponseHead {
	let status: RegExpExecArray | undefined = undefined;
	const headers: Record<string, string> = {};
	let last: string | undefined;
	// Each pass consumes one line: bounded by the head's length.
	for (let i = start; i <= end;) {
		const lf = i < end ? find(bytes, i, end, LF) : -1;
		let lineEnd = lf < 0 ? end : lf;
		const next = lineEnd + 1;
		if (lineEnd < end && lineEnd > i && bytes[lineEnd - 1] === CR) lineEnd--;
		const lineStart = i;
		i = next;
		if (lineEnd === lineStart) continue;
		if (!status) {
			const statusLine = decodeUtf8(bytes, lineStart, lineEnd);
			const match = STATUS_LINE.exec(statusLine);
			if (!match) throw protocolError(`bad status line ${JSON.stringify(statusLine.slice(0, 40))}`);
			status = match;
			continue;
		}
		const first = bytes[lineStart];
		if (first === SPACE || first === TAB) { // obsolete line folding: join with a space
			if (last === undefined) throw protocolError("folded line before any header");
			headers[last] = `${headers[last]} ${decodeUtf8(bytes, lineStart, lineEnd).trim()}`.trim();
			continue;
		}
		const colon = find(bytes, lineStart, lineEnd, COLON);
		const lower = colon >= 0 ? tokenCase(bytes, lineStart, colon) : -1;
		if (lower < 0) throw protocolError(`bad header line ${JSON.stringify(decodeUtf8(bytes, lineStart, lineEnd).slice(0, 40))}`);
		const name = decodeUtf8(bytes, lineStart, colon);
		const key = lower ? name : name.toLowerCase();
		let valueStart = colon + 1, valueEnd = lineEnd;
		while (valueStart < valueEnd && (bytes[valueStart] === SPACE || bytes[valueStart] === TAB)) valueStart++;
		while (valueEnd > valueStart && (bytes[valueEnd - 1] === SPACE || bytes[valueEnd - 1] === TAB)) valueEnd--;
		const value = decodeUtf8(bytes, valueStart, valueEnd);
		headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
		last = key;
	}
	if (!status) throw protocolError(`bad status line ""`);
	return { status: Number(status[2]), reason: status[3] ?? "", minor: Number(status[1]), headers };
}

export class ResponseParser {
	readonly #events: ResponseEvents;
	#state = State.Head;
	#head: ResponseHead | undefined;
	readonly #headBytes: ByteBuffer;
	#lineText = false;    // the current head line has a byte other than CR
	#lines = 0;           // non-empty head lines so far
	#interim = 0;
	#framing: BodyFraming = "none";
	#remaining = 0;       // "length": body bytes still to come
	#chunked: ChunkedDecoder | undefined;
	#bodyBytes = 0;
	#keepAlive = false;
	#stopped = false;
	/** The chunked decoder's data callback, made once (feed() runs per socket read). */
	readonly #chunkData = (data: Uint8Array): boolean => {
		this.#body(data);
		return !this.#stopped;
	};

	constructor(events: ResponseEvents, headerMaxBytes = HTTP_HEADER_MAX_BYTES) {
		this.#events = events;
		this.#headBytes = new ByteBuffer(HTTP_HEAD_START_BYTES, headerMaxBytes, () => {
			throw new HttpError("too_large", `response headers larger than ${headerMaxBytes} bytes`);
		});
	}

	/** Body length announced by Content-Length, or -1. */
	get contentLength(): number { return this.#framing === "length" ? this.#bodyBytes + this.#remaining : -1; }
	get complete(): boolean { return this.#state === State.Done; }
	/** Whether the connection may carry another request once the message is complete. */
	get keepAlive(): boolean { return this.#keepAlive; }
	/** True once any byte of a response has been fed. */
	get started(): boolean { return this.#headBytes.length > 0 || this.#state !== State.Head || this.#interim > 0; }

	/** Makes feed() return at once from now on (the caller gave up on the response). */
	stop(): void { this.#stopped = true; }

	/** Consumes bytes[start, end); returns the index after the last byte consumed. */
	feed(bytes: Uint8Array, start = 0, end = bytes.length): number {
		let i = start;
		try {
			while (i < end && !this.#stopped) {
				if (this.#state === State.Head) i = this.#feedHead(bytes, i, end);
				else if (this.#state === State.Body) i = this.#feedBody(bytes, i, end);
				else if (this.#state === State.Done) break;
				else throw protocolError("parser used after an error");
			}
		} catch (error) {
			this.#state = State.Failed;
			throw error;
		}
		return i;
	}

	/** The stream ended (the server closed the connection). Completes a close-framed body or throws. */
	end(detail?: string): void {
		const why = detail ? ` (${detail})` : "";
		if (this.#state === State.Done) return;
		if (this.#state === State.Body && this.#framing === "close") {
			this.#state = State.Done;
			return;
		}
		const started = this.started;
		this.#state = State.Failed;
		if (!started) throw new HttpError("connect", `the server closed the connection before responding${why}`);
		if (!this.#head) throw protocolError(`connection closed inside the response headers${why}`);
		const expected = this.#framing === "length" ? ` of ${this.contentLength}` : "";
		throw new HttpError("protocol", `the server closed the connection mid-body after ${this.#bodyBytes}${expected} bytes${why}`);
	}

	#feedHead(bytes: Uint8Array, start: number, end: number): number {
		let i = start;
		for (;;) {
			const lf = find(bytes, i, end, LF);
			const stop = lf < 0 ? end : lf;
			// Whether the line has text: its first byte other than CR, usually its first byte.
			for (let k = i; k < stop && !this.#lineText; k++) this.#lineText = bytes[k] !== CR;
			if (lf < 0) break;
			if (!this.#lineText && this.#lines > 0) {
				this.#headBytes.append(bytes, start, lf + 1);
				this.#endHead();
				return lf + 1;
			}
			if (this.#lineText) this.#lines++;
			this.#lineText = false;
			i = lf + 1;
		}
		this.#headBytes.append(bytes, start, end);
		return end;
	}

	#endHead(): void {
		const head = parseHeadBytes(this.#headBytes.view());
		this.#headBytes.clear();
		this.#lines = 0;
		this.#lineText = false;
		if (head.status < 200) {
			if (head.status === 101) throw protocolError("unexpected 101 Switching Protocols");
			if (++this.#interim > HTTP_INTERIM_RESPONSES_MAX) throw protocolError("too many 1xx responses");
			return; // stay in State.Head for the final response
		}
		const headers = head.headers;
		const connection = headers["connection"] ?? "";
		this.#keepAlive = head.minor === 1 ? !hasToken(connection, "close") : hasToken(connection, "keep-alive");
		const encoding = headers["transfer-encoding"];
		const length = headers["content-length"];
		if (head.status === 204 || head.status === 304) this.#framing = "none";
		else if (encoding !== undefined) {
			const codings = encoding.toLowerCase();
			if (codings.slice(codings.lastIndexOf(",") + 1).trim() === "chunked") {
				this.#framing = "chunked";
				this.#chunked = new ChunkedDecoder();
			} else this.#framing = "close";
			if (length !== undefined) this.#keepAlive = false; // smuggling guard: never reuse such a connection
		} else if (length !== undefined) {
			const values = length.split(",").map((v) => v.trim());
			if (!values.every((v) => LENGTH_DIGITS.test(v) && v === values[0])) throw protocolError(`bad content-length ${JSON.stringify(length.slice(0, 40))}`);
			this.#remaining = Number(values[0]);
			this.#framing = this.#remaining ? "length" : "none";
		} else this.#framing = "close";
		if (this.#framing === "close") this.#keepAlive = false;
		this.#head = head;
		this.#state = this.#framing === "none" ? State.Done : State.Body;
		this.#events.onHead(head);
	}

	#feedBody(bytes: Uint8Array, start: number, end: number): number {
		switch (this.#framing) {
		case "length": {
			const n = Math.min(this.#remaining, end - start);
			this.#remaining -= n;
			if (!this.#remaining) this.#state = State.Done;
			this.#body(bytes.subarray(start, start + n));
			return start + n;
		}
		case "chunked": {
			const decoder = this.#chunked as ChunkedDecoder;
			const next = decoder.feed(bytes, start, end, this.#chunkData);
			if (decoder.done) this.#state = State.Done;
			return next;
		}
		default: // "close"
			this.#body(bytes.subarray(start, end));
			return end;
		}
	}

	#body(data: Uint8Array): void {
		if (!data.length) return;
		this.#bodyBytes += data.length;
		this.#events.onBody(data);
	}
}
