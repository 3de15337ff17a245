// Fuzz targets for every net parser: the response parser, the chunked decoder,
// the SSE parser, the UTF-8 sanitiser and the client glue. Seeded, bounded
// iterations (a few seconds under ASan). The rule: valid input parses to the
// same result at any split; any input ends in a result or an HttpError —
// never another exception, never a hang. A failure prints its seed and case.
import Timer from "timer";
import { assert, test } from "testing";
import { ChunkedDecoder } from "net/chunked";
import { HttpClient } from "net/http";
import { ResponseParser } from "net/response";
import { SseParser } from "net/sse";
import { HttpError } from "net/types";
import { decodeUtf8, encodeUtf8, sanitizeUtf8 } from "net/utf8";
import { CountingAllocator, FakeServer } from "test/peer/http-fake";
import { generator, iterationsFor, seedFor, type Random } from "test/fuzz";

const SEED = seedFor(0x5EED);
const ITERATIONS = iterationsFor(400);

/** Random cut points splitting length into pieces. */
function splits(rng: Random, length: number): number[] {
	const cuts = [0];
	const count = rng(6);
	for (let i = 0; i < count; i++) cuts.push(rng(length + 1));
	cuts.push(length);
	return cuts.sort((x, y) => x - y);
}

function ascii(text: string): Uint8Array {
	const b = new Uint8Array(text.length);
	for (let i = 0; i < text.length; i++) b[i] = text.charCodeAt(i) & 0xFF;
	return b;
}
function concat(parts: Uint8Array[]): Uint8Array {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const p of parts) { out.set(p, at); at += p.length; }
	return out;
}
function same(a: Uint8Array, b: Uint8Array): boolean {
	return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Runs fn; an HttpError is an allowed outcome, anything else fails the test with the case. */
function allowHttpError(label: string, fn: () => void): HttpError | undefined {
	try {
		fn();
	} catch (error) {
		if (error instanceof HttpError) return error;
		throw new Error(`${label}: threw ${String(error)} (seed ${SEED})`);
	}
	return undefined;
}

/**
 * Mutations that keep inputs near the grammar: truncate, flip, insert, delete,
 * duplicate. (Built with slice/concat: XS 13.3's splice with nothing deleted
 * passes NULL to memcpy, which the UBSan host reports.)
 */
function mutate(rng: Random, input: Uint8Array): Uint8Array {
	let bytes = Array.from(input);
	const count = 1 + rng(4);
	const interesting = [0x0D, 0x0A, 0x3A, 0x3B, 0x20, 0x30, 0x46, 0x00, 0xFF, 0xC3, 0xE4, 0x80];
	for (let m = 0; m < count; m++) {
		const at = rng(bytes.length + 1);
		const head = bytes.slice(0, at);
		switch (rng(5)) {
		case 0: bytes = head; break;
		case 1: if (at < bytes.length) bytes[at] = rng(256); break;
		case 2: bytes = head.concat([rng.pick(interesting)], bytes.slice(at)); break;
		case 3: bytes = head.concat(bytes.slice(at + 1 + rng(8))); break;
		default: bytes = head.concat(bytes.slice(at, at + 1 + rng(16)), bytes.slice(at));
		}
	}
	return Uint8Array.from(bytes);
}

// ---- generators of valid input ----

function chunkedEncoding(rng: Random, body: Uint8Array): Uint8Array {
	const parts: Uint8Array[] = [];
	let at = 0;
	while (at < body.length) {
		const n = Math.min(body.length - at, 1 + rng(40));
		const size = n.toString(16);
		parts.push(ascii((rng(2) ? size.toUpperCase() : size) + (rng(4) ? "" : ";ext=1") + (rng(5) ? "\r\n" : "\n")));
		parts.push(body.subarray(at, at + n), ascii("\r\n"));
		at += n;
	}
	parts.push(ascii("0\r\n" + (rng(3) ? "" : "Trailer: x\r\n") + "\r\n"));
	return concat(parts);
}

function validResponse(rng: Random): { wire: Uint8Array; body: Uint8Array; closeFramed: boolean } {
	const body = rng.bytes(rng(120));
	const framing = rng(3);
	let head = `HTTP/1.${rng(2)} ${rng.pick([200, 201, 400, 429, 500])} X\r\nX-Junk: ${"j".repeat(rng(30))}\r\n`;
	if (rng(4) === 0) head = "HTTP/1.1 100 Continue\r\n\r\n" + head;
	if (framing === 0) return { wire: concat([ascii(head + `Content-Length: ${body.length}\r\n\r\n`), body]), body, closeFramed: false };
	if (framing === 1) return { wire: concat([ascii(head + "Transfer-Encoding: chunked\r\n\r\n"), chunkedEncoding(rng, body)]), body, closeFramed: false };
	return { wire: concat([ascii(head + "\r\n"), body]), body, closeFramed: true };
}

function feedResponse(wire: Uint8Array, cuts: number[], end: boolean): { body: Uint8Array; complete: boolean } {
	const got: Uint8Array[] = [];
	const parser = new ResponseParser({ onHead: () => {}, onBody: (d) => { got.push(d.slice()); } });
	for (let i = 1; i < cuts.length; i++) {
		const piece = wire.subarray(cuts[i - 1], cuts[i]);
		const used = parser.feed(piece);
		if (used < 0 || used > piece.length) throw new Error(`feed consumed ${used} of ${piece.length}`);
		if (parser.complete) break;
	}
	if (end) parser.end();
	return { body: concat(got), complete: parser.complete };
}

test("fuzz: valid responses parse to their body at random splits", () => {
	const rng = generator(SEED);
	for (let n = 0; n < ITERATIONS; n++) {
		const { wire, body, closeFramed } = validResponse(rng);
		const result = feedResponse(wire, splits(rng, wire.length), closeFramed);
		assert.ok(result.complete, `case ${n}: complete`);
		assert.ok(same(result.body, body), `case ${n}: body differs (seed ${SEED})`);
	}
});

test("fuzz: mutated and random responses end in a result or an HttpError", () => {
	const rng = generator(SEED + 1);
	allowHttpError("empty", () => feedResponse(new Uint8Array(0), [0, 0], true));
	for (let n = 0; n < ITERATIONS * 2; n++) {
		const input = n % 4 === 0 ? rng.bytes(rng(200)) : mutate(rng, validResponse(rng).wire);
		allowHttpError(`response case ${n}`, () => feedResponse(input, splits(rng, input.length), rng(2) === 0));
	}
});

test("fuzz: chunked decoding round-trips, and mutations end in data or an HttpError", () => {
	const rng = generator(SEED + 2);
	allowHttpError("empty", () => new ChunkedDecoder().feed(new Uint8Array(0), 0, 0, () => {}));
	for (let n = 0; n < ITERATIONS; n++) {
		const body = rng.bytes(rng(200));
		const wire = chunkedEncoding(rng, body);
		const decoder = new ChunkedDecoder();
		const got: Uint8Array[] = [];
		const cuts = splits(rng, wire.length);
		for (let i = 1; i < cuts.length; i++) decoder.feed(wire, cuts[i - 1], cuts[i], (d) => { got.push(d.slice()); });
		assert.ok(decoder.done && same(concat(got), body), `case ${n}: round trip (seed ${SEED + 2})`);
		const broken = mutate(rng, wire);
		allowHttpError(`chunked case ${n}`, () => {
			const d = new ChunkedDecoder();
			let at = 0;
			for (let guard = 0; at < broken.length && !d.done; guard++) {
				if (guard > broken.length + 1) throw new Error("no progress");
				at = d.feed(broken, at, broken.length, () => {});
			}
		});
	}
});

const SSE_PIECES = ["data:", "data: ", "event: e", "id: 1", "retry: 10", ": c", "\r", "\n", "\r\n", "x", "\u00e9", "\u4e16", "\ud83d\ude00", "data", ":", " "];

test("fuzz: SSE streams give the same events at random splits, and random input only too_large", () => {
	const rng = generator(SEED + 3);
	const run = (bytes: Uint8Array, cuts: number[], max?: number) => {
		const events: string[] = [];
		const parser = new SseParser((e, d, id) => events.push(`${e}|${d}|${id}`), max);
		for (let i = 1; i < cuts.length; i++) parser.push(bytes.subarray(cuts[i - 1], cuts[i]));
		parser.end();
		return events.join("\n");
	};
	allowHttpError("empty", () => run(new Uint8Array(0), [0, 0]));
	for (let n = 0; n < ITERATIONS; n++) {
		let text = "";
		const count = rng(40);
		for (let i = 0; i < count; i++) text += rng.pick(SSE_PIECES);
		const stream = new Uint8Array(ArrayBuffer.fromString(text));
		assert.equal(run(stream, splits(rng, stream.length)), run(stream, [0, stream.length]), `case ${n}: split changes events (seed ${SEED + 3})`);
		const noise = n % 2 ? rng.bytes(rng(300)) : mutate(rng, stream);
		const error = allowHttpError(`sse case ${n}`, () => run(noise, splits(rng, noise.length), 64));
		if (error) assert.equal(error.kind, "too_large", `sse case ${n}: ${error.message}`);
	}
});

test("fuzz: sanitised UTF-8 always decodes and is a fixed point", () => {
	const rng = generator(SEED + 4);
	assert.equal(decodeUtf8(new Uint8Array(0)), "");
	for (let n = 0; n < ITERATIONS * 2; n++) {
		const input = rng(3) ? rng.bytes(rng(64)) : mutate(rng, new Uint8Array(ArrayBuffer.fromString("h\u00e9 \u4e16 \ud83d\ude00")));
		// "xs" output is what String.fromArrayBuffer accepts in full (NUL as C0 80, nothing cut).
		const forXs = sanitizeUtf8(input, "xs") ?? input;
		const copy = forXs.slice();
		const xsText = String.fromArrayBuffer(copy.buffer);
		assert.equal(ArrayBuffer.fromString(xsText).byteLength, forXs.length, `case ${n}: xs output decodes whole`);
		const text = decodeUtf8(input);
		assert.equal(text, xsText, `case ${n}: decodeUtf8 is the xs form`);
		const wire = sanitizeUtf8(input, "wire") ?? input;
		assert.equal(sanitizeUtf8(wire, "wire"), undefined, `case ${n}: wire output is clean`);
		assert.equal(decodeUtf8(encodeUtf8(text)), text, `case ${n}: decoded text round-trips`);
	}
});

test("fuzz: the client settles on any server bytes, with no buffer left behind", async () => {
	const rng = generator(SEED + 5);
	const rounds = Math.max(20, Math.floor(ITERATIONS / 8));
	const one = async (n: number) => {
		const wire = n % 3 === 0 ? rng.bytes(rng(200)) : mutate(rng, validResponse(rng).wire);
		const closeAfter = rng(2) === 0;
		const cuts = splits(rng, wire.length);
		const server = new FakeServer({
			respond: (_r, socket) => {
				for (let i = 1; i < cuts.length; i++) socket.send(wire.subarray(cuts[i - 1], cuts[i]));
				if (closeAfter) socket.end();
			},
		});
		const pool = new CountingAllocator();
		const http = new HttpClient({ TCP: server.TCP, Timer, buffers: pool });
		try {
			await http.request({ method: "POST", url: "http://127.0.0.1:1/", body: "x", firstByteTimeoutMs: 100, totalTimeoutMs: 150 });
		} catch (error) {
			if (!(error instanceof HttpError)) throw new Error(`client case ${n}: rejected with ${String(error)} (seed ${SEED + 5})`);
		}
		http.close();
		assert.equal(pool.live.size, 0, `client case ${n}: buffers freed`);
		assert.equal(server.openSockets, 0, `client case ${n}: sockets closed`);
	};
	// In batches, so the cases that end by timeout wait together.
	for (let n = 0; n < rounds; n += 10) {
		const batch: Promise<void>[] = [];
		for (let k = n; k < Math.min(rounds, n + 10); k++) batch.push(one(k));
		await Promise.all(batch);
	}
}, 60_000);
