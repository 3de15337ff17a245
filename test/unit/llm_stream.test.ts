// Streaming: SSE replies of both protocols assembled into one message, whatever
// the byte boundaries, with events in order and failures ending in clear errors.
import { assert, test } from "testing";
import { LLM_REPLY_MAX_BYTES } from "budgets";
import { Llm } from "llm/runtime";
import { LlmError, type ChatResponse, type LlmEvent } from "llm/types";
import { ANTHROPIC, FakeClock, FakeTransport, OPENAI, config, sse, stream } from "./llm_fakes";

const TEXT = "Héllo, 世界 😀!";

function openaiChunk(delta: object, finish: string | null = null) {
	return { id: "chatcmpl-1", object: "chat.completion.chunk", model: "gpt-test", choices: [{ index: 0, delta, finish_reason: finish }] };
}

const OPENAI_TEXT = sse([
	openaiChunk({ role: "assistant", content: "" }),
	openaiChunk({ reasoning_content: "think " }),
	openaiChunk({ reasoning_content: "hard" }),
	openaiChunk({ content: "Héllo, " }),
	openaiChunk({ content: "世界 😀!" }),
	openaiChunk({}, "stop"),
	{ id: "chatcmpl-1", object: "chat.completion.chunk", model: "gpt-test", choices: [], usage: { prompt_tokens: 12, completion_tokens: 7 } },
	"[DONE]",
]);

// Two parallel calls whose fragments interleave, keyed by index.
const OPENAI_TOOLS = sse([
	openaiChunk({ role: "assistant", content: null }),
	openaiChunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }] }),
	openaiChunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "get_time", arguments: "{\"tz\":" } }] }),
	openaiChunk({ tool_calls: [{ index: 0, function: { arguments: "{\"city\":\"Pa" } }] }),
	openaiChunk({ tool_calls: [{ index: 1, function: { arguments: "\"UTC\"}" } }] }),
	openaiChunk({ tool_calls: [{ index: 0, function: { name: "get_weather", arguments: "ris\"}" } }] }), // a repeated name
	openaiChunk({}, "tool_calls"),
	"[DONE]",
]);

const ANTHROPIC_EVENTS = [
	{ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 30, cache_read_input_tokens: 0, output_tokens: 1 } } },
	{ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
	{ type: "ping" },
	{ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "weather " } },
	{ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "and time" } },
	{ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "U2lnbmVk" } },
	{ type: "content_block_stop", index: 0 },
	{ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
	{ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Héllo, " } },
	{ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "世界 😀!" } },
	{ type: "content_block_stop", index: 1 },
	{ type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_a", name: "get_weather", input: {} } },
	{ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "" } },
	{ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{\"city\": \"Pa" } },
	{ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "ris\"}" } },
	{ type: "content_block_stop", index: 2 },
	{ type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "toolu_b", name: "get_time", input: {} } },
	{ type: "content_block_stop", index: 3 },
	{ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 42 } },
	{ type: "message_stop" },
];

