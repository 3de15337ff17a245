// Streaming: SSE replies of both protocols assembled into one message, whatever
// the byte boundaries, with events in order and failures ending in clear errors.
import { assert, test } from "testing";
import { LLM_REPLY_BLOCKS_MAX, LLM_REPLY_MAX_BYTES, LLM_REPLY_TOOL_CALLS_MAX, LLM_TOOL_NAME_MAX_CHARS } from "budgets";
import { Llm } from "llm/runtime";
import { LlmError, type ChatResponse, type LlmEvent } from "llm/types";
import { ANTHROPIC, FakeClock, FakeTransport, OPENAI, bytesOf, config, sse, status, stream, streamBytes, streamFrames, wholeBytes, type Reply } from "./llm_fakes";
import { decodeUtf8, encodeUtf8 } from "net/utf8";
import { HttpError, type HttpRequest, type HttpSettle, type HttpTransport } from "net/types";

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

test("a stream that grows its tool calls, a call's name or its blocks without end is a protocol error at the bound", async () => {
	const calls = (count: number) => sse([
		openaiChunk({ role: "assistant", content: null }),
		...Array.from({ length: count }, (_, i) => openaiChunk({ tool_calls: [{ index: i, id: `call_${i}`, type: "function", function: { name: "get_time", arguments: "{}" } }] })),
		openaiChunk({}, "tool_calls"),
		"[DONE]",
	]);
	assert.equal((await run(OPENAI, calls(LLM_REPLY_TOOL_CALLS_MAX), 0)).reply.message.tool_calls!.length, LLM_REPLY_TOOL_CALLS_MAX);
	let error = await assert.rejects(run(OPENAI, calls(LLM_REPLY_TOOL_CALLS_MAX + 1), 0), `more than ${LLM_REPLY_TOOL_CALLS_MAX} tool calls`);
	assert.equal((error as LlmError).kind, "protocol");
	// Each fragment names the call differently: the assembler appends each (servers that split a name).
	const names = sse([
		openaiChunk({ role: "assistant", content: null }),
		...Array.from({ length: LLM_TOOL_NAME_MAX_CHARS + 1 }, (_, i) => openaiChunk({ tool_calls: [{ index: 0, ...(i ? {} : { id: "call_a" }), function: { name: "ab"[i % 2] } }] })),
		openaiChunk({}, "tool_calls"),
		"[DONE]",
	]);
	error = await assert.rejects(run(OPENAI, names, 0), `name in the LLM reply stream is over ${LLM_TOOL_NAME_MAX_CHARS} characters`);
	assert.equal((error as LlmError).kind, "protocol");
	const head = ANTHROPIC_EVENTS.slice(0, 1), tail = ANTHROPIC_EVENTS.slice(-2);
	const uses = (count: number, type = "tool_use") => sse([...head, ...Array.from({ length: count }, (_, i) => [
		{ type: "content_block_start", index: i, content_block: type === "tool_use" ? { type, id: `toolu_${i}`, name: "get_time", input: {} } : { type, text: "" } },
		{ type: "content_block_stop", index: i },
	]).flat(), ...tail]);
	assert.equal((await run(ANTHROPIC, uses(LLM_REPLY_TOOL_CALLS_MAX), 0)).reply.message.tool_calls!.length, LLM_REPLY_TOOL_CALLS_MAX);
	error = await assert.rejects(run(ANTHROPIC, uses(LLM_REPLY_TOOL_CALLS_MAX + 1), 0), `more than ${LLM_REPLY_TOOL_CALLS_MAX} tool calls`);
	assert.equal((error as LlmError).kind, "protocol");
	error = await assert.rejects(run(ANTHROPIC, uses(LLM_REPLY_BLOCKS_MAX + 1, "text"), 0), `more than ${LLM_REPLY_BLOCKS_MAX} content blocks`);
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

/** A chat over transport whose listener keeps nothing (heard: deltas are made) or none at all. */
async function chatOnce(values: Record<string, string>, reply: Reply, heard: boolean, events?: LlmEvent[]): Promise<ChatResponse> {
	const llm = new Llm({ config: config(values), transport: new FakeTransport(reply), clock: new FakeClock() });
	try {
		return await llm.chat({ messages: [{ role: "user", content: "hi" }] }, heard ? { onEvent: (e) => events?.push(e) } : {});
	} finally {
		llm.close();
	}
}

test("a reply larger than LLM_REPLY_MAX_BYTES is cut off with an error, not kept", async () => {
	const piece = "x".repeat(8000);
	function* frames() {
		yield openaiChunk({ role: "assistant", content: "" });
		for (let n = 0; n * piece.length <= LLM_REPLY_MAX_BYTES; n++) yield openaiChunk({ content: piece });
		yield openaiChunk({}, "stop");
		yield "[DONE]";
	}
	for (const heard of [true, false])
		await assert.rejects(chatOnce(OPENAI, streamFrames(frames()), heard), `larger than ${LLM_REPLY_MAX_BYTES} bytes of text, reasoning and tool arguments`);
});

// Streamed answers as the providers frame them (issue 25): OpenAI sends ~200
// bytes of JSON around each token, Anthropic ~100, so the reply cap counted on
// the raw stream cut a 256 KiB cap at ~1,300 OpenAI tokens. The cap is on the
// reply's content (text, reasoning, tool arguments); the stream has its own
// bound (LLM_STREAM_MAX_BYTES).
const TOKENS = 3000;
const TOKEN_TEXTS = [" the", " quick", " 世界", " fox", "\n", " 😀", " jumps", ' "over"'];
type Token = { kind: "reasoning" | "text" | "args"; piece: string };
/** TOKENS tokens: a tenth reasoning, a tenth a tool call's arguments, the rest the answer's text; and what each adds up to. */
function longAnswer() {
	const tokens: Token[] = [];
	const whole = { reasoning: "", text: "", args: "" };
	for (let i = 0; i < TOKENS; i++) {
		const kind = i < TOKENS / 10 ? "reasoning" : i < TOKENS * 0.9 ? "text" : "args";
		const piece = kind !== "args" ? TOKEN_TEXTS[i % TOKEN_TEXTS.length] : i === TOKENS * 0.9 ? '{"note":"' : i === TOKENS - 1 ? '"}' : `w${i} `;
		tokens.push({ kind, piece });
		whole[kind] += piece;
	}
	return { tokens, ...whole };
}

function realOpenAI(delta: object, finish: string | null = null) {
	return { id: "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", object: "chat.completion.chunk", created: 1741569952, model: "gpt-4o-2024-08-06", service_tier: "default", system_fingerprint: "fp_f9f4fb6dbf", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], obfuscation: "a4Xk" };
}

test("a 3,000-token streamed answer with OpenAI's framing (~200 bytes a token) completes: the cap counts the reply's content, not the stream's bytes", async () => {
	const answer = longAnswer();
	function* frames() {
		yield realOpenAI({ role: "assistant", content: "" });
		for (const { kind, piece } of answer.tokens) {
			if (kind === "reasoning") yield realOpenAI({ reasoning_content: piece });
			else if (kind === "text") yield realOpenAI({ content: piece });
			else if (piece.startsWith("{")) yield realOpenAI({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "note", arguments: piece } }] });
			else yield realOpenAI({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
		}
		yield realOpenAI({}, "tool_calls");
		yield "[DONE]";
	}
	for (const heard of [true, false]) {
		const sent = { bytes: 0 }, events: LlmEvent[] = [];
		const reply = await chatOnce(OPENAI, streamFrames(frames(), false, sent), heard, events);
		assert.ok(sent.bytes > 2 * LLM_REPLY_MAX_BYTES, `the stream (${sent.bytes} bytes) is over twice the reply cap`);
		assert.equal(reply.message.content, answer.text);
		assert.equal(reply.message.reasoning_content, answer.reasoning);
		assert.equal(reply.message.tool_calls?.[0].function.arguments, answer.args);
		if (heard) assert.equal(textOf(events, "text"), answer.text);
	}
});

