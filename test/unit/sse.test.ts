// The SSE parser: fields, line ends, splits at every position, UTF-8 across
// chunks, bounds.
import { assert, test } from "testing";
import { SseParser } from "net/sse";
import { HttpError } from "net/types";
import { decodeUtf8 } from "net/utf8";
import { generator, seedFor } from "test/fuzz";

/** Where this file's random input starts (--seed N replays another run). */
const SEED = seedFor(0x55E0);

type Event = [string, string, string];

function bytes(text: string): Uint8Array {
	return new Uint8Array(ArrayBuffer.fromString(text));
}

/**
 * The events of a stream in pieces; the same stream through a parser in bytes
 * mode (onData, whose data may be a range of the chunk itself) must give the
 * same data, and so must a parser reset() after another stream.
 */
function parse(pieces: Uint8Array[], max?: number): Event[] {
	const events: Event[] = [];
	const parser = new SseParser((event, data, id) => events.push([event, data, id]), max);
	for (const piece of pieces) parser.push(piece);
	parser.end();
	const data: string[] = [];
	const listener = { push: (bytes: Uint8Array, start: number, end: number) => void data.push(decodeUtf8(bytes, start, end)) };
	const inBytes = new SseParser(() => {}, max, { push: () => { throw new Error("the first stream's listener was called after reset()"); } });
	inBytes.push(bytes("\ufeffdata: another stream\r"));
	inBytes.reset(listener);
	for (const piece of pieces) {
		const chunk = piece.slice();
		inBytes.push(chunk);
		chunk.fill(0x21); // a chunk is the caller's again after push(): nothing held may point into it
	}
	inBytes.end();
	assert.deepEqual(data, events.map((e) => e[1]), "bytes mode gives the same data");
	return events;
}

/** Every split of the stream into two and three pieces gives the same events. */
function checkSplits(stream: Uint8Array, expected: Event[]): void {
	assert.deepEqual(parse([stream]), expected, "whole");
	for (let a = 0; a <= stream.length; a++) {
		assert.deepEqual(parse([stream.subarray(0, a), stream.subarray(a)]), expected, `split at ${a}`);
		for (let b = a; b <= stream.length; b += 3) {
			assert.deepEqual(parse([stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)]), expected, `split at ${a}, ${b}`);
		}
	}
	const single: Uint8Array[] = [];
	for (let i = 0; i < stream.length; i++) single.push(stream.subarray(i, i + 1));
	assert.deepEqual(parse(single), expected, "byte by byte");
}

test("events carry their type, data lines joined by a newline, and the last id", () => {
	const stream = "event: message_start\ndata: {\"a\":1}\n\n: keep-alive comment\ndata: line one\ndata:line two\nid: 7\n\ndata: three\n\n";
	assert.deepEqual(parse([bytes(stream)]), [
		["message_start", "{\"a\":1}", ""],
		["", "line one\nline two", "7"],
		["", "three", "7"],
	]);
});

test("CRLF, LF and CR line ends all work, and a split anywhere gives the same events", () => {
	const stream = bytes("event: a\r\ndata: 1\r\n\r\ndata: 2\rdata: 3\r\rid: x\ndata: 4\n\n: c\r\n\r\n");
	checkSplits(stream, [["a", "1", ""], ["", "2\n3", ""], ["", "4", "x"]]);
});

test("a CR at the end of one chunk and an LF at the start of the next are one line end", () => {
	assert.deepEqual(parse([bytes("data: a\r"), bytes("\ndata: b\r"), bytes("\n\r"), bytes("\n")]), [["", "a\nb", ""]]);
});

test("UTF-8 split across chunks at any byte decodes whole", () => {
	const stream = bytes("data: \u4e16\u754c \ud83d\ude00 \u00e9\n\nevent: \u00fc\n" + "data: x\n\n");
	checkSplits(stream, [["", "\u4e16\u754c \ud83d\ude00 \u00e9", ""], ["\u00fc", "x", ""]]);
});

test("invalid UTF-8 in data becomes U+FFFD", () => {
	const stream = new Uint8Array([...bytes("data: a"), 0xC3, 0x28, ...bytes("b\n\n")]);
	assert.deepEqual(parse([stream]), [["", "a\ufffd(b", ""]]);
});

test("a leading BOM is skipped, once", () => {
	const stream = new Uint8Array([0xEF, 0xBB, 0xBF, ...bytes("data: a\n\n")]);
	checkSplits(stream, [["", "a", ""]]);
});

