// The two wire protocols: canonical (OpenAI-shaped) messages to each request body
// and back, the backend registry, and base64.
import { assert, test } from "testing";
import { builtInRegistry } from "llm/backends";
import { fromAnthropicMessage, parseAnthropicResponse, toAnthropicRequest } from "llm/anthropic";
import { parseOpenAIResponse, toOpenAIRequest } from "llm/openai";
import { resolveProfile } from "llm/profiles";
import { BackendRegistry } from "llm/registry";
import { Llm } from "llm/runtime";
import { LlmError, type BackendRegistration, type ChatRequest, type JsonObject, type Message, type ModelProfile, type ToolDefinition } from "llm/types";
import { allocate, free } from "psram";
import { encode } from "util/base64";
import { ANTHROPIC, FakeClock, FakeTransport, config, json, OPENAI } from "./llm_fakes";

function profile(values: Record<string, string>): ModelProfile {
	const result = resolveProfile((name) => values[name], builtInRegistry());
	if (!result.ok) throw new Error(result.guidance);
	return result.profile;
}

const WEATHER: ToolDefinition = {
	type: "function",
	function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const TIME: ToolDefinition = { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } };

// A conversation with two parallel tool calls and their results.
const PARALLEL: Message[] = [
	{ role: "system", content: "You are a board." },
	{ role: "user", content: "Weather in Paris, and the time?" },
	{
		role: "assistant", content: null,
		tool_calls: [
			{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
			{ id: "call_2", type: "function", function: { name: "get_time", arguments: "" } },
		],
	},
	{ role: "tool", tool_call_id: "call_1", content: "18 C, cloudy" },
	{ role: "tool", tool_call_id: "call_2", content: "no clock", is_error: true },
];

test("the Anthropic request for two parallel tool results has ONE user message holding both tool_result blocks", async () => {
	const transport = new FakeTransport(json({
		id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [{ type: "text", text: "Cloudy, 18 C." }],
		stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 },
	}));
	const llm = new Llm({ config: config({ ...ANTHROPIC, "llm.stream": "false" }), transport, clock: new FakeClock() });
	await llm.chat({ messages: PARALLEL, tools: [WEATHER, TIME] });
	assert.equal(transport.requests.length, 1);
	const { request, body } = transport.requests[0];
	assert.equal(request.url, "https://api.anthropic.com/v1/messages");
	assert.equal(request.headers?.["x-api-key"], ANTHROPIC["llm.api_key"]);
	assert.equal(request.headers?.["anthropic-version"], "2023-06-01");
	assert.equal(request.headers?.authorization, undefined, "no bearer header for Anthropic");
	assert.equal(body.system, "You are a board.");
	assert.deepEqual(body.messages.map((m: JsonObject) => m.role), ["user", "assistant", "user"]);
	const results = body.messages[2].content;
	assert.deepEqual(results, [
		{ type: "tool_result", tool_use_id: "call_1", content: "18 C, cloudy" },
		{ type: "tool_result", tool_use_id: "call_2", content: "no clock", is_error: true },
	]);
	assert.deepEqual(body.messages[1].content, [
		{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
		{ type: "tool_use", id: "call_2", name: "get_time", input: {} },
	]);
	assert.deepEqual(body.tools, [
		{ name: "get_weather", input_schema: WEATHER.function.parameters, description: "Weather for a city" },
		{ name: "get_time", input_schema: { type: "object", properties: {} } },
	]);
	assert.equal(body.max_tokens, 8192);
	assert.equal(body.model, "claude-test");
	assert.equal(body.stream, undefined);
	llm.close();
});

test("user text right after tool results joins their user message, after the results", () => {
	const { body } = toAnthropicRequest({ messages: [...PARALLEL, { role: "user", content: "also, hurry" }] }, profile(ANTHROPIC), false);
	const messages = body.messages as JsonObject[];
	assert.equal(messages.length, 3);
	const content = messages[2].content as JsonObject[];
	assert.deepEqual(content.map((b) => b.type), ["tool_result", "tool_result", "text"]);
});

test("arguments that are not a JSON object go to Anthropic as {} with a note", () => {
	const messages: Message[] = [
		{ role: "user", content: "go" },
		{ role: "assistant", content: "", tool_calls: [
			{ id: "a", type: "function", function: { name: "f", arguments: "{\"x\": 1" } },
			{ id: "b", type: "function", function: { name: "g", arguments: "[1,2]" } },
		] },
		{ role: "tool", tool_call_id: "a", content: "bad arguments" },
		{ role: "tool", tool_call_id: "b", content: "bad arguments" },
	];
	const { body, notes } = toAnthropicRequest({ messages }, profile(ANTHROPIC), false);
	const blocks = (body.messages as JsonObject[])[1].content as JsonObject[];
	assert.deepEqual(blocks.map((b) => b.input), [{}, {}]);
	assert.equal(notes.length, 2);
	assert.match(notes[0], /tool call a \(f\) has arguments that are not a JSON object; they were sent as \{\}/);
});

test("reasoning_content with a signature becomes a leading thinking block; without one it is left out", () => {
	const signed = toAnthropicRequest({ messages: [
		{ role: "user", content: "hi" },
		{ role: "assistant", content: "hello", reasoning_content: "they greet", reasoning_signature: "sig==" },
		{ role: "user", content: "again" },
	] }, profile(ANTHROPIC), false);
	assert.deepEqual((signed.body.messages as JsonObject[])[1].content, [
		{ type: "thinking", thinking: "they greet", signature: "sig==" },
		{ type: "text", text: "hello" },
	]);
	const unsigned = toAnthropicRequest({ messages: [
		{ role: "user", content: "hi" },
		{ role: "assistant", content: "hello", reasoning_content: "from deepseek" },
		{ role: "user", content: "again" },
	] }, profile(ANTHROPIC), false);
	assert.deepEqual((unsigned.body.messages as JsonObject[])[1].content, [{ type: "text", text: "hello" }]);
	assert.equal(unsigned.notes.length, 1);
});

test("an Anthropic reply converts to canonical tool_calls, reasoning and text, and its raw content goes back unchanged", () => {
	const reply = {
		id: "msg_9", type: "message", role: "assistant", model: "claude-test",
		content: [
			{ type: "thinking", thinking: "need weather", signature: "c2lnbmF0dXJl" },
			{ type: "redacted_thinking", data: "opaque" },
			{ type: "text", text: "Let me check." },
			{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris", days: [1, 2] } },
		],
		stop_reason: "tool_use", stop_sequence: null,
		usage: { input_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 3, output_tokens: 20 },
	};
	const parsed = parseAnthropicResponse(JSON.parse(JSON.stringify(reply)));
	const m = parsed.message;
	assert.equal(m.content, "Let me check.");
	assert.equal(m.reasoning_content, "need weather");
	assert.equal(m.reasoning_signature, "c2lnbmF0dXJl");
	assert.deepEqual(m.tool_calls, [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\",\"days\":[1,2]}" } }]);
	assert.equal(parsed.finish_reason, "tool_calls");
	assert.deepEqual(parsed.usage, { input_tokens: 110, output_tokens: 20, cache_read_tokens: 100, cache_write_tokens: 3 });
	assert.deepEqual(m.raw, { protocol: "anthropic", message: reply });

	// Through persistence (JSON) and back into a request: the content blocks are verbatim.
	const stored: Message = JSON.parse(JSON.stringify(m));
	const { body } = toAnthropicRequest({ messages: [
		{ role: "user", content: "weather?" }, stored, { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
	] }, profile(ANTHROPIC), false);
	assert.deepEqual((body.messages as JsonObject[])[1], { role: "assistant", content: reply.content });
});

test("an OpenAI reply's raw message goes back to OpenAI verbatim, and to Anthropic as converted blocks", () => {
	const raw = {
		role: "assistant", content: null, refusal: null, annotations: [],
		tool_calls: [{ id: "call_7", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } }],
	};
	const parsed = parseOpenAIResponse({ id: "x", model: "gpt-test", choices: [{ index: 0, message: raw, finish_reason: "tool_calls" }], usage: { prompt_tokens: 9, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 5 } } });
	assert.equal(parsed.finish_reason, "tool_calls");
	assert.deepEqual(parsed.usage, { input_tokens: 9, output_tokens: 4, cache_read_tokens: 5, cache_write_tokens: 0 });
	const history: Message[] = [{ role: "user", content: "weather?" }, parsed.message, { role: "tool", tool_call_id: "call_7", content: "cold" }];
	const openai = toOpenAIRequest({ messages: history }, profile(OPENAI), false);
	assert.deepEqual((openai.messages as JsonObject[])[1], raw);
	const anthropic = toAnthropicRequest({ messages: history }, profile(ANTHROPIC), false);
	assert.deepEqual((anthropic.body.messages as JsonObject[])[1].content, [{ type: "tool_use", id: "call_7", name: "get_weather", input: { city: "Oslo" } }]);
});

