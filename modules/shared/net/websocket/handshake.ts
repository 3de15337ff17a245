// net/websocket/handshake: the client's side of the RFC 6455 §4 opening
// handshake: the request head, and the checks on the server's answer.
import { hasToken, parseHead, type ResponseHead } from "net/response";
import { encodeUtf8 } from "net/utf8";
import { sha1 } from "net/websocket/sha1";
import { WebSocketError } from "net/websocket/types";
import { encode as base64 } from "util/base64";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE_FORBIDDEN = /[\x00\r\n]/;
const MANAGED = new Set(["host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"]);

/** Sec-WebSocket-Accept for a key: base64(SHA-1(key + GUID)). */
export function acceptKey(key: string): string {
	return base64(sha1(encodeUtf8(key + GUID)));
}

/** A fresh Sec-WebSocket-Key: 16 random bytes in base64. */
export function newKey(random: (bytes: Uint8Array) => void): string {
	const bytes = new Uint8Array(16);
	random(bytes);
	return base64(bytes);
}

/** The GET that asks for the upgrade. hostHeader: host[:port] as the URL gives it. */
export function requestHead(hostHeader: string, target: string, key: string, headers: Record<string, string> = {}): string {
	let head = `GET ${target} HTTP/1.1\r\nHost: ${hostHeader}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`
		+ `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nUser-Agent: xsclaw\r\n`;
	for (const [name, value] of Object.entries(headers)) {
		if (!HEADER_NAME.test(name)) throw new WebSocketError("handshake", `invalid header name ${JSON.stringify(name)}`);
		if (HEADER_VALUE_FORBIDDEN.test(value)) throw new WebSocketError("handshake", `invalid value for header ${name}: no line breaks allowed`);
		if (MANAGED.has(name.toLowerCase()) || name.toLowerCase() === "user-agent") continue;
		head += `${name}: ${value}\r\n`;
	}
	return head + "\r\n";
}

/** Parses the server's head (without the blank line) and checks it accepts our key; throws WebSocketError. */
export function checkAnswer(headText: string, key: string): ResponseHead {
	let head: ResponseHead;
	try {
		head = parseHead(headText);
	} catch (error) {
		throw new WebSocketError("handshake", `the server's answer to the WebSocket upgrade is not HTTP: ${(error as Error).message}`);
	}
	const h = head.headers;
	const refuse = (why: string) => new WebSocketError("handshake", `the server refused the WebSocket upgrade: ${why}`, undefined, head.status);
	if (head.status !== 101) throw refuse(`HTTP ${head.status}${head.reason ? " " + head.reason : ""} instead of 101 (check the URL and the credentials)`);
	if (!hasToken(h["upgrade"] ?? "", "websocket")) throw refuse(`Upgrade is ${JSON.stringify(h["upgrade"] ?? "")}, not websocket`);
	if (!hasToken(h["connection"] ?? "", "upgrade")) throw refuse(`Connection is ${JSON.stringify(h["connection"] ?? "")}, not Upgrade`);
	const expected = acceptKey(key);
	if ((h["sec-websocket-accept"] ?? "").trim() !== expected) {
		throw refuse(`Sec-WebSocket-Accept is ${JSON.stringify((h["sec-websocket-accept"] ?? "").slice(0, 40))}, expected ${expected}`);
	}
	if (h["sec-websocket-extensions"]) throw refuse(`it chose extensions we did not offer (${h["sec-websocket-extensions"].slice(0, 60)})`);
	if (h["sec-websocket-protocol"]) throw refuse(`it chose a subprotocol we did not offer (${h["sec-websocket-protocol"].slice(0, 60)})`);
	return head;
}
