// The HTTP client end to end: test/peer/http.ts runs inside the lin host on the
// real TCP/TLS sockets and PSRAM buffers, against the mock LLM over TLS (test CA)
// on 127.0.0.1. A plain-HTTP control server lets the peer script the mock, read
// what the server saw (TLS handshakes, whether a response was cut short), and
// fetch chunked bodies of any size.
import { test } from "node:test";
import http from "node:http";
import net from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { makeTestCA } from "../../tools/testca.mjs";
import { VARIANTS, runXsTests } from "./xs.mjs";

function listen(server) {
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve(server.address().port));
	});
}

async function freePort() {
	const server = net.createServer();
	const port = await listen(server);
	await new Promise((resolve) => server.close(resolve));
	return port;
}

function startControl(mock) {
	const sockets = new Set();
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
			if (url.pathname === "/chunked") {
				// No content-length: Node frames the body as chunked, in 16 KiB writes.
				let left = Number(url.searchParams.get("bytes"));
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
				return more();
			}
			send(404, { error: `no ${req.method} ${req.url}` });
		} catch (error) {
			send(400, { error: error.message });
		}
	});
	server.on("connection", (s) => {
		sockets.add(s);
		s.on("close", () => sockets.delete(s));
	});
	return listen(server).then((port) => ({
		url: `http://127.0.0.1:${port}`,
		close: () => new Promise((resolve) => {
			for (const s of sockets) s.destroy();
			server.close(() => resolve());
		}),
	}));
}

for (const variant of VARIANTS) {
	test(`HTTP client against the mock LLM over TLS [${variant}]`, async (t) => {
		const dir = mkdtempSync(join(tmpdir(), "xsclaw-http-"));
		const ca = await makeTestCA(dir);
		const mock = await startMockLLM({ tls: ca.server });
		const control = await startControl(mock);
		try {
			await runXsTests(t, "test/peer/http", {
				variant,
				options: {
					"mock-url": `https://localhost:${mock.port}`,
					"control-url": control.url,
					"ca-der-hex": ca.ca.der.toString("hex"),
					"refused-port": await freePort(),
				},
			});
		} finally {
			await control.close();
			await mock.close();
			rmSync(dir, { recursive: true, force: true });
		}
	});
}