test("a 3,000-token streamed answer with Anthropic's framing (~100 bytes a token) completes", async () => {
	const answer = longAnswer();
	function* frames() {
		yield { type: "message_start", message: { id: "msg_01XFDUDYJgAACzvnptvVoYEL", type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, output_tokens: 1 } } };
		yield { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } };
		yield { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } };
		yield { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_1", name: "note", input: {} } };
		for (const { kind, piece } of answer.tokens) {
			if (kind === "reasoning") yield { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: piece } };
			else if (kind === "text") yield { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: piece } };
			else yield { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: piece } };
		}
		for (const index of [0, 1, 2]) yield { type: "content_block_stop", index };
		yield { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: TOKENS } };
		yield { type: "message_stop" };
	}
	for (const heard of [true, false]) {
		const sent = { bytes: 0 }, events: LlmEvent[] = [];
		const reply = await chatOnce(ANTHROPIC, streamFrames(frames(), true, sent), heard, events);
		assert.ok(sent.bytes > LLM_REPLY_MAX_BYTES, `the stream (${sent.bytes} bytes) is over the reply cap`);
		assert.equal(reply.message.content, answer.text);
		assert.equal(reply.message.reasoning_content, answer.reasoning);
		assert.deepEqual(JSON.parse(reply.message.tool_calls?.[0].function.arguments ?? ""), JSON.parse(answer.args));
		if (heard) assert.equal(textOf(events, "reasoning"), answer.reasoning);
	}
});

