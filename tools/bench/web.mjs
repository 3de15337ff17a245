// Web console figures (issue 30), on loopback: the firmware (release host)
// started with --http 0, logged in with a code from `web login`.
//   web.page_ms                    the status page as a browser loads it once its
//                                  style and script are cached: GET / (the shell),
//                                  GET /api/session, GET /api/status (the `status`
//                                  figures, the agent machine's asked over its
//                                  port), one after another over one kept-alive
//                                  connection
//   web.heap_per_connection_bytes  the main machine's XS heap (chunks and slots,
//                                  after `status gc`) per connection kept alive
//                                  after a request, CONNECTIONS of them at once
//                                  (lin's 32-byte slots; a board's are 16)
import { request, Agent } from "node:http";
import { connect } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APP_MAP } from "../build.mjs";
import { startFirmware } from "../../test/e2e/firmware.mjs";

export const title = "web console: the status page over keep-alive, heap per connection";

const PAGE_RUNS = 30; // 91 requests: one connection serves WEB_REQUESTS_PER_CONNECTION (100)
const HEAP_ROUNDS = 5;
const CONNECTIONS = 12; // under WEB_CONNECTIONS_MAX (16): none is closed for a newer one
const REQUEST_TIMEOUT_MS = 10_000;
const SERVING = /web: serving http:\/\/127\.0\.0\.1:(\d+)\//;
const HEAP = /^heap: chunks ([\d.]+) KiB of [\d.]+ KiB \(peak [\d.]+ KiB\), slots ([\d.]+) KiB of/m;

/** One GET over agent; resolves when its body is read, rejecting unless it is a 200 on a reused socket (after the first). */
function get(agent, port, path, headers, reuse) {
	return new Promise((resolve, reject) => {
		const req = request({ host: "127.0.0.1", port, path, agent, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
			res.resume();
			// The agent takes the socket back after "end": resolve after it did.
			res.on("end", () => setImmediate(() => (res.statusCode === 200 ? resolve() : reject(new Error(`GET ${path}: ${res.statusCode}`)))));
		});
		req.on("socket", () => {
			if (reuse && !req.reusedSocket) reject(new Error(`GET ${path} opened a new connection: not kept alive`));
		});
		req.on("timeout", () => req.destroy(new Error(`GET ${path}: no answer`)));
		req.on("error", reject);
		req.end();
	});
}

/** A raw connection that made one request and stays open (kept alive); resolves with its socket once the answer is read. */
function keptConnection(port, cookie) {
	return new Promise((resolve, reject) => {
		const socket = connect(port, "127.0.0.1");
		let data = "";
		const timer = setTimeout(() => reject(new Error("a kept connection got no answer")), REQUEST_TIMEOUT_MS);
		socket.on("connect", () => socket.write(`GET /api/session HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\n\r\n`));
		socket.on("data", (d) => {
			data += d;
			const end = data.indexOf("\r\n\r\n");
			const length = /content-length: (\d+)/i.exec(data)?.[1];
			if (end >= 0 && length !== undefined && data.length >= end + 4 + Number(length)) {
				clearTimeout(timer);
				resolve(socket);
			}
		});
		socket.on("error", reject);
	});
}

async function heapBytes(fw) {
	const out = await fw.run("status gc", /^agent heap: /m);
	const m = HEAP.exec(out);
	if (!m) throw new Error(`no heap line in status gc: ${out}`);
	return Math.round((Number(m[1]) + Number(m[2])) * 1024);
}

export async function run({ variant = "release" } = {}) {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-bench-web-"));
	const fw = startFirmware(["--modules", APP_MAP, "--data", dir, "--http", "0"], variant);
	const agent = new Agent({ keepAlive: true, maxSockets: 1 });
	try {
		await fw.until(SERVING);
		const port = Number(SERVING.exec(fw.printed())[1]);
		const from = fw.stdout.length;
		fw.send("web login");
		await fw.until(/web: login code (\w+)/, { from });
		const code = /web: login code (\w+)/.exec(fw.printed(from))[1];
		const origin = `http://127.0.0.1:${port}`;
		const login = await fetch(`${origin}/api/login`, { method: "POST", headers: { "Content-Type": "application/json", Origin: origin }, body: JSON.stringify({ code }) });
		if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
		const cookie = /^(xsclaw_session=\w+)/.exec(login.headers.get("set-cookie"))[1];

		const page = [];
		await get(agent, port, "/", {}, false);
		for (let i = 0; i < PAGE_RUNS; i++) {
			const start = process.hrtime.bigint();
			for (const path of ["/", "/api/session", "/api/status"]) await get(agent, port, path, { Cookie: cookie }, true);
			page.push(Number(process.hrtime.bigint() - start) / 1e6);
		}
		agent.destroy();

		const perConnection = [];
		for (let round = 0; round < HEAP_ROUNDS; round++) {
			const before = await heapBytes(fw);
			const sockets = [];
			for (let i = 0; i < CONNECTIONS; i++) sockets.push(await keptConnection(port, cookie));
			const during = await heapBytes(fw);
			perConnection.push((during - before) / CONNECTIONS);
			for (const socket of sockets) socket.destroy();
			// The server drops them as it reads their ends; `web status` says when none is left.
			for (let wait = 0; wait < 50; wait++) {
				if (/: 0 connections/.test(await fw.run("web status", /^web: /m))) break;
				await new Promise((r) => setTimeout(r, 100));
			}
		}
		return [
			{ name: "web.page_ms", unit: "ms", values: page },
			{ name: "web.heap_per_connection_bytes", unit: "bytes", values: perConnection, p99: false },
		];
	} finally {
		agent.destroy();
		await fw.end();
		rmSync(dir, { recursive: true, force: true });
	}
}
