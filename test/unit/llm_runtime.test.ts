// The LLM runtime: retries on an injected clock, call and token limits persisted
// in a key-value store, hot config, the not-configured answer, profile checks,
// images, secrets, and the console commands.
import { assert, test } from "testing";
import { IMAGE_MAX_BYTES, LLM_RETRY_BUDGET_MS, LLM_USAGE_RESERVE_CALLS, LLM_USAGE_SAVE_MS } from "budgets";
import { CommandTable } from "console/table";
import { Aborter } from "net/abort";
import { llmCommands } from "llm/console";
import { USAGE_KEY } from "llm/limits";
import { Llm, type LlmOptions } from "llm/runtime";
import { LlmError, type ChatRequest, type ToolDefinition } from "llm/types";
import { encode } from "util/base64";
import {
	ANTHROPIC, FakeClock, FakeTransport, MemoryStore, OPENAI, config, fail, hang, json, response, status, stream, type Reply,
} from "./llm_fakes";

const HI: ChatRequest = { messages: [{ role: "user", content: "hi" }] };
const TOOL: ToolDefinition = { type: "function", function: { name: "t", parameters: { type: "object", properties: {} } } };

function ok(text = "fine", usage = { prompt_tokens: 10, completion_tokens: 5 }): Reply {
	return json({ model: "gpt-test", choices: [{ message: { role: "assistant", content: text }, finish_reason: "stop" }], usage });
}

function setup(values: Record<string, string> = OPENAI, more: Partial<LlmOptions> = {}) {
	const transport = new FakeTransport();
	const clock = new FakeClock();
	const cfg = config({ "llm.stream": "false", ...values });
	const store = new MemoryStore();
	const llm = new Llm({ config: cfg, transport, clock, usageStore: store, ...more });
	return { llm, transport, clock, cfg, store };
}

// ---- retries ----

test("429 with retry-after is honoured, then the retry succeeds", async () => {
	const { llm, transport, clock } = setup();
	transport.script(status(429, "Rate limit reached", 3000), ok("after wait"));
	const reply = await llm.chat(HI);
	assert.equal(reply.message.content, "after wait");
	assert.equal(reply.attempts, 2);
	assert.deepEqual(clock.sleeps, [3000]);
	llm.close();
});

test("5xx backs off 2 s, 4 s, 8 s, then gives up with a sentence naming the attempts", async () => {
	const { llm, transport, clock } = setup();
	transport.script(status(500), status(502), status(503), status(500, "still broken"));
	const error = await assert.rejects(llm.chat(HI), "HTTP 500: still broken; gave up after 4 attempts");
	assert.equal((error as LlmError).kind, "http");
	assert.deepEqual(clock.sleeps, [2000, 4000, 8000]);
	assert.equal(transport.requests.length, 4);
	llm.close();
});

test("retries stop at the 45 s budget, and a retry-after beyond it fails at once", async () => {
	const { llm, transport, clock } = setup();
	transport.script(status(429, "slow down", 30_000), status(429, "slow down", 30_000), ok());
	await assert.rejects(llm.chat(HI), `retry budget of ${LLM_RETRY_BUDGET_MS / 1000} s is spent`);
	assert.deepEqual(clock.sleeps, [30_000]);
	assert.equal(transport.requests.length, 2);

	transport.replies = [status(429, "come back later", 120_000), ok()];
	transport.requests = [];
	clock.sleeps = [];
	await assert.rejects(llm.chat(HI), "asked to wait 120 s");
	assert.deepEqual(clock.sleeps, []);
	assert.equal(transport.requests.length, 1);
	llm.close();
});

test("400 and other 4xx are not retried", async () => {
	const { llm, transport, clock } = setup();
	transport.script(status(400, "messages: bad"), ok());
	const error = await assert.rejects(llm.chat(HI), "HTTP 400: messages: bad");
	assert.ok(!(error as LlmError).retryable);
	assert.equal(transport.requests.length, 1);
	assert.deepEqual(clock.sleeps, []);
	transport.script(status(401, "bad key"));
	transport.replies = [status(401, "bad key"), ok()];
	await assert.rejects(llm.chat(HI), "HTTP 401");
	assert.equal(transport.requests.length, 2);
	llm.close();
});