test("the reply cap counts text, reasoning and tool arguments together, heard or not, in both protocols", async () => {
	// A third of the cap and more, in frames of 8000 bytes (an SSE event is at most SSE_EVENT_MAX_BYTES).
	const third = Math.floor(LLM_REPLY_MAX_BYTES / 3) + 16;
	const pieces = (make: (piece: string) => unknown) => {
		const out: unknown[] = [];
		for (let at = 0; at < third; at += 8000) out.push(make("y".repeat(Math.min(8000, third - at))));
		return out;
	};
	const openai = (args: boolean) => [
		openaiChunk({ role: "assistant", content: "" }),
		...pieces((piece) => openaiChunk({ reasoning_content: piece })),
		...pieces((piece) => openaiChunk({ content: piece })),
		...(args ? [openaiChunk({ tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "f", arguments: "" } }] }), ...pieces((piece) => openaiChunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }))] : []),
		openaiChunk({}, "stop"), "[DONE]",
	];
	const anthropic = () => [
		ANTHROPIC_EVENTS[0],
		{ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
		...pieces((thinking) => ({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking } })),
		{ type: "content_block_stop", index: 0 },
		{ type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
		...pieces((text) => ({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text } })),
		{ type: "content_block_stop", index: 1 },
		{ type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "t", name: "f", input: {} } },
		...pieces((partial_json) => ({ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json } })),
		{ type: "content_block_stop", index: 2 },
		{ type: "message_stop" },
	];
	for (const heard of [true, false]) {
		await assert.rejects(chatOnce(OPENAI, streamFrames(openai(true)), heard), `larger than ${LLM_REPLY_MAX_BYTES} bytes`);
		await assert.rejects(chatOnce(ANTHROPIC, streamFrames(anthropic(), true), heard), `larger than ${LLM_REPLY_MAX_BYTES} bytes`);
		// Two thirds in all: it completes.
		const reply = await chatOnce(OPENAI, streamFrames(openai(false)), heard);
		assert.equal(reply.message.content?.length, third);
	}
});

