// The response parser, chunked decoder, URL parser and UTF-8 sanitiser on their
// own: every split position, framing rules, limits.
import { assert, test } from "testing";
import { ChunkedDecoder } from "net/chunked";
import { errorText, parseRetryAfter } from "net/http";
import { ResponseParser, hasToken, parseHead, parseHeadBytes, type ResponseHead } from "net/response";
import { HttpError } from "net/types";
import { literalAddress, parseUrl } from "net/url";
import { decodeUtf8, encodeUtf8, sanitizeUtf8, utf8Boundary } from "net/utf8";
import { generator, seedFor } from "test/fuzz";

/** Where this file's random input starts (--seed N replays another run). */
const SEED = seedFor(7);

function bytes(text: string): Uint8Array {
	return new Uint8Array(ArrayBuffer.fromString(text));
}
function latin(view: Uint8Array): string {
	let s = "";
	for (const b of view) s += String.fromCharCode(b);
	return s;
}

interface Parsed { status: number; headers: Record<string, string>; body: string; complete: boolean; keepAlive: boolean; consumed: number }

function run(pieces: Uint8Array[], endOfStream = false): Parsed {
	let status = 0, headers: Record<string, string> = {}, body = "";
	const parser = new ResponseParser({
		onHead: (head) => { status = head.status; headers = head.headers; },
		onBody: (data) => {
			if (!data.length) throw new Error("empty onBody");
			body += latin(data);
		},
	});
	let consumed = 0;
	for (const piece of pieces) consumed += parser.feed(piece);
	if (endOfStream) parser.end();
	return { status, headers, body, complete: parser.complete, keepAlive: parser.keepAlive, consumed };
}

function everySplit(wire: string, expected: Partial<Parsed>, endOfStream = false): void {
	const all = bytes(wire);
	const check = (pieces: Uint8Array[], label: string) => {
		const got = run(pieces, endOfStream);
		for (const key of Object.keys(expected) as (keyof Parsed)[]) assert.deepEqual(got[key], expected[key], `${label}: ${key}`);
	};
	for (let a = 0; a <= all.length; a++) {
		check([all.subarray(0, a), all.subarray(a)], `split at ${a}`);
		for (let b = a; b <= all.length; b += 9) check([all.subarray(0, a), all.subarray(a, b), all.subarray(b)], `split at ${a}, ${b}`);
	}
	const single: Uint8Array[] = [];
	for (let i = 0; i < all.length; i++) single.push(all.subarray(i, i + 1));
	check(single, "byte by byte");
}

function throwsKind(fn: () => void, kind: string, pattern?: RegExp): void {
	try {
		fn();
	} catch (error) {
		assert.ok(error instanceof HttpError, `an HttpError, got ${String(error)}`);
		assert.equal((error as HttpError).kind, kind);
		if (pattern) assert.match((error as HttpError).message, pattern);
		return;
	}
	assert.fail(`expected an HttpError of kind ${kind}`);
}

test("a Content-Length response parses the same at every split", () => {
	everySplit("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\nX-Dup: a\r\nx-dup: b\r\n\r\nhello world",
		{ status: 200, body: "hello world", complete: true, keepAlive: true, headers: { "content-type": "text/plain", "content-length": "11", "x-dup": "a, b" } });
});

test("a chunked response with extensions, trailers and a 100 Continue parses the same at every split", () => {
	everySplit("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: gzip, chunked\r\n\r\n4;a=b\r\nWiki\r\n0005\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nExpires: never\r\n\r\n",
		{ status: 201, body: "Wikipedia in\r\n\r\nchunks.", complete: true, keepAlive: true });
});

test("bare LF line ends are accepted in heads and chunk lines", () => {
	everySplit("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n", { status: 200, body: "abc", complete: true });
});

test("a close-framed body ends with the stream and is never kept alive", () => {
	everySplit("HTTP/1.1 200 OK\r\nContent-Type: x\r\n\r\nuntil the end", { body: "until the end", complete: true, keepAlive: false }, true);
});

