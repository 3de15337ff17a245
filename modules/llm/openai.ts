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
import { JsonReader, JsonSyntax, Kind, ascii, bytesAre } from "llm/scan";
import {
	LlmError,
	type AssistantDelta, type AssistantMessage, type BackendRegistration, type ChatRequest, type FinishReason, type JsonObject,
	type JsonValue, type Message, type ModelProfile, type ToolCall, type Usage,
} from "llm/types";
import { protocolBackend, retryableStatus, type ParsedReply, EventAssembler } from "llm/wire";
import type { PieceSpec } from "llm/body";
import { encodeUtf8 } from "net/utf8";

// The names read, as bytes (llm/scan ascii()).
const DONE = ascii("[DONE]");
const NAME = Object.freeze({
	arguments: ascii("arguments"),
	choices: ascii("choices"),
	code: ascii("code"),
	content: ascii("content"),
	delta: ascii("delta"),
	error: ascii("error"),
	finish_reason: ascii("finish_reason"),
	function: ascii("function"),
	id: ascii("id"),
	index: ascii("index"),
	message: ascii("message"),
	model: ascii("model"),
	name: ascii("name"),
	reasoning: ascii("reasoning"),
	reasoning_content: ascii("reasoning_content"),
	tool_calls: ascii("tool_calls"),
	usage: ascii("usage"),
});

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
interface Fragment { index: number; id: number; fn: boolean; name: number; args: number }

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

	constructor(emit: (delta: AssistantDelta) => void, reader?: JsonReader) {
		super(reader);
		this.#emit = emit;
	}

	override push(data: Uint8Array): void {
		if (bytesAre(data, DONE)) {
			this.#done = true;
			return;
		}
		super.push(data);
	}

	/** Notes where the event's values are, checking all of it. */
	protected scan(r: JsonReader): void {
		this.#error = this.#choice = this.#delta = false;
		this.#errorMessage = this.#errorCode = this.#modelAt = this.#usageAt = -1;
		this.#content = this.#reasoningContent = this.#reasoningAt = this.#finishAt = -1;
		this.#fragmentCount = 0;
		if (!r.openObject()) throw new JsonSyntax("not an object");
		while (r.nextKey()) {
			if (r.keyIs(NAME.error)) {
				this.#error = false;
				this.#errorMessage = this.#errorCode = -1;
				if (!r.openObject()) {
					r.skip();
					continue;
				}
				this.#error = true;
				while (r.nextKey()) {
					if (r.keyIs(NAME.message)) this.#errorMessage = r.kind() === Kind.String ? r.position : -1;
					else if (r.keyIs(NAME.code)) this.#errorCode = r.kind() === Kind.Number ? r.position : -1;
					r.skip();
				}
			} else if (r.keyIs(NAME.model)) {
				this.#modelAt = r.kind() === Kind.String ? r.position : -1;
				r.skip();
			} else if (r.keyIs(NAME.usage)) {
				this.#usageAt = r.kind() === Kind.Object ? r.position : -1;
				r.skip();
			} else if (r.keyIs(NAME.choices)) {
				this.#choices(r);
			} else r.skip();
		}
		r.end();
	}

	#choices(r: JsonReader): void {
		this.#choice = this.#delta = false;
		this.#content = this.#reasoningContent = this.#reasoningAt = this.#finishAt = -1;
		this.#fragmentCount = 0;
		if (!r.openArray()) return r.skip();
		if (!r.nextItem()) return;
		if (r.openObject()) {
			this.#choice = true;
			while (r.nextKey()) {
				if (r.keyIs(NAME.delta)) this.#deltaOf(r);
				else if (r.keyIs(NAME.finish_reason)) {
					this.#finishAt = r.kind() === Kind.String ? r.position : -1;
					r.skip();
				} else r.skip();
			}
		} else r.skip();
		while (r.nextItem()) r.skip(); // only choices[0] counts
	}

	#deltaOf(r: JsonReader): void {
		this.#delta = false;
		this.#content = this.#reasoningContent = this.#reasoningAt = -1;
		this.#fragmentCount = 0;
		if (!r.openObject()) return r.skip();
		this.#delta = true;
		while (r.nextKey()) {
			if (r.keyIs(NAME.content)) this.#content = r.kind() === Kind.String ? r.position : -1;
			else if (r.keyIs(NAME.reasoning_content)) this.#reasoningContent = r.kind() === Kind.String ? r.position : -1;
			else if (r.keyIs(NAME.reasoning)) this.#reasoningAt = r.kind() === Kind.String ? r.position : -1;
			else if (r.keyIs(NAME.tool_calls)) {
				this.#fragmentCount = 0;
				if (r.openArray()) {
					while (r.nextItem()) {
						if (r.openObject()) this.#fragment(r);
						else r.skip();
					}
				} else r.skip();
				continue;
			}
			r.skip();
		}
	}

	#fragment(r: JsonReader): void {
		let f = this.#fragments[this.#fragmentCount];
		if (!f) this.#fragments.push(f = { index: -1, id: -1, fn: false, name: -1, args: -1 });
		this.#fragmentCount++;
		f.index = f.id = f.name = f.args = -1;
		f.fn = false;
		while (r.nextKey()) {
			if (r.keyIs(NAME.index)) f.index = r.kind() === Kind.Number ? r.position : -1;
			else if (r.keyIs(NAME.id)) f.id = r.kind() === Kind.String ? r.position : -1;
			else if (r.keyIs(NAME.function)) {
				f.fn = false;
				f.name = f.args = -1;
				if (r.openObject()) {
					f.fn = true;
					while (r.nextKey()) {
						if (r.keyIs(NAME.name)) f.name = r.kind() === Kind.String ? r.position : -1;
						else if (r.keyIs(NAME.arguments)) f.args = r.kind() === Kind.String ? r.position : -1;
						r.skip();
					}
				} else r.skip();
				continue;
			}
			r.skip();
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
		const name = fragment.fn && fragment.name >= 0 ? r.seek(fragment.name).string() : "";
		const args = fragment.fn && fragment.args >= 0 ? r.seek(fragment.args).string() : "";
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
	defaults: { auth: "bearer", max_tokens_field: "max_tokens" },
	path: "chat/completions",
	toBody: (request, profile) => ({ body: toOpenAIRequest(request, profile, profile.stream) }),
	pieces: openaiPieces,
	mediaContent: (prompt, image) => [{ type: "text", text: prompt }, image],
	parse: (bytes, reader) => parseOpenAIBytes(bytes, reader),
	assembler: (emit, reader) => new OpenAIStreamAssembler(emit, reader),
});
