// Node-side peers for the e2e tests and the benchmarks: servers on 127.0.0.1 that
// the lin host talks to, and the plain-HTTP control server through which an XS
// module scripts the mock LLM (tools/mock-llm) and reads back what it saw.
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { startMockLLM } from "./mock-llm/index.mjs";
import { makeTestCA } from "./testca.mjs";

/** Listens on 127.0.0.1, on a port the system picks; resolves the port. */
export function listen(server) {
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve(server.address().port));
	});
}

/** A port nobody listens on: bound once, then released. */
export async function freePort() {
	const server = net.createServer();
	const port = await listen(server);
	await new Promise((resolve) => server.close(resolve));
	return port;
}

/**
 * Tracks the server's connections so that closing it ends them too, and the test
 * or bench finishes promptly; a connection's errors (a peer's reset) are ignored.
 * On a TLS server these are the TLS sockets, and failed handshakes are ignored.
 * Returns close(): a promise that resolves once the server has closed.
 */
export function closer(server) {
	const sockets = new Set();
	const secure = server instanceof tls.Server;
	server.on(secure ? "secureConnection" : "connection", (s) => {
		sockets.add(s);
		s.on("error", () => {});
		s.on("close", () => sockets.delete(s));
	});
	if (secure) server.on("tlsClientError", () => {});
	return () => new Promise((resolve) => {
		for (const s of sockets) s.destroy();
		server.close(() => resolve());
	});
}

/**
 * Answers `bytes` bytes of "c" with no content-length, so Node frames the body as
 * chunked, in 16 KiB writes that wait for drain; stops if the client goes away.
 */
export function respondChunked(res, bytes) {
	let left = bytes;
	res.writeHead(200, { "content-type": "text/plain" });
	const piece = Buffer.alloc(16 * 1024, 0x63);
	const more = () => {
		while (left > 0) {
			const n = Math.min(left, piece.length);
			left -= n;
			if (!res.write(piece.subarray(0, n))) return res.once("drain", more);
		}
		res.end();
	};
	res.on("close", () => { left = 0; });
	more();
}

// What /requests/last/images reports of each image in a request (their base64 is
// too big to send back): {mime, bytes, canonical (re-encodes to the same base64), fnv}.
function imagesOf(json) {
	const images = [];
	JSON.stringify(json ?? null, (key, value) => {
		const data = value?.source?.type === "base64" ? { mime: value.source.media_type, data: value.source.data }
			: typeof value?.image_url?.url === "string" && value.image_url.url.startsWith("data:")
				? { mime: value.image_url.url.slice(5, value.image_url.url.indexOf(";")), data: value.image_url.url.slice(value.image_url.url.indexOf(",") + 1) }
				: null;
		if (data) {
			const bytes = Buffer.from(data.data, "base64");
			let hash = 0x811c9dc5;
			for (const b of bytes) hash = Math.imul(hash ^ b, 0x01000193) >>> 0;
			images.push({ mime: data.mime, bytes: bytes.length, canonical: bytes.toString("base64") === data.data, fnv: hash });
		}
		return value;
	});
	return images;
}

/**
 * The control server for a mock LLM, plain HTTP on 127.0.0.1. Answers JSON:
 *   POST /script               queues the body (a scenario or an array) -> {pending}
 *   GET /state                 {connections, requests, last: {conn, response} | null}
 *   GET /count                 {count}: requests the mock has recorded
 *   GET /requests/last         {path, headers, json, stream} of the last request, or null
 *   GET /requests/last/images  its images, summarised (see imagesOf)
 *   GET /chunked?bytes=N       N bytes with chunked framing (respondChunked)
 * 404 for anything else, 400 when the mock refuses a script.
 * Resolves {port, url, close()}.
 */