test("connect errors and connect timeouts are retried; TLS and first-byte timeouts are not", async () => {
	const { llm, transport, clock } = setup();
	transport.script(fail("connect", "connection refused"), fail("dns", "no such host"), fail("timeout", "connect timeout after 15000 ms", { timeout: "connect" }), ok("up"));
	assert.equal((await llm.chat(HI)).message.content, "up");
	assert.deepEqual(clock.sleeps, [2000, 4000, 8000]);
	transport.replies = [fail("tls", "certificate verify failed")];
	const tls = await assert.rejects(llm.chat(HI), "the connection to the LLM at https://api.openai.com failed: certificate verify failed");
	assert.equal((tls as LlmError).kind, "network");
	transport.replies = [fail("timeout", "first byte timeout after 60000 ms", { timeout: "first_byte" })];
	await assert.rejects(llm.chat(HI), "did not answer in time");
	assert.equal(clock.sleeps.length, 3);
	llm.close();
});

test("errors a person can fix say which setting to check", async () => {
	const { llm, transport } = setup();
	transport.script(status(401, "invalid x-api-key"));
	await assert.rejects(llm.chat(HI), "HTTP 401: invalid x-api-key (check the key: config set llm.api_key ...)");
	transport.script(status(404, "no such model"));
	await assert.rejects(llm.chat(HI), "HTTP 404: no such model (check llm.base_url and llm.model)");
	transport.script(status(400, "messages: bad"));
	const plain = await assert.rejects(llm.chat(HI), "HTTP 400");
	assert.equal(plain.message, "HTTP 400: messages: bad", "a status with no setting to blame is left as the provider said it");
	transport.script(...Array.from({ length: 4 }, () => fail("connect", "cannot connect to api.openai.com:443: connection refused")));
	await assert.rejects(llm.chat(HI), "connection refused; check llm.base_url and the network; gave up after 4 attempts");
	transport.script(...Array.from({ length: 4 }, () => fail("dns", "cannot resolve api.openai.com: check the host name and the network")));
	const dns = await assert.rejects(llm.chat(HI), "check the host name and the network; gave up");
	assert.ok(!dns.message.includes("llm.base_url and the network"), "one hint is enough");
	transport.script(() => response("<html>not an API</html>"));
	await assert.rejects(llm.chat(HI), "not JSON (23 bytes starting \"<html>not an API</html>\"): check that llm.base_url is the API's address");
	llm.close();
});

test("a cancel during the backoff wait ends the call at once, with no further attempt", async () => {
	const { llm, transport, clock } = setup();
	clock.hangSleeps = true;
	transport.script(status(503), ok());
	const aborter = new Aborter();
	const call = llm.chat(HI, { signal: aborter.signal });
	while (!clock.sleeps.length) await Promise.resolve();
	aborter.abort("user");
	const error = await assert.rejects(call, "cancelled");
	assert.equal((error as LlmError).kind, "aborted");
	assert.equal(transport.requests.length, 1);
	llm.close();
});

test("a cancel during the HTTP request aborts it and is not retried", async () => {
	const { llm, transport } = setup();
	transport.script(hang(), ok());
	const aborter = new Aborter();
	const call = llm.chat(HI, { signal: aborter.signal });
	while (!transport.requests.length) await Promise.resolve();
	aborter.abort();
	await assert.rejects(call, "the LLM request was cancelled");
	assert.equal(transport.requests.length, 1);
	assert.equal(transport.replies.length, 1, "the second reply was never asked for");
	llm.close();
});

// ---- limits ----

