// The WebSocket client (modules/shared/net/websocket/client.ts) on the lin host's real
// TCP/TLS sockets and PSRAM buffers, against the `ws` server started by
// test/e2e/websocket.test.mjs (routes listed there). Options:
//   --ws-url        ws://127.0.0.1:PORT
//   --wss-url       wss://localhost:PORT (certificate from the test CA)
//   --ca-der-hex    the test CA, DER, in hex
//   --refused-port  a port nobody listens on
import Timer from "timer";
import TCP from "embedded:io/socket/tcp";
import TLS from "embedded:io/socket/tcp/tls";
import * as psram from "psram";
import { option } from "host/platform";
import { derOption } from "./der";
import { assert, test } from "testing";
import { Aborter } from "net/abort";
import type { HttpClientOptions } from "net/types";
import { WebSocketClient } from "net/websocket/client";
import { WebSocketError, type WebSocketClose, type WebSocketOptions } from "net/websocket/types";
import { psramBuffers } from "util/buffers";

const WS = option("ws-url") ?? "";
const WSS = option("wss-url") ?? "";
const REFUSED = Number(option("refused-port"));
const CA_DER = derOption("ca-der-hex");
const buffers = psramBuffers(psram);

/** A client whose messages land in a queue that next() takes from. */
function open(url: string, more: Partial<WebSocketOptions> = {}) {
	const inbox: Array<string | Uint8Array> = [];
	let waiter: (() => void) | undefined;
	const ws = new WebSocketClient({
		url,
		TCP: TCP as unknown as HttpClientOptions["TCP"],
		TLS: TLS as unknown as HttpClientOptions["TLS"],
		Timer,
		buffers,
		certificate: CA_DER,
		onMessage: (data) => {
			inbox.push(typeof data === "string" ? data : data.slice());
			waiter?.();
		},
		...more,
	});
	const next = async (): Promise<string | Uint8Array> => {
		for (let i = 0; i < 100 && !inbox.length; i++) {
			const closed = ws.state === "closed";
			if (closed) throw new Error("closed while waiting for a message");
			await new Promise<void>((resolve) => {
				waiter = resolve;
				Timer.set(() => resolve(), 100);
			});
		}
		const item = inbox.shift();
		if (item === undefined) throw new Error("no message within 10 s");
		return item;
	};
	return { ws, next, inbox };
}

async function errorOf(promise: Promise<unknown>): Promise<WebSocketError> {
	try {
		await promise;
	} catch (error) {
		assert.ok(error instanceof WebSocketError, `a WebSocketError, got ${String(error)}`);
		return error as WebSocketError;
	}
	throw new Error("no error");
}

async function lastClose(base: string): Promise<{ code: number; reason: string }> {
	const { ws, next } = open(`${base}/echo`);
	await ws.opened;
	ws.send("?close");
	const answer = JSON.parse(await next() as string);
	ws.close();
	await ws.closed;
	return answer;
}

for (const [scheme, base] of [["ws", WS], ["wss", WSS]]) {
	test(`${scheme}: text and binary echo, small and large (sent in fragments), and a clean close both ways`, async () => {
		const { ws, next } = open(`${base}/echo`);
		await ws.opened;
		assert.equal(ws.state, "open");
		ws.send("hello \u4e16\u754c \u{1F600}");
		assert.equal(await next(), "hello \u4e16\u754c \u{1F600}");
		ws.send(new Uint8Array([0, 255, 1]));
		assert.deepEqual(Array.from(await next() as Uint8Array), [0, 255, 1]);
		ws.send("");
		assert.equal(await next(), "");
		const big = new Uint8Array(200_000).map((_, i) => (i * 7) & 0xFF);
		ws.send(big);
		const back = await next() as Uint8Array;
		assert.equal(back.length, big.length);
		let same = true;
		for (let i = 0; i < big.length; i++) if (back[i] !== big[i]) { same = false; break; }
		assert.ok(same, "200 kB echoed intact");
		ws.close(1000, "done");
		const closed = await ws.closed;
		assert.deepEqual({ code: closed.code, reason: closed.reason, clean: closed.clean }, { code: 1000, reason: "done", clean: true });
		assert.deepEqual(await lastClose(base), { code: 1000, reason: "done" }, "the server saw our code and reason");
	});
}