test("an onEvent listener that throws does not break the call", async () => {
	const transport = new FakeTransport(stream(OPENAI_TEXT, 5));
	const llm = new Llm({ config: config(OPENAI), transport, clock: new FakeClock() });
	const reply = await llm.chat({ messages: [{ role: "user", content: "hi" }] }, { onEvent: () => { throw new Error("listener bug"); } });
	assert.equal(reply.message.content, TEXT);
	llm.close();
});

test("a finished call's callbacks no longer reach its listener: what the HTTP client keeps of a call cannot keep the caller's request alive", async () => {
	const { events, transport } = await run(OPENAI, OPENAI_TEXT, 7);
	const count = events.length;
	assert.ok(count > 3, "the call emitted its events");
	// The transport still holds the request (as a pooled connection or a parser may):
	// its onChunk, and through it the SSE parser and the assembler, must lead nowhere.
	const kept = transport.requests[0].request.onChunk!;
	try {
		kept(new Uint8Array(ArrayBuffer.fromString(OPENAI_TEXT)));
	} catch {
		// a finished stream may refuse more bytes; what matters is who hears of them
	}
	assert.equal(events.length, count, "no event after the call ended");
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

// ---- the byte-level reader (llm/scan) at the edges of chunks and events ----

async function runReply(values: Record<string, string>, reply: Reply, events: LlmEvent[] = []): Promise<ChatResponse> {
	const llm = new Llm({ config: config(values), transport: new FakeTransport(reply), clock: new FakeClock() });
	try {
		return await llm.chat({ messages: [{ role: "user", content: "hi" }] }, { onEvent: (e) => events.push(e) });
	} finally {
		llm.close();
	}
}

const openaiFrame = (delta: string) => `data: {"choices":[{"index":0,"delta":${delta},"finish_reason":null}]}\n\n`;
const OPENAI_END = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

test("invalid UTF-8 in a streamed delta becomes U+FFFD as before, wherever the chunks split it", async () => {
	// A 3-byte sequence cut short, a bad lead byte, and a 4-byte emoji: each split across chunks somewhere.
	const event = bytesOf("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a", [0xE4, 0xB8], "b", [0xFF], "c", [0xF0, 0x9F, 0x98, 0x80], "\"}}]}");
	const body = bytesOf("data: ", Array.from(event), "\n\n", OPENAI_END);
	const expected = (JSON.parse(decodeUtf8(event)) as { choices: { delta: { content: string } }[] }).choices[0].delta.content;
	assert.equal(expected, "a\uFFFDb\uFFFDc😀");
	for (let piece = 1; piece <= 9; piece++) {
		const events: LlmEvent[] = [];
		const reply = await runReply(OPENAI, streamBytes(body, piece), events);
		assert.equal(reply.message.content, expected, `piece ${piece}`);
		assert.equal(textOf(events, "text"), expected);
	}
});

test("the model's name, repeated by every OpenAI event, is the last one sent: plain, escaped, changed or empty", async () => {
	const frame = (model: string) => `data: {"model":"${model}","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n\n`;
	// Raw JSON text of each event's model; the reply's model is the last one decoded (an empty one falls back to the profile's).
	const cases: [string[], string][] = [
		[["m-1", "m-1", "m-1"], "m-1"],
		[["m-1", "m-2"], "m-2"],
		[["m\\u002d1", "m-1", "m\\u002d1"], "m-1"],
		[["m\\u002d1", ""], "gpt-test"],
		[["m-1", ""], "gpt-test"],
		[["", "m-1"], "m-1"],
		[["m-1", "m-12", "m-"], "m-"],
		[["m\\\"1", "m\\\"1"], "m\"1"],
	];
	for (const [models, expected] of cases) {
		const body = models.map(frame).join("") + OPENAI_END;
		for (const piece of [1, 0]) {
			const reply = await runReply(OPENAI, stream(body, piece));
			assert.equal(reply.model, expected, `${models.join(" ")} piece ${piece}`);
			assert.equal(reply.message.content, "x".repeat(models.length));
		}
	}
});

test("escaped surrogate pairs split across chunk boundaries are one character; a pair split across events joins as before", async () => {
	const body = openaiFrame("{\"content\":\"x\\ud83d\\ude00y\"}") + openaiFrame("{\"content\":\"\\ud83d\"}") + openaiFrame("{\"content\":\"\\ude00\"}") + OPENAI_END;
	const across = JSON.parse("\"\\ud83d\"") + JSON.parse("\"\\ude00\"");
	for (let piece = 1; piece <= 13; piece++) {
		const reply = await runReply(OPENAI, stream(body, piece));
		assert.equal(reply.message.content, "x😀y" + across, `piece ${piece}`);
	}
	const anthropic = sse([
		{ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } },
		{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
		"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\\uD83D\\uDE00 \\u00e9\"}}",
		{ type: "content_block_stop", index: 0 },
		{ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } },
		{ type: "message_stop" },
	]);
	for (const piece of [1, 2, 5, 0]) {
		const reply = await runReply(ANTHROPIC, stream(anthropic, piece));
		assert.equal(reply.message.content, "😀 é", `anthropic piece ${piece}`);
	}
});

test("nested JSON in streamed tool arguments survives its escapes, for both protocols", async () => {
	const args = { query: { all: [{ term: "a\"b" }, { range: { n: [1, 2.5, null] } }], note: "é\n😀" }, flat: true };
	const wire = JSON.stringify(JSON.stringify(args)); // the arguments string, as a JSON string
	const cut = [wire.slice(0, 17) + "\"", "\"" + wire.slice(17, 40) + "\"", "\"" + wire.slice(40)];
	// Cuts must not split an escape: move a cut that lands after a backslash.
	const pieces = cut.every((p) => !/[^\\]\\"$/.test(p)) ? cut : [wire];
	const body = openaiFrame("{\"tool_calls\":[{\"index\":0,\"id\":\"call_n\",\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"\"}}]}")
		+ pieces.map((p) => openaiFrame(`{"tool_calls":[{"index":0,"function":{"arguments":${p}}}]}`)).join("")
		+ "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
	for (const piece of [1, 3, 0]) {
		const reply = await runReply(OPENAI, stream(body, piece));
		assert.deepEqual(JSON.parse(reply.message.tool_calls?.[0].function.arguments ?? ""), args, `openai piece ${piece}`);
	}
	const json = JSON.stringify(args);
	const anthropic = sse([
		{ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } },
		{ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_n", name: "search", input: {} } },
		{ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: json.slice(0, 9) } },
		{ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: json.slice(9) } },
		{ type: "content_block_stop", index: 0 },
		{ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } },
		{ type: "message_stop" },
	]);
	for (const piece of [1, 4, 0]) {
		const reply = await runReply(ANTHROPIC, stream(anthropic, piece));
		assert.deepEqual(JSON.parse(reply.message.tool_calls?.[0].function.arguments ?? ""), args, `anthropic piece ${piece}`);
		const raw = reply.message.raw?.message as { content: { input: unknown }[] };
		assert.deepEqual(raw.content[0].input, args, "the raw block keeps the input as an object");
	}
});

