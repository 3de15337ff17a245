// The WebSocket client's pieces on their own: SHA-1 against FIPS/RFC vectors,
// the Sec-WebSocket-Accept of RFC 6455's example, the handshake checks, client
// frame encoding (masking), and the frame parser: every split, fragmentation,
// control frames, limits, UTF-8, and a bounded fuzz run over random bytes.
import { assert, test } from "testing";
import { WS_MESSAGE_FRAGMENTS_MAX, WS_MESSAGE_START_BYTES } from "budgets";
import { encodeUtf8 } from "net/utf8";
import { isValidCloseCode } from "net/websocket/client";
import { encodeFrame, FrameParser, isValidUtf8, Opcode } from "net/websocket/frame";
import { acceptKey, checkAnswer, requestHead } from "net/websocket/handshake";
import { sha1 } from "net/websocket/sha1";
import { WebSocketError } from "net/websocket/types";
import type { BufferPool } from "util/buffers";
import { generator, seedFor } from "test/fuzz";

/** Where this file's random input starts (--seed N replays another run). */
const SEED = seedFor(12345);

function hex(bytes: Uint8Array): string {
	let s = "";
	for (const b of bytes) s += (b < 16 ? "0" : "") + b.toString(16);
	return s;
}
const ascii = (text: string) => new Uint8Array(ArrayBuffer.fromString(text));

