// Request bodies in byte pieces (modules/agent/llm/body.ts): for both protocols the
// bytes written into the pool buffer are exactly JSON.stringify of the body
// toBody() builds, with history messages given as stored placeholders or
// whole; a stored message is loaded once per protocol and then copied; the
// stable prefix is encoded once until what it was made from changes.
import { assert, test } from "testing";
import { builtInRegistry } from "llm/backends";
import { anthropicPieces, toAnthropicRequest } from "llm/anthropic";
import { openaiPieces, toOpenAIRequest } from "llm/openai";
import { BodyWriter, loadStored, writeBody, type PieceSpec, type Prefix } from "llm/body";
import { resolveProfile } from "llm/profiles";
import type { ChatRequest, Message, ModelProfile, StoredRef, ToolDefinition } from "llm/types";
import { heapBuffers, psramBuffers, type BufferPool } from "util/buffers";
import * as psram from "psram";
import { placeholder } from "store/history";
import { ANTHROPIC, OPENAI } from "./llm_fakes";

function profile(values: Record<string, string>): ModelProfile {
	const result = resolveProfile((name) => values[name], builtInRegistry());
	if (!result.ok) throw new Error(result.guidance);
	return result.profile;
}

const TOOLS: ToolDefinition[] = [
	{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
	{ type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } },
];

