// llm/openai: the openai_compatible backend (OpenAI, DeepSeek, OpenRouter, Ollama,
// vLLM, ...): POST {base_url}/chat/completions. Canonical messages already are this
// protocol, so the request side only strips our own fields and sends an assistant
// message's raw form back verbatim when it came from this protocol.
//
// Replies: choices[0].message must be an assistant message; it becomes `raw`, and the
// canonical message is derived from raw (one path for streamed and whole replies).
// Reasoning arrives as `reasoning_content` (DeepSeek) or `reasoning` (OpenRouter).
// Streams are assembled by tool-call `index`; a stream must end with a
// finish_reason or `data: [DONE]`, else the reply is incomplete.
import { arrayAt, numberAt, objectAt, stringAt, emptyUsage } from "llm/json";
import { JsonReader, JsonSyntax, Kind, MemberNames, ascii, bytesAre } from "llm/scan";
import {
	LlmError,
	type AssistantDelta, type AssistantMessage, type BackendRegistration, type ChatRequest, type FinishReason, type JsonObject,
	type JsonValue, type Message, type ModelProfile, type ToolCall, type Usage,
} from "llm/types";
import { protocolBackend, retryableStatus, type ParsedReply, EventAssembler } from "llm/wire";
import type { PieceSpec } from "llm/body";
import { BUILT_IN_DEFAULTS } from "llm/profiles";
import { encodeUtf8 } from "net/utf8";

// The names read, as bytes (llm/scan ascii()).
const DONE = ascii("[DONE]");
const NAME = Object.freeze({
	choices: ascii("choices"),
	error: ascii("error"),
	model: ascii("model"),
	usage: ascii("usage"),
});

// The members a stream event's objects are read for (JsonReader.members), by position.
const MEMBERS = Object.freeze({
	top: new MemberNames(["error", "model", "usage", "choices"]),
	error: new MemberNames(["message", "code"]),
	choice: new MemberNames(["delta", "finish_reason"]),
	delta: new MemberNames(["content", "reasoning_content", "reasoning", "tool_calls"]),
	fragment: new MemberNames(["index", "id", "function"]),
	function: new MemberNames(["name", "arguments"]),
});
const enum TOP { error, model, usage, choices }
const enum ERROR { message, code }
const enum CHOICE { delta, finish_reason }
const enum DELTA { content, reasoning_content, reasoning, tool_calls }
const enum FRAGMENT { index, id, function }
const enum FUNCTION { name, arguments }

// ---- request ----

function toWireMessage(message: Message): JsonObject {
	switch (message.role) {
		case "system":
			return { role: "system", content: message.content };
		case "user":
			return { role: "user", content: typeof message.content === "string" ? message.content : message.content.map((p) => ({ ...p }) as unknown as JsonObject) };
		case "assistant": {
			if (message.raw?.protocol === "openai") return message.raw.message;
			const out: JsonObject = { role: "assistant", content: message.content };
			if (message.tool_calls?.length) out.tool_calls = message.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: c.function.name, arguments: c.function.arguments } }));
			return out;
		}
		case "tool":
			return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
	}
}

/** The JSON body of a chat request for profile. */
export function toOpenAIRequest(request: ChatRequest, profile: ModelProfile, stream: boolean): JsonObject {
	// Key order is prompt-prefix order: what never changes within a request comes
	// first and `messages`, which grows every tool round, comes last, so the bytes
	// of two iterations' bodies share the longest possible prefix.
	const body: JsonObject = { model: profile.model };
	body[profile.max_tokens_field] = request.max_tokens ?? profile.max_tokens;
	if (stream) {
		body.stream = true;
		body.stream_options = { include_usage: true };
	}
	if (request.tools?.length) body.tools = request.tools.map((t) => ({ type: "function", function: { ...t.function } }) as JsonObject);
	body.messages = request.messages.map(toWireMessage);
	return body;
}

/** Body assembly in pieces (llm/body): messages one after the other. */
export const openaiPieces: PieceSpec = {
	protocol: "openai",
	join: "list",
	prefix: (request, system, profile) => ({ json: JSON.stringify(toOpenAIRequest({ ...request, messages: system }, profile, profile.stream)), breakpoints: 0, notes: [] }),
	piece: (message) => ({ role: message.role === "assistant" ? "assistant" : "user", text: JSON.stringify(toWireMessage(message)) }),
};

// ---- reply ----

function finishReason(reason: string | undefined, hasCalls: boolean): FinishReason {
	if (hasCalls) return "tool_calls";
	switch (reason) {
		case "stop": return "stop";
		case "tool_calls": case "function_call": return "tool_calls";
		case "length": return "length";
		case "content_filter": return "content_filter";
		default: return "other";
	}
}