test("the hourly call limit refuses with a sentence, sends nothing, and survives a reboot", async () => {
	const { llm, transport, clock, cfg, store } = setup({ ...OPENAI, "llm.calls_per_hour": "2" });
	transport.script(ok(), ok(), ok());
	await llm.chat(HI);
	await llm.chat(HI);
	const error = await assert.rejects(llm.chat(HI), "the LLM call limit is reached: 2 of 2 calls this hour (llm.calls_per_hour); nothing was sent");
	assert.equal((error as LlmError).kind, "limit");
	assert.equal(transport.requests.length, 2);
	llm.close();

	// A new runtime on the same store: still refused.
	const again = new Llm({ config: cfg, transport, clock, usageStore: store });
	await assert.rejects(again.chat(HI), "call limit is reached");
	assert.equal(again.status().usage.callsThisHour, 2);
	clock.wall += 60 * 60 * 1000;
	assert.equal((await again.chat(HI)).message.content, "fine", "the next hour opens");
	assert.equal(again.status().usage.callsToday, 3);
	again.close();
});

test("the daily call limit and the daily token budget refuse before sending", async () => {
	const { llm, transport, clock, cfg } = setup({ ...OPENAI, "llm.calls_per_day": "1" });
	transport.script(ok(), ok());
	await llm.chat(HI);
	await assert.rejects(llm.chat(HI), "1 of 1 calls today (llm.calls_per_day)");
	cfg.set("llm.calls_per_day", "100");
	cfg.set("llm.tokens_per_day", "20");
	await llm.chat(HI); // 15 + 15 tokens now
	await assert.rejects(llm.chat(HI), "the daily LLM token budget is spent: 30 of 20 tokens today (llm.tokens_per_day)");
	assert.equal(transport.requests.length, 2);
	clock.wall += 24 * 60 * 60 * 1000;
	transport.script(ok());
	await llm.chat(HI);
	assert.equal(llm.status().usage.tokensToday, 15, "a new day starts from zero");
	llm.close();
});

test("retries of one call count as one call; an unreadable usage record starts from zero", async () => {
	const { llm, transport, store } = setup();
	transport.script(status(500), ok());
	await llm.chat(HI);
	assert.equal(llm.status().usage.callsToday, 1);
	llm.close();
	store.map.set(USAGE_KEY, ArrayBuffer.fromString("{not json"));
	const fresh = new Llm({ config: config(OPENAI), transport, clock: new FakeClock(), usageStore: store });
	assert.equal(fresh.status().usage.callsToday, 0);
	fresh.close();
});

test("usage is written once per block of calls, stored ahead, and close stores the exact counts", async () => {
	const { llm, transport, clock, cfg, store } = setup();
	const calls = LLM_USAGE_RESERVE_CALLS + 1;
	transport.script(...Array.from({ length: calls }, () => ok()));
	const stored = () => JSON.parse(String.fromArrayBuffer(store.map.get(USAGE_KEY)!));
	await llm.chat(HI);
	assert.equal(store.writes, 1, "the first call was stored before it was sent");
	assert.deepEqual([stored().hourCalls, stored().dayCalls], [LLM_USAGE_RESERVE_CALLS, LLM_USAGE_RESERVE_CALLS], "with the rest of its block ahead");
	assert.equal(stored().dayTokens, 0, "its tokens wait");
	assert.equal(llm.status().usage.callsToday, 1, "the exact count in memory");
	assert.equal(llm.status().usage.tokensToday, 15, "tokens counted at once all the same");
	for (let i = 1; i < LLM_USAGE_RESERVE_CALLS; i++) await llm.chat(HI);
	assert.equal(store.writes, 1, `${LLM_USAGE_RESERVE_CALLS} calls, one write`);
	await llm.chat(HI);
	assert.equal(store.writes, 2, "the next block");
	assert.deepEqual([stored().dayCalls, stored().dayTokens], [2 * LLM_USAGE_RESERVE_CALLS, 15 * LLM_USAGE_RESERVE_CALLS], "the tokens went with the next block");
	llm.close();
	assert.equal(store.writes, 3);
	assert.deepEqual([stored().dayCalls, stored().dayTokens], [calls, 15 * calls], "close stores the exact counts");
	const again = new Llm({ config: cfg, transport, clock, usageStore: store });
	assert.deepEqual([again.status().usage.callsToday, again.status().usage.tokensToday], [calls, 15 * calls], "a restart reads them back");
	again.close();
	assert.equal(store.writes, 3, "nothing waited: close writes nothing");
});

