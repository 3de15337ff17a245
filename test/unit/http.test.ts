// The HTTP client on fake sockets: framing, keep-alive, abort at each phase,
// timeouts, caps, buffers and errors. The parsers' split-anywhere checks are
// in http-parse.test.ts; live sockets in test/peer/http.ts.
import Timer from "timer";
import { assert, test } from "testing";
import { Aborter } from "net/abort";
import { HttpClient } from "net/http";
import { HttpError, type HttpClientOptions, type HttpRequest } from "net/types";
import { HTTP_READ_BUFFER_BYTES } from "budgets";
import { decodeUtf8 } from "net/utf8";
import {
	CountingAllocator, FakeServer, bytesOf, chunked, fakeResolver, response, sleep, textOf,
} from "test/peer/http-fake";

const URL = "http://127.0.0.1:8080/v1/chat";

// A small read buffer of the tests' own: responses arrive in many reads (every
// split of a head or chunk line), and the pool counts the body buffers alone.
function client(server: FakeServer, options: Partial<HttpClientOptions> = {}) {
	const pool = new CountingAllocator();
	const http = new HttpClient({
		TCP: server.TCP, TLS: server.TLS, Timer, buffers: pool, readBuffer: new Uint8Array(64),
		Resolver: fakeResolver({ "api.example": "10.0.0.7" }), ...options,
	});
	return { http, pool };
}

async function failure(promise: Promise<unknown>): Promise<HttpError> {
	try {
		await promise;
	} catch (error) {
		if (!(error instanceof HttpError)) throw new Error(`expected an HttpError, got ${String(error)}`);
		return error;
	}
	throw new Error("expected the request to fail");
}

const get = (extra: Partial<HttpRequest> = {}): HttpRequest => ({ method: "GET", url: URL, ...extra });

/** Waits until cond() holds (polling), failing after ms. */
async function until(cond: () => boolean, what: string, ms = 2000): Promise<void> {
	for (let waited = 0; !cond(); waited += 2) {
		if (waited > ms) throw new Error(`timed out waiting for ${what}`);
		await sleep(2);
	}
}

test("a GET returns status, lower-case headers, the body and byte counts", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "hello", { "X-Thing": "a b" })) });
	const { http, pool } = client(server);
	const res = await http.request(get());
	assert.equal(res.status, 200);
	assert.equal(res.body, "hello");
	assert.equal(res.headers["x-thing"], "a b");
	assert.equal(res.headers["content-length"], "5");
	assert.equal(res.reusedConnection, false);
	assert.equal(res.bytesReceived, bytesOf(response(200, "hello", { "X-Thing": "a b" })).length);
	const sent = server.requests[0];
	assert.equal(res.bytesSent, sent.head.length + 4);
	assert.equal(sent.method, "GET");
	assert.equal(sent.target, "/v1/chat");
	assert.equal(sent.headers["host"], "127.0.0.1:8080");
	assert.equal(pool.live.size, 0, "body buffer freed");
	http.close();
});

test("a POST sends Content-Length in bytes and the body as UTF-8, lone surrogates replaced", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "{}")) });
	const { http } = client(server);
	const body = "h\u00e9\u4e16\ud83d\ude00 lone:" + String.fromCharCode(0xD800) + "!";
	await http.request({ method: "POST", url: URL, body, headers: { "Content-Type": "application/json" } });
	const sent = server.requests[0];
	const expected = [0x68, 0xC3, 0xA9, 0xE4, 0xB8, 0x96, 0xF0, 0x9F, 0x98, 0x80, ...bytesOf(" lone:"), 0xEF, 0xBF, 0xBD, 0x21];
	assert.deepEqual(Array.from(sent.body), expected);
	assert.equal(sent.headers["content-length"], String(expected.length));
	assert.equal(sent.headers["content-type"], "application/json");
	http.close();
});

test("a surrogate pair built by concatenation is sent as one 4-byte character", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200)) });
	const { http } = client(server);
	await http.request({ method: "POST", url: URL, body: String.fromCharCode(0xD83D) + String.fromCharCode(0xDE00) });
	assert.deepEqual(Array.from(server.requests[0].body), [0xF0, 0x9F, 0x98, 0x80]);
	http.close();
});

test("an ArrayBuffer body is sent byte for byte, and a small writable window is honoured", async () => {
	const server = new FakeServer({ writable: 7, respond: (_r, s) => s.send(response(204, "", { "Content-Length": "" }, "No Content")) });
	const { http } = client(server);
	const payload = new Uint8Array(300).map((_, i) => (i * 7) & 0xFF);
	const res = await http.request({ method: "PUT", url: URL, body: payload.buffer });
	assert.equal(res.status, 204);
	assert.deepEqual(Array.from(server.requests[0].body), Array.from(payload));
	http.close();
});

test("a Uint8Array body is sent as the bytes of its view", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200)) });
	const { http } = client(server);
	const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
	await http.request({ method: "POST", url: URL, body: backing.subarray(2, 5) });
	assert.deepEqual(Array.from(server.requests[0].body), [1, 2, 3]);
	assert.equal(server.requests[0].headers["content-length"], "3");
	http.close();
});

test("a chunked body is decoded, extensions and trailers skipped", async () => {
	const wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + "5;name=value\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: 1\r\n\r\n";
	const server = new FakeServer({ respond: (_r, s) => s.send(wire) });
	const { http } = client(server);
	const res = await http.request(get());
	assert.equal(res.body, "hello world");
	http.close();
});