function usageOf(json: unknown): Usage {
	const u = objectAt(json, "usage");
	const usage = emptyUsage();
	if (!u) return usage;
	usage.input_tokens = numberAt(u, "prompt_tokens");
	usage.output_tokens = numberAt(u, "completion_tokens");
	// OpenAI reports cached prompt tokens in details; DeepSeek as prompt_cache_hit_tokens.
	usage.cache_read_tokens = numberAt(objectAt(u, "prompt_tokens_details"), "cached_tokens") || numberAt(u, "prompt_cache_hit_tokens");
	return usage;
}

/** The canonical assistant message for an OpenAI-shaped assistant message (kept as raw). */
export function fromOpenAIMessage(raw: JsonObject): AssistantMessage {
	if (raw.role !== "assistant") throw new LlmError("protocol", `the LLM reply is not an assistant message (role ${JSON.stringify(raw.role ?? null)})`);
	const content = raw.content;
	const text = typeof content === "string" ? content
		: Array.isArray(content) ? content.map((p) => stringAt(p, "text") ?? "").join("") // a few servers send parts
		: null;
	const message: AssistantMessage = { role: "assistant", content: text };
	const reasoning = stringAt(raw, "reasoning_content") ?? stringAt(raw, "reasoning");
	if (reasoning) message.reasoning_content = reasoning;
	const calls = arrayAt(raw, "tool_calls");
	if (calls?.length) {
		message.tool_calls = calls.map((call, i): ToolCall => {
			const fn = objectAt(call, "function");
			const name = stringAt(fn, "name");
			if (!name) throw new LlmError("protocol", `tool call ${i} in the LLM reply has no function name`);
			const args = fn?.arguments;
			return {
				id: stringAt(call, "id") || `call_${i}`,
				type: "function",
				function: { name, arguments: typeof args === "string" ? args : args === undefined || args === null ? "" : JSON.stringify(args) },
			};
		});
	}
	message.raw = { protocol: "openai", message: raw };
	return message;
}

/** A whole (unstreamed) chat.completion body. */
export function parseOpenAIResponse(json: JsonValue): ParsedReply {
	const choice = arrayAt(json, "choices")?.[0];
	const raw = objectAt(choice, "message");
	if (!raw) {
		const error = stringAt(objectAt(json, "error"), "message");
		throw new LlmError("protocol", error ? `the LLM reply is an error: ${error}` : "the LLM reply has no choices[0].message");
	}
	const message = fromOpenAIMessage(raw);
	return {
		message,
		finish_reason: finishReason(stringAt(choice, "finish_reason"), !!message.tool_calls?.length),
		usage: usageOf(json),
		model: stringAt(json, "model") ?? "",
	};
}

/**
 * A whole (unstreamed) reply in bytes: choices[0] (whose message becomes raw),
 * usage, model and error are built from their bytes, the rest of the body is
 * only checked; then parseOpenAIResponse. Throws JsonSyntax when it is not JSON.
 */
export function parseOpenAIBytes(bytes: Uint8Array, reader = new JsonReader()): ParsedReply {
	const r = reader.reset(bytes);
	if (!r.openObject()) {
		const value = r.value();
		r.end();
		return parseOpenAIResponse(value);
	}
	// Positions of the members parseOpenAIResponse reads (the last of a duplicate wins).
	let choices: JsonValue[] | undefined = undefined, error = -1, usage = -1, model = -1;
	while (r.nextKey()) {
		if (r.keyIs(NAME.choices)) {
			choices = undefined;
			if (!r.openArray()) {
				r.skip();
				continue;
			}
			choices = [];
			if (r.nextItem()) {
				choices.push(r.value());
				while (r.nextItem()) r.skip();
			}
			continue;
		}
		if (r.keyIs(NAME.error)) error = r.position;
		else if (r.keyIs(NAME.usage)) usage = r.position;
		else if (r.keyIs(NAME.model)) model = r.position;
		r.skip();
	}
	r.end();
	const json: JsonObject = {};
	if (choices) json.choices = choices;
	if (error >= 0) json.error = r.seek(error).value();
	if (usage >= 0) json.usage = r.seek(usage).value();
	if (model >= 0) json.model = r.seek(model).value();
	r.release();
	return parseOpenAIResponse(json);
}

interface CallBuilder { id: string; name: string; arguments: string[] }

/** One tool_calls fragment of an event: where its fields are (-1: absent or not a string). */
/** Where a tool-call fragment's values are (-1: absent); fn: its function object. */
interface Fragment { index: number; id: number; fn: number; name: number; args: number }

/**
 * Assembles chat.completion.chunk events into one reply, emitting deltas as they
 * come. Each event is read from its bytes (llm/scan): only the values it uses
 * become strings; the rest is checked and skipped.
 */