test("a crash never under-counts calls: the block stored ahead counts, and the limit holds across unclean restarts", async () => {
	const { llm, transport, clock, cfg, store } = setup({ ...OPENAI, "llm.calls_per_hour": "20" });
	transport.script(ok(), ok(), ok());
	for (let i = 0; i < 3; i++) await llm.chat(HI);
	// No close(): a power loss. The next boot counts the whole block.
	const after = new Llm({ config: cfg, transport, clock, usageStore: store });
	const counted = after.status().usage.callsThisHour;
	assert.ok(counted >= 3 && counted <= 3 + LLM_USAGE_RESERVE_CALLS - 1, `${counted} calls counted for 3 made`);
	// A crash loop: each boot sends one call and dies. It still stops at the limit.
	let sent = transport.requests.length;
	for (let boot = 0; boot < 40; boot++) {
		const machine = new Llm({ config: cfg, transport, clock, usageStore: store });
		transport.script(ok());
		try {
			await machine.chat(HI);
		} catch (error) {
			assert.equal((error as LlmError).kind, "limit");
		}
	}
	sent = transport.requests.length - sent;
	assert.ok(sent + 3 <= 20, `${sent + 3} calls sent in the hour, the limit is 20`);
	assert.match(String.fromArrayBuffer(store.map.get(USAGE_KEY)!), /"hourCalls":20,/, "the block stops at the limit");
});

test("tokens wait at most LLM_USAGE_SAVE_MS for a write", async () => {
	const { llm, transport, clock, store } = setup();
	transport.script(ok(), ok());
	const stored = () => JSON.parse(String.fromArrayBuffer(store.map.get(USAGE_KEY)!));
	await llm.chat(HI);
	assert.equal(store.writes, 1);
	clock.wall += LLM_USAGE_SAVE_MS;
	await llm.chat(HI);
	assert.equal(store.writes, 2, "the second call's end found the last write a minute old");
	assert.deepEqual([stored().dayCalls, stored().dayTokens], [LLM_USAGE_RESERVE_CALLS, 30], "the tokens, and the same block still ahead");
	llm.close();
});

// ---- configuration ----