test("a stream truncated inside an event, inside a string, is incomplete; a truncated event that ends is not JSON", async () => {
	const whole = openaiFrame("{\"content\":\"Héllo, wor\"}") + OPENAI_END;
	const inString = whole.indexOf("wor");
	for (const piece of [1, 7, 0]) {
		await assert.rejects(runReply(OPENAI, stream(whole.slice(0, inString), piece)), "ended before the reply was complete");
	}
	const anthropicEvents = sse([
		{ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } },
		{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
		{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "cut here" } },
	]);
	await assert.rejects(runReply(ANTHROPIC, stream(anthropicEvents.slice(0, anthropicEvents.length - 8), 3)), "ended before the reply was complete");
	// The event's blank line came, but its JSON was cut: that is a malformed event.
	const cutEvent = anthropicEvents.slice(0, anthropicEvents.lastIndexOf("cut here")) + "\n\n";
	const error = await assert.rejects(runReply(ANTHROPIC, stream(cutEvent, 5)), "the LLM stream sent an event that is not JSON");
	assert.equal((error as LlmError).kind, "protocol");
});

test("an unstreamed reply is read from the body bytes the client hands over, and a cut one is not JSON", async () => {
	const UNSTREAMED = { ...OPENAI, "llm.stream": "off" };
	const whole = { id: "x", model: "gpt-test", choices: [{ index: 0, message: { role: "assistant", content: TEXT, refusal: null, annotations: [] }, finish_reason: "stop" }, { index: 1, message: { role: "assistant", content: "other" } }], usage: { prompt_tokens: 3, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } } };
	const events: LlmEvent[] = [];
	const reply = await runReply(UNSTREAMED, wholeBytes(encodeUtf8(JSON.stringify(whole))), events);
	assert.equal(reply.message.content, TEXT);
	assert.deepEqual(reply.message.raw, { protocol: "openai", message: whole.choices[0].message });
	assert.deepEqual(reply.usage, { input_tokens: 3, output_tokens: 4, cache_read_tokens: 2, cache_write_tokens: 0 });
	assert.equal(reply.model, "gpt-test");
	assert.deepEqual(events.map((e) => e.type), ["message_start", "message_update", "message_end"]);
	const text = JSON.stringify(whole);
	await assert.rejects(runReply(UNSTREAMED, wholeBytes(encodeUtf8(text.slice(0, 50)))), `the LLM reply is not JSON (50 bytes starting ${JSON.stringify(text.slice(0, 40))})`);
	await assert.rejects(runReply(UNSTREAMED, wholeBytes(encodeUtf8("{\"error\":{\"message\":\"bad key\"}}"))), "the LLM reply is an error: bad key");
	const anthropic = { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [{ type: "text", text: TEXT }, { type: "tool_use", id: "t", name: "f", input: { a: { b: [1] } } }], stop_reason: "tool_use", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 6 } };
	const fromBytes = await runReply({ ...ANTHROPIC, "llm.stream": "off" }, wholeBytes(encodeUtf8(JSON.stringify(anthropic))));
	assert.deepEqual(fromBytes.message.raw, { protocol: "anthropic", message: anthropic });
	assert.equal(fromBytes.finish_reason, "tool_calls");
});