test("a response arriving one byte at a time gives the same result", async () => {
	const wire = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(["\u4e16\u754c", "-ok"]);
	const server = new FakeServer({ respond: (_r, s) => void s.trickle(wire, 1, 0) });
	const { http } = client(server);
	const res = await http.request(get());
	assert.equal(res.body, "\u4e16\u754c-ok");
	http.close();
});

test("invalid UTF-8 in a body becomes U+FFFD and a NUL byte survives", async () => {
	const body = new Uint8Array([0x61, 0xFF, 0x62, 0x00, 0x63, 0xE4, 0xB8]);
	const head = bytesOf("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n");
	const wire = new Uint8Array(head.length + body.length);
	wire.set(head);
	wire.set(body, head.length);
	const server = new FakeServer({ respond: (_r, s) => s.send(wire) });
	const { http } = client(server);
	const res = await http.request(get());
	assert.equal(res.body, "a\ufffdb\u0000c\ufffd");
	assert.equal(res.body.length, 6);
	http.close();
});

// ---- keep-alive ----

test("sequential requests to one origin reuse one connection", async () => {
	const server = new FakeServer({ respond: (r, s) => s.send(response(200, `#${r.target}`)) });
	const { http } = client(server);
	const first = await http.request(get());
	const second = await http.request({ method: "GET", url: "http://127.0.0.1:8080/other" });
	const third = await http.request({ method: "POST", url: URL, body: "x" });
	assert.equal(server.sockets.length, 1, "one connection");
	assert.deepEqual([first.reusedConnection, second.reusedConnection, third.reusedConnection], [false, true, true]);
	assert.equal(second.body, "#/other");
	assert.equal(http.idleCount(), 1);
	http.close();
	assert.equal(server.openSockets, 0, "close() closes pooled connections");
});

test("one kept-alive connection reads responses of every framing in turn (its parser reset for each)", async () => {
	const answers = [
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(["ab", "cd"], "X-Trailer: t\r\n"),
		response(200, "plain"),
		"HTTP/1.1 100 Continue\r\n\r\n" + response(200, "after interim", { "X-Long": "y".repeat(300) }),
		"HTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(["again"]),
		response(404, "{\"error\":{\"message\":\"nope\"}}"),
		response(200, "last", { "X-Tag": "z" }),
	];
	const server = new FakeServer({ respond: (_r, s, i) => void s.trickle(answers[i], 13, 1) });
	const { http } = client(server);
	const seen: string[] = [];
	for (let i = 0; i < answers.length; i++) {
		try {
			const res = await http.request(get());
			seen.push(`${res.status} ${res.body} ${res.headers["x-tag"] ?? ""}`.trim());
		} catch (error) {
			seen.push(`${(error as HttpError).status} ${(error as HttpError).message}`);
		}
	}
	assert.deepEqual(seen, ["200 abcd", "200 plain", "200 after interim", "204", "200 again", "404 HTTP 404: nope", "200 last z"]);
	assert.equal(server.sockets.length, 1, "one connection throughout");
	http.close();
});

test("different origins get different connections", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "x")) });
	const { http } = client(server);
	await http.request(get());
	await http.request({ method: "GET", url: "http://127.0.0.1:8081/" });
	await http.request({ method: "GET", url: "https://127.0.0.1:8080/" });
	assert.equal(server.sockets.length, 3);
	http.close();
});

test("Connection: close from the server is honoured", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "x", { Connection: "close" })) });
	const { http } = client(server);
	await http.request(get());
	assert.equal(server.sockets[0].closed, true, "closed after the response");
	const res = await http.request(get());
	assert.equal(res.reusedConnection, false);
	assert.equal(server.sockets.length, 2);
	http.close();
});

test("Connection: close from the caller is sent and the connection is not pooled", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "x")) });
	const { http } = client(server);
	await http.request(get({ headers: { connection: "close" } }));
	assert.equal(server.requests[0].headers["connection"], "close");
	assert.equal(http.idleCount(), 0);
	assert.equal(server.openSockets, 0);
	http.close();
});

test("a frozen headers object is checked once and sent the same every time; a mutable one is read again per request", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "x")) });
	const { http } = client(server);
	const frozen = Object.freeze({ "X-Key": "one", connection: "close" });
	await http.request(get({ headers: frozen }));
	await http.request({ ...get({ headers: frozen }), method: "POST", body: "abc" });
	assert.equal(http.idleCount(), 0, "Connection: close from the frozen headers is honoured on every request");
	const mutable: Record<string, string> = { "X-Key": "one" };
	await http.request(get({ headers: mutable }));
	mutable["X-Key"] = "two";
	await http.request(get({ headers: mutable }));
	const [a, b, c, d] = server.requests;
	assert.equal(a.headers["x-key"], "one");
	assert.equal(a.headers["connection"], "close");
	assert.equal(a.headers["content-length"], undefined, "a GET without a body has no Content-Length");
	assert.equal(b.method, "POST", "the cached head is not reused for another method");
	assert.equal(b.headers["content-length"], "3");
	assert.equal(b.headers["connection"], "close");
	assert.equal(c.headers["x-key"], "one");
	assert.equal(d.headers["x-key"], "two");
	http.close();
});

