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
import { arrayAt, isObject, numberAt, objectAt, parseJson, stringAt, emptyUsage } from "llm/json";
import {
	LlmError,
	type AssistantDelta, type AssistantMessage, type BackendRegistration, type ChatRequest, type FinishReason, type JsonObject,
	type JsonValue, type Message, type ModelProfile, type ToolCall, type Usage,
} from "llm/types";
import { protocolBackend, retryableStatus, type ParsedReply, type StreamAssembler } from "llm/wire";
import type { PieceSpec } from "llm/body";

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

interface CallBuilder { id: string; name: string; arguments: string[] }

/** Assembles chat.completion.chunk events into one reply, emitting deltas as they come. */
export class OpenAIStreamAssembler implements StreamAssembler {
	#emit: (delta: AssistantDelta) => void;
	#text: string[] = [];
	#reasoning: string[] = [];
	#calls: CallBuilder[] = [];
	#callIndex = new Map<number, number>(); // wire index -> position in #calls
	#finish: string | undefined = undefined;
	#done = false;
	#usage: Usage = emptyUsage();
	#model = "";

	constructor(emit: (delta: AssistantDelta) => void) {
		this.#emit = emit;
	}

	push(_event: string, data: string): void {
		if (data === "[DONE]") {
			this.#done = true;
			return;
		}
		const chunk = parseJson(data);
		if (!isObject(chunk)) throw new LlmError("protocol", "the LLM stream sent an event that is not JSON");
		const error = objectAt(chunk, "error");
		if (error) {
			const message = stringAt(error, "message") ?? "unknown error";
			const code = typeof error.code === "number" ? error.code : 0;
			throw new LlmError("http", `the LLM stream failed: ${message}`, { retryable: retryableStatus(code), status: code || undefined });
		}
		if (typeof chunk.model === "string") this.#model = chunk.model;
		if (isObject(chunk.usage)) this.#usage = usageOf(chunk);
		const choice = arrayAt(chunk, "choices")?.[0];
		if (!isObject(choice)) return;
		const delta = objectAt(choice, "delta");
		if (delta) this.#delta(delta);
		const finish = stringAt(choice, "finish_reason");
		if (finish) this.#finish = finish;
	}

	#delta(delta: JsonObject): void {
		if (typeof delta.content === "string") {
			if (delta.content) {
				this.#text.push(delta.content);
				this.#emit({ type: "text", text: delta.content });
			}
		}
		const reasoning = stringAt(delta, "reasoning_content") ?? stringAt(delta, "reasoning");
		if (reasoning) {
			this.#reasoning.push(reasoning);
			this.#emit({ type: "reasoning", text: reasoning });
		}
		for (const fragment of arrayAt(delta, "tool_calls") ?? []) {
			if (!isObject(fragment)) continue;
			const wireIndex = typeof fragment.index === "number" ? fragment.index : this.#calls.length;
			let at = this.#callIndex.get(wireIndex);
			if (at === undefined) {
				at = this.#calls.length;
				this.#callIndex.set(wireIndex, at);
				this.#calls.push({ id: "", name: "", arguments: [] });
			}
			const call = this.#calls[at];
			const fn = objectAt(fragment, "function");
			const id = stringAt(fragment, "id");
			const name = stringAt(fn, "name");
			const args = stringAt(fn, "arguments") ?? "";
			if (id) call.id = id;
			// Some servers repeat the whole name in every fragment; OpenAI sends it once.
			if (name && name !== call.name) call.name += name;
			if (args) call.arguments.push(args);
			const out: AssistantDelta = { type: "tool_call", index: at, arguments: args };
			if (id) out.id = id;
			if (name) out.name = name;
			this.#emit(out);
		}
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
	parse: parseOpenAIResponse,
	assembler: (emit) => new OpenAIStreamAssembler(emit),
});