/** A transport with start() that answers before start() returns (settle heard synchronously), as the HTTP client may. */
class SynchronousTransport extends FakeTransport implements HttpTransport {
	starts = 0;

	start(request: HttpRequest, settle: HttpSettle): void {
		this.starts++;
		this.requests.push({ request, body: undefined });
		const reply = this.replies.shift();
		try {
			const response = reply ? reply(request) : undefined;
			if (!response || response instanceof Promise) throw new HttpError("connect", "fake transport: a synchronous reply was expected");
			settle.resolve(response);
		} catch (error) {
			settle.reject(error instanceof HttpError ? error : new HttpError("protocol", String(error)));
		}
	}
}

test("through a transport's start() (no promise per request) a stream assembles the same reply, and a refused attempt is retried", async () => {
	const transport = new SynchronousTransport(status(503, "overloaded"), stream(OPENAI_TEXT, 5));
	const events: LlmEvent[] = [];
	const llm = new Llm({ config: config(OPENAI), transport, clock: new FakeClock() });
	try {
		const reply = await llm.chat({ messages: [{ role: "user", content: "hi" }] }, { onEvent: (e) => events.push(e) });
		assert.equal(reply.message.content, TEXT);
		assert.equal(reply.attempts, 2);
		assert.equal(transport.starts, 2, "both attempts went through start()");
		assert.ok(transport.requests[1].request.onChunk, "streamed through onChunk");
		assert.equal(textOf(events, "text"), TEXT);
		assert.deepEqual(events.filter((e) => e.type === "message_start").map((e) => (e as { attempt: number }).attempt), [2]);
	} finally {
		llm.close();
	}
});