test("without a key or model a request gets the guidance answer and nothing is sent", async () => {
	const { llm, transport, cfg } = setup({});
	const events: string[] = [];
	const error = await assert.rejects(llm.chat(HI, { onEvent: (e) => events.push(e.type) }), /^the LLM is not configured: use `config set llm\.api_key \.\.\.` and `config set llm\.model \.\.\.`/);
	assert.equal((error as LlmError).kind, "config");
	assert.deepEqual(events, [], "no answer is made up");
	assert.match(llm.notReady() ?? "", /^the LLM is not configured: use `config set llm\.api_key/);
	cfg.set("llm.api_key", "sk-only-a-key-1234");
	await assert.rejects(llm.chat(HI), /^the LLM is not configured: use `config set llm\.model \.\.\.` \(e\.g\. gpt-4o-mini\)$/);
	cfg.set("llm.model", "gpt-4o-mini");
	assert.equal(llm.notReady(), undefined);
	assert.equal(transport.requests.length, 0);
	assert.equal(llm.status().usage.callsToday, 0, "guidance is not a call");
	llm.close();
});

test("config changes take effect on the next request without a restart", async () => {
	const { llm, transport, cfg } = setup();
	transport.script(ok(), ok(), json({ id: "m", type: "message", role: "assistant", model: "claude-x", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn", usage: {} }));
	await llm.chat(HI);
	assert.equal(transport.requests[0].body.model, "gpt-test");
	cfg.set("llm.model", "gpt-other");
	await llm.chat(HI);
	assert.equal(transport.requests[1].body.model, "gpt-other");
	cfg.set("llm.provider", "anthropic");
	cfg.set("llm.model", "claude-x");
	const reply = await llm.chat(HI);
	assert.equal(transport.requests[2].request.url, "https://api.anthropic.com/v1/messages");
	assert.equal(reply.message.raw?.protocol, "anthropic");
	assert.equal(llm.status().model, "claude-x");
	llm.close();
});

test("a config value that is set but wrong is a config error that says how to fix it", async () => {
	const { llm } = setup({ ...OPENAI, "llm.stream": "maybe" });
	const error = await assert.rejects(llm.chat(HI), "llm.stream must be true or false");
	assert.equal((error as LlmError).kind, "config");
	const custom = setup({ ...OPENAI, "llm.provider": "custom" });
	await assert.rejects(custom.llm.chat(HI), "llm.base_url is needed");
	assert.match(custom.llm.status().problem ?? "", /llm\.base_url is needed/);
	llm.close();
	custom.llm.close();
});

test("Ollama needs no key: no auth header, plain http to localhost", async () => {
	const { llm, transport } = setup({ "llm.provider": "ollama", "llm.model": "llama3.2" });
	transport.script(ok());
	await llm.chat(HI);
	const request = transport.requests[0].request;
	assert.equal(request.url, "http://localhost:11434/v1/chat/completions");
	assert.equal(request.headers?.authorization, undefined);
	assert.equal(request.headers?.["x-api-key"], undefined);
	llm.close();
});

test("llm.auth api-key sends x-api-key to an OpenAI-compatible server at any base URL", async () => {
	const { llm, transport } = setup({ ...OPENAI, "llm.provider": "custom", "llm.base_url": "http://127.0.0.1:9/api/", "llm.auth": "api-key" });
	transport.script(ok());
	await llm.chat(HI);
	const request = transport.requests[0].request;
	assert.equal(request.url, "http://127.0.0.1:9/api/chat/completions");
	assert.equal(request.headers?.["x-api-key"], OPENAI["llm.api_key"]);
	llm.close();
});

test("supports_tools false refuses a request with tools before sending or counting it", async () => {
	const { llm, transport } = setup({ ...OPENAI, "llm.supports_tools": "false" });
	const error = await assert.rejects(llm.chat({ ...HI, tools: [TOOL] }), "does not take tools (llm.supports_tools is false); nothing was sent");
	assert.equal((error as LlmError).kind, "unsupported");
	assert.equal(transport.requests.length, 0);
	assert.equal(llm.status().usage.callsToday, 0);
	llm.close();
});

test("images are refused without vision, and local ones for a remote-URL-only model", async () => {
	const image: ChatRequest = { messages: [{ role: "user", content: [{ type: "text", text: "what?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }] };
	const blind = setup({ ...OPENAI, "llm.provider": "deepseek" });
	await assert.rejects(blind.llm.chat(image), "cannot see images");
	const remote = setup({ ...OPENAI, "llm.image_remote_url_only": "true" });
	await assert.rejects(remote.llm.chat(image), "by http(s) URL only");
	assert.equal(blind.transport.requests.length + remote.transport.requests.length, 0);
	blind.llm.close();
	remote.llm.close();
});

// ---- media ----

const PNG = new Uint8Array([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4, 5]);

test("infer_media sends a local image as a base64 data URL (OpenAI) or base64 source (Anthropic)", async () => {
	const openai = setup();
	openai.transport.script(ok("a cat"));
	const reply = await openai.llm.inferMedia({ prompt: "what is it?", image: { bytes: PNG.buffer }, system: "be brief" });
	assert.equal(reply.message.content, "a cat");
	const body = openai.transport.requests[0].body;
	assert.deepEqual(body.messages, [
		{ role: "system", content: "be brief" },
		{ role: "user", content: [{ type: "text", text: "what is it?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${encode(PNG)}` } }] },
	]);
	assert.ok(openai.transport.requests[0].request.body instanceof Uint8Array, "the body with an image is bytes");

	const anthropic = setup(ANTHROPIC);
	anthropic.transport.script(json({ id: "m", type: "message", role: "assistant", model: "c", content: [{ type: "text", text: "a cat" }], stop_reason: "end_turn", usage: {} }));
	await anthropic.llm.inferMedia({ prompt: "what is it?", image: { bytes: PNG.buffer } });
	assert.deepEqual(anthropic.transport.requests[0].body.messages, [{ role: "user", content: [
		{ type: "image", source: { type: "base64", media_type: "image/png", data: encode(PNG) } },
		{ type: "text", text: "what is it?" },
	] }]);
	openai.llm.close();
	anthropic.llm.close();
});