test("SHA-1 matches the FIPS 180 vectors, across block boundaries", () => {
	assert.equal(hex(sha1(new Uint8Array(0))), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	assert.equal(hex(sha1(ascii("abc"))), "a9993e364706816aba3e25717850c26c9cd0d89d");
	assert.equal(hex(sha1(ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	assert.equal(hex(sha1(ascii("The quick brown fox jumps over the lazy dog"))), "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
	// 100,000 "a"s (digest from Python's hashlib): many blocks, a bit length above 2^16
	assert.equal(hex(sha1(new Uint8Array(100_000).fill(0x61))), "c4d4b30851182fc4eb8675494d42fd7f17e29c93");
	// 55, 56 and 64 bytes: the padding's edge cases (length field fits, does not, a whole block)
	const lengths: Record<number, string> = {
		55: "c1c8bbdc22796e28c0e15163d20899b65621d65a",
		56: "c2db330f6083854c99d4b5bfb6e8f29f201be699",
		64: "0098ba824b5c16427bd7a1122a5a442a25ec644d",
	};
	for (const [n, digest] of Object.entries(lengths)) assert.equal(hex(sha1(new Uint8Array(Number(n)).fill(0x61))), digest, `${n} a's`);
});

test("Sec-WebSocket-Accept of RFC 6455's example key", () => {
	assert.equal(acceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
});

test("the upgrade request carries the key and version; extra headers are checked", () => {
	const head = requestHead("example.com:8080", "/gateway?v=1", "abc=", { Authorization: "QQBot t" });
	assert.match(head, /^GET \/gateway\?v=1 HTTP\/1\.1\r\nHost: example\.com:8080\r\n/);
	assert.match(head, /\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: abc=\r\nSec-WebSocket-Version: 13\r\n/);
	assert.match(head, /\r\nAuthorization: QQBot t\r\n\r\n$/);
	assert.throws(() => requestHead("h", "/", "k", { "X-Bad": "a\r\nb" }), "no line breaks");
	assert.throws(() => requestHead("h", "/", "k", { "bad name": "v" }), "invalid header name");
	assert.equal(requestHead("h", "/", "k", { Upgrade: "h2c" }).match(/Upgrade:/g)?.length, 1, "a caller cannot change Upgrade");
});

test("the server's answer: 101, Upgrade, Connection and the accept key are each checked", () => {
	const key = "dGhlIHNhbXBsZSBub25jZQ==";
	const good = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
	assert.equal(checkAnswer(good, key).status, 101);
	const refused = (text: string, pattern: RegExp) => {
		try {
			checkAnswer(text, key);
		} catch (error) {
			assert.ok(error instanceof WebSocketError, "a WebSocketError");
			assert.equal((error as WebSocketError).kind, "handshake");
			assert.match((error as Error).message, pattern);
			return;
		}
		throw new Error(`accepted: ${text}`);
	};
	refused(good.replace("101 Switching Protocols", "401 Unauthorized"), /HTTP 401 Unauthorized instead of 101/);
	refused(good.replace("Upgrade: websocket", "Upgrade: h2c"), /Upgrade is "h2c"/);
	refused(good.replace("Connection: Upgrade", "Connection: keep-alive"), /Connection is "keep-alive"/);
	refused(good.replace("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "AAAAAAAAAAAAAAAAAAAAAAAAAAA="), /Sec-WebSocket-Accept .* expected s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=/);
	refused(good.replace("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "X: y"), /Sec-WebSocket-Accept is ""/);
	refused(good + "\r\nSec-WebSocket-Extensions: permessage-deflate", /extensions we did not offer/);
	refused("garbage", /not HTTP/);
});

test("client frames are masked with the given key, lengths in all three forms", () => {
	const mask = new Uint8Array([1, 2, 3, 4]);
	const small = encodeFrame(Opcode.Text, ascii("Hello"), true, mask);
	assert.equal(hex(small.subarray(0, 6)), "818501020304");
	for (let i = 0; i < 5; i++) assert.equal(small[6 + i] ^ mask[i & 3], "Hello".charCodeAt(i));
	const medium = encodeFrame(Opcode.Binary, new Uint8Array(300), false, mask);
	assert.equal(hex(medium.subarray(0, 4)), "02fe012c");
	assert.equal(medium.length, 2 + 2 + 4 + 300);
	const large = encodeFrame(Opcode.Binary, new Uint8Array(70_000), true, mask);
	assert.equal(hex(large.subarray(0, 10)), "82ff0000000000011170");
	assert.equal(large[14], 1, "zero bytes XOR the key");
});

// ---- the parser ----

/** A server frame (unmasked). */
function frame(opcode: number, payload: Uint8Array, fin = true, rsv = 0): Uint8Array {
	const n = payload.length;
	const ext = n < 126 ? 0 : n < 0x10000 ? 2 : 8;
	const out = new Uint8Array(2 + ext + n);
	out[0] = (fin ? 0x80 : 0) | rsv | opcode;
	if (!ext) out[1] = n;
	else if (ext === 2) { out[1] = 126; out[2] = n >> 8; out[3] = n & 0xFF; }
	else { out[1] = 127; new DataView(out.buffer).setUint32(6, n); }
	out.set(payload, 2 + ext);
	return out;
}
function concat(...parts: Uint8Array[]): Uint8Array {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const p of parts) { out.set(p, at); at += p.length; }
	return out;
}

/** Counts allocations and frees, so a test can see every buffer given back. */
function countingPool(): BufferPool & { live: number; allocations: number } {
	const pool = {
		live: 0, allocations: 0,
		allocate(n: number) { pool.live++; pool.allocations++; return new ArrayBuffer(n); },
		free() { pool.live--; },
	};
	return pool;
}

interface Seen { messages: Array<[number, string]>; controls: Array<[number, string]> }
function parse(chunks: Uint8Array[], options: { maxMessageBytes?: number; buffers?: BufferPool } = {}): Seen {
	const seen: Seen = { messages: [], controls: [] };
	const latin = (b: Uint8Array) => { let s = ""; for (const x of b) s += String.fromCharCode(x); return s; };
	const parser = new FrameParser({
		onMessage: (opcode, bytes) => seen.messages.push([opcode, latin(bytes)]),
		onControl: (opcode, payload) => seen.controls.push([opcode, latin(payload)]),
	}, options);
	try {
		for (const c of chunks) parser.feed(c);
	} finally {
		parser.release();
	}
	return seen;
}
function parseError(chunks: Uint8Array[], options: { maxMessageBytes?: number } = {}): WebSocketError {
	try {
		parse(chunks, options);
	} catch (error) {
		assert.ok(error instanceof WebSocketError, `a WebSocketError, got ${String(error)}`);
		return error as WebSocketError;
	}
	throw new Error("no error");
}

test("frames parse the same at every split, control frames between fragments", () => {
	const wire = concat(
		frame(Opcode.Text, ascii("Hel"), false),
		frame(Opcode.Ping, ascii("p")),
		frame(Opcode.Continuation, ascii("lo"), true),
		frame(Opcode.Binary, new Uint8Array(0)),
		frame(Opcode.Binary, new Uint8Array(300).fill(7)),
		frame(Opcode.Close, new Uint8Array([3, 232])),
	);
	const expected = parse([wire]);
	assert.deepEqual(expected.messages.map(([o, s]) => [o, s.length]), [[1, 5], [2, 0], [2, 300]]);
	assert.equal(expected.messages[0][1], "Hello");
	assert.deepEqual(expected.controls, [[9, "p"], [8, "\x03\xe8"]]);
	for (let split = 1; split < wire.length; split++) {
		assert.deepEqual(parse([wire.subarray(0, split), wire.subarray(split)]), expected, `split at ${split}`);
	}
	const bytewise: Uint8Array[] = [];
	for (let i = 0; i < wire.length; i++) bytewise.push(wire.subarray(i, i + 1));
	assert.deepEqual(parse(bytewise), expected, "byte by byte");
});

test("a message grows in the pool buffer and every buffer is given back", () => {
	const pool = countingPool();
	const big = new Uint8Array(3 * WS_MESSAGE_START_BYTES + 5).map((_, i) => i & 0xFF);
	const seen = parse([frame(Opcode.Binary, big.subarray(0, 1000), false), frame(Opcode.Continuation, big.subarray(1000), true)], { buffers: pool });
	assert.equal(seen.messages[0][1].length, big.length);
	assert.equal(seen.messages[0][1].charCodeAt(4097), 4097 & 0xFF);
	assert.ok(pool.allocations >= 1);
	assert.equal(pool.live, 0, "buffers freed");
});

test("protocol violations close with 1002, bad UTF-8 with 1007, too big with 1009", () => {
	const code = (chunks: Uint8Array[], max?: number) => parseError(chunks, { maxMessageBytes: max }).closeCode;
	assert.equal(code([frame(Opcode.Text, ascii("x"), true, 0x40)]), 1002, "RSV1");
	assert.equal(code([new Uint8Array([0x81, 0x81, 1, 2, 3, 4, 0])]), 1002, "masked by the server");
	assert.equal(code([frame(3, ascii("x"))]), 1002, "opcode 3");
	assert.equal(code([frame(11, ascii(""))]), 1002, "opcode 11");
	assert.equal(code([frame(Opcode.Ping, ascii("x"), false)]), 1002, "fragmented ping");
	assert.equal(code([frame(Opcode.Ping, new Uint8Array(126))]), 1002, "a 126-byte ping");
	assert.equal(code([frame(Opcode.Continuation, ascii("x"))]), 1002, "continuation first");
	assert.equal(code([frame(Opcode.Text, ascii("a"), false), frame(Opcode.Text, ascii("b"))]), 1002, "text inside text");
	assert.equal(code([new Uint8Array([0x82, 126, 0, 5, 1, 2, 3, 4, 5])]), 1002, "16-bit length under 126");
	assert.equal(code([new Uint8Array([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1])]), 1002, "top bit of a 64-bit length");
	assert.equal(code([new Uint8Array([0x82, 127, 0, 0, 1, 0, 0, 0, 0, 0])]), 1009, "a 2^40-byte frame");
	assert.equal(code([frame(Opcode.Text, new Uint8Array([0xC0, 0x80]))]), 1007, "overlong NUL");
	assert.equal(code([frame(Opcode.Text, new Uint8Array([0xED, 0xA0, 0x80]))]), 1007, "a surrogate");
	assert.equal(code([frame(Opcode.Text, new Uint8Array([0xE4, 0xB8]))]), 1007, "truncated");
	assert.equal(code([frame(Opcode.Binary, new Uint8Array(101))], 100), 1009, "one frame over the cap");
	assert.equal(code([frame(Opcode.Binary, new Uint8Array(60), false), frame(Opcode.Continuation, new Uint8Array(60))], 100), 1009, "fragments over the cap");
	const empties: Uint8Array[] = [frame(Opcode.Binary, new Uint8Array(0), false)];
	for (let i = 0; i < WS_MESSAGE_FRAGMENTS_MAX; i++) empties.push(frame(Opcode.Continuation, new Uint8Array(0), false));
	const tooMany = parseError(empties);
	assert.equal(tooMany.closeCode, 1009);
	assert.match(tooMany.message, /fragments/);
	// valid UTF-8 split across fragments is fine; the message is checked whole
	const han = encodeUtf8("\u4e16\u754c");
	assert.equal(parse([frame(Opcode.Text, han.subarray(0, 2), false), frame(Opcode.Continuation, han.subarray(2))]).messages[0][1].length, 6);
	assert.ok(isValidUtf8(encodeUtf8("\u{1F600}")) && !isValidUtf8(new Uint8Array([0xFF])));
});

test("close codes: the ones an endpoint may send", () => {
	for (const c of [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999]) assert.ok(isValidCloseCode(c), `${c}`);
	for (const c of [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000]) assert.ok(!isValidCloseCode(c), `${c}`);
});

test("fuzz: empty input, random bytes and mutated frames never escape as anything but WebSocketError", () => {
	parse([new Uint8Array(0)]);
	const rand = generator(SEED);
	const random = () => rand(2 ** 24);
	const valid = concat(frame(Opcode.Text, ascii("hello"), false), frame(Opcode.Ping, ascii("x")), frame(Opcode.Continuation, ascii("!")), frame(Opcode.Binary, new Uint8Array(200)));
	let errors = 0, messages = 0;
	for (let run = 0; run < 2000; run++) {
		let input: Uint8Array;
		if (run % 2) {
			input = new Uint8Array(random() % 300);
			for (let i = 0; i < input.length; i++) input[i] = random() & 0xFF;
		} else {
			input = valid.slice();
			for (let k = 0; k < 1 + (random() % 4); k++) input[random() % input.length] = random() & 0xFF;
		}
		const pool = countingPool();
		const parser = new FrameParser({ onMessage: () => { messages++; }, onControl: () => {} }, { buffers: pool, maxMessageBytes: 64 * 1024 });
		try {
			let at = 0;
			while (at < input.length) {
				const n = 1 + (random() % 64);
				parser.feed(input.subarray(at, at + n));
				at += n;
			}
		} catch (error) {
			if (!(error instanceof WebSocketError)) throw error;
			assert.ok([1002, 1007, 1009].includes(error.closeCode as number), `close code ${error.closeCode}`);
			errors++;
		}
		parser.release();
		assert.equal(pool.live, 0, "buffers freed");
	}
	assert.ok(errors > 100 && messages > 100, `both outcomes seen (${errors} errors, ${messages} messages)`);
});
