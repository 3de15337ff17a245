// The HTTP client (modules/shared/net/http.ts) on the lin host's real TCP/TLS sockets
// and PSRAM buffers, against the mock LLM over TLS with the test CA, started
// by test/e2e/http.test.mjs. Options:
//   --mock-url      https://localhost:PORT (certificate from the test CA)
//   --control-url   http://127.0.0.1:PORT: POST /script queues mock scenarios,
//                   GET /state gives {connections, requests, last: {conn, response}},
//                   GET /chunked?bytes=N answers N bytes with chunked framing
//   --ca-der-hex    the test CA, DER, in hex (given to the client as `certificate`)
//   --refused-port  a port nobody listens on
import Timer from "timer";
import TCP from "embedded:io/socket/tcp";
import TLS from "embedded:io/socket/tcp/tls";
import * as psram from "psram";
import { now, option } from "host/platform";
import { derOption } from "./der";
import { assert, test } from "testing";
import { Aborter } from "net/abort";
import { HttpClient } from "net/http";
import { SseParser } from "net/sse";
import { HttpError, type HttpClientOptions, type HttpRequest } from "net/types";
import { psramBuffers } from "util/buffers";
import { HTTP_READ_BUFFER_BYTES } from "budgets";

const MOCK = option("mock-url") ?? "";
const CONTROL = option("control-url") ?? "";
/** A bound for the server noticing a close, not a speed target (a loaded machine). */
const SERVER_CLOSE_WAIT_MS = 30_000;
const REFUSED = Number(option("refused-port"));

const CA_DER = derOption("ca-der-hex");
const buffers = psramBuffers(psram); // as main.ts wires it

function makeClient(more: Partial<HttpClientOptions> = {}): HttpClient {
	return new HttpClient({
		TCP: TCP as unknown as HttpClientOptions["TCP"],
		TLS: TLS as unknown as HttpClientOptions["TLS"],
		Timer,
		now,
		certificate: CA_DER,
		buffers,
		...more,
	});
}

const control = makeClient();
interface MockState { connections: number; requests: number; last: { conn: number; response: { status: number; bytes: number; complete: boolean; aborted: boolean } } | null }
async function state(): Promise<MockState> {
	return JSON.parse((await control.request({ method: "GET", url: `${CONTROL}/state` })).body) as MockState;
}
async function script(...scenarios: object[]): Promise<void> {
	await control.request({ method: "POST", url: `${CONTROL}/script`, body: JSON.stringify(scenarios), headers: { "content-type": "application/json" } });
}

const chat = (stream: boolean, more: Partial<HttpRequest> = {}): HttpRequest => ({
	method: "POST",
	url: `${MOCK}/v1/chat/completions`,
	headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
	body: JSON.stringify({ model: "gpt-mock", stream, messages: [{ role: "user", content: "hi \u4e16\u754c" }] }),
	...more,
});

async function failure(promise: Promise<unknown>): Promise<HttpError> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof HttpError) return error;
		throw new Error(`expected an HttpError, got ${String(error)}`);
	}
	throw new Error("expected the request to fail");
}

const psramUsed = () => psram.stats().psram.used;
const sleep = (ms: number) => new Promise<void>((resolve) => Timer.set(() => resolve(), ms));

test("ten sequential requests to one origin open one TLS connection", async () => {
	const http = makeClient();
	const before = await state();
	const reused: boolean[] = [];
	for (let i = 0; i < 10; i++) {
		const res = await http.request(chat(false));
		assert.equal(res.status, 200);
		assert.match(res.body, /hello from mock/);
		reused.push(res.reusedConnection);
	}
	const after = await state();
	assert.equal(after.connections - before.connections, 1, "TLS handshakes completed on the server");
	assert.deepEqual(reused, [false, true, true, true, true, true, true, true, true, true]);
	http.close();
});

