// httpd/parser: an HTTP/1.1 request head read from its bytes (RFC 9112),
// strictly and within the budgets: the request line (a token method, an
// origin-form target, HTTP/1.0 or 1.1), header lines (token names, values
// without control characters, no obsolete line folding), CRLF line ends, one
// Host, one Content-Length (digits only), no Transfer-Encoding (a request body
// must have a length: 411/501). The path is percent-decoded and refused when it
// holds a NUL, a backslash, or a "." or ".." segment (no path may climb). Bad
// input gets the status to answer with and a sentence, never a throw: the fuzz
// test feeds it damaged heads.
import { WEB_HEAD_MAX_BYTES, WEB_HEADERS_MAX, WEB_TARGET_MAX_CHARS } from "budgets";

export interface RequestHead {
	method: string;
	path: string;
	query: string;
	/** 10 or 11. */
	version: number;
	headers: [string, string][];
	/** The body's length (0 when none was given). */
	contentLength: number;
	/** The connection may carry another request after this one. */
	keepAlive: boolean;
}

export interface HeadError {
	status: number;
	error: string;
}

const CR = 13, LF = 10, SP = 32, HTAB = 9, COLON = 58;
const METHOD_MAX_CHARS = 16;

/** The index just past the head's blank line (CRLF CRLF) in bytes[0, end), searching from `from`; -1 when it has not come. */
export function headEnd(bytes: Uint8Array, from: number, end: number): number {
	for (let i = from < 3 ? 3 : from; i < end; i++) {
		if (bytes[i] === LF && bytes[i - 1] === CR && bytes[i - 2] === LF && bytes[i - 3] === CR) return i + 1;
	}
	return -1;
}

// RFC 9110 tchar.
function isTokenChar(c: number): boolean {
	if (c >= 0x61 && c <= 0x7a) return true; // a-z
	if (c >= 0x41 && c <= 0x5a) return true; // A-Z
	if (c >= 0x30 && c <= 0x39) return true; // 0-9
	return c === 0x21 || (c >= 0x23 && c <= 0x27) || c === 0x2a || c === 0x2b || c === 0x2d || c === 0x2e || c === 0x5e || c === 0x5f || c === 0x60 || c === 0x7c || c === 0x7e;
}

function ascii(bytes: Uint8Array, start: number, end: number, lower: boolean): string {
	let text = "";
	for (let i = start; i < end; i++) {
		let c = bytes[i];
		if (lower && c >= 0x41 && c <= 0x5a) c += 32;
		text += String.fromCharCode(c);
	}
	return text;
}

function fail(status: number, error: string): HeadError {
	return { status, error };
}

function hexValue(c: number): number {
	if (c >= 0x30 && c <= 0x39) return c - 0x30;
	if (c >= 0x61 && c <= 0x66) return c - 0x57;
	if (c >= 0x41 && c <= 0x46) return c - 0x37;
	return -1;
}

/** The path percent-decoded (as UTF-8) and checked; a HeadError when it may not be served. */
export function decodePath(raw: string): string | HeadError {
	if (raw.charCodeAt(0) !== 0x2f) return fail(400, "the request target must be a path starting with /");
	const bytes: number[] = [];
	for (let i = 0; i < raw.length; i++) {
		const c = raw.charCodeAt(i);
		if (c === 0x25) {
			const high = hexValue(raw.charCodeAt(i + 1)), low = hexValue(raw.charCodeAt(i + 2));
			if (high < 0 || low < 0) return fail(400, "the path has a bad percent escape");
			bytes.push(high * 16 + low);
			i += 2;
		} else bytes.push(c);
	}
	let path = "";
	for (let i = 0; i < bytes.length; i++) {
		const c = bytes[i];
		if (c === 0 || c === 0x5c) return fail(400, "the path holds a NUL or a backslash");
		if (c < 0x80) {
			path += String.fromCharCode(c);
			continue;
		}
		// UTF-8: two to four bytes, checked; anything else is refused.
		const count = c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xc2 && c <= 0xdf ? 1 : -1;
		if (count < 0 || i + count >= bytes.length) return fail(400, "the path is not UTF-8");
		let code = c & (count === 1 ? 0x1f : count === 2 ? 0x0f : 0x07);
		for (let k = 1; k <= count; k++) {
			const next = bytes[i + k];
			if ((next & 0xc0) !== 0x80) return fail(400, "the path is not UTF-8");
			code = code * 64 + (next & 0x3f);
		}
		if ((count === 2 && code < 0x800) || (count === 3 && (code < 0x10000 || code > 0x10ffff)) || (code >= 0xd800 && code <= 0xdfff)) return fail(400, "the path is not UTF-8");
		path += String.fromCodePoint(code);
		i += count;
	}
	// No segment may be "." or "..": nothing climbs out of where a route serves from.
	let start = 1;
	for (let i = 1; i <= path.length; i++) {
		if (i === path.length || path.charCodeAt(i) === 0x2f) {
			const length = i - start;
			if ((length === 1 && path.charCodeAt(start) === 0x2e) || (length === 2 && path.charCodeAt(start) === 0x2e && path.charCodeAt(start + 1) === 0x2e)) {
				return fail(400, "the path has a . or .. segment");
			}
			start = i + 1;
		}
	}
	return path;
}