test("an HTTP/1.0 response and a close-framed body are not reused", async () => {
	const server = new FakeServer({
		respond: (r, s) => {
			if (r.target === "/old") s.send("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
			else { s.send("HTTP/1.1 200 OK\r\n\r\nuntil close"); s.end(); }
		},
	});
	const { http } = client(server);
	const old = await http.request({ method: "GET", url: "http://127.0.0.1:8080/old" });
	assert.equal(old.body, "ok");
	const closeFramed = await http.request(get());
	assert.equal(closeFramed.body, "until close");
	assert.equal(closeFramed.reusedConnection, false);
	assert.equal(http.idleCount(), 0);
	http.close();
});

test("an idle pooled connection closed by the server is replaced without an error", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "x")) });
	const { http } = client(server);
	await http.request(get());
	server.sockets[0].end();
	await until(() => http.idleCount() === 0, "the pool to drop the closed connection");
	const res = await http.request(get());
	assert.equal(res.reusedConnection, false);
	assert.equal(server.sockets.length, 2);
	http.close();
});

test("a pooled connection that dies under the next request is replaced once", async () => {
	const server = new FakeServer({
		respond: (_r, s, index) => {
			if (s.id === 0 && index === 1) s.end(); // the server had timed the connection out
			else s.send(response(200, `socket ${s.id}`));
		},
	});
	const { http } = client(server);
	await http.request(get());
	const res = await http.request(get());
	assert.equal(res.body, "socket 1");
	assert.equal(res.reusedConnection, false);
	assert.equal(server.sockets.length, 2);
	http.close();
});

test("a connection is not reused after an incomplete response", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") });
	const { http } = client(server);
	const aborter = new Aborter();
	const pending = http.request(get({ signal: aborter.signal }));
	await until(() => server.sockets[0]?.requests.length === 1, "the request");
	await sleep(5);
	aborter.abort();
	await failure(pending);
	assert.equal(http.idleCount(), 0);
	assert.equal(server.sockets[0].closed, true);
	http.close();
});

test("junk after a complete response keeps the connection out of the pool", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "ok") + "HTTP/1.1 200 OK\r\n") });
	const { http } = client(server);
	const res = await http.request(get());
	assert.equal(res.body, "ok");
	assert.equal(http.idleCount(), 0);
	http.close();
});

test("a response that arrives before the request is fully sent is returned, and the connection dropped", async () => {
	const server = new FakeServer({ writable: 16 });
	const { http } = client(server);
	const pending = http.request({ method: "POST", url: URL, body: "x".repeat(4096) });
	await until(() => server.sockets[0]?.written.length > 0, "the first bytes");
	server.sockets[0].send(response(413, "{\"error\":{\"message\":\"too big\"}}", {}, "Payload Too Large"));
	const error = await failure(pending);
	assert.equal(error.kind, "status");
	assert.equal(error.message, "HTTP 413: too big");
	assert.equal(server.sockets[0].closed, true);
	http.close();
});

// ---- abort at each phase ----

test("an already aborted signal rejects without opening a socket", async () => {
	const server = new FakeServer();
	const { http } = client(server);
	const aborter = new Aborter();
	aborter.abort("user stop");
	const error = await failure(http.request(get({ signal: aborter.signal })));
	assert.equal(error.kind, "aborted");
	assert.equal(error.message, "aborted");
	assert.equal(server.sockets.length, 0);
});

test("abort during DNS rejects at once and a late answer opens nothing", async () => {
	const server = new FakeServer();
	const log: string[] = [];
	const { http } = client(server, { Resolver: fakeResolver({ "api.example": "10.0.0.7" }, 30, log) });
	const aborter = new Aborter();
	const pending = http.request({ method: "GET", url: "https://api.example/x", signal: aborter.signal });
	await sleep(5);
	assert.deepEqual(log, ["api.example"]);
	aborter.abort();
	assert.equal((await failure(pending)).kind, "aborted");
	await sleep(50);
	assert.equal(server.sockets.length, 0, "no connection after the late DNS answer");
});

test("abort during the TLS handshake closes the socket synchronously", async () => {
	const server = new FakeServer({ hang: true });
	const { http } = client(server);
	const aborter = new Aborter();
	const pending = http.request({ method: "GET", url: "https://127.0.0.1/", signal: aborter.signal });
	await sleep(5);
	assert.equal(server.sockets.length, 1);
	assert.equal((server.sockets[0].options as { host?: string }).host, "127.0.0.1", "TLS gets the host name");
	aborter.abort();
	assert.equal(server.sockets[0].closed, true, "closed inside abort()");
	assert.equal((await failure(pending)).message, "aborted");
});

test("abort mid-headers closes the socket and rejects with aborted", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("HTTP/1.1 200 OK\r\nContent-Ty") });
	const { http, pool } = client(server);
	const aborter = new Aborter();
	const pending = http.request(get({ signal: aborter.signal }));
	await until(() => server.sockets[0]?.requests.length === 1, "the request");
	await sleep(5);
	aborter.abort();
	assert.equal(server.sockets[0].closed, true);
	assert.equal((await failure(pending)).kind, "aborted");
	assert.equal(pool.live.size, 0);
});

test("abort mid-body frees the body buffer and closes the socket", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + "y".repeat(600)) });
	const { http, pool } = client(server);
	const aborter = new Aborter();
	const pending = http.request(get({ signal: aborter.signal }));
	await until(() => pool.live.size === 1, "a body buffer");
	aborter.abort();
	assert.equal(server.sockets[0].closed, true);
	assert.equal((await failure(pending)).kind, "aborted");
	assert.equal(pool.live.size, 0, "buffer freed");
	assert.equal(pool.used, 0);
});

