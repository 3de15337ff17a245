// The LLM runtime end to end: test/peer/llm.ts runs inside the lin host, over the
// real HTTP client and TLS socket, against the mock LLM server (tools/mock-llm)
// on 127.0.0.1 with a certificate from the test CA (given to the host as --ca).
// A small plain-HTTP control server lets the peer queue mock scenarios and read
// back what the mock recorded, so each XS test checks its own requests.
import { test } from "node:test";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { makeTestCA } from "../../tools/testca.mjs";
import { VARIANTS, runXsTests } from "./xs.mjs";

function startControl(mock) {
	const server = http.createServer(async (req, res) => {
		const chunks = [];
		for await (const chunk of req) chunks.push(chunk);
		const send = (status, value) => {
			const body = JSON.stringify(value);
			res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
			res.end(body);
		};
		try {
			if (req.method === "POST" && req.url === "/script") {
				mock.script(JSON.parse(Buffer.concat(chunks).toString("utf8")));
				return send(200, { pending: mock.pending });
			}
			if (req.url === "/requests/last") {
				const r = mock.requests.at(-1);
				return send(200, r ? { path: r.path, headers: r.headers, json: r.json ?? null, stream: r.stream } : null);
			}
			if (req.url === "/count") return send(200, { count: mock.requests.length });
			send(404, { error: `no ${req.method} ${req.url}` });
		} catch (error) {
			send(400, { error: error.message });
		}
	});
	return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
		url: `http://127.0.0.1:${server.address().port}`,
		close: () => new Promise((done) => { server.closeAllConnections(); server.close(done); }),
	})));
}

for (const variant of VARIANTS) {
	test(`LLM runtime against the mock LLM over TLS [${variant}]`, async (t) => {
		const dir = mkdtempSync(join(tmpdir(), "xsclaw-llm-ca-"));
		const ca = await makeTestCA(dir);
		const mock = await startMockLLM({ tls: ca.server, host: "127.0.0.1" });
		const control = await startControl(mock);
		try {
			await runXsTests(t, "test/peer/llm", {
				variant,
				timeoutMs: 240_000,
				options: {
					"mock-url": `https://localhost:${mock.port}`,
					"control-url": control.url,
					ca: ca.paths.ca,
				},
			});
		} finally {
			await control.close();
			await mock.close();
			rmSync(dir, { recursive: true, force: true });
		}
	});
}