test("204 and 304 have no body; Content-Length: 0 is complete at once", () => {
	assert.equal(run([bytes("HTTP/1.1 204 No Content\r\n\r\n")]).complete, true);
	assert.equal(run([bytes("HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n")]).complete, true);
	const zero = run([bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nNEXT")]);
	assert.equal(zero.complete, true);
	assert.equal(zero.consumed, bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").length, "bytes after the message are not consumed");
});

test("keep-alive follows the version and Connection header", () => {
	assert.equal(run([bytes("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n")]).keepAlive, false);
	assert.equal(run([bytes("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")]).keepAlive, false);
	assert.equal(run([bytes("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")]).keepAlive, true);
	assert.equal(run([bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n")]).keepAlive, false, "TE with CL is never reused");
});

test("bad heads fail with kind protocol", () => {
	throwsKind(() => run([bytes("HTTP/2 200 OK\r\n\r\n")]), "protocol", /bad status line/);
	throwsKind(() => run([bytes("HTTP/1.1 99 Low\r\n\r\n")]), "protocol", /bad status line/);
	throwsKind(() => run([bytes("HTTP/1.1 200 OK\r\nNo Colon Here\r\n\r\n")]), "protocol", /bad header line/);
	throwsKind(() => run([bytes("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n")]), "protocol", /bad header line/);
	throwsKind(() => run([bytes("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n")]), "protocol", /bad content-length/);
	throwsKind(() => run([bytes("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n")]), "protocol", /bad content-length/);
	throwsKind(() => run([bytes("HTTP/1.1 101 Switching Protocols\r\n\r\n")]), "protocol", /101/);
	throwsKind(() => run([bytes("HTTP/1.1 100 Continue\r\n\r\n".repeat(5) + "HTTP/1.1 200 OK\r\n\r\n")]), "protocol", /too many 1xx/);
	assert.equal(run([bytes("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nabcde")]).body, "abcde", "identical repeated lengths are fine");
});

test("a folded header line joins its value with a space", () => {
	assert.equal(run([bytes("HTTP/1.1 200 OK\r\nX-Long: one\r\n  two\r\nContent-Length: 0\r\n\r\n")]).headers["x-long"], "one two");
});

test("the end of the stream mid-message names what was missing", () => {
	throwsKind(() => run([], true), "connect", /before responding/);
	throwsKind(() => run([bytes("HTTP/1.1 200 OK\r\nContent-")], true), "protocol", /inside the response headers/);
	throwsKind(() => run([bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")], true), "protocol", /mid-body after 3 of 10 bytes/);
	throwsKind(() => run([bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")], true), "protocol", /mid-body after 2 bytes/);
});

test("a head over the limit fails with too_large even when it arrives byte by byte", () => {
	const parser = new ResponseParser({ onHead: () => {}, onBody: () => {} }, 64);
	const head = bytes("HTTP/1.1 200 OK\r\nX: " + "y".repeat(100) + "\r\n\r\n");
	throwsKind(() => { for (let i = 0; i < head.length; i++) parser.feed(head.subarray(i, i + 1)); }, "too_large", /larger than 64 bytes/);
});

test("stop() makes feed return at once", () => {
	let bodies = 0;
	const parser = new ResponseParser({ onHead: () => {}, onBody: () => { bodies++; parser.stop(); } });
	const wire = bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n1\r\nb\r\n0\r\n\r\n");
	parser.feed(wire);
	assert.equal(bodies, 1);
	assert.equal(parser.complete, false);
});

test("the chunked decoder rejects bad sizes, missing CRLFs and endless extensions", () => {
	const feed = (text: string) => new ChunkedDecoder().feed(bytes(text), 0, bytes(text).length, () => {});
	throwsKind(() => feed("zz\r\n"), "protocol", /missing chunk size/);
	throwsKind(() => feed("123456789\r\n"), "protocol", /chunk size too large/);
	throwsKind(() => feed("3\r\nabcX"), "protocol", /missing CRLF/);
	throwsKind(() => feed("3;" + "e".repeat(300) + "\r\n"), "protocol", /line too long/);
	throwsKind(() => feed("3x\r\n"), "protocol", /bad chunk size line/);
	throwsKind(() => feed("0\r\n" + "T: v\r\n".repeat(2000)), "protocol", /trailer too long/);
	const decoder = new ChunkedDecoder();
	try { decoder.feed(bytes("g"), 0, 1, () => {}); } catch { /* expected */ }
	throwsKind(() => decoder.feed(bytes("1\r\n"), 0, 3, () => {}), "protocol", /after an error/);
});

test("the chunked decoder returns where the body ended", () => {
	const wire = bytes("2\r\nhi\r\n0\r\n\r\nHTTP/1.1");
	let body = "";
	const decoder = new ChunkedDecoder();
	const at = decoder.feed(wire, 0, wire.length, (d) => { body += latin(d); });
	assert.equal(body, "hi");
	assert.equal(decoder.done, true);
	assert.equal(at, wire.length - "HTTP/1.1".length);
});

test("a chunked body reads the same whole and split anywhere: size lines in upper and lower case, with and without CR, with extensions", () => {
	const wire = bytes("1A\r\n" + "x".repeat(26) + "\r\nb\nhello world\n3 ;ext=1\r\nabc\r\nf\r\n0123456789abcde\r\n0\r\nT: 1\r\n\r\n");
	const expected = "x".repeat(26) + "hello worldabc0123456789abcde";
	const decode = (cuts: number[]) => {
		const decoder = new ChunkedDecoder();
		let body = "";
		for (let i = 1; i < cuts.length; i++) decoder.feed(wire, cuts[i - 1], cuts[i], (d) => { body += latin(d); });
		assert.ok(decoder.done, `done after cuts ${cuts.join(",")}`);
		return body;
	};
	assert.equal(decode([0, wire.length]), expected, "whole");
	for (let a = 0; a <= wire.length; a++) assert.equal(decode([0, a, wire.length]), expected, `split at ${a}`);
	const bytewise = [0];
	for (let i = 1; i <= wire.length; i++) bytewise.push(i);
	assert.equal(decode(bytewise), expected, "byte by byte");
});

test("URLs: scheme, host, port, target, origin and Host header", () => {
	const a = parseUrl("HTTPS://API.OpenAI.com/v1/chat/completions?x=1#frag");
	assert.deepEqual(a, { secure: true, host: "api.openai.com", port: 443, origin: "https://api.openai.com:443", hostHeader: "api.openai.com", target: "/v1/chat/completions?x=1" });
	const b = parseUrl("http://127.0.0.1:11434");
	assert.equal(b.target, "/");
	assert.equal(b.hostHeader, "127.0.0.1:11434");
	assert.equal(parseUrl("http://h?q").target, "/?q");
	const v6 = parseUrl("http://[::1]:8080/x");
	assert.equal(v6.host, "::1");
	assert.equal(v6.hostHeader, "[::1]:8080");
	assert.equal(literalAddress("::1"), "::1");
	assert.equal(literalAddress("10.1.2.3"), "10.1.2.3");
	assert.equal(literalAddress("999.1.2.3"), undefined);
	assert.equal(literalAddress("localhost"), "127.0.0.1");
	assert.equal(literalAddress("example.com"), undefined);
});

test("retry-after: seconds, HTTP dates, junk", () => {
	const now = Date.UTC(2015, 9, 21, 7, 28, 0);
	assert.equal(parseRetryAfter("120", now), 120_000);
	assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now), 30_000);
	assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now), 0, "a past date means now");
	assert.equal(parseRetryAfter("soon", now), undefined);
	assert.equal(parseRetryAfter(undefined, now), undefined);
});

test("error text: error.message, message, error string, or the first 160 bytes on a character boundary", () => {
	assert.equal(errorText(bytes("{\"error\":{\"message\":\"m1\"}}")), "m1");
	assert.equal(errorText(bytes("{\"message\":\"m2\"}")), "m2");
	assert.equal(errorText(bytes("{\"error\":\"m3\"}")), "m3");
	assert.equal(errorText(bytes("{\"other\":1}")), "{\"other\":1}");
	assert.equal(errorText(bytes("{broken")), "{broken");
	assert.equal(errorText(bytes("x".repeat(159) + "\u4e16")), "x".repeat(159), "a cut character is left out");
	assert.equal(errorText(new Uint8Array(0)), "");
});

test("UTF-8 sanitising: clean input is untouched; invalid sequences become U+FFFD per maximal subpart", () => {
	assert.equal(sanitizeUtf8(bytes("plain \u00e9\u4e16\ud83d\ude00"), "xs"), undefined);
	const cases: [number[], string][] = [
		[[0x61, 0x80, 0x62], "a\ufffdb"],
		[[0xC3], "\ufffd"],
		[[0xE4, 0xB8], "\ufffd"],
		[[0xE4, 0xB8, 0x41], "\ufffdA"],
		[[0xC0, 0xAF], "\ufffd\ufffd"],
		[[0xED, 0xA0, 0x80], "\ufffd\ufffd\ufffd"],
		[[0xF4, 0x90, 0x80, 0x80], "\ufffd\ufffd\ufffd\ufffd"],
		[[0xF0, 0x9F, 0x98], "\ufffd"],
		[[0xFF, 0xFE], "\ufffd\ufffd"],
		[[0x00, 0x41], "\u0000A"],
	];
	for (const [input, expected] of cases) assert.equal(decodeUtf8(Uint8Array.from(input)), expected, JSON.stringify(input));
	assert.equal(decodeUtf8(bytes("abc"), 1, 2), "b");
});

test("UTF-8 encoding: NUL, pairs and lone surrogates go out as standard UTF-8", () => {
	assert.deepEqual(Array.from(encodeUtf8("a\u0000b")), [0x61, 0x00, 0x62]);
	assert.deepEqual(Array.from(encodeUtf8(String.fromCharCode(0xDE00) + "x")), [0xEF, 0xBF, 0xBD, 0x78]);
	assert.deepEqual(Array.from(encodeUtf8(String.fromCharCode(0xD83D) + String.fromCharCode(0xDE00))), [0xF0, 0x9F, 0x98, 0x80]);
	assert.deepEqual(Array.from(encodeUtf8("\ud83d\ude00")), [0xF0, 0x9F, 0x98, 0x80]);
	assert.deepEqual(Array.from(encodeUtf8(String.fromCharCode(0xD83D) + "x")), [0xEF, 0xBF, 0xBD, 0x78]);
	const round = "mixed \u00e9 \u4e16 \ud83d\ude00 \u0000 end";
	assert.equal(decodeUtf8(encodeUtf8(round)), round);
});

test("utf8Boundary backs off a cut character", () => {
	const b = bytes("ab\u4e16");
	assert.equal(utf8Boundary(b, 3), 2);
	assert.equal(utf8Boundary(b, 4), 2);
	assert.equal(utf8Boundary(b, 5), 5);
	assert.equal(utf8Boundary(b, 2), 2);
});

// The head parser as it was written over the decoded text with regular
// expressions (before it read bytes): parseHeadBytes must answer as it did.
function referenceHead(text: string): ResponseHead {
	const lines = text.split(/\r?\n/);
	while (lines.length && lines[0] === "") lines.shift();
	const statusLine = lines.shift() ?? "";
	const match = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: (.*))?$/.exec(statusLine);
	if (!match) throw new HttpError("protocol", `invalid HTTP response: bad status line ${JSON.stringify(statusLine.slice(0, 40))}`);
	const headers: Record<string, string> = {};
	let last: string | undefined;
	for (const line of lines) {
		if (line === "") continue;
		if (line[0] === " " || line[0] === "\t") {
			if (last === undefined) throw new HttpError("protocol", "invalid HTTP response: folded line before any header");
			headers[last] = `${headers[last]} ${line.trim()}`.trim();
			continue;
		}
		const colon = line.indexOf(":");
		const name = colon > 0 ? line.slice(0, colon) : "";
		if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) throw new HttpError("protocol", `invalid HTTP response: bad header line ${JSON.stringify(line.slice(0, 40))}`);
		const key = name.toLowerCase();
		const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
		headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
		last = key;
	}
	return { status: Number(match[2]), reason: match[3] ?? "", minor: Number(match[1]), headers };
}

function outcome(fn: () => ResponseHead): string {
	try {
		return JSON.stringify(fn());
	} catch (error) {
		return `throws ${(error as Error).message}`;
	}
}

test("the head parser reads bytes as the text parser with regular expressions did, for generated and odd heads", () => {
	const pieces = [
		"HTTP/1.1 200 OK", "HTTP/1.0 404 Not Found", "HTTP/1.1 101", "HTTP/1.1 200 ", "HTTP/2 200 OK", "HTTP/1.1 600 x", "http/1.1 200 OK",
		"Content-Type: text/plain", "X-A:  spaced \t ", "x-a: again", "Connection: keep-alive, Close", "\tfolded  ", " folded",
		"Bad Header: x", ": no name", "no colon", "Trailing-CR: v\r", "Empty:", "Set-Cookie: a=1", "SET-COOKIE: b=2", "Ünicode: x",
		"X-Utf8: caf\u00e9 \ufffd", "constructor: c", "__proto__: p", "\r", "",
	];
	const separators = ["\r\n", "\n", "\r\n\r\n"];
	const next = generator(SEED);
	for (let round = 0; round < 600; round++) {
		let text = next(5) === 0 ? "\r\n" : "";
		const count = 1 + next(6);
		for (let i = 0; i < count; i++) text += (i === 0 && next(4) ? pieces[next(2)] : pieces[next(pieces.length)]) + separators[next(separators.length)];
		const expected = outcome(() => referenceHead(text));
		assert.equal(outcome(() => parseHead(text)), expected, `head ${JSON.stringify(text)}`);
		assert.equal(outcome(() => parseHeadBytes(encodeUtf8(text))), expected, `bytes of ${JSON.stringify(text)}`);
	}
	// Invalid UTF-8 in a value becomes U+FFFD, as decoding the whole head did.
	const raw = new Uint8Array([...bytes("HTTP/1.1 200 OK\r\nX-Bad: a"), 0xC3, 0x28, ...bytes("b\r\n\r\n")]);
	assert.equal(outcome(() => parseHeadBytes(raw)), outcome(() => referenceHead(decodeUtf8(raw))));
});

// How the parser framed a response as it did when it read every header into
// strings first (parseHeadBytes, then the framing rules on the headers object).
function referenceFraming(head: ResponseHead): string {
	const headers = head.headers;
	const connection = headers["connection"] ?? "";
	let keepAlive = head.minor === 1 ? !hasToken(connection, "close") : hasToken(connection, "keep-alive");
	const encoding = headers["transfer-encoding"], length = headers["content-length"];
	let framing: string;
	if (head.status === 204 || head.status === 304) framing = "none";
	else if (encoding !== undefined) {
		const codings = encoding.toLowerCase();
		framing = codings.slice(codings.lastIndexOf(",") + 1).trim() === "chunked" ? "chunked" : "close";
		if (length !== undefined) keepAlive = false;
	} else if (length !== undefined) {
		const values = length.split(",").map((v) => v.trim());
		if (!values.every((v) => /^\d{1,15}$/.test(v) && v === values[0])) return "throws bad content-length";
		framing = Number(values[0]) ? `length ${Number(values[0])}` : "none";
	} else framing = "close";
	if (framing === "close") keepAlive = false;
	return `${head.status} ${framing} ${keepAlive ? "keep-alive" : "close"}`;
}

// The same, as the parser does it from the head's bytes; and its head's strings.
function parserFraming(wire: Uint8Array): { framing: string; head?: ResponseHead } {
	let head: ResponseHead | undefined;
	const parser = new ResponseParser({ onHead: (h) => { head = h; }, onBody: () => {} });
	try {
		parser.feed(wire);
	} catch (error) {
		const message = (error as Error).message;
		return { framing: /bad content-length/.test(message) ? "throws bad content-length" : `throws ${message}` };
	}
	const got = head as ResponseHead;
	let framing: string;
	if (parser.complete) framing = "none";
	else if (parser.contentLength >= 0) framing = `length ${parser.contentLength}`;
	else {
		try {
			parser.end();
			framing = "close";
		} catch {
			framing = "chunked";
		}
	}
	return { framing: `${got.status} ${framing} ${parser.keepAlive ? "keep-alive" : "close"}`, head: got };
}

test("the parser frames a response from the head's bytes as it did from its header strings, and its head's strings are parseHeadBytes'", () => {
	const statuses = ["HTTP/1.1 200 OK", "HTTP/1.0 200 OK", "HTTP/1.1 200", "HTTP/1.1 204 No Content", "HTTP/1.1 304 Not Modified", "HTTP/1.1 200 Ok\u00e9", "HTTP/1.0 404 Gone\u2028x", "HTTP/1.1 500 A\rB", "HTTP/1.1 20 Short"];
	const lines = [
		"Connection: close", "connection: Keep-Alive", "CONNECTION: keep-alive, close", "Connection: keep-alive\u00a0", "Transfer-Encoding: chunked",
		"transfer-encoding: gzip", "Transfer-Encoding: gzip,", " chunked", "\tclose", "Content-Length: 5", "content-length: 5, 5", "Content-Length: 6",
		"Content-Length: 05", "Content-Length: x", "X-Other: 1", "Transfer-Encoding: CHUNKED", "Content-Length:   0  ", "Bad Line",
	];
	const next = generator(SEED + 1);
	for (let round = 0; round < 800; round++) {
		let text = statuses[next(statuses.length)] + "\r\n";
		for (let i = next(5); i > 0; i--) text += lines[next(lines.length)] + (next(3) ? "\r\n" : "\n");
		text += "\r\n";
		const wire = encodeUtf8(text);
		let expected: string;
		let reference: ResponseHead | undefined;
		try {
			reference = parseHeadBytes(wire);
			expected = referenceFraming(reference);
		} catch (error) {
			expected = `throws ${(error as Error).message}`;
		}
		const got = parserFraming(wire);
		assert.equal(got.framing, expected, `head ${JSON.stringify(text)}`);
		if (got.head && reference) {
			assert.equal(got.head.reason, reference.reason, `reason of ${JSON.stringify(text)}`);
			assert.equal(JSON.stringify(got.head.headers), JSON.stringify(reference.headers), `headers of ${JSON.stringify(text)}`);
			assert.equal(got.head.minor, reference.minor);
		}
	}
});

test("a head read after another frames by its own names wherever they differ from the last head's (same lengths, case, bad names, past the names kept)", () => {
	const heads = [
		["X-Other-1: 1", "Transfer-Encoding: chunked", "X-Abcdefgh: 2"],
		["X-Other-1: 1", "X-Abcdefghijklmno: x", "Connection: close"],   // line 2 a framing header where the last head had none, same length as line 1 before
		["X-Other-1: 1", "Transfer-Encoding: chunked", "X-Abcdefgh: 2"],
		["X-Other-1: 1", "transfer-encoding: chunked", "connection: close"],   // the same names in another case
		["X-Other-1: 1", "Transfer-Encodin(: chunked", "X-Abcdefgh: 2"],   // a bad name of the same length
		["X-Other-1: 1", "Transfer-Encoding: chunked", "X-Abcdefgh: 2"],
		["X-Other-1: 1", "Content-Length: 5", "X-Abcdefgh: 2"],
		["X-Other-1: 1", "Content-Length: 5", "Content-Length: 6"],   // a framing header twice: the line-by-line reader decides
		["X-Other-1: 1", "Content-Length: 5", " 6"],   // a folded line
		[...Array.from({ length: 40 }, (_, i) => `X-N${i}: ${i}`), "Content-Length: 0"],
		[...Array.from({ length: 40 }, (_, i) => `X-N${i}: ${i}`), "Connection: close", "Content-Length: 0"],
		[...Array.from({ length: 40 }, (_, i) => `X-N${i}: ${i}`), "Connection: close", "Bad Line"],
	];
	for (let round = 0; round < 2; round++) {
		for (const lines of heads) {
			const wire = encodeUtf8(`HTTP/1.1 200 OK\r\n${lines.join("\r\n")}\r\n\r\n`);
			let expected: string;
			try {
				expected = referenceFraming(parseHeadBytes(wire));
			} catch (error) {
				expected = `throws ${(error as Error).message}`;
			}
			assert.equal(parserFraming(wire).framing, expected, `head ${JSON.stringify(lines)}`);
		}
	}
	assert.equal(parserFraming(encodeUtf8("HTTP/1.1 200 OK\r\nX-Other-1: 1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")).framing, "200 none close");
	assert.equal(parserFraming(encodeUtf8("HTTP/1.1 200 OK\r\nX-Other-1: 1\r\nXonnection: close\r\nContent-Length: 0\r\n\r\n")).framing, "200 none keep-alive");
});

test("hasToken finds a token in a comma-separated list in any case, and only a whole item", () => {
	const reference = (value: string, token: string) => value.split(",").some((item) => item.trim().toLowerCase() === token);
	const values = ["close", "Close", " keep-alive , close ", "closed", "xclose", "close-ish, keep-alive", "", ",", "a,,close", "upgrade, CLOSE\t", "clo se", "keep-alive"];
	for (const value of values) for (const token of ["close", "keep-alive", "upgrade"]) {
		assert.equal(hasToken(value, token), reference(value, token), `${JSON.stringify(value)} lists ${token}`);
	}
});
