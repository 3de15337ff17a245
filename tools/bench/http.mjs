// HTTP client figures (SPEC §11), measured with test/peer/http-bench.ts inside
// the lin host against Node servers on 127.0.0.1 over TLS with a test CA:
//   http.requests_per_handshake      10-request conversations to the mock LLM;
//                                    requests / TLS handshakes the mock completed
//   http.abort_to_close_ms           abort() called in XS (host/platform now()) ->
//                                    the Node server sees the socket end, during a
//                                    slow streamed body. Both clocks are Linux's
//                                    CLOCK_MONOTONIC (XS now(), Node hrtime), so
//                                    the difference is the real cross-process time.
//   http.abort_call_ms               abort() call -> it returned, the socket closed
//                                    (XS side only)
//   http.psram_peak_per_body_byte    peak PSRAM pool bytes / body bytes, ~100 KiB
//                                    body from the mock (Content-Length framing)
//   http.psram_peak_per_body_byte_chunked  the same with chunked framing (buffer
//                                    grows 4 KiB doubling, in place via resize)
import https from "node:https";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLM } from "../mock-llm/index.mjs";
import { makeTestCA } from "../testca.mjs";

export const title = "HTTP client over TLS: keep-alive, abort latency, PSRAM per body byte";

const CONVERSATIONS = 5;
const ABORT_RUNS = 30;
const BODY_RUNS = 5;
const BODY_BYTES = 100 * 1024;
const TICK_MS = 10;

const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

function listen(server) {
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve(server.address().port));
	});
}

function closer(server) {
	const sockets = new Set();
	server.on("connection", (s) => {
		sockets.add(s);
		s.on("error", () => {});
		s.on("close", () => sockets.delete(s));
	});
	return () => new Promise((resolve) => {
		for (const s of sockets) s.destroy();
		server.close(() => resolve());
	});
}

/** /stream?id=N: an endless slow event stream; records when the client's end arrives. /chunked?bytes=N. */
function streamServer(tls, closedAt) {
	return https.createServer(tls, (req, res) => {
		const url = new URL(req.url, "https://bench");
		if (url.pathname === "/chunked") {
			let left = Number(url.searchParams.get("bytes"));
			res.writeHead(200, { "content-type": "text/plain" });
			const piece = Buffer.alloc(16 * 1024, 0x62);
			const more = () => {
				while (left > 0) {
					const n = Math.min(left, piece.length);
					left -= n;
					if (!res.write(piece.subarray(0, n))) return res.once("drain", more);
				}
				res.end();
			};
			return more();
		}
		const id = url.searchParams.get("id");
		const seen = () => { if (!closedAt.has(id)) closedAt.set(id, monotonicMs()); };
		req.socket.once("end", seen);
		req.socket.once("close", seen);
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		const timer = setInterval(() => res.write("data: tick\n\n"), TICK_MS);
		res.on("close", () => clearInterval(timer));
	});
}

function controlServer(mock) {
	return http.createServer(async (req, res) => {
		const chunks = [];
		for await (const chunk of req) chunks.push(chunk);
		const send = (value) => {
			const body = JSON.stringify(value);
			res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
			res.end(body);
		};
		if (req.url === "/script") {
			mock.script(JSON.parse(Buffer.concat(chunks).toString("utf8")));
			return send({ pending: mock.pending });
		}
		send({ connections: mock.connections });
	});
}

export async function run({ runXs }) {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-bench-ca-"));
	const stops = [];
	try {
		const ca = await makeTestCA(dir);
		const mock = await startMockLLM({ tls: ca.server });
		stops.push(() => mock.close());
		const closedAt = new Map();
		const stream = streamServer(ca.server, closedAt);
		stops.push(closer(stream));
		const streamPort = await listen(stream);
		const control = controlServer(mock);
		stops.push(closer(control));
		const controlPort = await listen(control);

		const lines = await runXs("test/peer/http-bench", {
			"mock-url": `https://localhost:${mock.port}`,
			"stream-url": `https://localhost:${streamPort}`,
			"control-url": `http://127.0.0.1:${controlPort}`,
			"ca-der-hex": ca.ca.der.toString("hex"),
			conversations: CONVERSATIONS,
			"abort-runs": ABORT_RUNS,
			"body-runs": BODY_RUNS,
			"body-bytes": BODY_BYTES,
		});
		const values = (figure) => lines.filter((l) => l.figure === figure).map((l) => l.value);
		const aborts = lines.filter((l) => l.figure === "abort");
		const abortToClose = aborts.map((l) => {
			const at = closedAt.get(String(l.id));
			if (at === undefined) throw new Error(`bench http: the server never saw run ${l.id} close`);
			return at - l.abortAt;
		});
		return [
			{ name: "http.requests_per_handshake", unit: "requests", values: values("requests_per_handshake"), p99: false },
			{ name: "http.abort_to_close_ms", unit: "ms", values: abortToClose },
			{ name: "http.abort_call_ms", unit: "ms", values: aborts.map((l) => l.callMs) },
			{ name: "http.psram_peak_per_body_byte", unit: "ratio", values: values("psram_sized"), p99: false },
			{ name: "http.psram_peak_per_body_byte_chunked", unit: "ratio", values: values("psram_chunked"), p99: false },
		];
	} finally {
		for (const stop of stops.reverse()) await stop();
		rmSync(dir, { recursive: true, force: true });
	}
}