test("abort while streaming, from inside onChunk, stops the stream at once", async () => {
	const server = new FakeServer({ respond: (_r, s) => void s.trickle(response(200, "z".repeat(200)), 20, 2) });
	const { http } = client(server);
	const aborter = new Aborter();
	let calls = 0;
	const error = await failure(http.request(get({
		signal: aborter.signal,
		onChunk: () => {
			if (++calls === 2) aborter.abort();
		},
	})));
	assert.equal(error.kind, "aborted");
	assert.equal(calls, 2, "no chunk after the abort");
	assert.equal(server.sockets[0].closed, true);
});

test("close() aborts a request in flight", async () => {
	const server = new FakeServer({ respond: () => {} });
	const { http } = client(server);
	const pending = http.request(get());
	await until(() => server.requests.length === 1, "the request");
	http.close();
	assert.equal((await failure(pending)).kind, "aborted");
	assert.equal(server.openSockets, 0);
});

// ---- timeouts ----

test("a connection that never completes fails with a connect timeout", async () => {
	const server = new FakeServer({ hang: true });
	const { http } = client(server);
	const error = await failure(http.request(get({ connectTimeoutMs: 30 })));
	assert.equal(error.kind, "timeout");
	assert.equal(error.timeout, "connect");
	assert.match(error.message, /^connect timeout after 30 ms/);
	assert.equal(server.sockets[0].closed, true);
});

test("DNS that never answers counts against the connect timeout", async () => {
	const server = new FakeServer();
	const { http } = client(server, { Resolver: fakeResolver({}, -1) });
	const error = await failure(http.request({ method: "GET", url: "http://api.example/", connectTimeoutMs: 20 }));
	assert.equal(error.timeout, "connect");
});

test("a server that accepts the request and stays silent fails with a first-byte timeout", async () => {
	const server = new FakeServer({ respond: () => {} });
	const { http } = client(server);
	const error = await failure(http.request(get({ firstByteTimeoutMs: 30 })));
	assert.equal(error.kind, "timeout");
	assert.equal(error.timeout, "first_byte");
	assert.match(error.message, /^first-byte timeout after 30 ms/);
	assert.equal(server.sockets[0].closed, true);
});

test("headers followed by silence fail with a first-byte timeout", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n") });
	const { http } = client(server);
	const error = await failure(http.request(get({ firstByteTimeoutMs: 30, onChunk: () => {} })));
	assert.equal(error.timeout, "first_byte");
});

test("the first body byte stops the first-byte timer, even when the rest is slow", async () => {
	const server = new FakeServer({
		respond: (_r, s) => {
			s.send("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n");
			void s.trickle("s".repeat(40), 10, 15);
		},
	});
	const { http } = client(server);
	const res = await http.request(get({ firstByteTimeoutMs: 40 }));
	assert.equal(res.body.length, 40);
	assert.ok(res.firstByteMs >= 0 && res.firstByteMs <= res.durationMs, `firstByteMs ${res.firstByteMs}, durationMs ${res.durationMs}`);
	http.close();
});

test("a trickling body fails with the total timeout and frees its buffer", async () => {
	const server = new FakeServer({ respond: (_r, s) => void s.trickle(response(200, "t".repeat(5000)), 50, 5) });
	const { http, pool } = client(server);
	const error = await failure(http.request(get({ totalTimeoutMs: 60 })));
	assert.equal(error.timeout, "total");
	assert.equal(pool.live.size, 0);
	assert.equal(server.sockets[0].closed, true);
});

// ---- caps and buffers ----

test("a Content-Length over the cap fails before reading the body, closing the socket", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n") });
	const { http, pool } = client(server);
	const error = await failure(http.request(get({ maxBodyBytes: 4096 })));
	assert.equal(error.kind, "too_large");
	assert.match(error.message, /5000 bytes exceeds the 4096-byte cap/);
	assert.equal(server.sockets[0].closed, true);
	assert.equal(pool.sizes.length, 0, "nothing allocated");
});

test("a chunked body over the cap stops at the cap with too_large", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(["a".repeat(6000), "b".repeat(6000)])) });
	const { http, pool } = client(server);
	const error = await failure(http.request(get({ maxBodyBytes: 10000 })));
	assert.equal(error.kind, "too_large");
	assert.equal(server.sockets[0].closed, true);
	assert.equal(pool.live.size, 0);
	assert.ok(pool.sizes.every((n) => n <= 10000), `no buffer above the cap: ${pool.sizes}`);
});

test("an unsized body grows from 4 KiB by doubling up to the cap, freeing each old buffer", async () => {
	const body = "c".repeat(20000);
	const server = new FakeServer({ respond: (_r, s) => void s.trickle("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked([body]), 1000, 0) });
	const { http, pool } = client(server);
	const res = await http.request(get({ maxBodyBytes: 24000 }));
	assert.equal(res.body.length, 20000);
	assert.deepEqual(pool.sizes, [4096, 8192, 16384, 24000]);
	assert.equal(pool.peak, 16384 + 24000, "peak is the last copy");
	assert.equal(pool.live.size, 0);
});

test("when the pool can resize, an unsized body grows in place, so the pool peak is the final capacity", async () => {
	const body = "r".repeat(20000);
	const server = new FakeServer({ respond: (_r, s) => void s.trickle("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked([body]), 1000, 0) });
	const pool = new CountingAllocator(64 * 1024);
	const { http } = client(server, { buffers: pool });
	const res = await http.request(get());
	assert.equal(res.body, body);
	assert.deepEqual(pool.sizes, [4096]);
	assert.deepEqual(pool.resizes, [8192, 16384, 32768]);
	assert.equal(pool.peak, 32768);
	assert.equal(pool.live.size, 0);
	http.close();
});

test("a sized body gets one exact buffer", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "d".repeat(10000))) });
	const { http, pool } = client(server);
	await http.request(get());
	assert.deepEqual(pool.sizes, [10000]);
	assert.equal(pool.live.size, 0);
	http.close();
});

test("an allocator that runs out fails the request with too_large", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "d".repeat(10000))) });
	const { http, pool } = client(server);
	pool.failAbove = 8192;
	const error = await failure(http.request(get()));
	assert.equal(error.kind, "too_large");
	assert.match(error.message, /no memory for a 10000-byte response buffer/);
});