test("infer_media reads files under the data directory, and refuses big, unknown or escaping ones", async () => {
	const files = new Map<string, ArrayBuffer>([["photos/cat.png", PNG.buffer], ["notes.txt", ArrayBuffer.fromString("hello")]]);
	const reads: string[] = [];
	const allocated = new Set<ArrayBufferLike>();
	const { llm, transport } = setup(OPENAI, {
		buffers: {
			allocate: (n) => {
				const buffer = new ArrayBuffer(n);
				allocated.add(buffer);
				return buffer;
			},
			free: (buffer) => {
				assert.ok(allocated.delete(buffer), "frees only what it allocated, once");
			},
		},
		files: {
			size(path) {
				if (path === "big.jpg") return IMAGE_MAX_BYTES + 1; // never read: its size refuses it
				const f = files.get(path);
				if (!f) throw new Error("no such file");
				return f.byteLength;
			},
			read(path, buffers) {
				reads.push(path);
				const buffer = buffers.allocate(files.get(path)!.byteLength);
				new Uint8Array(buffer).set(new Uint8Array(files.get(path)!));
				return buffer;
			},
		},
	});
	transport.script(ok("a cat"));
	await llm.inferMedia({ prompt: "?", image: { path: "photos/cat.png" } });
	assert.match(JSON.stringify(transport.requests[0].body), /data:image\/png;base64,/);
	assert.equal(allocated.size, 0, "the file buffer and the body buffer are freed after the call");
	await assert.rejects(llm.inferMedia({ prompt: "?", image: { path: "big.jpg" } }), "at most 512 KiB");
	assert.deepEqual(reads, ["photos/cat.png"], "a big file is refused before it is read");
	await assert.rejects(llm.inferMedia({ prompt: "?", image: { path: "notes.txt" } }), "not a JPEG, PNG, GIF or WebP");
	await assert.rejects(llm.inferMedia({ prompt: "?", image: { path: "../etc/passwd" } }), "relative to the data directory");
	await assert.rejects(llm.inferMedia({ prompt: "?", image: { path: "missing.png" } }), "cannot be read");
	await assert.rejects(llm.inferMedia({ prompt: "?", image: { bytes: new ArrayBuffer(IMAGE_MAX_BYTES + 1) } }), "at most 512 KiB");
	transport.script(ok("remote"));
	await llm.inferMedia({ prompt: "?", image: { url: "https://img.example/cat.jpg" } });
	assert.equal(transport.requests[1].body.messages[0].content[1].image_url.url, "https://img.example/cat.jpg");
	assert.equal(transport.requests.length, 2);
	llm.close();
});

// ---- secrets, serialisation, console ----

test("the API key never appears in errors or status", async () => {
	const key = OPENAI["llm.api_key"];
	const { llm, transport } = setup();
	transport.script(status(401, `Incorrect API key provided: ${key}.`));
	const error = await assert.rejects(llm.chat(HI), "HTTP 401");
	assert.ok(!error.message.includes(key), error.message);
	const shown = JSON.stringify(llm.status());
	assert.ok(!shown.includes(key), shown);
	assert.match(llm.status().api_key, /^\*+cdef$/);
	llm.close();
});

