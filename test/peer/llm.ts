// The LLM runtime over the real HTTP client and TLS socket against the mock LLM
// server (tools/mock-llm) on 127.0.0.1, started by test/e2e/llm.test.mjs with the
// test CA (passed to the host as --ca). Options:
//   --mock-url     https://localhost:PORT   the mock, over TLS
//   --control-url  http://127.0.0.1:PORT    the Node side: POST /script queues mock
//                  scenarios, GET /requests/last the last request the mock recorded
// Retry waits run at 1/100 of their length (an injected clock), so a 429 with
// retry-after: 1 waits 10 ms; the schedule itself is the production one.
import Timer from "timer";
import files from "embedded:storage/files";
import * as psram from "psram";
import { heap, now, option } from "host/platform";
import { assert, test } from "testing";
import { Aborter } from "net/abort";
import { boardHttp } from "net/board";
import { HTTP_READ_BUFFER_BYTES, IMAGE_MAX_BYTES } from "budgets";
import { fileReader } from "llm/media";
import { Llm } from "llm/runtime";
import { systemClock, type Clock } from "llm/retry";
import { LlmError, type ChatRequest, type ChatResponse, type JsonObject, type LlmEvent, type Message, type ToolDefinition } from "llm/types";
import { MemoryStore, config } from "../unit/llm_fakes";

const MOCK = option("mock-url") ?? "";
const CONTROL = option("control-url") ?? "";
const RETRY_SCALE = 100;

// One PSRAM pool for the HTTP client and the LLM runtime, as main.ts wires it.
const { http, buffers } = boardHttp();

const fastClock: Clock = {
	now,
	wallNow: () => Date.now(),
	sleep: (ms, signal) => systemClock.sleep(ms / RETRY_SCALE, signal),
};

async function control(method: "GET" | "POST", path: string, body?: unknown): Promise<any> {
	const response = await http.request({ method, url: CONTROL + path, body: body === undefined ? undefined : JSON.stringify(body), headers: { "content-type": "application/json" } });
	return JSON.parse(response.body);
}
const script = (...scenarios: object[]) => control("POST", "/script", scenarios);
const lastRequest = (): Promise<{ path: string; headers: Record<string, string>; json: JsonObject; stream: boolean }> => control("GET", "/requests/last");

type Protocol = "openai" | "anthropic";
const PROTOCOLS: Protocol[] = ["openai", "anthropic"];

function llmFor(protocol: Protocol, stream: boolean, more: Record<string, string> = {}): Llm {
	const values: Record<string, string> = protocol === "openai"
		? { "llm.provider": "custom", "llm.base_url": `${MOCK}/v1`, "llm.api_key": "sk-test-mock-key-0001", "llm.model": "gpt-mock" }
		: { "llm.provider": "anthropic", "llm.base_url": `${MOCK}/v1`, "llm.api_key": "sk-ant-mock-key-0002", "llm.model": "claude-mock" };
	return new Llm({ config: config({ ...values, "llm.stream": String(stream), ...more }), transport: http, clock: fastClock, usageStore: new MemoryStore() });
}

const HI: ChatRequest = { messages: [{ role: "system", content: "You are a test." }, { role: "user", content: "hi" }] };
const WEATHER: ToolDefinition = { type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };
const TIME: ToolDefinition = { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } };
const TEXT = "Bonjour, 世界 😀 — from the mock";