test("the OpenAI request uses the profile's max_tokens field, bearer auth and stream options", async () => {
	const body = toOpenAIRequest({ messages: [{ role: "user", content: "hi", cache_breakpoint: true }], tools: [WEATHER] }, profile(OPENAI), true);
	assert.equal(body.max_completion_tokens, 8192, "OpenAI's preset uses max_completion_tokens");
	assert.equal(body.max_tokens, undefined);
	assert.deepEqual(body.messages, [{ role: "user", content: "hi" }], "our cache marker is not sent");
	assert.deepEqual(body.stream_options, { include_usage: true });
	assert.deepEqual(body.tools, [WEATHER]);
	const deepseek = toOpenAIRequest({ messages: [{ role: "user", content: "hi" }], max_tokens: 99 }, profile({ ...OPENAI, "llm.provider": "deepseek" }), false);
	assert.equal(deepseek.max_tokens, 99);
	assert.equal(deepseek.stream, undefined);

	const transport = new FakeTransport(json({ model: "gpt-test", choices: [{ message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] }));
	const llm = new Llm({ config: config({ ...OPENAI, "llm.stream": "false" }), transport, clock: new FakeClock() });
	const reply = await llm.chat({ messages: [{ role: "user", content: "hi" }] });
	assert.equal(reply.message.content, "hi");
	const request = transport.requests[0].request;
	assert.equal(request.url, "https://api.openai.com/v1/chat/completions");
	assert.equal(request.headers?.authorization, `Bearer ${OPENAI["llm.api_key"]}`);
	assert.equal(request.headers?.["content-type"], "application/json");
	llm.close();
});

test("system prompts and cache breakpoints: text blocks with cache_control, a copy on the marked message", () => {
	const raw = { id: "m", type: "message", role: "assistant", model: "c", content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", stop_sequence: null, usage: {} };
	const reply = fromAnthropicMessage(raw);
	const { body } = toAnthropicRequest({ messages: [
		{ role: "system", content: "persona", cache_breakpoint: true },
		{ role: "user", content: "one" },
		{ ...reply, cache_breakpoint: true },
		{ role: "system", content: "time: now" },
		{ role: "user", content: "two" },
	] }, profile(ANTHROPIC), false);
	assert.deepEqual(body.system, [{ type: "text", text: "persona", cache_control: { type: "ephemeral" } }, { type: "text", text: "time: now" }]);
	const messages = body.messages as JsonObject[];
	assert.deepEqual(messages[1].content, [{ type: "text", text: "ok", cache_control: { type: "ephemeral" } }]);
	assert.deepEqual(raw.content, [{ type: "text", text: "ok" }], "the raw message is not modified");
});

test("images: data URLs become base64 blocks, http URLs url blocks; empty messages are dropped", () => {
	const { body } = toAnthropicRequest({ messages: [
		{ role: "user", content: "" },
		{ role: "user", content: [{ type: "text", text: "what is it?" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } }, { type: "image_url", image_url: { url: "https://x.example/a.jpg" } }] },
	] }, profile(ANTHROPIC), false);
	assert.deepEqual(body.messages, [{ role: "user", content: [
		{ type: "text", text: "what is it?" },
		{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
		{ type: "image", source: { type: "url", url: "https://x.example/a.jpg" } },
	] }]);
});

test("replies that are not assistant messages are protocol errors", () => {
	assert.throws(() => parseOpenAIResponse({ choices: [{ message: { role: "user", content: "x" } }] }), "not an assistant message", LlmError);
	assert.throws(() => parseOpenAIResponse({ error: { message: "bad key" } }), "bad key", LlmError);
	assert.throws(() => parseAnthropicResponse({ type: "error", error: { type: "x", message: "nope" } }), "nope", LlmError);
	assert.throws(() => parseAnthropicResponse({ role: "assistant" }), "content blocks", LlmError);
});

test("the registry refuses duplicate and malformed ids and finds registered backends", () => {
	const registry = new BackendRegistry();
	const fake: BackendRegistration = { id: "fake_backend", defaults: { auth: "none", max_tokens_field: "max_tokens" }, create: () => { throw new Error("unused"); } };
	registry.register(fake);
	assert.equal(registry.get("fake_backend"), fake);
	assert.equal(registry.get("other"), undefined);
	assert.throws(() => registry.register({ ...fake }), "already registered", LlmError);
	assert.throws(() => registry.register({ ...fake, id: "Bad Id" }), "backend id", LlmError);
	const builtIn = builtInRegistry();
	assert.deepEqual(builtIn.ids(), ["openai_compatible", "anthropic_compatible"]);
	assert.throws(() => builtIn.register({ ...fake, id: "openai_compatible" }), "already registered");
});

test("a custom backend registered by id is chosen through llm.backend", async () => {
	const registry = builtInRegistry();
	const seen: ChatRequest[] = [];
	registry.register({
		id: "echo", defaults: { auth: "none", max_tokens_field: "max_tokens" },
		create: () => ({
			init() {},
			async chat(request) {
				seen.push(request);
				const text = String(request.messages[0].content);
				return { message: { role: "assistant", content: text }, finish_reason: "stop", usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 }, model: "echo", attempts: 1, bytes_sent: 0, bytes_received: 0, elapsed_ms: 0 };
			},
			infer_media() { return Promise.reject(new LlmError("unsupported", "no")); },
			deinit() {},
		}),
	});
	const llm = new Llm({ config: config({ "llm.provider": "custom", "llm.base_url": "http://127.0.0.1:1", "llm.backend": "echo", "llm.model": "m" }), transport: new FakeTransport(), registry, clock: new FakeClock() });
	const reply = await llm.chat({ messages: [{ role: "user", content: "ping" }] });
	assert.equal(reply.message.content, "ping");
	assert.equal(seen.length, 1);
	llm.close();
});

test("base64 encodes every tail length like RFC 4648", () => {
	const bytes = (s: string) => ArrayBuffer.fromString(s);
	assert.equal(encode(bytes("")), "");
	assert.equal(encode(bytes("f")), "Zg==");
	assert.equal(encode(bytes("fo")), "Zm8=");
	assert.equal(encode(bytes("foo")), "Zm9v");
	assert.equal(encode(bytes("foob")), "Zm9vYg==");
	assert.equal(encode(bytes("fooba")), "Zm9vYmE=");
	assert.equal(encode(new Uint8Array([0, 255, 254, 253, 62, 63])), "AP/+/T4/");
	const host = allocate(4, "psram"); // a host buffer is no ArrayBuffer instance
	new Uint8Array(host).set([102, 111, 111, 98]);
	assert.equal(encode(host), "Zm9vYg==");
	free(host);
});

test("presets give each provider its URL, auth and max_tokens field; any base URL works", () => {
	const key = { "llm.api_key": "k-0123456789", "llm.model": "m" };
	const seen = ["openai", "anthropic", "deepseek", "openrouter", "ollama"].map((provider) => {
		const p = profile({ ...key, "llm.provider": provider });
		return [provider, p.backend, p.base_url, p.auth, p.max_tokens_field, p.supports_vision];
	});
	assert.deepEqual(seen, [
		["openai", "openai_compatible", "https://api.openai.com/v1", "bearer", "max_completion_tokens", true],
		["anthropic", "anthropic_compatible", "https://api.anthropic.com/v1", "api-key", "max_tokens", true],
		["deepseek", "openai_compatible", "https://api.deepseek.com", "bearer", "max_tokens", false],
		["openrouter", "openai_compatible", "https://openrouter.ai/api/v1", "bearer", "max_tokens", true],
		["ollama", "openai_compatible", "http://localhost:11434/v1", "none", "max_tokens", false],
	]);
	const custom = profile({ ...key, "llm.provider": "custom", "llm.base_url": "https://llm.lan:8443/v1/", "llm.backend": "anthropic_compatible", "llm.max_tokens_field": "max_completion_tokens", "llm.max_tokens": "1024" });
	assert.equal(custom.base_url, "https://llm.lan:8443/v1");
	assert.equal(custom.auth, "api-key", "the backend's default auth");
	assert.equal(custom.max_tokens, 1024);
	assert.throws(() => profile({ ...key, "llm.provider": "skynet" }), "llm.provider must be one of openai, anthropic, deepseek, openrouter, ollama, custom (not \"skynet\")");
	for (const inherited of ["constructor", "toString", "__proto__"]) // names every object has are no presets
		assert.throws(() => profile({ ...key, "llm.provider": inherited, "llm.base_url": "https://llm.lan/v1" }), `(not "${inherited}")`);
	assert.throws(() => profile({ ...key, "llm.base_url": "ftp://x" }), "llm.base_url must be a URL starting with http:// or https://");
	assert.throws(() => profile({ ...key, "llm.backend": "nope" }), "llm.backend \"nope\" is not registered");
	assert.throws(() => profile({ ...key, "llm.max_tokens": "lots" }), "llm.max_tokens must be a whole number");
});

test("a config change during a call retires the old backend after that call; the next call gets a new one", async () => {
	const registry = builtInRegistry();
	const log: string[] = [];
	let finish: () => void = () => {};
	registry.register({
		id: "probe", defaults: { auth: "none", max_tokens_field: "max_tokens" },
		create: () => {
			let model = "";
			return {
				init(p) { model = p.model; log.push(`init ${model}`); },
				chat() {
					log.push(`chat ${model}`);
					return new Promise((resolve) => {
						finish = () => resolve({ message: { role: "assistant", content: model }, finish_reason: "stop", usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 }, model, attempts: 1, bytes_sent: 0, bytes_received: 0, elapsed_ms: 0 });
					});
				},
				infer_media() { return Promise.reject(new LlmError("unsupported", "no")); },
				deinit() { log.push(`deinit ${model}`); },
			};
		},
	});
	const cfg = config({ "llm.provider": "custom", "llm.base_url": "http://127.0.0.1:1", "llm.backend": "probe", "llm.model": "one" });
	const llm = new Llm({ config: cfg, transport: new FakeTransport(), registry, clock: new FakeClock() });
	const first = llm.chat({ messages: [{ role: "user", content: "x" }] });
	for (let i = 0; i < 5; i++) await Promise.resolve();
	cfg.set("llm.model", "two");
	assert.deepEqual(log, ["init one", "chat one"], "the call in flight keeps its backend");
	finish();
	assert.equal((await first).message.content, "one");
	assert.deepEqual(log, ["init one", "chat one", "deinit one"]);
	const second = llm.chat({ messages: [{ role: "user", content: "x" }] });
	for (let i = 0; i < 5; i++) await Promise.resolve();
	finish();
	assert.equal((await second).message.content, "two");
	llm.close();
	assert.deepEqual(log, ["init one", "chat one", "deinit one", "init two", "chat two", "deinit two"]);
});

test("a key is not sent over plain http:// to another machine unless llm.allow_insecure is set", () => {
	const key = { "llm.api_key": "sk-test-123456", "llm.model": "m", "llm.provider": "custom" };
	assert.throws(() => profile({ ...key, "llm.base_url": "http://llm.lan:8080/v1" }),
		"llm.base_url is plain http:// to llm.lan, so your API key would cross the network unencrypted: use an https:// URL, or config set llm.allow_insecure true");
	assert.equal(profile({ ...key, "llm.base_url": "http://llm.lan:8080/v1", "llm.allow_insecure": "true" }).base_url, "http://llm.lan:8080/v1");
	for (const local of ["http://127.0.0.1:9000/v1", "http://localhost:11434/v1", "http://[::1]:8080/v1"]) assert.equal(profile({ ...key, "llm.base_url": local }).base_url, local);
	assert.equal(profile({ ...key, "llm.base_url": "http://llm.lan/v1", "llm.auth": "none" }).auth, "none", "no key, nothing to protect");
	assert.equal(profile({ ...key, "llm.base_url": "https://llm.lan/v1" }).auth, "bearer");
});
