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
import { closer, listen, respondChunked, withMockOverTLS } from "../peers.mjs";

export const title = "HTTP client over TLS: keep-alive, abort latency, PSRAM per body byte";

const CONVERSATIONS = 5;
const ABORT_RUNS = 30;
const BODY_RUNS = 5;
const BODY_BYTES = 100 * 1024;
const TICK_MS = 10;

const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

/** /stream?id=N: an endless slow event stream; records when the client's end arrives. /chunked?bytes=N. */
function streamServer(tls, closedAt) {
	return https.createServer(tls, (req, res) => {
		const url = new URL(req.url, "https://bench");
		if (url.pathname === "/chunked") return respondChunked(res, Number(url.searchParams.get("bytes")));
		const id = url.searchParams.get("id");
		const seen = () => { if (!closedAt.has(id)) closedAt.set(id, monotonicMs()); };
		req.socket.once("end", seen);
		req.socket.once("close", seen);
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		const timer = setInterval(() => res.write("data: tick\n\n"), TICK_MS);
		res.on("close", () => clearInterval(timer));
	});
}

export function run({ runXs }) {
	return withMockOverTLS("xsclaw-bench-ca-", async ({ ca, mock, control }) => {
		const closedAt = new Map();
		const stream = streamServer(ca.server, closedAt);
		const stopStream = closer(stream);
		try {
			const streamPort = await listen(stream);
			const lines = await runXs("test/peer/http-bench", {
				"mock-url": `https://localhost:${mock.port}`,
				"stream-url": `https://localhost:${streamPort}`,
				"control-url": control.url,
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
			await stopStream();
		}
	});
}