export async function startControl(mock) {
	const server = http.createServer(async (req, res) => {
		const chunks = [];
		for await (const chunk of req) chunks.push(chunk);
		const send = (status, value) => {
			const body = JSON.stringify(value);
			res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
			res.end(body);
		};
		const url = new URL(req.url, "http://control");
		try {
			if (req.method === "POST" && url.pathname === "/script") {
				mock.script(JSON.parse(Buffer.concat(chunks).toString("utf8")));
				return send(200, { pending: mock.pending });
			}
			if (url.pathname === "/state") {
				const last = mock.requests.at(-1);
				return send(200, { connections: mock.connections, requests: mock.requests.length, last: last ? { conn: last.conn, response: last.response } : null });
			}
			if (url.pathname === "/count") return send(200, { count: mock.requests.length });
			if (url.pathname === "/requests/last") {
				const r = mock.requests.at(-1);
				return send(200, r ? { path: r.path, headers: r.headers, json: r.json ?? null, stream: r.stream } : null);
			}
			if (url.pathname === "/requests/last/images") return send(200, imagesOf(mock.requests.at(-1)?.json));
			if (url.pathname === "/chunked") return respondChunked(res, Number(url.searchParams.get("bytes")));
			send(404, { error: `no ${req.method} ${req.url}` });
		} catch (error) {
			send(400, { error: error.message });
		}
	});
	const close = closer(server);
	const port = await listen(server);
	return { port, url: `http://127.0.0.1:${port}`, close };
}

/**
 * Runs fn({ca, mock, control}): a test CA made in a fresh temporary directory
 * (named from prefix), the mock LLM serving HTTPS on 127.0.0.1 with its server
 * certificate, and the mock's control server. All are closed and removed after.
 */
export async function withMockOverTLS(prefix, fn) {
	const dir = mkdtempSync(join(tmpdir(), prefix));
	const stops = [];
	try {
		const ca = await makeTestCA(dir);
		const mock = await startMockLLM({ tls: ca.server });
		stops.push(() => mock.close());
		const control = await startControl(mock);
		stops.push(control.close);
		return await fn({ ca, mock, control });
	} finally {
		for (const stop of stops.reverse()) await stop();
		rmSync(dir, { recursive: true, force: true });
	}
}

/**
 * An `openssl s_server` (Debian's openssl) on 127.0.0.1 that sends back each
 * line reversed (-rev): "hello\n" -> "olleh\n". One connection at a time,
 * then the next. {cert, key, chain?: intermediate PEM path, version?: "1.2" |
 * "1.3" (only that one; both by default)}. Resolves {port, close()} once it
 * accepts; rejects when it exits first (its stderr in the message).
 */
export async function startOpenSSLServer({ cert, key, chain, version }) {
	const { spawn } = await import("node:child_process");
	for (let attempt = 0; ; attempt++) {
		const port = await freePort();
		const args = ["s_server", "-accept", `127.0.0.1:${port}`, "-cert", cert, "-key", key, "-rev", "-quiet", "-no_dhe"];
		if (chain) args.push("-cert_chain", chain);
		if (version === "1.2") args.push("-tls1_2");
		if (version === "1.3") args.push("-tls1_3");
		const child = spawn("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
		let stderr = "";
		child.stderr.on("data", (d) => (stderr += d));
		child.stdout.resume();
		const exited = new Promise((resolve) => child.once("exit", resolve));
		const up = await new Promise((resolve) => {
			// Bounded: 100 tries 50 ms apart, or the process ending.
			let tries = 0;
			const poll = () => {
				if (child.exitCode !== null || ++tries > 100) return resolve(false);
				const probe = net.connect(port, "127.0.0.1");
				probe.once("connect", () => { probe.destroy(); resolve(true); });
				probe.once("error", () => setTimeout(poll, 50));
			};
			poll();
		});
		const close = async () => {
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
			await exited;
		};
		if (up) return { port, close };
		await close();
		// A port taken between freePort and s_server: try another, twice.
		if (attempt >= 2 || !/Address already in use|bind/i.test(stderr)) throw new Error(`openssl s_server did not start: ${stderr.trim()}`);
	}
}

/**
 * A TCP proxy on 127.0.0.1 to `port` that passes the client's bytes on but only
 * the first `bytes` of the server's reply, then nothing: a server that stalls
 * mid-handshake. Resolves {port, close()}.
 */
export async function startStallingProxy(port, bytes) {
	const server = net.createServer((client) => {
		const upstream = net.connect(port, "127.0.0.1");
		let passed = 0;
		client.on("data", (d) => upstream.write(d));
		upstream.on("data", (d) => {
			const room = Math.max(0, bytes - passed);
			if (room) client.write(d.subarray(0, room));
			passed += d.length;
		});
		const end = () => { client.destroy(); upstream.destroy(); };
		client.on("error", end).on("close", end);
		upstream.on("error", end).on("close", end);
	});
	const close = closer(server);
	return { port: await listen(server), close };
}