export class OpenAIStreamAssembler extends EventAssembler {
	#emit: (delta: AssistantDelta) => void;
	#text: string[] = [];
	#reasoning: string[] = [];
	#calls: CallBuilder[] = [];
	#callIndex = new Map<number, number>(); // wire index -> position in #calls
	#finish: string | undefined = undefined;
	#done = false;
	#usage: Usage = emptyUsage();
	#model = "";
	#modelBytes: Uint8Array = new Uint8Array(0);   // the model's name as bytes: every event repeats it
	// Where the current event's values are (-1: absent), reset per event.
	#error = false; #errorMessage = -1; #errorCode = -1;
	#modelAt = -1; #usageAt = -1;
	#choice = false; #delta = false; #content = -1; #reasoningContent = -1; #reasoningAt = -1; #finishAt = -1;
	#fragments: Fragment[] = [];
	#fragmentCount = 0;
	// What members() fills, one set per assembler.
	readonly #at = {
		top: MEMBERS.top.slots(), error: MEMBERS.error.slots(), choice: MEMBERS.choice.slots(),
		delta: MEMBERS.delta.slots(), fragment: MEMBERS.fragment.slots(), function: MEMBERS.function.slots(),
	};

	constructor(emit: (delta: AssistantDelta) => void, reader?: JsonReader) {
		super(reader);
		this.#emit = emit;
	}

	override push(bytes: Uint8Array, start: number, end: number): void {
		if (bytesAre(bytes, DONE, start, end)) {
			this.#done = true;
			return;
		}
		super.push(bytes, start, end);
	}

	/** Notes where the event's values are, checking all of it (one native walk per object read). */
	protected scan(r: JsonReader): void {
		this.#error = this.#choice = this.#delta = false;
		this.#errorMessage = this.#errorCode = this.#modelAt = this.#usageAt = -1;
		this.#content = this.#reasoningContent = this.#reasoningAt = this.#finishAt = -1;
		this.#fragmentCount = 0;
		const top = this.#at.top;
		if (!r.members(MEMBERS.top, top)) throw new JsonSyntax("not an object");
		r.end();
		if (top[TOP.error] >= 0 && r.seek(top[TOP.error]).members(MEMBERS.error, this.#at.error)) {
			this.#error = true;
			const error = this.#at.error;
			this.#errorMessage = r.kindAt(error[ERROR.message]) === Kind.String ? error[ERROR.message] : -1;
			this.#errorCode = r.kindAt(error[ERROR.code]) === Kind.Number ? error[ERROR.code] : -1;
		}
		if (r.kindAt(top[TOP.model]) === Kind.String) this.#modelAt = top[TOP.model];
		if (r.kindAt(top[TOP.usage]) === Kind.Object) this.#usageAt = top[TOP.usage];
		if (top[TOP.choices] >= 0) this.#choices(r, top[TOP.choices]);
	}

	#choices(r: JsonReader, at: number): void {
		// only choices[0] counts
		if (!r.seek(at).openArray() || !r.nextItem() || !r.members(MEMBERS.choice, this.#at.choice)) return;
		this.#choice = true;
		const choice = this.#at.choice;
		if (r.kindAt(choice[CHOICE.finish_reason]) === Kind.String) this.#finishAt = choice[CHOICE.finish_reason];
		if (choice[CHOICE.delta] < 0 || !r.seek(choice[CHOICE.delta]).members(MEMBERS.delta, this.#at.delta)) return;
		this.#delta = true;
		const delta = this.#at.delta;
		if (r.kindAt(delta[DELTA.content]) === Kind.String) this.#content = delta[DELTA.content];
		if (r.kindAt(delta[DELTA.reasoning_content]) === Kind.String) this.#reasoningContent = delta[DELTA.reasoning_content];
		if (r.kindAt(delta[DELTA.reasoning]) === Kind.String) this.#reasoningAt = delta[DELTA.reasoning];
		if (delta[DELTA.tool_calls] >= 0) this.#fragmentsOf(r, delta[DELTA.tool_calls]);
	}

	/** The tool-call fragments of the array at `at` (objects only), then each one's function. */
	#fragmentsOf(r: JsonReader, at: number): void {
		if (!r.seek(at).openArray()) return;
		while (r.nextItem()) {
			let f = this.#fragments[this.#fragmentCount];
			if (!f) this.#fragments.push(f = { index: -1, id: -1, fn: -1, name: -1, args: -1 });
			if (!r.members(MEMBERS.fragment, this.#at.fragment)) {
				r.skip();
				continue;
			}
			this.#fragmentCount++;
			const fragment = this.#at.fragment;
			f.index = fragment[FRAGMENT.index];
			f.id = fragment[FRAGMENT.id];
			f.fn = fragment[FRAGMENT.function];
		}
		for (let i = 0; i < this.#fragmentCount; i++) {
			const f = this.#fragments[i];
			if (r.kindAt(f.index) !== Kind.Number) f.index = -1;
			if (r.kindAt(f.id) !== Kind.String) f.id = -1;
			f.name = f.args = -1;
			if (f.fn < 0 || !r.seek(f.fn).members(MEMBERS.function, this.#at.function)) {
				f.fn = -1;
				continue;
			}
			const fn = this.#at.function;
			if (r.kindAt(fn[FUNCTION.name]) === Kind.String) f.name = fn[FUNCTION.name];
			if (r.kindAt(fn[FUNCTION.arguments]) === Kind.String) f.args = fn[FUNCTION.arguments];
		}
	}

	/** What the event says, in the order the reply is assembled: error, model, usage, deltas, finish reason. */
	protected apply(r: JsonReader): void {
		if (this.#error) {
			const message = this.#errorMessage >= 0 ? r.seek(this.#errorMessage).string() : "unknown error";
			const code = this.#errorCode >= 0 ? r.seek(this.#errorCode).number() : 0;
			throw new LlmError("http", `the LLM stream failed: ${message}`, { retryable: retryableStatus(code), status: code || undefined });
		}
		if (this.#modelAt >= 0 && !r.seek(this.#modelAt).stringIs(this.#modelBytes)) {
			this.#model = r.seek(this.#modelAt).string();
			this.#modelBytes = encodeUtf8(this.#model);
		}
		if (this.#usageAt >= 0) this.#usage = usageOf({ usage: r.seek(this.#usageAt).value() });
		if (!this.#choice) return;
		if (this.#delta) {
			if (this.#content >= 0) {
				const content = r.seek(this.#content).string();
				if (content) {
					this.#text.push(content);
					this.#emit({ type: "text", text: content });
				}
			}
			const at = this.#reasoningContent >= 0 ? this.#reasoningContent : this.#reasoningAt;
			const reasoning = at >= 0 ? r.seek(at).string() : "";
			if (reasoning) {
				this.#reasoning.push(reasoning);
				this.#emit({ type: "reasoning", text: reasoning });
			}
			for (let i = 0; i < this.#fragmentCount; i++) this.#toolFragment(r, this.#fragments[i]);
		}
		if (this.#finishAt >= 0) {
			const finish = r.seek(this.#finishAt).string();
			if (finish) this.#finish = finish;
		}
	}

	#toolFragment(r: JsonReader, fragment: Fragment): void {
		const wireIndex = fragment.index >= 0 ? r.seek(fragment.index).number() : this.#calls.length;
		let at = this.#callIndex.get(wireIndex);
		if (at === undefined) {
			at = this.#calls.length;
			this.#callIndex.set(wireIndex, at);
			this.#calls.push({ id: "", name: "", arguments: [] });
		}
		const call = this.#calls[at];
		const id = fragment.id >= 0 ? r.seek(fragment.id).string() : "";
		const name = fragment.fn >= 0 && fragment.name >= 0 ? r.seek(fragment.name).string() : "";
		const args = fragment.fn >= 0 && fragment.args >= 0 ? r.seek(fragment.args).string() : "";
		if (id) call.id = id;
		// Some servers repeat the whole name in every fragment; OpenAI sends it once.
		if (name && name !== call.name) call.name += name;
		if (args) call.arguments.push(args);
		const out: AssistantDelta = { type: "tool_call", index: at, arguments: args };
		if (id) out.id = id;
		if (name) out.name = name;
		this.#emit(out);
	}

	finish(): ParsedReply {
		if (!this.#done && this.#finish === undefined) throw new LlmError("network", "the LLM reply stream ended before the reply was complete", { retryable: false });
		const text = this.#text.join("");
		const raw: JsonObject = { role: "assistant", content: text || (this.#calls.length ? null : "") };
		if (this.#reasoning.length) raw.reasoning_content = this.#reasoning.join("");
		if (this.#calls.length) raw.tool_calls = this.#calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments.join("") } }));
		const message = fromOpenAIMessage(raw);
		return { message, finish_reason: finishReason(this.#finish, !!message.tool_calls?.length), usage: this.#usage, model: this.#model };
	}
}

// ---- backend ----

export const openaiCompatible: BackendRegistration = protocolBackend({
	id: "openai_compatible",
	defaults: BUILT_IN_DEFAULTS.openai_compatible,
	path: "chat/completions",
	toBody: (request, profile) => ({ body: toOpenAIRequest(request, profile, profile.stream) }),
	pieces: openaiPieces,
	mediaContent: (prompt, image) => [{ type: "text", text: prompt }, image],
	parse: (bytes, reader) => parseOpenAIBytes(bytes, reader),
	assembler: (emit, reader) => new OpenAIStreamAssembler(emit, reader),
});