test("response headers over the limit fail with too_large", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("HTTP/1.1 200 OK\r\nX-Big: " + "h".repeat(9000) + "\r\n\r\n") });
	const { http } = client(server);
	const error = await failure(http.request(get()));
	assert.equal(error.kind, "too_large");
	assert.match(error.message, /headers larger than 8192 bytes/);
});

// ---- streaming ----

test("onChunk gets the decoded body bytes of a 2xx stream and the body is not buffered", async () => {
	const server = new FakeServer({ respond: (_r, s) => void s.trickle("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(["data: 1\n\n", "data: 2\n\n"]), 7, 1) });
	const { http, pool } = client(server);
	let text = "";
	const res = await http.request(get({ onChunk: (bytes) => { text += textOf(bytes); } }));
	assert.equal(text, "data: 1\n\ndata: 2\n\n");
	assert.equal(res.body, "");
	assert.equal(pool.sizes.length, 0);
	assert.equal(http.idleCount(), 1, "a complete stream keeps the connection");
	http.close();
});

test("onBody gets a whole 2xx body as bytes from its pool buffer, once, and the body string is left empty", async () => {
	const server = new FakeServer({ respond: (_r, s) => void s.trickle("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(["{\"a\":", "\"é\"}"]), 5, 1) });
	const { http, pool } = client(server);
	const seen: string[] = [];
	let liveDuringCall = 0;
	const res = await http.request(get({ onBody: (bytes) => { seen.push(decodeUtf8(bytes)); liveDuringCall = pool.live.size; } }));
	assert.deepEqual(seen, ["{\"a\":\"é\"}"]);
	assert.equal(liveDuringCall, 1, "the view is of the client's pool buffer");
	assert.equal(res.body, "");
	assert.equal(pool.live.size, 0, "body buffer freed after the call");
	const empty: number[] = [];
	const server2 = new FakeServer({ respond: (_r, s) => s.send(response(200, "")) });
	const second = client(server2);
	await second.http.request(get({ onBody: (bytes) => void empty.push(bytes.length) }));
	assert.deepEqual(empty, [0], "a body-less 2xx still calls onBody, with no bytes");
	const failed = await failure(second.http.request(get({ onBody: () => { throw new TypeError("not JSON"); } })));
	assert.equal(failed.kind, "protocol");
	assert.equal(failed.message, "not JSON");
	const status = new FakeServer({ respond: (_r, s) => s.send(response(500, "{\"message\":\"boom\"}", {}, "Internal Server Error")) });
	const third = client(status);
	let called = false;
	const error = await failure(third.http.request(get({ onBody: () => { called = true; } })));
	assert.equal(error.message, "HTTP 500: boom");
	assert.equal(called, false, "an error status is not handed to onBody");
	http.close();
	second.http.close();
	third.http.close();
});

test("a non-2xx stream is not passed to onChunk; its body makes the error", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(500, "{\"message\":\"boom\"}", {}, "Internal Server Error")) });
	const { http } = client(server);
	let called = false;
	const error = await failure(http.request(get({ onChunk: () => { called = true; } })));
	assert.equal(error.message, "HTTP 500: boom");
	assert.equal(called, false);
	http.close();
});

test("onChunk throwing an HttpError fails the request with it; other errors become protocol", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "abc")) });
	const { http } = client(server);
	const own = await failure(http.request(get({ onChunk: () => { throw new HttpError("too_large", "event too big"); } })));
	assert.equal(own.kind, "too_large");
	assert.equal(own.message, "event too big");
	const other = await failure(http.request(get({ onChunk: () => { throw new TypeError("bad delta"); } })));
	assert.equal(other.kind, "protocol");
	assert.equal(other.message, "bad delta");
	assert.equal(server.openSockets, 0);
});

// ---- status errors ----

test("a 429 gives the JSON error.message and retry-after in ms", async () => {
	const server = new FakeServer({
		respond: (_r, s) => s.send(response(429, "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"x\"}}", { "Retry-After": "2" }, "Too Many Requests")),
	});
	const { http, pool } = client(server);
	const error = await failure(http.request({ method: "POST", url: URL, body: "{}" }));
	assert.equal(error.kind, "status");
	assert.equal(error.status, 429);
	assert.equal(error.message, "HTTP 429: Rate limit reached");
	assert.equal(error.retryAfterMs, 2000);
	assert.equal(pool.live.size, 0);
	assert.equal(http.idleCount(), 1, "a complete error response keeps the connection");
	http.close();
});