const HISTORY: Message[] = [
	{ role: "user", content: "Weather in Paris, and the time? «ü» 🌡" },
	{
		role: "assistant", content: null, reasoning_content: "two tools", reasoning_signature: "sig",
		tool_calls: [
			{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
			{ id: "call_2", type: "function", function: { name: "get_time", arguments: "not json" } },
		],
	},
	{ role: "tool", tool_call_id: "call_1", content: "18 C, cloudy" },
	{ role: "tool", tool_call_id: "call_2", content: "no clock", is_error: true },
	{ role: "assistant", content: "It is 18 C." },
	{ role: "user", content: [{ type: "text", text: "and this?" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] },
	{ role: "assistant", content: "", raw: { protocol: "anthropic", message: { role: "assistant", content: [{ type: "text", text: "A cat." }] } } },
	{ role: "assistant", content: "Also a dog.", raw: { protocol: "openai", message: { role: "assistant", content: "Also a dog.", refusal: null } } },
	{ role: "user", content: "an interrupted question" },
];

/** Stored placeholders for messages, counting how often each is loaded. */
function stored(messages: Message[]): { placeholders: Message[]; loads: () => number } {
	let loads = 0;
	const placeholders = messages.map((message) => {
		const ref: StoredRef = { load: () => (loads++, message) };
		return placeholder(message, ref);
	});
	return { placeholders, loads: () => loads };
}

/** The request the core builds: system first (breakpoint), history (breakpoint on its last), the question, this request's rounds. */
function request(history: Message[], runtime: Message[] = []): ChatRequest {
	const marked = history.length ? [...history.slice(0, -1), { ...history[history.length - 1], cache_breakpoint: true }] : [];
	return {
		messages: [
			{ role: "system", content: "You are a board.\n\n## profile\nBe brief.", cache_breakpoint: true },
			...marked,
			{ role: "user", content: "What now?\n\n[request context]\ntime: 2026-12-01 14:00" },
			...runtime,
		],
		tools: TOOLS,
	};
}

function written(spec: PieceSpec, req: ChatRequest, p: ModelProfile, prefix?: Prefix, buffers: BufferPool = heapBuffers): { text: string; prefix: Prefix | undefined; notes: string[] } {
	const writer = new BodyWriter(buffers, 64);   // small start: the body grows several times
	const notes: string[] = [];
	try {
		const kept = writeBody(spec, req, p, writer, buffers, prefix, notes);
		const view = writer.view();
		const copy = new Uint8Array(view.length);
		copy.set(view);
		return { text: String.fromArrayBuffer(copy.buffer as ArrayBuffer), prefix: kept, notes };
	} finally {
		writer.release();
	}
}

const RUNTIME: Message[] = [
	{ role: "assistant", content: null, tool_calls: [{ id: "call_9", type: "function", function: { name: "get_time", arguments: "{}" } }] },
	{ role: "tool", tool_call_id: "call_9", content: "{\"utc\":\"14:00\"}" },
];

for (const [name, values, spec, toBody] of [
	["openai", OPENAI, openaiPieces, (r: ChatRequest, p: ModelProfile) => toOpenAIRequest(r, p, p.stream)],
	["anthropic", ANTHROPIC, anthropicPieces, (r: ChatRequest, p: ModelProfile) => toAnthropicRequest(r, p, p.stream).body],
] as const) {
	test(`${name}: the body in pieces is byte for byte the JSON of toBody(), with the history stored or whole`, () => {
		const p = profile(values);
		for (const history of [[], HISTORY.slice(0, 1), HISTORY.slice(0, 4), HISTORY, HISTORY.slice(4)]) {
			for (const runtime of [[], RUNTIME]) {
				const whole = request(history, runtime);
				const expected = JSON.stringify(toBody(whole, p));
				assert.equal(written(spec, whole, p).text, expected, `whole history of ${history.length}, ${runtime.length} runtime`);
				const s = stored(history);
				assert.equal(written(spec, request(s.placeholders, runtime), p).text, expected, `stored history of ${history.length}, ${runtime.length} runtime`);
			}
		}
	});

	test(`${name}: a stored message is loaded once, then its piece is copied; the prefix is kept until the system prompt or tools change`, () => {
		const p = profile(values);
		const s = stored(HISTORY);
		const first = written(spec, request(s.placeholders), p);
		assert.equal(s.loads(), HISTORY.length);
		const second = written(spec, request(s.placeholders, RUNTIME), p, first.prefix);
		assert.equal(s.loads(), HISTORY.length, "no load on the next round");
		assert.ok(second.prefix === first.prefix, "the prefix is the same object");
		assert.equal(second.text, JSON.stringify(toBody(request(HISTORY, RUNTIME), p)));
		const changed = request(s.placeholders);
		changed.messages[0] = { role: "system", content: "A new persona.", cache_breakpoint: true };
		const third = written(spec, changed, p, second.prefix);
		assert.ok(third.prefix !== second.prefix, "a new system prompt makes a new prefix");
		assert.equal(third.text, JSON.stringify(toBody(loadStored(changed), p)));
		const fewerTools = { ...request(s.placeholders), tools: TOOLS.slice(0, 1) };
		assert.ok(written(spec, fewerTools, p, third.prefix).prefix !== third.prefix, "other tools make a new prefix");
	});

	test(`${name}: the body grows inside a PSRAM buffer, which goes back to the pool on release`, () => {
		const p = profile(values);
		const buffers = psramBuffers(psram);
		const before = psram.stats().psram.used;
		const s = stored(HISTORY);
		const result = written(spec, request(s.placeholders, RUNTIME), p, undefined, buffers);
		assert.equal(result.text, JSON.stringify(toBody(request(HISTORY, RUNTIME), p)));
		assert.ok(psram.stats().psram.used > before, "the prefix and the stored pieces stay in PSRAM");
	});
}

/** Placeholders of one store window: every ref shares the group, keyed by its index. */
function windowOf(messages: Message[], group: object, first = 0): Message[] {
	return messages.map((message, i) => placeholder(message, { group, key: first + i, load: () => message }));
}

for (const [name, values, spec, toBody] of [
	["openai", OPENAI, openaiPieces, (r: ChatRequest, p: ModelProfile) => toOpenAIRequest(r, p, p.stream)],
	["anthropic", ANTHROPIC, anthropicPieces, (r: ChatRequest, p: ModelProfile) => toAnthropicRequest(r, p, p.stream).body],
] as const) {
	test(`${name}: a window's pieces share one pool buffer, and what left the window is let go as it slides on`, () => {
		const p = profile(values);
		const buffers = psramBuffers(psram);
		const group = {};
		// A long conversation, seen through a window of 12 that slides by 2 per request.
		const all: Message[] = [];
		for (let i = 0; i < 400; i++) all.push(i % 2 ? { role: "assistant", content: `answer ${i} ${"x".repeat(i % 37)}` } : { role: "user", content: `question ${i}` });
		const placeholders = windowOf(all, group);
		let prefix: Prefix | undefined = undefined;
		const count = psram.stats().psram.count;
		let most = 0;
		for (let start = 0; start + 12 <= all.length; start += 2) {
			const result = written(spec, request(placeholders.slice(start, start + 12)), p, prefix, buffers);
			prefix = result.prefix;
			assert.equal(result.text, JSON.stringify(toBody(request(all.slice(start, start + 12)), p)), `window at ${start}`);
			most = Math.max(most, psram.stats().psram.count - count);
		}
		assert.ok(most <= 2, `the prefix and one arena for the window's pieces, not one buffer per message (${most} buffers at most)`);
		const used = psram.stats().psram.used;
		for (let start = 0; start + 12 <= all.length; start += 2) written(spec, request(placeholders.slice(start, start + 12)), p, prefix, buffers);
		assert.ok(psram.stats().psram.used <= used + 32 * 1024, "sliding the window again does not grow the arena without end");
	});
}

test("anthropic: a system message after the conversation started cannot go in pieces; the caller falls back", () => {
	const p = profile(ANTHROPIC);
	const req: ChatRequest = { messages: [{ role: "user", content: "hi" }, { role: "system", content: "late" }] };
	const writer = new BodyWriter(heapBuffers);
	assert.equal(writeBody(anthropicPieces, req, p, writer, heapBuffers, undefined, []), undefined);
	writer.release();
});

test("anthropic: more than the allowed cache breakpoints are left out with a note, as toBody does", () => {
	const p = profile(ANTHROPIC);
	const messages: Message[] = [{ role: "system", content: "s", cache_breakpoint: true }];
	for (let i = 0; i < 6; i++) messages.push({ role: i % 2 ? "assistant" : "user", content: `m${i}`, cache_breakpoint: true });
	const req: ChatRequest = { messages };
	const result = written(anthropicPieces, req, p);
	const expected = toAnthropicRequest(req, p, p.stream);
	assert.equal(result.text, JSON.stringify(expected.body));
	assert.deepEqual(result.notes, expected.notes);
});

test("loadStored gives whole messages, keeping a placeholder's cache breakpoint", () => {
	const s = stored(HISTORY.slice(0, 2));
	const req = request(s.placeholders);
	const loaded = loadStored(req);
	assert.deepEqual(loaded.messages[1], HISTORY[0]);
	assert.deepEqual(loaded.messages[2], { ...HISTORY[1], cache_breakpoint: true });
	assert.ok(loadStored(loaded) === loaded, "nothing stored: the same request");
});

test("a backend gives its kept prefix back to the pool when it is replaced and at deinit", async () => {
	const buffers = psramBuffers(psram);
	const sent: Uint8Array[] = [];
	const transport = {
		request: async (r: { body?: unknown }) => {
			sent.push(r.body as Uint8Array);
			return { status: 200, headers: {}, body: JSON.stringify({ model: "m", choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] }), bytesSent: 0, bytesReceived: 0, firstByteMs: 0 };
		},
	};
	const p = { ...profile(OPENAI), stream: false };
	const backend = builtInRegistry().get("openai_compatible")!.create();
	const before = psram.stats().psram.used;
	backend.init(p, { transport: transport as never, now: () => 0, buffers });
	await backend.chat(request([]), {});
	const withPrefix = psram.stats().psram.used;
	assert.ok(withPrefix > before, "the prefix is kept in PSRAM");
	const other = request([]);
	other.messages[0] = { role: "system", content: "another system prompt, a little longer than the first one" };
	await backend.chat(other, {});
	assert.ok(psram.stats().psram.used - withPrefix < 200, "the replaced prefix went back; only the new one is kept");
	backend.deinit();
	assert.equal(psram.stats().psram.used, before, "deinit gives the prefix back");
	assert.equal(sent.length, 2);
});