test("field rules: no space strip beyond one, a bare field name, unknown fields, empty data", () => {
	assert.deepEqual(parse([bytes("data:  two spaces\n\n")]), [["", " two spaces", ""]]);
	assert.deepEqual(parse([bytes("data\n\n")]), [["", "", ""]], "a bare data field gives empty data");
	assert.deepEqual(parse([bytes("data:\ndata:\n\n")]), [["", "\n", ""]]);
	assert.deepEqual(parse([bytes("foo: bar\nevent: e\n\ndata: d\n\n")]), [["", "d", ""]], "an event without data is not dispatched, and its type is reset");
	const nulId = new Uint8Array([...bytes("id: a"), 0, ...bytes("b\ndata: d\n\n")]);
	assert.deepEqual(parse([nulId]), [["", "d", ""]], "an id with NUL is ignored");
});

test("retry sets retryMs when it is all digits", () => {
	const parser = new SseParser(() => {});
	parser.push(bytes("retry: 1500\n\nretry: soon\n\n"));
	assert.equal(parser.retryMs, 1500);
});

test("an unterminated event is dropped at end()", () => {
	assert.deepEqual(parse([bytes("data: done\n\ndata: partial\n")]), [["", "done", ""]]);
	assert.deepEqual(parse([bytes("data: partial")]), []);
});

test("an event over the bound fails with too_large, whether in one line or many", () => {
	let error: unknown;
	try {
		parse([bytes("data: " + "x".repeat(200))], 128);
	} catch (e) {
		error = e;
	}
	assert.ok(error instanceof HttpError && error.kind === "too_large", `long line: ${String(error)}`);
	error = undefined;
	try {
		parse([bytes("data: 0123456789\n".repeat(20))], 128);
	} catch (e) {
		error = e;
	}
	assert.ok(error instanceof HttpError && error.kind === "too_large", `many lines: ${String(error)}`);
	// Events under the bound, one after another, never accumulate toward it.
	assert.equal(parse([bytes("data: 0123456789\n\n".repeat(100))], 128).length, 100);
});

test("a listener that throws propagates and the parser keeps a clean state", () => {
	const seen: string[] = [];
	const parser = new SseParser((_e, data) => {
		seen.push(data);
		if (data === "bad") throw new Error("listener failed");
	});
	assert.throws(() => parser.push(bytes("data: bad\n\n")), "listener failed");
	parser.push(bytes("data: good\n\n"));
	assert.deepEqual(seen, ["bad", "good"]);
});

test("reset() makes a failed parser read a new stream from its start", () => {
	const data: string[] = [];
	const parser = new SseParser(() => {}, 32, { push: (b, start, end) => void data.push(decodeUtf8(b, start, end)) });
	assert.throws(() => parser.push(bytes("data: " + "x".repeat(40) + "\n\n")), "larger than 32 bytes");
	assert.throws(() => parser.push(bytes("data: a\n\n")), "used after an error");
	parser.reset();
	parser.push(bytes("\ufeffdata: one\n\ndata: two\n"));
	parser.push(bytes("\n"));
	assert.deepEqual(data, ["one", "two"]);
});

test("fuzz: random streams (fields, comments, CR / LF / CRLF, several data lines, events without data) give the same data in both modes at random splits", () => {
	const rand = generator(SEED);
	const ends = ["\n", "\r", "\r\n"];
	const lines = ["data: x", "data:y", "data", "data:  two spaces", "event: e", ": comment", "id: 7", "retry: 5", "other: z", "dat", "data: {\"a\":\"é\"}", "dataa: no", ":"];
	for (let n = 0; n < 300; n++) {
		let text = rand(5) ? "" : "\ufeff";
		for (let events = rand(5); events > 0; events--) {
			for (let count = rand(4); count > 0; count--) text += lines[rand(lines.length)] + ends[rand(3)];
			text += ends[rand(3)];
		}
		if (rand(3)) text += lines[rand(lines.length)];
		const stream = bytes(text);
		const pieces: Uint8Array[] = [];
		for (let at = 0; at < stream.length;) {
			const next = Math.min(stream.length, at + 1 + rand(rand(2) ? 8 : 64));
			pieces.push(stream.subarray(at, next));
			at = next;
		}
		parse(pieces);
		parse([stream]);
	}
});