async function each(fn: (protocol: Protocol, stream: boolean) => Promise<void>): Promise<void> {
	for (const protocol of PROTOCOLS) for (const stream of [true, false]) {
		try {
			await fn(protocol, stream);
		} catch (error) {
			throw new Error(`${protocol}, ${stream ? "streamed" : "not streamed"}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}
}

test("a text reply arrives whole in both protocols, streamed and not", async () => {
	await each(async (protocol, stream) => {
		const llm = llmFor(protocol, stream);
		await script({ type: "text", text: TEXT, chunk: 3 });
		const deltas: string[] = [];
		const reply = await llm.chat(HI, { onEvent: (e) => { if (e.type === "message_update" && e.delta.type === "text") deltas.push(e.delta.text); } });
		assert.equal(reply.message.content, TEXT);
		assert.equal(reply.finish_reason, "stop");
		assert.equal(deltas.join(""), TEXT);
		if (stream) assert.ok(deltas.length > 3, "streamed in pieces");
		assert.ok(reply.usage.output_tokens > 0 && reply.usage.input_tokens > 0, "usage reported");
		assert.ok(reply.bytes_received > 0);
		const sent = await lastRequest();
		assert.equal(sent.stream, stream);
		assert.equal(sent.path, protocol === "openai" ? "/v1/chat/completions" : "/v1/messages");
		llm.close();
	});
});

test("a reply with two parallel tool calls arrives in both protocols, streamed and not", async () => {
	await each(async (protocol, stream) => {
		const llm = llmFor(protocol, stream);
		await script({ type: "tool_calls", calls: [{ name: "get_weather", arguments: { city: "Paris ☀" } }, { name: "get_time", arguments: {} }], chunk: 2 });
		const reply = await llm.chat({ ...HI, tools: [WEATHER, TIME] });
		assert.equal(reply.finish_reason, "tool_calls");
		const calls = reply.message.tool_calls ?? [];
		assert.deepEqual(calls.map((c) => c.function.name), ["get_weather", "get_time"]);
		assert.deepEqual(JSON.parse(calls[0].function.arguments), { city: "Paris ☀" });
		assert.deepEqual(JSON.parse(calls[1].function.arguments), {});
		assert.ok(calls.every((c) => c.id.length > 0), "ids kept");
		llm.close();
	});
});

test("the Anthropic request for two parallel tool results: one user message, top-level system, input_schema, both headers", async () => {
	const llm = llmFor("anthropic", true);
	await script({ type: "tool_calls", calls: [{ name: "get_weather", arguments: { city: "Oslo" } }, { name: "get_time", arguments: {} }] }, { type: "text", text: "Cold, and noon." });
	const first = await llm.chat({ ...HI, tools: [WEATHER, TIME] });
	const calls = first.message.tool_calls ?? [];
	const history: Message[] = [
		...HI.messages, first.message,
		{ role: "tool", tool_call_id: calls[0].id, content: "-3 C" },
		{ role: "tool", tool_call_id: calls[1].id, content: "12:00" },
	];
	const second = await llm.chat({ messages: history, tools: [WEATHER, TIME] });
	assert.equal(second.message.content, "Cold, and noon.");
	const sent = await lastRequest();
	assert.equal(sent.headers["x-api-key"], "sk-ant-mock-key-0002");
	assert.equal(sent.headers["anthropic-version"], "2023-06-01");
	assert.equal(sent.json.system, "You are a test.");
	const messages = sent.json.messages as JsonObject[];
	assert.deepEqual(messages.map((m) => m.role), ["user", "assistant", "user"]);
	assert.deepEqual(messages[2].content, [
		{ type: "tool_result", tool_use_id: calls[0].id, content: "-3 C" },
		{ type: "tool_result", tool_use_id: calls[1].id, content: "12:00" },
	]);
	assert.deepEqual((sent.json.tools as JsonObject[]).map((t) => [t.name, JSON.stringify(t.input_schema)]), [
		["get_weather", JSON.stringify(WEATHER.function.parameters)],
		["get_time", JSON.stringify(TIME.function.parameters)],
	]);
	llm.close();
});

test("a reply's raw message survives a round trip unchanged (thinking with its signature, tool calls)", async () => {
	for (const stream of [true, false]) {
		const llm = llmFor("anthropic", stream);
		await script({ type: "thinking", thinking: "The user greets; answer warmly.", text: "Hello!", signature: "c2lnLW1vY2s=" }, { type: "text", text: "again" });
		const reply = await llm.chat(HI);
		assert.equal(reply.message.reasoning_content, "The user greets; answer warmly.");
		assert.equal(reply.message.reasoning_signature, "c2lnLW1vY2s=");
		const kept: Message = JSON.parse(JSON.stringify(reply.message)); // as persisted
		await llm.chat({ messages: [...HI.messages, kept, { role: "user", content: "and again?" }] });
		const sent = await lastRequest();
		assert.deepEqual((sent.json.messages as JsonObject[])[1], { role: "assistant", content: reply.message.raw?.message.content ?? null });
		llm.close();
	}
	for (const stream of [true, false]) {
		const llm = llmFor("openai", stream);
		await script({ type: "tool_calls", calls: [{ id: "call_fixed", name: "get_time", arguments: {} }] }, { type: "text", text: "noon" });
		const reply = await llm.chat({ ...HI, tools: [TIME] });
		const kept: Message = JSON.parse(JSON.stringify(reply.message));
		await llm.chat({ messages: [...HI.messages, kept, { role: "tool", tool_call_id: "call_fixed", content: "12:00" }], tools: [TIME] });
		const sent = await lastRequest();
		assert.deepEqual((sent.json.messages as JsonObject[])[2], reply.message.raw?.message ?? null);
		llm.close();
	}
});

async function outcome(llm: Llm, request: ChatRequest = HI, options = {}): Promise<ChatResponse | LlmError> {
	try {
		return await llm.chat(request, options);
	} catch (error) {
		if (error instanceof LlmError) return error;
		throw new Error(`not an LlmError: ${String(error)}`);
	}
}

function failed(result: ChatResponse | LlmError, pattern: RegExp): void {
	if (!(result instanceof LlmError)) return assert.fail(`expected an error matching ${pattern}, got the reply ${JSON.stringify(result.message.content)}`);
	assert.match(result.message, pattern);
}

test("429 with retry-after and 500 are retried to success; a persistent 500 gives up after 4 attempts", async () => {
	await each(async (protocol, stream) => {
		const llm = llmFor(protocol, stream);
		await script({ fault: 429, retryAfter: 1 }, { fault: 500 }, { type: "text", text: "third time lucky" });
		const reply = await outcome(llm);
		if (reply instanceof LlmError) return assert.fail(reply.message);
		assert.equal(reply.message.content, "third time lucky");
		assert.equal(reply.attempts, 3);
		await script({ fault: 500, message: "down" }, { fault: 500, message: "down" }, { fault: 503, message: "down" }, { fault: 500, message: "still down" });
		failed(await outcome(llm), /^HTTP 500: still down; gave up after 4 attempts$/);
		await script({ fault: 400, message: "bad request body" });
		const before = (await control("GET", "/count")).count;
		failed(await outcome(llm), /^HTTP 400: bad request body$/);
		assert.equal((await control("GET", "/count")).count, before + 1, "a 400 is not retried");
		llm.close();
	});
});

test("faults end in a clear error, never a hang: stall, drop, malformed, huge", async () => {
	await each(async (protocol, stream) => {
		// Only the stall needs a short timeout. The other faults get a long one,
		// so that a slow machine (the ASan host beside another test run) ends
		// each in its own error, not in the timeout.
		const stalling = llmFor(protocol, stream, { "llm.timeout_ms": "1500" });
		await script({ fault: "stall" });
		failed(await outcome(stalling), /did not answer in time/);
		stalling.close();
		const llm = llmFor(protocol, stream, { "llm.timeout_ms": "50000" });
		await script({ fault: "drop", text: "a reply long enough to be cut in the middle of its body" });
		failed(await outcome(llm), /^the connection to the LLM at https:\/\/localhost:\d+ failed: the server closed the connection mid-body/);
		await script({ fault: "malformed" });
		failed(await outcome(llm), stream ? /not JSON/ : /not JSON/);
		await script({ fault: "huge", bytes: 400 * 1024 });
		failed(await outcome(llm), /too large|larger than/);
		await script({ type: "text", text: "still fine" });
		const after = await outcome(llm);
		assert.ok(!(after instanceof LlmError), "the next request works");
		llm.close();
	});
}, 180_000);

test("a trickled reply completes, and a cancel mid-stream aborts it", async () => {
	for (const protocol of PROTOCOLS) {
		const llm = llmFor(protocol, true);
		await script({ fault: "trickle", text: "slow and steady", chunkBytes: 64, intervalMs: 5 });
		const slow = await outcome(llm);
		if (slow instanceof LlmError) return assert.fail(slow.message);
		assert.equal(slow.message.content, "slow and steady");

		// Over a minute at full speed: the cancel, not the reply's end, stops it.
		await script({ fault: "trickle", text: "x".repeat(100_000), chunkBytes: 32, intervalMs: 20 });
		const aborter = new Aborter();
		let abortedAt = 0;
		const events: LlmEvent[] = [];
		const result = outcome(llm, HI, {
			signal: aborter.signal,
			onEvent: (e: LlmEvent) => {
				events.push(e);
				if (e.type === "message_update" && !abortedAt) {
					abortedAt = now();
					Timer.set(() => aborter.abort("user"), 0);
				}
			},
		});
		const error = await result;
		failed(error, /cancelled/);
		assert.equal(events[events.length - 1].type, "message_end");
		llm.close();
	}
});

test("a refused connection is retried, then reported with the origin", async () => {
	const llm = new Llm({
		config: config({ "llm.provider": "custom", "llm.base_url": "http://127.0.0.1:1/v1", "llm.api_key": "k-0123456789", "llm.model": "m", "llm.stream": "false" }),
		transport: http, clock: fastClock, usageStore: new MemoryStore(),
	});
	const result = await outcome(llm);
	failed(result, /^cannot reach the LLM at http:\/\/127\.0\.0\.1:1: .*gave up after 4 attempts$/);
	llm.close();
});

test("a 512 KiB image file goes out base64-encoded in a PSRAM body, in both protocols", async () => {
	// A PNG signature, then a pattern: the mock reports the decoded size and hash.
	const image = new Uint8Array(IMAGE_MAX_BYTES);
	image.set([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]);
	for (let i = 8; i < image.length; i++) image[i] = (i * 7 + (i >> 9)) & 255;
	let hash = 0x811c9dc5;
	for (const b of image) hash = Math.imul(hash ^ b, 0x01000193) >>> 0;
	const file = files.openFile({ path: "photo.png", mode: "w" });
	file.write(image, 0);
	file.close();

	for (const protocol of PROTOCOLS) {
		const values: Record<string, string> = protocol === "openai"
			? { "llm.provider": "custom", "llm.base_url": `${MOCK}/v1`, "llm.api_key": "sk-test-mock-key-0001", "llm.model": "gpt-mock", "llm.supports_vision": "true" }
			: { "llm.provider": "anthropic", "llm.base_url": `${MOCK}/v1`, "llm.api_key": "sk-ant-mock-key-0002", "llm.model": "claude-mock" };
		const llm = new Llm({
			config: config(values), transport: http, clock: fastClock, usageStore: new MemoryStore(),
			files: fileReader(files), buffers,
		});
		await script({ type: "text", text: "a test pattern" });
		psram.resetPeak();
		const chunksBefore = heap().chunkUsed;
		const reply = await llm.inferMedia({ prompt: "What is in this image?", image: { path: "photo.png" } });
		assert.equal(reply.message.content, "a test pattern");
		assert.ok(psram.stats().psram.peak >= IMAGE_MAX_BYTES * 4 / 3, `the body was built in PSRAM (peak ${psram.stats().psram.peak})`);
		assert.ok(heap().chunkPeak - chunksBefore < IMAGE_MAX_BYTES, `the JS heap never held the image (grew ${heap().chunkPeak - chunksBefore} bytes)`);
		assert.deepEqual(await control("GET", "/requests/last/images"), [{ mime: "image/png", bytes: IMAGE_MAX_BYTES, canonical: true, fnv: hash }]);
		assert.equal(psram.stats().psram.used, HTTP_READ_BUFFER_BYTES, "the image and body buffers were freed (the HTTP client's read buffer stays)");
		llm.close();
	}
	files.delete("photo.png");
}, 180_000); // two 512 KiB images through base64, TLS and the mock: slow on the ASan host