test("a streamed reply parses into SSE events on real chunks", async () => {
	const http = makeClient();
	await script({ type: "text", text: "Bonjour, \u4e16\u754c \ud83d\ude00 streamed", chunk: 2 });
	let text = "";
	let done = false;
	const parser = new SseParser((_event, data) => {
		if (data === "[DONE]") { done = true; return; }
		const delta = (JSON.parse(data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta?.content;
		if (delta) text += delta;
	});
	const start = psramUsed();
	const res = await http.request(chat(true, { onChunk: (bytes) => parser.push(bytes) }));
	parser.end();
	assert.equal(res.body, "");
	assert.equal(text, "Bonjour, \u4e16\u754c \ud83d\ude00 streamed");
	assert.ok(done, "[DONE] seen");
	assert.equal(psramUsed(), start + HTTP_READ_BUFFER_BYTES, "a stream takes no PSRAM (and the client's read buffer)");
	http.close();
	assert.equal(psramUsed(), start, "close() frees the read buffer");
});

test("abort during a slow trickle stream ends with aborted and the server sees the socket closed within 1 s", async () => {
	const http = makeClient();
	await script({ type: "text", text: "x".repeat(4000), fault: "trickle", chunkBytes: 16, intervalMs: 20 });
	const start = psramUsed();
	const aborter = new Aborter();
	let chunks = 0;
	let abortedAt = 0;
	const error = await failure(http.request(chat(true, {
		signal: aborter.signal,
		onChunk: () => {
			if (++chunks === 3) {
				abortedAt = now();
				aborter.abort();
			}
		},
	})));
	assert.equal(error.kind, "aborted");
	assert.equal(error.message, "aborted");
	assert.equal(chunks, 3, "no chunk after the abort");
	for (;;) {
		const last = (await state()).last;
		if (last?.response.aborted) break;
		if (now() - abortedAt > SERVER_CLOSE_WAIT_MS) assert.fail(`the server did not see the connection close within ${SERVER_CLOSE_WAIT_MS} ms`);
		await sleep(5);
	}
	assert.equal(psramUsed(), start + HTTP_READ_BUFFER_BYTES, "PSRAM back to its starting level (and the client's read buffer)");
	http.close();
	assert.equal(psramUsed(), start, "close() frees the read buffer");
});

test("a body over the cap stops at the cap with too_large and frees its buffer", async () => {
	const http = makeClient();
	await script({ type: "text", fault: "huge", bytes: 2 * 1024 * 1024 });
	const start = psramUsed();
	const error = await failure(http.request(chat(false)));
	assert.equal(error.kind, "too_large");
	assert.match(error.message, /exceeds the 1048576-byte cap/);
	assert.equal(psramUsed(), start + HTTP_READ_BUFFER_BYTES, "back to the start and the client's read buffer");
	// A streamed body is the caller's to bound (SseParser bounds each event): maxBodyBytes does not cut it.
	await script({ type: "text", fault: "huge", bytes: 300 * 1024 });
	let streamed = 0;
	await http.request(chat(true, { maxBodyBytes: 64 * 1024, onChunk: (bytes) => { streamed += bytes.length; } }));
	assert.equal(streamed, 300 * 1024);
	assert.equal(psramUsed(), start + HTTP_READ_BUFFER_BYTES, "back to the start and the client's read buffer");
	http.close();
	assert.equal(psramUsed(), start, "close() frees the read buffer");
});

test("a chunked body over the cap stops at the cap; under it, it grows to fit", async () => {
	const http = makeClient();
	const start = psramUsed();
	const error = await failure(http.request({ method: "GET", url: `${CONTROL}/chunked?bytes=${2 * 1024 * 1024}` }));
	assert.equal(error.kind, "too_large");
	assert.match(error.message, /exceeds the 1048576-byte cap/);
	assert.equal(psramUsed(), start + HTTP_READ_BUFFER_BYTES, "back to the start and the client's read buffer");
	const res = await http.request({ method: "GET", url: `${CONTROL}/chunked?bytes=${100 * 1024}` });
	assert.equal(res.body.length, 100 * 1024);
	assert.equal(res.headers["transfer-encoding"], "chunked");
	assert.equal(psramUsed(), start + HTTP_READ_BUFFER_BYTES, "back to the start and the client's read buffer");
	http.close();
	assert.equal(psramUsed(), start, "close() frees the read buffer");
});

test("a 100 KiB body arrives whole in PSRAM and the pool returns to its starting level", async () => {
	const http = makeClient();
	await script({ type: "text", fault: "huge", bytes: 100 * 1024 });
	const start = psramUsed();
	const res = await http.request(chat(false));
	assert.equal(res.body.length, 100 * 1024);
	assert.equal(psramUsed(), start + HTTP_READ_BUFFER_BYTES, "back to the start and the client's read buffer");
	http.close();
	assert.equal(psramUsed(), start, "close() frees the read buffer");
});

test("the server dropping the connection mid-body gives a clear error", async () => {
	const http = makeClient();
	await script({ type: "text", text: "y".repeat(3000), fault: "drop", afterBytes: 500 });
	const start = psramUsed();
	const error = await failure(http.request(chat(false)));
	assert.equal(error.kind, "protocol");
	assert.match(error.message, /closed the connection mid-body after 500 of \d+ bytes/);
	assert.equal(psramUsed(), start + HTTP_READ_BUFFER_BYTES, "back to the start and the client's read buffer");
	http.close();
	assert.equal(psramUsed(), start, "close() frees the read buffer");
});

test("a stalled reply (headers, then nothing) fails with a first-byte timeout", async () => {
	const http = makeClient();
	await script({ type: "text", fault: "stall" });
	const error = await failure(http.request(chat(true, { firstByteTimeoutMs: 300, onChunk: () => {} })));
	assert.equal(error.kind, "timeout");
	assert.equal(error.timeout, "first_byte");
	http.close();
});

test("a 429 carries the API's message and retry-after", async () => {
	const http = makeClient();
	await script({ type: "text", fault: 429, message: "Rate limit reached for gpt-mock", retryAfter: 3 });
	const error = await failure(http.request(chat(false)));
	assert.equal(error.kind, "status");
	assert.equal(error.status, 429);
	assert.equal(error.message, "HTTP 429: Rate limit reached for gpt-mock");
	assert.equal(error.retryAfterMs, 3000);
	// The error response was complete: the connection stays in the pool.
	const next = await http.request(chat(false));
	assert.equal(next.reusedConnection, true);
	http.close();
});

test("without the test CA the certificate is refused with kind tls", async () => {
	const http = makeClient({ certificate: undefined });
	const error = await failure(http.request(chat(false)));
	assert.equal(error.kind, "tls");
	assert.match(error.message, /certificate not trusted/);
	http.close();
});

test("a refused connection fails with kind connect", async () => {
	const http = makeClient();
	const error = await failure(http.request({ method: "GET", url: `http://127.0.0.1:${REFUSED}/` }));
	assert.equal(error.kind, "connect");
	assert.match(error.message, /cannot connect/);
	http.close();
});