test("retry-after as an HTTP date and retry-after-ms are understood", async () => {
	const at = new Date(Date.now() + 120_000);
	const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
	const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
	const two = (n: number) => String(n).padStart(2, "0");
	const date = `${days[at.getUTCDay()]}, ${two(at.getUTCDate())} ${months[at.getUTCMonth()]} ${at.getUTCFullYear()} ${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())} GMT`;
	const server = new FakeServer({
		respond: (r, s) => s.send(r.target === "/date" ? response(503, "", { "Retry-After": date }, "Service Unavailable") : response(429, "", { "retry-after-ms": "1500", "Retry-After": "9" })),
	});
	const { http } = client(server);
	const byDate = await failure(http.request({ method: "GET", url: "http://127.0.0.1:8080/date" }));
	assert.equal(byDate.message, "HTTP 503: Service Unavailable");
	assert.ok(byDate.retryAfterMs !== undefined && byDate.retryAfterMs > 60_000 && byDate.retryAfterMs <= 120_000, `retryAfterMs ${byDate.retryAfterMs}`);
	const byMs = await failure(http.request(get()));
	assert.equal(byMs.retryAfterMs, 1500);
	http.close();
});

test("an error body without JSON is quoted up to 160 bytes; message and error strings are used", async () => {
	const long = "\u00e9".repeat(100); // 200 bytes of 2-byte characters
	const bodies: Record<string, string> = { "/long": long, "/message": "{\"message\":\"plain\"}", "/string": "{\"error\":\"just a string\"}" };
	const server = new FakeServer({ respond: (r, s) => s.send(response(400, bodies[r.target], {}, "Bad Request")) });
	const { http } = client(server);
	const quoted = await failure(http.request({ method: "GET", url: "http://127.0.0.1:8080/long" }));
	assert.equal(quoted.message, `HTTP 400: ${"\u00e9".repeat(80)}`);
	assert.equal(quoted.body, long);
	assert.equal((await failure(http.request({ method: "GET", url: "http://127.0.0.1:8080/message" }))).message, "HTTP 400: plain");
	assert.equal((await failure(http.request({ method: "GET", url: "http://127.0.0.1:8080/string" }))).message, "HTTP 400: just a string");
	http.close();
});

test("a huge error body is cut at the error cap and the connection dropped", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(502, "e".repeat(40000), {}, "Bad Gateway")) });
	const { http, pool } = client(server);
	const error = await failure(http.request(get()));
	assert.equal(error.status, 502);
	assert.equal(error.body?.length, 16 * 1024);
	assert.equal(server.sockets[0].closed, true);
	assert.equal(pool.live.size, 0);
});

// ---- connection failures ----

test("a refused connection fails with kind connect; a TLS failure with kind tls", async () => {
	const refused = new FakeServer({ refuse: "connection refused" });
	const error = await failure(client(refused).http.request(get()));
	assert.equal(error.kind, "connect");
	assert.match(error.message, /127\.0\.0\.1:8080: connection refused/);
	const tls = new FakeServer({ refuse: "certificate verify failed", refuseIn: "handshake" });
	assert.equal((await failure(client(tls).http.request({ method: "GET", url: "https://127.0.0.1/" }))).kind, "tls");
});

test("a connection failure's kind is the socket's stage, not its message's words: a handshake failure saying nothing of TLS is tls, a connect failure naming a certificate is connect", async () => {
	const https = { method: "GET" as const, url: "https://127.0.0.1/" };
	const handshake = new FakeServer({ refuse: "bad record mac", refuseIn: "handshake" });
	const error = await failure(client(handshake).http.request(https));
	assert.equal(error.kind, "tls");
	assert.equal(error.message, "cannot connect to 127.0.0.1:443: bad record mac");
	const refused = new FakeServer({ refuse: "TCP: cannot connect to 127.0.0.1 port 443: no route (certificate store host)", refuseIn: "connect" });
	const connect = await failure(client(refused).http.request(https));
	assert.equal(connect.kind, "connect");
	assert.equal(connect.message, "TCP: cannot connect to 127.0.0.1 port 443: no route (certificate store host)", "the socket's own connect sentence stands");
	const unsaid = new FakeServer({ refuse: "x509 alert" });
	assert.equal((await failure(client(unsaid).http.request(https))).kind, "connect", "no stage said: a plain connection failure");
});

test("https without a TLS class fails with kind tls", async () => {
	const server = new FakeServer();
	const { http } = client(server, { TLS: undefined });
	const error = await failure(http.request({ method: "GET", url: "https://127.0.0.1/" }));
	assert.equal(error.kind, "tls");
	assert.equal(server.sockets.length, 0);
});

test("host names are resolved; a name that does not resolve fails with kind dns", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "named")) });
	const { http } = client(server);
	const res = await http.request({ method: "GET", url: "http://API.example:81/x" });
	assert.equal(res.body, "named");
	assert.equal(server.sockets[0].options.address, "10.0.0.7");
	assert.equal(server.requests[0].headers["host"], "api.example:81");
	const error = await failure(http.request({ method: "GET", url: "http://nowhere.example/" }));
	assert.equal(error.kind, "dns");
	assert.match(error.message, /cannot resolve nowhere\.example/);
	http.close();
});

test("localhost and IP literals skip DNS", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200)) });
	const log: string[] = [];
	const { http } = client(server, { Resolver: fakeResolver({}, 1, log) });
	await http.request({ method: "GET", url: "http://localhost:9/" });
	assert.equal(server.sockets[0].options.address, "127.0.0.1");
	assert.deepEqual(log, []);
	http.close();
});