// What the API would have sent unstreamed: the raw message kept for round trips.
const ANTHROPIC_WHOLE = {
	id: "msg_1", type: "message", role: "assistant", model: "claude-test",
	content: [
		{ type: "thinking", thinking: "weather and time", signature: "U2lnbmVk" },
		{ type: "text", text: TEXT },
		{ type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris" } },
		{ type: "tool_use", id: "toolu_b", name: "get_time", input: {} },
	],
	stop_reason: "tool_use", stop_sequence: null,
	usage: { input_tokens: 30, cache_read_input_tokens: 0, output_tokens: 42 },
};

async function run(values: Record<string, string>, body: string, piece: number, events: LlmEvent[] = []): Promise<{ reply: ChatResponse; events: LlmEvent[]; transport: FakeTransport }> {
	const transport = new FakeTransport(stream(body, piece));
	const llm = new Llm({ config: config(values), transport, clock: new FakeClock() });
	try {
		const reply = await llm.chat({ messages: [{ role: "user", content: "hi" }] }, { onEvent: (e) => events.push(e) });
		return { reply, events, transport };
	} finally {
		llm.close();
	}
}

function textOf(events: LlmEvent[], type: "text" | "reasoning"): string {
	return events.map((e) => (e.type === "message_update" && e.delta.type === type ? e.delta.text : "")).join("");
}

test("an OpenAI text stream split at every byte assembles the same reply, with usage and ordered events", async () => {
	for (const piece of [1, 2, 3, 7, 64, 0]) {
		const { reply, events, transport } = await run(OPENAI, OPENAI_TEXT, piece);
		assert.equal(reply.message.content, TEXT, `piece ${piece}`);
		assert.equal(reply.message.reasoning_content, "think hard");
		assert.equal(reply.finish_reason, "stop");
		assert.deepEqual(reply.usage, { input_tokens: 12, output_tokens: 7, cache_read_tokens: 0, cache_write_tokens: 0 });
		assert.equal(textOf(events, "text"), TEXT);
		assert.equal(textOf(events, "reasoning"), "think hard");
		assert.equal(events[0].type, "message_start");
		assert.equal(events[events.length - 1].type, "message_end");
		assert.equal(events.filter((e) => e.type === "message_start").length, 1);
		const sent = transport.requests[0];
		assert.equal(sent.body.stream, true);
		assert.equal(sent.request.headers?.accept, "text/event-stream");
		assert.ok(sent.request.onChunk, "streamed through onChunk");
		assert.deepEqual(reply.message.raw, { protocol: "openai", message: { role: "assistant", content: TEXT, reasoning_content: "think hard" } });
	}
});

test("interleaved OpenAI tool-call fragments assemble by index, at every byte split", async () => {
	for (const piece of [1, 5, 0]) {
		const { reply, events } = await run(OPENAI, OPENAI_TOOLS, piece);
		assert.equal(reply.finish_reason, "tool_calls");
		assert.equal(reply.message.content, null);
		assert.deepEqual(reply.message.tool_calls, [
			{ id: "call_a", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
			{ id: "call_b", type: "function", function: { name: "get_time", arguments: "{\"tz\":\"UTC\"}" } },
		]);
		const starts = events.filter((e) => e.type === "message_update" && e.delta.type === "tool_call" && e.delta.id);
		assert.equal(starts.length, 2, `piece ${piece}: one delta with an id per call`);
	}
});

test("an Anthropic stream split at every byte becomes the message the API sends unstreamed", async () => {
	for (const [piece, named] of [[1, false], [1, true], [9, true], [0, false]] as const) {
		const { reply, events } = await run(ANTHROPIC, sse(ANTHROPIC_EVENTS, named), piece);
		assert.deepEqual(reply.message.raw, { protocol: "anthropic", message: ANTHROPIC_WHOLE }, `piece ${piece}`);
		assert.equal(reply.message.content, TEXT);
		assert.equal(reply.message.reasoning_content, "weather and time");
		assert.equal(reply.message.reasoning_signature, "U2lnbmVk");
		assert.deepEqual(reply.message.tool_calls?.map((c) => [c.id, c.function.name, c.function.arguments]), [
			["toolu_a", "get_weather", "{\"city\":\"Paris\"}"],
			["toolu_b", "get_time", "{}"],
		]);
		assert.equal(reply.finish_reason, "tool_calls");
		assert.equal(reply.usage.input_tokens, 30);
		assert.equal(reply.usage.output_tokens, 42);
		assert.equal(textOf(events, "text"), TEXT);
		const args = events.map((e) => (e.type === "message_update" && e.delta.type === "tool_call" && e.delta.index === 0 ? e.delta.arguments : "")).join("");
		assert.equal(args, "{\"city\": \"Paris\"}");
	}
});

test("CRLF line endings and comments in an Anthropic stream are understood", async () => {
	const body = ": keep-alive\r\n\r\n" + sse(ANTHROPIC_EVENTS, true).replace(/\n/g, "\r\n");
	const { reply } = await run(ANTHROPIC, body, 1);
	assert.equal(reply.message.content, TEXT);
});

test("a stream that ends early is an error, and message_end follows message_start", async () => {
	const cut = OPENAI_TEXT.slice(0, OPENAI_TEXT.indexOf("世界"));
	const events: LlmEvent[] = [];
	const error = await assert.rejects(run({ ...OPENAI }, cut.slice(0, cut.lastIndexOf("\n\n") + 2), 3, events), "ended before the reply was complete");
	assert.ok(error instanceof LlmError && !error.retryable);
	assert.deepEqual(events.map((e) => e.type).filter((t) => t !== "message_update"), ["message_start", "message_end"]);
	const end = events[events.length - 1];
	assert.ok(end.type === "message_end" && /ended before/.test(end.error ?? ""), "message_end carries the error");

	const anthropicCut = sse(ANTHROPIC_EVENTS.slice(0, -1));
	await assert.rejects(run(ANTHROPIC, anthropicCut, 0), "ended before the reply was complete");
});

test("a malformed frame is a protocol error naming the stream", async () => {
	const body = sse([openaiChunk({ content: "a" })]) + "data: {\"choices\": [\n\n";
	const error = await assert.rejects(run(OPENAI, body, 0), "not JSON");
	assert.equal((error as LlmError).kind, "protocol");
});

test("an Anthropic error event mid-stream is retried as an overload, then succeeds", async () => {
	const overloaded = sse([ANTHROPIC_EVENTS[0], { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]);
	const transport = new FakeTransport(stream(overloaded, 4), stream(sse(ANTHROPIC_EVENTS), 4));
	const clock = new FakeClock();
	const llm = new Llm({ config: config(ANTHROPIC), transport, clock });
	const events: LlmEvent[] = [];
	const reply = await llm.chat({ messages: [{ role: "user", content: "hi" }] }, { onEvent: (e) => events.push(e) });
	assert.equal(reply.attempts, 2);
	assert.deepEqual(clock.sleeps, [2000]);
	const marks = events.filter((e) => e.type !== "message_update").map((e) => (e.type === "message_start" ? `start${e.attempt}` : e.type === "message_end" ? (e.error ? "end:error" : "end") : ""));
	assert.deepEqual(marks, ["start1", "end:error", "start2", "end"]);
	llm.close();
});

test("a reply larger than LLM_REPLY_MAX_BYTES is cut off with an error, not kept", async () => {
	const piece = "x".repeat(8000);
	const frames: unknown[] = [openaiChunk({ role: "assistant", content: "" })];
	for (let n = 0; n * piece.length <= LLM_REPLY_MAX_BYTES; n++) frames.push(openaiChunk({ content: piece }));
	frames.push(openaiChunk({}, "stop"), "[DONE]");
	await assert.rejects(run(OPENAI, sse(frames), 16384), "larger than");
});

test("an onEvent listener that throws does not break the call", async () => {
	const transport = new FakeTransport(stream(OPENAI_TEXT, 5));
	const llm = new Llm({ config: config(OPENAI), transport, clock: new FakeClock() });
	const reply = await llm.chat({ messages: [{ role: "user", content: "hi" }] }, { onEvent: () => { throw new Error("listener bug"); } });
	assert.equal(reply.message.content, TEXT);
	llm.close();
});

test("an unstreamed profile sends stream off and still emits start, deltas and end", async () => {
	const whole = { choices: [{ message: { role: "assistant", content: TEXT }, finish_reason: "stop" }], model: "gpt-test", usage: { prompt_tokens: 1, completion_tokens: 2 } };
	const transport = new FakeTransport(() => ({ status: 200, headers: {}, body: JSON.stringify(whole), bytesSent: 1, bytesReceived: 2, reusedConnection: false, firstByteMs: 1, durationMs: 1 }));
	const llm = new Llm({ config: config({ ...OPENAI, "llm.stream": "off" }), transport, clock: new FakeClock() });
	const events: LlmEvent[] = [];
	const reply = await llm.chat({ messages: [{ role: "user", content: "hi" }] }, { onEvent: (e) => events.push(e) });
	assert.equal(reply.message.content, TEXT);
	assert.equal(transport.requests[0].body.stream, undefined);
	assert.equal(transport.requests[0].request.onChunk, undefined);
	assert.deepEqual(events.map((e) => e.type), ["message_start", "message_update", "message_end"]);
	llm.close();
});
