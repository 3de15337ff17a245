// net/head: a request's head on the wire (net/http's exchange writes it): the
// request line, Host, the caller's headers checked (names, no line breaks; the
// framing headers are the client's own), User-Agent, Connection: close when
// asked, then the Content-Length line and the empty line, encoded into one piece
// so a request is one socket write; and the body as bytes.
import { hasToken } from "net/response";
import { HttpError, type HttpRequest } from "net/types";
import type { ParsedUrl } from "net/url";
import { encodeUtf8 } from "net/utf8";

const USER_AGENT = "xsclaw";
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE_FORBIDDEN = /[\x00\r\n]/;
// Set by the client itself; a caller's value is ignored (Connection: close is honoured below).
const MANAGED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);

function wantsClose(headers: Record<string, string>): boolean {
	for (const name in headers) {
		if (name.toLowerCase() === "connection" && hasToken(headers[name], "close")) return true;
	}
	return false;
}

/**
 * A request's head up to its framing (request line, Host, the caller's
 * headers, User-Agent, Connection: close), checked and encoded once; the
 * Content-Length line and the empty line follow it. Kept by the client for a
 * frozen headers object (an LLM backend sends the same one every call).
 */
export interface Head {
	method: string;
	url: ParsedUrl;
	bytes: Uint8Array;
	/** The caller asked for Connection: close. */
	closes: boolean;
}

/** The head of a request. Throws HttpError("protocol") on a bad header. */
export function buildHead(method: string, url: ParsedUrl, headers: Record<string, string>): Head {
	let head = `${method} ${url.target} HTTP/1.1\r\nHost: ${url.hostHeader}\r\n`;
	let userAgent = false;
	for (const name in headers) {
		const value = String(headers[name]);
		if (!HEADER_NAME.test(name)) throw new HttpError("protocol", `invalid request header name ${JSON.stringify(name.slice(0, 40))}`);
		if (HEADER_VALUE_FORBIDDEN.test(value)) throw new HttpError("protocol", `invalid value for request header ${name}: line breaks are not allowed`);
		const lower = name.toLowerCase();
		if (MANAGED_HEADERS.has(lower)) continue;
		if (lower === "user-agent") userAgent = true;
		head += `${name}: ${value}\r\n`;
	}
	if (!userAgent) head += `User-Agent: ${USER_AGENT}\r\n`;
	const closes = wantsClose(headers);
	if (closes) head += "Connection: close\r\n";
	return { method, url, bytes: encodeUtf8(head), closes };
}

// Bytes made at preload: no call to net/utf8 (its scan is native, unavailable while the device links).
const END_OF_HEAD = new Uint8Array([13, 10]);

/** The request body as bytes. Throws HttpError("protocol") on a body of another type. */
export function bodyOf(request: HttpRequest): Uint8Array | undefined {
	if (typeof request.body === "string") return encodeUtf8(request.body);
	if (request.body instanceof ArrayBuffer) return new Uint8Array(request.body);
	if (request.body instanceof Uint8Array) return request.body; // e.g. a view of a PSRAM host buffer, which is no ArrayBuffer instance
	if (request.body !== undefined) throw new HttpError("protocol", "the request body must be a string, an ArrayBuffer or a Uint8Array");
	return undefined;
}

const CONTENT_LENGTH = new Uint8Array([67, 111, 110, 116, 101, 110, 116, 45, 76, 101, 110, 103, 116, 104, 58, 32]); // "Content-Length: "
const CRLF_CRLF_BYTES = 4;

/**
 * The head to send with its framing (one piece, so one socket write: the
 * Content-Length line and the empty line written into it, no string made);
 * the body follows it.
 */
export function messageHead(head: Head, body: Uint8Array | undefined): Uint8Array {
	const method = head.method;
	const bytes = head.bytes, headLength = bytes.length;
	if (!body && method !== "POST" && method !== "PUT" && method !== "PATCH") {
		const out = new Uint8Array(headLength + END_OF_HEAD.length);
		out.set(bytes, 0);
		out.set(END_OF_HEAD, headLength);
		return out;
	}
	const length = body ? body.length : 0;
	let digits = 1;
	for (let n = length; n >= 10; n = Math.floor(n / 10)) digits++;
	const out = new Uint8Array(headLength + CONTENT_LENGTH.length + digits + CRLF_CRLF_BYTES);
	out.set(bytes, 0);
	let at = headLength;
	out.set(CONTENT_LENGTH, at);
	at += CONTENT_LENGTH.length + digits;
	for (let n = length, k = at - 1; k >= at - digits; k--, n = Math.floor(n / 10)) out[k] = 0x30 + (n % 10);
	out[at] = 13;
	out[at + 1] = 10;
	out[at + 2] = 13;
	out[at + 3] = 10;
	return out;
}