test("an error the provider sends inside a 200 reply or a stream does not carry the API key into errors, events or traces", async () => {
	const key = OPENAI["llm.api_key"];
	const echoed = `Incorrect API key provided: ${key}.`;
	const whole = setup();
	whole.transport.script(json({ error: { message: echoed } }));
	const wholeError = await assert.rejects(whole.llm.chat(HI), "Incorrect API key");
	assert.ok(!wholeError.message.includes(key), wholeError.message);
	whole.llm.close();

	const streamed = setup({ ...OPENAI, "llm.stream": "true" });
	const retries: string[] = [];
	const events: string[] = [];
	streamed.transport.script(stream(`data: ${JSON.stringify({ error: { message: echoed, code: 503 } })}\n\n`), stream(`data: ${JSON.stringify({ error: { message: echoed, code: 401 } })}\n\n`));
	const llm = new Llm({ config: streamed.cfg, transport: streamed.transport, clock: streamed.clock, onRetry: (info) => retries.push(info.error.message) });
	const streamError = await assert.rejects(llm.chat(HI, { onEvent: (e) => { if (e.type === "message_end" && e.error) events.push(e.error); } }), "Incorrect API key");
	assert.ok(!streamError.message.includes(key), streamError.message);
	assert.equal(retries.length, 1, "the 503 was retried once");
	for (const text of [...retries, ...events]) assert.ok(!text.includes(key), text);
	assert.equal(events.length, 2);
	llm.close();
	streamed.llm.close();
});

test("one LLM call runs at a time; a waiting call can be cancelled", async () => {
	const { llm, transport } = setup();
	let release: () => void = () => {};
	transport.script(() => new Promise((resolve) => { release = () => resolve(ok("first")(transport.requests[0].request) as never); }), ok("second"));
	const first = llm.chat(HI);
	const aborter = new Aborter();
	const waiting = llm.chat(HI, { signal: aborter.signal });
	const third = llm.chat(HI);
	for (let i = 0; i < 10; i++) await Promise.resolve();
	assert.equal(transport.requests.length, 1, "the others wait");
	aborter.abort();
	await assert.rejects(waiting, "cancelled");
	release();
	assert.equal((await first).message.content, "first");
	assert.equal((await third).message.content, "second");
	llm.close();
});

test("llm status and llm test print what a person needs, key masked", async () => {
	const { llm, transport } = setup();
	const table = new CommandTable();
	table.add(...llmCommands(llm));
	const lines: string[] = [];
	const out = { line: (text: string) => lines.push(text) };
	const resolved = table.resolve("llm status");
	assert.ok("command" in resolved);
	if (!("command" in resolved)) return;
	await resolved.command.run(resolved.args, out);
	const text = lines.join("\n");
	assert.match(text, /provider: +openai \(openai_compatible\)/);
	assert.match(text, /model: +gpt-test/);
	assert.match(text, /base URL: +https:\/\/api\.openai\.com\/v1/);
	assert.match(text, /API key: +\*\*\*\*cdef/);
	assert.match(text, /calls: +0\/100 this hour, 0\/1000 today/);
	assert.ok(!text.includes(OPENAI["llm.api_key"]));

	lines.length = 0;
	transport.script(ok("I hear you."));
	const testCommand = table.resolve("llm test");
	if (!("command" in testCommand)) return assert.fail("llm test is missing");
	await testCommand.command.run("", out);
	assert.match(lines[0], /^ok in \d+ ms \(gpt-test, 1 attempt, 10 tokens in, 5 out\)$/);
	assert.equal(lines[1], "reply: I hear you.");
	assert.equal(transport.requests[0].body.max_completion_tokens, 64);

	transport.script(status(400, "model not found"));
	await assert.rejects(async () => testCommand.command.run("", out), "the LLM test failed: HTTP 400: model not found");
	llm.close();
});