test("the server dropping the connection mid-body gives a clear error", async () => {
	const server = new FakeServer({ respond: (_r, s) => { s.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + "q".repeat(40)); s.end(); } });
	const { http, pool } = client(server);
	const error = await failure(http.request(get()));
	assert.equal(error.kind, "protocol");
	assert.match(error.message, /closed the connection mid-body after 40 of 100 bytes/);
	assert.equal(pool.live.size, 0);
});

test("a server closing without a response fails with kind connect", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.end() });
	const error = await failure(client(server).http.request(get()));
	assert.equal(error.kind, "connect");
	assert.match(error.message, /closed the connection before responding/);
});

test("a garbled status line fails with kind protocol", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("SSH-2.0-OpenSSH\r\n\r\n") });
	const error = await failure(client(server).http.request(get()));
	assert.equal(error.kind, "protocol");
	assert.match(error.message, /bad status line/);
});

test("bad URLs, methods and header values are refused before any connection", async () => {
	const server = new FakeServer();
	const { http } = client(server);
	for (const url of ["ftp://x/", "http://", "http://a b/", "http://user:pw@host/", "http://h:99999/", "nonsense"]) {
		const error = await failure(http.request({ method: "GET", url }));
		assert.equal(error.kind, "protocol", url);
		assert.match(error.message, /^invalid URL/);
	}
	const injected = await failure(http.request(get({ headers: { "X-A": "1\r\nX-B: 2" } })));
	assert.match(injected.message, /line breaks are not allowed/);
	const method = await failure(http.request({ method: "TRACE" as "GET", url: URL }));
	assert.match(method.message, /unsupported HTTP method/);
	assert.equal(server.sockets.length, 0);
});

test("concurrent requests to one origin use separate connections and all return to the pool", async () => {
	const server = new FakeServer({ respond: (r, s) => s.send(response(200, r.target)) });
	const { http } = client(server, { maxIdlePerOrigin: 2 });
	const results = await Promise.all([1, 2, 3].map((n) => http.request({ method: "GET", url: `http://127.0.0.1:8080/${n}` })));
	assert.deepEqual(results.map((r) => r.body), ["/1", "/2", "/3"]);
	assert.equal(server.sockets.length, 3);
	assert.equal(http.idleCount(), 2, "the pool keeps at most maxIdlePerOrigin");
	assert.equal(server.openSockets, 2);
	http.close();
});

test("the pool's bookkeeping survives many requests without leaking sockets or timers", async () => {
	const server = new FakeServer({ respond: (_r, s, i) => s.send(response(200, "n", i % 3 === 2 ? { Connection: "close" } : {})) });
	const { http, pool } = client(server);
	for (let i = 0; i < 30; i++) await http.request(get());
	assert.equal(server.sockets.length, 10, "a new connection after every third response");
	assert.equal(pool.live.size, 0);
	http.close();
	assert.equal(server.openSockets, 0);
});

// ---- the read buffer ----

test("without a read buffer of the caller's, one is taken from the pool at the first read, kept across requests and freed by close()", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send(response(200, "x".repeat(300))) });
	const pool = new CountingAllocator();
	const http = new HttpClient({ TCP: server.TCP, Timer, buffers: pool });
	assert.equal(pool.live.size, 0, "nothing before the first read");
	for (let i = 0; i < 3; i++) assert.equal((await http.request(get())).body, "x".repeat(300));
	assert.deepEqual([...pool.live.values()], [HTTP_READ_BUFFER_BYTES], "one read buffer, kept");
	assert.equal(pool.sizes.filter((n) => n === HTTP_READ_BUFFER_BYTES).length, 1, "taken once");
	http.close();
	assert.equal(pool.live.size, 0, "freed by close()");
});

test("TCP reads are sized to what onReadable reported (a larger buffer is refused, as the SDK's lwIP TCP does), TLS reads fill the whole buffer, whatever the split", async () => {
	const wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(["data: 1\n\n", "x".repeat(150), "data: 2\n\n"]);
	for (const [size, readBuffer, url] of [[5, new Uint8Array(64), URL], [70, new Uint8Array(64), URL], [3000, undefined, URL], [7, undefined, "https://127.0.0.1:8443/v1"]] as const) {
		const server = new FakeServer({ respond: (_r, s) => void s.trickle(wire, size, 1) });
		const pool = new CountingAllocator();
		const http = new HttpClient({ TCP: server.TCP, TLS: server.TLS, Timer, buffers: pool, ...(readBuffer ? { readBuffer } : {}) });
		let text = "";
		const res = await http.request(get({ url, onChunk: (bytes) => { text += textOf(bytes); } }));
		assert.equal(text, "data: 1\n\n" + "x".repeat(150) + "data: 2\n\n", `pieces of ${size}`);
		assert.equal(res.bytesReceived, bytesOf(wire).length);
		http.close();
		assert.equal(pool.live.size, 0);
	}
});

test("close() from inside onChunk frees the read buffer once the read ends, and the client can read again after", async () => {
	const server = new FakeServer({ respond: (_r, s) => void s.trickle(response(200, "z".repeat(200)), 20, 2) });
	const pool = new CountingAllocator();
	const http = new HttpClient({ TCP: server.TCP, Timer, buffers: pool });
	let calls = 0;
	const error = await failure(http.request(get({ onChunk: () => { if (++calls === 2) http.close(); } })));
	assert.equal(error.kind, "aborted");
	assert.equal(pool.live.size, 0, "freed after the read (CountingAllocator throws on a double free)");
	assert.equal((await http.request(get())).body, "z".repeat(200));
	http.close();
	assert.equal(pool.live.size, 0);
});