test("a message fragmented by the server is reassembled; its ping is answered with a pong", async () => {
	const { ws, next } = open(`${WS}/fragments`);
	await ws.opened;
	assert.equal(await next(), "fragmented \u4e16\u754c");
	assert.equal(await next(), "pong:hb");
	ws.close();
	assert.equal((await ws.closed).clean, true);
});

test("our ping gets the server's pong", async () => {
	let pong = "";
	const { ws } = open(`${WS}/echo`, { onPong: (payload) => { pong = String.fromCharCode(...payload); } });
	await ws.opened;
	ws.ping(new Uint8Array([104, 105]));
	for (let i = 0; i < 100 && !pong; i++) await new Promise<void>((resolve) => { Timer.set(() => resolve(), 20); });
	assert.equal(pong, "hi");
	ws.abort();
	assert.equal((await ws.closed).error?.kind, "aborted");
});

test("the server's close code and reason come through, cleanly", async () => {
	const { ws } = open(`${WS}/close`);
	await ws.opened;
	const closed: WebSocketClose = await ws.closed;
	assert.deepEqual({ code: closed.code, reason: closed.reason, clean: closed.clean }, { code: 4001, reason: "bye", clean: true });
});

test("a message over the cap fails the connection with 1009, and the server hears 1009", async () => {
	const { ws } = open(`${WS}/big?n=70000`, { maxMessageBytes: 65536 });
	await ws.opened;
	const closed = await ws.closed;
	assert.equal(closed.clean, false);
	assert.equal(closed.code, 1009);
	assert.equal(closed.error?.kind, "too_large");
	assert.match(closed.error?.message ?? "", /70000 bytes, over the 65536-byte cap/);
	assert.equal((await lastClose(WS)).code, 1009);
});

test("a bad Sec-WebSocket-Accept is refused with a clear error", async () => {
	const { ws } = open(`${WS}/badaccept`);
	const error = await errorOf(ws.opened);
	assert.equal(error.kind, "handshake");
	assert.match(error.message, /Sec-WebSocket-Accept .* expected /);
	assert.equal((await ws.closed).code, 1006);
});

test("a 401 answer to the upgrade is refused, naming the status", async () => {
	const { ws } = open(`${WS}/denied`);
	const error = await errorOf(ws.opened);
	assert.equal(error.status, 401);
	assert.match(error.message, /HTTP 401 Unauthorized instead of 101/);
});

test("a server that never answers hits the handshake timeout", async () => {
	const { ws } = open(`${WS}/hang`, { handshakeTimeoutMs: 300 });
	const error = await errorOf(ws.opened);
	assert.equal(error.kind, "timeout");
	assert.match(error.message, /more than 300 ms/);
});

test("a server that never answers our close is dropped after the close wait", async () => {
	const { ws } = open(`${WS}/mute`, { closeWaitMs: 300 });
	await ws.opened;
	ws.close(4000, "leaving");
	assert.equal(ws.state, "closing");
	const closed = await ws.closed;
	assert.deepEqual({ code: closed.code, reason: closed.reason, clean: closed.clean }, { code: 4000, reason: "leaving", clean: false });
	assert.equal(closed.error?.kind, "timeout");
	assert.match(closed.error?.message ?? "", /did not answer our close within 300 ms/);
	assert.throws(() => ws.close(1005), "not one an application may send");
});

test("abort closes at once: before the answer, and while open", async () => {
	const aborter = new Aborter();
	const { ws } = open(`${WS}/hang`, { signal: aborter.signal });
	Timer.set(() => aborter.abort(), 50);
	assert.equal((await errorOf(ws.opened)).kind, "aborted");
	assert.equal(ws.state, "closed");
	const second = open(`${WS}/echo`);
	await second.ws.opened;
	second.ws.abort("stop");
	assert.equal(second.ws.state, "closed", "closed synchronously");
	const closed = await second.ws.closed;
	assert.equal(closed.error?.message, "stop");
	assert.throws(() => second.ws.send("x"), "cannot send");
});

test("a refused port and a bad URL are clear errors", async () => {
	const refused = open(`ws://127.0.0.1:${REFUSED}/`);
	assert.equal((await errorOf(refused.ws.opened)).kind, "connect");
	const bad = open("http://127.0.0.1/");
	assert.match((await errorOf(bad.ws.opened)).message, /expected ws:\/\/host\/path/);
});
