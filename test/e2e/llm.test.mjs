// The LLM runtime end to end: test/peer/llm.ts runs inside the lin host, over the
// real HTTP client and TLS socket, against the mock LLM server (tools/mock-llm)
// on 127.0.0.1 with a certificate from the test CA (given to the host as --ca).
// A small plain-HTTP control server lets the peer queue mock scenarios and read
// back what the mock recorded, so each XS test checks its own requests.
// The firmware itself is driven through its console for `llm status` / `llm test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { makeTestCA } from "../../tools/testca.mjs";
import { withMockOverTLS } from "../../tools/peers.mjs";
import { APP_MAP } from "../../tools/build.mjs";
import { TLS_VARIANTS, VARIANTS, assertClean, runHost, runXsTests } from "./xs.mjs";

for (const variant of TLS_VARIANTS) {
	test(`LLM runtime against the mock LLM over TLS [${variant}]`, async (t) => {
		await withMockOverTLS("xsclaw-llm-ca-", async ({ ca, mock, control }) => {
			await runXsTests(t, "test/peer/llm", {
				variant,
				options: {
					"mock-url": `https://localhost:${mock.port}`,
					"control-url": control.url,
					ca: ca.paths.ca,
				},
			});
		});
	});
}

for (const variant of VARIANTS) {
	test(`the firmware console: llm status and llm test, hot config, usage kept across a restart [${variant}]`, async () => {
		const dir = mkdtempSync(join(tmpdir(), "xsclaw-llm-fw-"));
		const data = join(dir, "data");
		const ca = await makeTestCA(join(dir, "ca"));
		const mock = await startMockLLM({ tls: ca.server, host: "127.0.0.1" });
		const key = "sk-e2e-secret-key-0123456789";
		const firmware = (input) => runHost(["--modules", APP_MAP, "--data", data, "--ca", ca.paths.ca], { variant, input });
		try {
			const unconfigured = await firmware("llm test\n");
			assertClean(unconfigured);
			assert.match(unconfigured.stdout, /the LLM is not configured: use `config set llm\.api_key \.\.\.` and `config set llm\.model \.\.\.`/);
			assert.equal(mock.requests.length, 0, "nothing is sent without a key");

			mock.script({ type: "text", text: "hello from openai" }, { type: "text", text: "hello from anthropic" });
			const run = await firmware([
				"config set llm.provider custom",
				`config set llm.base_url https://localhost:${mock.port}/v1`,
				`config set llm.api_key ${key}`,
				"config set llm.model gpt-mock",
				"llm status",
				"llm test",
				"config set llm.provider anthropic",
				"config set llm.model claude-mock",
				"llm test",
				"",
			].join("\n"));
			assertClean(run);
			const out = run.stdout;
			assert.match(out, /provider: +custom \(openai_compatible\)/);
			assert.match(out, new RegExp(`base URL: +https://localhost:${mock.port}/v1`));
			assert.match(out, /API key: +\*\*\*\*6789/);
			assert.match(out, /ok in \d+ ms \(gpt-mock, 1 attempt, \d+ tokens in, \d+ out\)\nreply: hello from openai/);
			assert.match(out, /ok in \d+ ms \(claude-mock, 1 attempt, \d+ tokens in, \d+ out\)\nreply: hello from anthropic/);
			assert.ok(!out.includes(key) || out.split(key).length === 2, "the key appears only where it was typed");
			assert.ok(!run.stderr.includes(key), "the key is never logged");
			assert.deepEqual(mock.requests.map((r) => r.path), ["/v1/chat/completions", "/v1/messages"], "the new provider without a restart");
			assert.equal(mock.requests[0].headers.authorization, `Bearer ${key}`);
			assert.equal(mock.requests[1].headers["x-api-key"], key);
			assert.equal(mock.requests[1].json.max_tokens, 64);

			const again = await firmware("llm status\n");
			assertClean(again);
			assert.match(again.stdout, /calls: +2\/100 this hour, 2\/1000 today/, "usage survives a restart");
			assert.match(again.stdout, /model: +claude-mock/);
		} finally {
			await mock.close();
			rmSync(dir, { recursive: true, force: true });
		}
	});
}