test("a read inside another read's callback gets a buffer of its own", async () => {
	const server = new FakeServer({ respond: (r, s) => { if (r.target === "/a") void s.trickle(response(200, "a".repeat(100)), 10, 1); } });
	const pool = new CountingAllocator();
	const http = new HttpClient({ TCP: server.TCP, Timer, buffers: pool });
	let b = "";
	const pendingB = http.request({ method: "GET", url: "http://127.0.0.1:8080/b", onChunk: (bytes) => { b += textOf(bytes); } });
	await until(() => server.requests.length === 1, "B's request");
	// B's answer arrives while A's read is in progress, and B's socket reports it
	// at once (as a native callback running inside A's would): both come out whole.
	let a = "";
	const resA = await http.request({
		method: "GET", url: "http://127.0.0.1:8080/a",
		onChunk: (bytes) => {
			if (!a) {
				const socketB = server.sockets[0];
				socketB.send(response(200, "b".repeat(100)));
				socketB.options.onReadable?.call(socketB, socketB.available);
			}
			a += textOf(bytes);
		},
	});
	assert.equal(b, "b".repeat(100), "B read inside A's callback");
	assert.equal((await pendingB).status, 200);
	assert.equal(resA.status, 200);
	assert.equal(a, "a".repeat(100));
	http.close();
	assert.equal(pool.live.size, 0);
});

test("Aborter calls each listener once and a removed listener never", () => {
	const aborter = new Aborter();
	const calls: string[] = [];
	aborter.signal.addListener((r) => calls.push(`a:${r}`));
	const remove = aborter.signal.addListener(() => calls.push("b"));
	remove();
	aborter.abort("why");
	aborter.abort("again");
	aborter.signal.addListener((r) => calls.push(`late:${r}`));
	assert.deepEqual(calls, ["a:why", "late:why"]);
	assert.equal(aborter.signal.aborted, true);
	assert.equal(aborter.signal.reason, "why");
});

test("Aborter calls a listening object's abort() in order with the functions, once; an unlistened one never", () => {
	const aborter = new Aborter();
	const calls: string[] = [];
	const one = { abort: (r: string) => calls.push(`one:${r}`) };
	const two = { abort: () => calls.push("two") };
	aborter.signal.addListener((r) => calls.push(`fn:${r}`));
	aborter.signal.listen?.(one);
	aborter.signal.listen?.(two);
	aborter.signal.unlisten?.(two);
	aborter.abort("stop");
	aborter.abort("again");
	aborter.signal.listen?.({ abort: (r: string) => calls.push(`late:${r}`) });
	assert.deepEqual(calls, ["fn:stop", "one:stop", "late:stop"]);
});

test("the client's one timer fails concurrent requests each at its own deadline, not before it", async () => {
	const server = new FakeServer({ respond: (r, s) => { if (r.target === "/ok") s.send(response(200, "fine")); } });
	const { http } = client(server, { maxIdlePerOrigin: 0 });
	const started = Date.now();
	const at = (ms: number, path: string) => http.request({ method: "GET", url: `http://127.0.0.1:8080${path}`, firstByteTimeoutMs: ms }).then(
		() => ({ path, ms: Date.now() - started, kind: "ok" }),
		(error: HttpError) => ({ path, ms: Date.now() - started, kind: `${error.kind} ${error.timeout ?? ""}` }));
	const results = await Promise.all([at(400, "/slow"), at(60, "/fast"), at(100_000, "/ok"), at(200, "/middle")]);
	assert.deepEqual(results.map((r) => `${r.path} ${r.kind}`), ["/slow timeout first_byte", "/fast timeout first_byte", "/ok ok", "/middle timeout first_byte"]);
	const byPath = Object.fromEntries(results.map((r) => [r.path, r.ms]));
	assert.ok(byPath["/fast"] >= 60 && byPath["/fast"] < byPath["/middle"] && byPath["/middle"] < byPath["/slow"], `in deadline order: ${JSON.stringify(byPath)}`);
	assert.ok(byPath["/slow"] >= 400, `not before its deadline: ${byPath["/slow"]} ms`);
	http.close();
});

test("start() hears the outcome without a promise: a bad URL before start() returns, a response later, onChunk called as a method of the request", async () => {
	const server = new FakeServer({ respond: (_r, s) => s.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(["data: a\n\n", "data: b\n\n"])) });
	const { http, pool } = client(server);
	const heard: string[] = [];
	http.start({ method: "GET", url: "not a url" }, {
		resolve: () => heard.push("resolved"),
		reject: (error) => heard.push(`rejected ${error.kind}`),
	});
	assert.deepEqual(heard, ["rejected protocol"], "heard before start() returned");
	const request = {
		method: "GET" as const, url: URL, chunks: [] as string[],
		onChunk(bytes: Uint8Array): void { this.chunks.push(decodeUtf8(bytes)); },
	};
	const status = await new Promise<number>((resolve, reject) => http.start(request, { resolve: (r) => resolve(r.status), reject }));
	assert.equal(status, 200);
	assert.equal(request.chunks.join(""), "data: a\n\ndata: b\n\n");
	assert.equal(pool.live.size, 0, "buffers freed");
	http.close();
});