/**
 * Reads the head in bytes[0, end), end just past its blank line (headEnd).
 * A RequestHead, or the status to answer (400, 405 never: that is the routes')
 * with a sentence.
 */
export function parseHead(bytes: Uint8Array, end: number): RequestHead | HeadError {
	if (end > WEB_HEAD_MAX_BYTES) return fail(431, `the request head is over ${WEB_HEAD_MAX_BYTES} bytes`);
	// The request line.
	let i = 0;
	while (i < end && isTokenChar(bytes[i])) i++;
	if (i === 0 || i > METHOD_MAX_CHARS || bytes[i] !== SP) return fail(400, "the request line must be METHOD TARGET HTTP/1.1");
	const method = ascii(bytes, 0, i, false);
	const targetStart = ++i;
	while (i < end && bytes[i] > SP && bytes[i] < 0x7f) i++;
	if (bytes[i] !== SP || i === targetStart) return fail(400, "the request line must be METHOD TARGET HTTP/1.1");
	if (i - targetStart > WEB_TARGET_MAX_CHARS) return fail(414, `the request target is over ${WEB_TARGET_MAX_CHARS} characters`);
	const target = ascii(bytes, targetStart, i, false);
	i++;
	if (end - i < 10 || ascii(bytes, i, i + 7, false) !== "HTTP/1." || bytes[i + 8] !== CR || bytes[i + 9] !== LF) {
		if (end - i >= 5 && ascii(bytes, i, i + 5, false) === "HTTP/") return fail(505, "only HTTP/1.1 and HTTP/1.0 are served");
		return fail(400, "the request line must be METHOD TARGET HTTP/1.1");
	}
	const minor = bytes[i + 7];
	if (minor !== 0x30 && minor !== 0x31) return fail(505, "only HTTP/1.1 and HTTP/1.0 are served");
	const version = minor === 0x31 ? 11 : 10;
	i += 10;
	// The header lines, up to the blank line.
	const headers: [string, string][] = [];
	let host = 0, length = -1, close = false, keepAlive = false;
	while (i < end) {
		if (bytes[i] === CR) {
			if (bytes[i + 1] !== LF || i + 2 !== end) return fail(400, "the head must end with one blank line");
			i = end;
			break;
		}
		if (bytes[i] === SP || bytes[i] === HTAB) return fail(400, "a header line is folded (obsolete line folding is refused)");
		const nameStart = i;
		while (i < end && isTokenChar(bytes[i])) i++;
		if (i === nameStart || bytes[i] !== COLON) return fail(400, "a header line must be NAME: VALUE");
		const name = ascii(bytes, nameStart, i, true);
		i++;
		while (bytes[i] === SP || bytes[i] === HTAB) i++;
		const valueStart = i;
		let valueEnd = i;
		for (;;) {
			if (i >= end) return fail(400, "a header line does not end with CRLF");
			const c = bytes[i];
			if (c === CR) break;
			if ((c < SP && c !== HTAB) || c === 0x7f) return fail(400, "a header value holds a control character");
			i++;
			if (c !== SP && c !== HTAB) valueEnd = i;
		}
		if (bytes[i + 1] !== LF) return fail(400, "a header line does not end with CRLF");
		i += 2;
		if (headers.length === WEB_HEADERS_MAX) return fail(431, `more than ${WEB_HEADERS_MAX} header lines`);
		const value = ascii(bytes, valueStart, valueEnd, false);
		headers.push([name, value]);
		if (name === "host") host++;
		else if (name === "content-length") {
			if (!/^[0-9]{1,15}$/.test(value)) return fail(400, "Content-Length must be digits");
			const n = Number(value);
			if (length >= 0 && length !== n) return fail(400, "two different Content-Length headers");
			length = n;
		} else if (name === "transfer-encoding") {
			return fail(501, "a request body must come with Content-Length (Transfer-Encoding is not served)");
		} else if (name === "connection") {
			const lower = value.toLowerCase();
			for (const option of lower.split(",")) {
				const token = option.trim();
				if (token === "close") close = true;
				else if (token === "keep-alive") keepAlive = true;
			}
		}
	}
	if (version === 11 && host !== 1) return fail(400, "an HTTP/1.1 request needs exactly one Host header");
	const question = target.indexOf("?");
	const path = decodePath(question < 0 ? target : target.slice(0, question));
	if (typeof path !== "string") return path;
	return {
		method,
		path,
		query: question < 0 ? "" : target.slice(question + 1),
		version,
		headers,
		contentLength: length < 0 ? 0 : length,
		keepAlive: version === 11 ? !close : keepAlive && !close,
	};
}

/** The first value of a header (lower-case name) among headers. */
export function headerValue(headers: readonly (readonly [string, string])[], lowerName: string): string | undefined {
	for (const [name, value] of headers) if (name === lowerName) return value;
	return undefined;
}
