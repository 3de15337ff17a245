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
import { HTTP_HEAD_NAMES_KEPT, HTTP_HEAD_START_BYTES, HTTP_HEADER_MAX_BYTES, HTTP_INTERIM_RESPONSES_MAX } from "budgets";
import { equal, find } from "host/bytes";
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

// RFC 9110 token characters, by byte (all 256: one read per byte): 1 for a token byte, 3 for an upper-case letter.
const TOKEN_BYTES = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TOKEN_BYTES[c.charCodeAt(0)] = c >= "A" && c <= "Z" ? 3 : 1;

/** Whether bytes[start, end) is a token (non-empty) in which no letter is upper case; -1 when it is no token. */
function tokenCase(bytes: Uint8Array, start: number, end: number): number {
	if (start >= end) return -1;
	let all = 1, any = 0;
	for (let i = start; i < end; i++) {
		const t = TOKEN_BYTES[bytes[i]];
		all &= t;
		any |= t;
	}
	return !all ? -1 : any & 2 ? 0 : 1;
}

/** Where the head's line from i ends: its LF, or the head's end. */
function lineBreakAt(bytes: Uint8Array, i: number, end: number): number {
	const lf = i < end ? find(bytes, i, end, LF) : -1;
	return lf < 0 ? end : lf;
}

/** A line's end without the CR before its LF (a bare LF ends a line too). */
function withoutCR(bytes: Uint8Array, start: number, lineBreak: number, end: number): number {
	return lineBreak < end && lineBreak > start && bytes[lineBreak - 1] === CR ? lineBreak - 1 : lineBreak;
}

/** A header line's value: bytes[start, end) without the spaces and tabs around it, as a string. */
function fieldValue(bytes: Uint8Array, start: number, end: number): string {
	while (start < end && (bytes[start] === SPACE || bytes[start] === TAB)) start++;
	while (end > start && (bytes[end - 1] === SPACE || bytes[end - 1] === TAB)) end--;
	return decodeUtf8(bytes, start, end);
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
		const lineStart = i, lineBreak = lineBreakAt(bytes, i, end);
		const lineEnd = withoutCR(bytes, i, lineBreak, end);
		i = lineBreak + 1;
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
		const value = fieldValue(bytes, colon + 1, lineEnd);
		headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
		last = key;
	}
	if (!status) throw protocolError(`bad status line ""`);
	return { status: Number(status[2]), reason: status[3] ?? "", minor: Number(status[1]), headers };
}

/**
 * The head a ResponseParser hands to onHead: status and version read from the
 * bytes, the reason and the header strings made only when asked for (from a
 * copy of the head's bytes, by parseHeadBytes: the same values it gives). An
 * LLM call reads none of them; an API's head is up to ~1.5 KB and ~20 headers.
 */
class LazyHead implements ResponseHead {
	readonly status: number;
	readonly minor: number;
	readonly #bytes: Uint8Array;
	#parsed: ResponseHead | undefined;

	constructor(status: number, minor: number, bytes: Uint8Array) {
		this.status = status;
		this.minor = minor;
		this.#bytes = bytes;
	}

	get reason(): string { return (this.#parsed ??= parseHeadBytes(this.#bytes)).reason; }
	get headers(): Record<string, string> { return (this.#parsed ??= parseHeadBytes(this.#bytes)).headers; }
}

const HTTP_1 = new Uint8Array([0x48, 0x54, 0x54, 0x50, 0x2F, 0x31, 0x2E]); // "HTTP/1."
const enum Framing { Connection = 1, TransferEncoding, ContentLength }
const CONNECTION = new Uint8Array([0x63, 0x6F, 0x6E, 0x6E, 0x65, 0x63, 0x74, 0x69, 0x6F, 0x6E]);
const TRANSFER_ENCODING = new Uint8Array([0x74, 0x72, 0x61, 0x6E, 0x73, 0x66, 0x65, 0x72, 0x2D, 0x65, 0x6E, 0x63, 0x6F, 0x64, 0x69, 0x6E, 0x67]);
const CONTENT_LENGTH = new Uint8Array([0x63, 0x6F, 0x6E, 0x74, 0x65, 0x6E, 0x74, 0x2D, 0x6C, 0x65, 0x6E, 0x67, 0x74, 0x68]);

/** Whether bytes[start, end) is name (lower case) in any case. */
function isName(bytes: Uint8Array, start: number, end: number, name: Uint8Array): boolean {
	if (end - start !== name.length) return false;
	for (let i = 0; i < name.length; i++) if ((bytes[start + i] | 0x20) !== name[i]) return false;
	return true;
}

/** Which framing header bytes[start, end) names (a token), or 0. */
function framingHeader(bytes: Uint8Array, start: number, end: number): number {
	const first = bytes[start] | 0x20;
	if (first === 0x63) {
		if (isName(bytes, start, end, CONNECTION)) return Framing.Connection;
		if (isName(bytes, start, end, CONTENT_LENGTH)) return Framing.ContentLength;
	} else if (first === 0x74 && isName(bytes, start, end, TRANSFER_ENCODING)) return Framing.TransferEncoding;
	return 0;
}

/** What framing needs of a head: its status, version and the three framing headers' values (joined as parseHeadBytes joins them). */
interface HeadFacts {
	status: number;
	minor: number;
	connection: string | undefined;
	transferEncoding: string | undefined;
	contentLength: string | undefined;
}

/**
 * Reads a finished head as parseHeadBytes does, with the same checks and
 * errors, but makes strings of the framing headers' values alone.
 */
function headFacts(bytes: Uint8Array, start: number, end: number): HeadFacts {
	let status = -1, minor = 0;
	let connection: string | undefined, transferEncoding: string | undefined, contentLength: string | undefined;
	let last = 0; // the framing header the previous header line was (for folded lines), or 0 for another
	let lastSeen = false;
	for (let i = start; i <= end;) {
		const lineStart = i, lineBreak = lineBreakAt(bytes, i, end);
		const lineEnd = withoutCR(bytes, i, lineBreak, end);
		i = lineBreak + 1;
		if (lineEnd === lineStart) continue;
		if (status < 0) {
			status = statusCode(bytes, lineStart, lineEnd);
			if (status < 0) {
				// Not the plain shape: the regular expression decides, as parseHeadBytes does.
				const statusLine = decodeUtf8(bytes, lineStart, lineEnd);
				const match = STATUS_LINE.exec(statusLine);
				if (!match) throw protocolError(`bad status line ${JSON.stringify(statusLine.slice(0, 40))}`);
				status = Number(match[2]);
				minor = Number(match[1]);
			} else minor = bytes[lineStart + 7] - 0x30;
			continue;
		}
		const first = bytes[lineStart];
		if (first === SPACE || first === TAB) { // obsolete line folding: join with a space
			if (!lastSeen) throw protocolError("folded line before any header");
			if (last === Framing.Connection) connection = `${connection} ${decodeUtf8(bytes, lineStart, lineEnd).trim()}`.trim();
			else if (last === Framing.TransferEncoding) transferEncoding = `${transferEncoding} ${decodeUtf8(bytes, lineStart, lineEnd).trim()}`.trim();
			else if (last === Framing.ContentLength) contentLength = `${contentLength} ${decodeUtf8(bytes, lineStart, lineEnd).trim()}`.trim();
			continue;
		}
		const colon = find(bytes, lineStart, lineEnd, COLON);
		if (colon < 0 || tokenCase(bytes, lineStart, colon) < 0) throw protocolError(`bad header line ${JSON.stringify(decodeUtf8(bytes, lineStart, lineEnd).slice(0, 40))}`);
		lastSeen = true;
		last = framingHeader(bytes, lineStart, colon);
		if (!last) continue;
		const value = fieldValue(bytes, colon + 1, lineEnd);
		if (last === Framing.Connection) connection = connection === undefined ? value : `${connection}, ${value}`;
		else if (last === Framing.TransferEncoding) transferEncoding = transferEncoding === undefined ? value : `${transferEncoding}, ${value}`;
		else contentLength = contentLength === undefined ? value : `${contentLength}, ${value}`;
	}
	if (status < 0) throw protocolError(`bad status line ""`);
	return { status, minor, connection, transferEncoding, contentLength };
}

// Header names of the last head plainHead read, by line (each a checked token,
// and which framing header it is): an API's heads repeat their names in the same
// order, and a JavaScript loop over a name's bytes costs ~1,300 instructions a
// byte in XS. At most HTTP_HEAD_NAMES_KEPT lines.
const knownNames: Uint8Array[] = [];
const knownFraming: number[] = [];
const NO_NAME = new Uint8Array(0);

/**
 * The common head in one pass, as #feedHead finds its end and headFacts reads
 * it: blank lines ("" or CR) before the status line, a plain status line
 * (statusCode), header lines of a token name, a colon and a value, each
 * framing header at most once, up to the blank line. Fills facts and returns
 * the index after the head; -1 when the head does not end before end or is
 * of another shape (a folded line, a bad line, a framing header twice, a
 * status line for STATUS_LINE): the line-by-line readers decide then.
 */
function plainHead(bytes: Uint8Array, start: number, end: number, facts: HeadFacts): number {
	let i = start, status = -1, line = 0;
	let connection: string | undefined = undefined, transferEncoding: string | undefined = undefined, contentLength: string | undefined = undefined;
	for (;;) {
		const lf = find(bytes, i, end, LF);
		if (lf < 0) return -1;
		const lineEnd = lf > i && bytes[lf - 1] === CR ? lf - 1 : lf;
		if (lineEnd === i) {
			i = lf + 1;
			if (status < 0) continue;
			facts.status = status;
			facts.connection = connection;
			facts.transferEncoding = transferEncoding;
			facts.contentLength = contentLength;
			return i;
		}
		if (status < 0) {
			status = statusCode(bytes, i, lineEnd);
			if (status < 0) return -1;
			facts.minor = bytes[i + 7] - 0x30;
		} else {
			const colon = find(bytes, i, lineEnd, COLON);
			if (colon < 0) return -1;
			// The name the last head had on this line: checked then, compared now in one call.
			const known = line < knownNames.length ? knownNames[line] : NO_NAME;
			let framing: number;
			if (known.length === colon - i && colon > i && equal(bytes, i, colon, known)) framing = knownFraming[line];
			else {
				if (tokenCase(bytes, i, colon) < 0) return -1;   // a folded line starts with a space or tab: no token
				framing = framingHeader(bytes, i, colon);
				if (line < HTTP_HEAD_NAMES_KEPT) {
					if (line < knownNames.length) {
						knownNames[line] = bytes.slice(i, colon);
						knownFraming[line] = framing;
					} else if (line === knownNames.length) {
						knownNames.push(bytes.slice(i, colon));
						knownFraming.push(framing);
					}
				}
			}
			line++;
			if (framing) {
				const value = fieldValue(bytes, colon + 1, lineEnd);
				if (framing === Framing.Connection) {
					if (connection !== undefined) return -1;
					connection = value;
				} else if (framing === Framing.TransferEncoding) {
					if (transferEncoding !== undefined) return -1;
					transferEncoding = value;
				} else {
					if (contentLength !== undefined) return -1;
					contentLength = value;
				}
			}
		}
		i = lf + 1;
	}
}

/**
 * The status of a plain status line, "HTTP/1.x NNN" then nothing or a space
 * and an ASCII reason without CR; -1 for anything else (which STATUS_LINE decides).
 */
function statusCode(bytes: Uint8Array, start: number, end: number): number {
	if (end - start < 12 || !equal(bytes, start, start + 7, HTTP_1)) return -1;
	const minor = bytes[start + 7], d0 = bytes[start + 9], d1 = bytes[start + 10], d2 = bytes[start + 11];
	if ((minor !== 0x30 && minor !== 0x31) || bytes[start + 8] !== SPACE) return -1;
	if (d0 < 0x31 || d0 > 0x35 || d1 < 0x30 || d1 > 0x39 || d2 < 0x30 || d2 > 0x39) return -1;
	if (end > start + 12) {
		if (bytes[start + 12] !== SPACE) return -1;
		for (let k = start + 13; k < end; k++) if (bytes[k] >= 0x80 || bytes[k] === CR) return -1;
	}
	return (d0 - 0x30) * 100 + (d1 - 0x30) * 10 + (d2 - 0x30);
}

const CHUNKED = "chunked";
const NO_EVENTS: ResponseEvents = Object.freeze({ onHead: () => {}, onBody: () => {} });

/**
 * One response at a time; reset() readies it for the next on the same
 * connection (its chunked decoder and callback are kept: a kept-alive
 * connection keeps one parser for all its responses).
 */
export class ResponseParser {
	#events: ResponseEvents;
	#state = State.Head;
	#head: ResponseHead | undefined;
	/** A head that arrives in more than one input, gathered (made when one does). */
	#headBytes: ByteBuffer | undefined;
	readonly #headerMaxBytes: number;
	#headLength = 0;      // bytes of the head so far
	#lineText = false;    // the current head line has a byte other than CR
	#lines = 0;           // non-empty head lines so far
	#interim = 0;
	#framing: BodyFraming = "none";
	#remaining = 0;       // "length": body bytes still to come
	#chunked: ChunkedDecoder | undefined;
	#bodyBytes = 0;
	#keepAlive = false;
	#stopped = false;
	/** What plainHead reads of a head, one object for all of them. */
	readonly #facts: HeadFacts = { status: 0, minor: 0, connection: undefined, transferEncoding: undefined, contentLength: undefined };
	/** The chunked decoder's data callback, made once (feed() runs per socket read). */
	readonly #chunkData = (data: Uint8Array): boolean => {
		this.#body(data);
		return !this.#stopped;
	};

	constructor(events: ResponseEvents, headerMaxBytes = HTTP_HEADER_MAX_BYTES) {
		this.#events = events;
		this.#headerMaxBytes = headerMaxBytes;
	}

	/** Readies the parser for the next response, told to events. */
	reset(events: ResponseEvents): void {
		this.#events = events;
		this.#state = State.Head;
		this.#head = undefined;
		this.#headBytes?.clear();
		this.#headLength = 0;
		this.#lineText = false;
		this.#lines = 0;
		this.#interim = 0;
		this.#framing = "none";
		this.#remaining = 0;
		this.#bodyBytes = 0;
		this.#keepAlive = false;
		this.#stopped = false;
	}

	/** Lets go of the listener (a kept parser must not keep a finished request alive); feed() returns at once until reset(). */
	release(): void {
		this.#events = NO_EVENTS;
		this.#stopped = true;
	}

	/** Body length announced by Content-Length, or -1. */
	get contentLength(): number { return this.#framing === "length" ? this.#bodyBytes + this.#remaining : -1; }
	get complete(): boolean { return this.#state === State.Done; }
	/** Whether the connection may carry another request once the message is complete. */
	get keepAlive(): boolean { return this.#keepAlive; }
	/** True once any byte of a response has been fed. */
	get started(): boolean { return this.#headLength > 0 || this.#state !== State.Head || this.#interim > 0; }

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
		if (!this.#headLength && !this.#lines && !this.#lineText) {
			// A head starting in this input, usually whole in it: found and read in one pass.
			const after = plainHead(bytes, start, end - start > this.#headerMaxBytes ? start + this.#headerMaxBytes : end, this.#facts);
			if (after >= 0) {
				this.#endHead(bytes, start, after, false, this.#facts);
				return after;
			}
		}
		let i = start;
		for (;;) {
			const lf = find(bytes, i, end, LF);
			const stop = lf < 0 ? end : lf;
			if (this.#headLength + (lf < 0 ? end : lf + 1) - start > this.#headerMaxBytes) this.#headTooLarge();
			// Whether the line has text: its first byte other than CR, usually its first byte.
			for (let k = i; k < stop && !this.#lineText; k++) this.#lineText = bytes[k] !== CR;
			if (lf < 0) break;
			if (!this.#lineText && this.#lines > 0) {
				const gathered = this.#headLength > 0;
				this.#headLength = 0;
				if (!gathered) this.#endHead(bytes, start, lf + 1, false); // the common case: the whole head in this input
				else {
					const buffer = this.#headBytes as ByteBuffer;
					buffer.append(bytes, start, lf + 1);
					this.#endHead(buffer.bytes, 0, buffer.length, true);
				}
				return lf + 1;
			}
			if (this.#lineText) this.#lines++;
			this.#lineText = false;
			i = lf + 1;
		}
		(this.#headBytes ??= new ByteBuffer(HTTP_HEAD_START_BYTES, this.#headerMaxBytes, () => this.#headTooLarge())).append(bytes, start, end);
		this.#headLength += end - start;
		return end;
	}

	#headTooLarge(): never {
		throw new HttpError("too_large", `response headers larger than ${this.#headerMaxBytes} bytes`);
	}

	/** The head is bytes[start, end): in the input whole, or gathered in #headBytes. */
	#endHead(bytes: Uint8Array, start: number, end: number, gathered: boolean, read?: HeadFacts): void {
		const facts = read ?? headFacts(bytes, start, end);
		this.#lines = 0;
		this.#lineText = false;
		const status = facts.status;
		if (status < 200) {
			this.#headBytes?.clear();
			if (status === 101) throw protocolError("unexpected 101 Switching Protocols");
			if (++this.#interim > HTTP_INTERIM_RESPONSES_MAX) throw protocolError("too many 1xx responses");
			return; // stay in State.Head for the final response
		}
		// The head keeps its bytes for its strings: the gathered ones as they are, else a copy of the input's.
		if (gathered) this.#headBytes = undefined;
		const head = new LazyHead(status, facts.minor, gathered ? bytes.subarray(start, end) : bytes.slice(start, end));
		const connection = facts.connection ?? "";
		this.#keepAlive = facts.minor === 1 ? !hasToken(connection, "close") : hasToken(connection, "keep-alive");
		const encoding = facts.transferEncoding;
		const length = facts.contentLength;
		if (status === 204 || status === 304) this.#framing = "none";
		else if (encoding !== undefined) {
			const codings = encoding === CHUNKED ? encoding : encoding.toLowerCase();
			if (codings === CHUNKED || codings.slice(codings.lastIndexOf(",") + 1).trim() === CHUNKED) {
				this.#framing = "chunked";
				if (this.#chunked) this.#chunked.reset();
				else this.#chunked = new ChunkedDecoder();
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
