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
import { LLM_REPLY_TOOL_CALLS_MAX, LLM_TEXT_SPARES, LLM_TOOL_NAME_MAX_CHARS } from "budgets";
import { FieldProgram, JsonReader, JsonSyntax, Kind, MemberNames, ReplyMeter, TextPieces, Want, ascii, bytesAre } from "llm/scan";
import {
	LlmError,
	type AssistantDelta, type AssistantMessage, type BackendRegistration, type ChatRequest, type FinishReason, type JsonObject,
	type JsonValue, type Message, type ModelProfile, type ToolCall, type Usage,
} from "llm/types";
import { protocolBackend, retryableStatus, type DeltaSink, type ParsedReply, EventAssembler } from "llm/wire";
import type { PieceSpec } from "llm/body";
import { BUILT_IN_DEFAULTS } from "llm/profiles";
import { encodeUtf8 } from "net/utf8";

// The names read, as bytes (llm/scan ascii()).
const DONE = ascii("[DONE]");
const NO_BYTES = new Uint8Array(0);
// Matches no string (llm/scan plainIs: a quote inside a string is escaped): the model's name when it has escapes.
const NO_MATCH = ascii("\"");
const NAME = Object.freeze({
	choices: ascii("choices"),
	error: ascii("error"),
	model: ascii("model"),
	usage: ascii("usage"),
});

// What a stream event is read for (JsonReader.fields: one native walk per event), by slot.
const enum F { error, errorMessage, errorCode, model, usage, choice, finish, delta, content, reasoningContent, reasoning, toolCalls, COUNT }
const FIELDS = new FieldProgram([
	{ name: "error", slot: F.error, kinds: Want.Object, fields: [
		{ name: "message", slot: F.errorMessage, kinds: Want.String },
		{ name: "code", slot: F.errorCode, kinds: Want.Number },
	] },
	{ name: "model", slot: F.model, kinds: Want.String },
	{ name: "usage", slot: F.usage, kinds: Want.Object },
	// only choices[0] counts
	{ name: "choices", slot: -1, kinds: Want.Array, item: F.choice, fields: [
		{ name: "delta", slot: F.delta, kinds: Want.Object, fields: [
			{ name: "content", slot: F.content, kinds: Want.String },
			{ name: "reasoning_content", slot: F.reasoningContent, kinds: Want.String },
			{ name: "reasoning", slot: F.reasoning, kinds: Want.String },
			{ name: "tool_calls", slot: F.toolCalls, kinds: Want.Array },
		] },
		{ name: "finish_reason", slot: F.finish, kinds: Want.String },
	] },
], F.COUNT);
// The members of a tool-call fragment and its function (JsonReader.members), by position.
const MEMBERS = Object.freeze({
	fragment: new MemberNames(["index", "id", "function"]),
	function: new MemberNames(["name", "arguments"]),
});
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

/** A tool call being assembled; its arguments gathered as bytes (llm/scan TextPieces). */
interface CallBuilder { id: string; name: string; arguments: TextPieces }

/** Where a tool-call fragment's values are (-1: absent); fn: its function object. */
interface Fragment { index: number; id: number; fn: number; name: number; args: number }

/**
 * Assembles chat.completion.chunk events into one reply, handing deltas to the
 * sink as they come (only while it hears them). Each event is read from its
 * bytes (llm/scan): the text, reasoning and tool arguments are gathered as
 * bytes and decoded once, in finish(); only the values a heard delta needs
 * become strings per event. One assembler serves a backend's calls (reset()).
 */
export class OpenAIStreamAssembler extends EventAssembler {
	/** The reply's text, reasoning and arguments together, against LLM_REPLY_MAX_BYTES. */
	readonly #meter = new ReplyMeter();
	readonly #text = new TextPieces(this.#meter);
	readonly #reasoning = new TextPieces(this.#meter);
	/** The reply's calls: the first #callCount are this reply's, the rest kept for the next. */
	readonly #calls: CallBuilder[] = [];
	#callCount = 0;
	readonly #callIndex = new Map<number, number>(); // wire index -> position in #calls
	#finish: string | undefined = undefined;
	#done = false;
	#usage: Usage = emptyUsage();
	#model = "";
	#modelBytes: Uint8Array = new Uint8Array(0);   // the model's name as bytes: every event repeats it
	// Where the current event's values are (FIELDS' slots; -1: absent), and its tool-call fragments.
	readonly #at = FIELDS.slots();
	readonly #atBuffer = this.#at.buffer as ArrayBuffer;
	readonly #fragments: Fragment[] = [];
	#fragmentCount = 0;
	// What members() fills for fragments, one set per assembler.
	readonly #fragment = MEMBERS.fragment.slots();
	readonly #function = MEMBERS.function.slots();

	protected clear(): void {
		this.#meter.bytes = 0;
		this.#text.clear();
		this.#reasoning.clear();
		for (let i = 0; i < this.#callCount; i++) this.#calls[i].arguments.clear();
		// Calls kept for the next reply: as many as LLM_TEXT_SPARES.
		if (this.#calls.length > LLM_TEXT_SPARES) this.#calls.length = LLM_TEXT_SPARES;
		this.#callCount = 0;
		this.#callIndex.clear();
		this.#finish = undefined;
		this.#done = false;
		this.#usage = emptyUsage();
		this.#model = "";
		this.#modelBytes = NO_BYTES;
		this.#fragmentCount = 0;
	}

	override push(bytes: Uint8Array, start: number, end: number): void {
		if (end - start === DONE.length && bytes[start] === DONE[0] && bytesAre(bytes, DONE, start, end)) {
			this.#done = true;
			return;
		}
		super.push(bytes, start, end);
	}

	/** Notes where the event's values are, checking all of it (one native walk). */
	protected scan(r: JsonReader): void {
		this.#fragmentCount = 0;
		const at = this.#at;
		if (!r.fields(FIELDS, at, this.#atBuffer, true)) throw new JsonSyntax("not an object");
		if (at[F.toolCalls] >= 0) this.#fragmentsOf(r, at[F.toolCalls]);
	}

	/** The tool-call fragments of the array at `at` (objects only), then each one's function. */
	#fragmentsOf(r: JsonReader, at: number): void {
		if (!r.seek(at).openArray()) return;
		while (r.nextItem()) {
			let f = this.#fragments[this.#fragmentCount];
			if (!f) this.#fragments.push(f = { index: -1, id: -1, fn: -1, name: -1, args: -1 });
			if (!r.members(MEMBERS.fragment, this.#fragment)) {
				r.skip();
				continue;
			}
			this.#fragmentCount++;
			const fragment = this.#fragment;
			f.index = fragment[FRAGMENT.index];
			f.id = fragment[FRAGMENT.id];
			f.fn = fragment[FRAGMENT.function];
		}
		for (let i = 0; i < this.#fragmentCount; i++) {
			const f = this.#fragments[i];
			if (r.kindAt(f.index) !== Kind.Number) f.index = -1;
			if (r.kindAt(f.id) !== Kind.String) f.id = -1;
			f.name = f.args = -1;
			if (f.fn < 0 || !r.seek(f.fn).members(MEMBERS.function, this.#function)) {
				f.fn = -1;
				continue;
			}
			const fn = this.#function;
			if (r.kindAt(fn[FUNCTION.name]) === Kind.String) f.name = fn[FUNCTION.name];
			if (r.kindAt(fn[FUNCTION.arguments]) === Kind.String) f.args = fn[FUNCTION.arguments];
		}
	}

	/** What the event says, in the order the reply is assembled: error, model, usage, deltas, finish reason. */
	protected apply(r: JsonReader): void {
		const at = this.#at;
		if (at[F.error] >= 0) {
			const message = at[F.errorMessage] >= 0 ? r.textAt(at[F.errorMessage]) : "unknown error";
			const code = at[F.errorCode] >= 0 ? r.seek(at[F.errorCode]).number() : 0;
			throw new LlmError("http", `the LLM stream failed: ${message}`, { retryable: retryableStatus(code), status: code || undefined });
		}
		const model = at[F.model];
		if (model >= 0) {
			// Every event repeats the model's name: compared as bytes (one native call), decoded only when it changed (or has escapes).
			if (!r.plainIs(model, this.#modelBytes)) {
				const name = r.textAt(model);
				if (name !== this.#model) {
					this.#model = name;
					// plainIs() compares names read plain only (no quote, backslash or control character in them).
					this.#modelBytes = r.plainEnd(model) >= 0 ? encodeUtf8(name) : NO_MATCH;
				}
			}
		}
		if (at[F.usage] >= 0) this.#usage = usageOf({ usage: r.seek(at[F.usage]).value() });
		if (at[F.choice] < 0) return;
		if (at[F.delta] >= 0) {
			const sink = this.sink as DeltaSink;
			if (at[F.content] >= 0) addPiece(r, at[F.content], this.#text, sink, "text");
			const position = at[F.reasoningContent] >= 0 ? at[F.reasoningContent] : at[F.reasoning];
			if (position >= 0) addPiece(r, position, this.#reasoning, sink, "reasoning");
			for (let i = 0; i < this.#fragmentCount; i++) this.#toolFragment(r, this.#fragments[i], sink);
		}
		if (at[F.finish] >= 0) {
			const finish = r.textAt(at[F.finish]);
			if (finish) this.#finish = finish;
		}
	}

	#toolFragment(r: JsonReader, fragment: Fragment, sink: DeltaSink): void {
		const wireIndex = fragment.index >= 0 ? r.integerAt(fragment.index) : this.#callCount;
		let at = this.#callIndex.get(wireIndex);
		if (at === undefined) {
			if (this.#callCount >= LLM_REPLY_TOOL_CALLS_MAX) throw new LlmError("protocol", `the LLM reply stream has more than ${LLM_REPLY_TOOL_CALLS_MAX} tool calls`);
			at = this.#callCount++;
			this.#callIndex.set(wireIndex, at);
			if (at < this.#calls.length) {
				const kept = this.#calls[at];
				kept.id = kept.name = "";
			} else this.#calls.push({ id: "", name: "", arguments: new TextPieces(this.#meter) });
		}
		const call = this.#calls[at];
		const id = fragment.id >= 0 ? r.textAt(fragment.id) : "";
		const name = fragment.fn >= 0 && fragment.name >= 0 ? r.textAt(fragment.name) : "";
		const args = fragment.fn >= 0 && fragment.args >= 0 ? fragment.args : -1;
		if (id) call.id = id;
		// Some servers repeat the whole name in every fragment; OpenAI sends it once.
		if (name && name !== call.name) {
			if (call.name.length + name.length > LLM_TOOL_NAME_MAX_CHARS) throw new LlmError("protocol", `tool call ${at}'s name in the LLM reply stream is over ${LLM_TOOL_NAME_MAX_CHARS} characters`);
			call.name += name;
		}
		if (args >= 0) r.addText(args, call.arguments);
		if (!sink.hearsDeltas()) return;
		const text = args >= 0 ? r.textAt(args) : "";
		const out: AssistantDelta = { type: "tool_call", index: at, arguments: text };
		if (id) out.id = id;
		if (name) out.name = name;
		sink.delta(out);
	}

	finish(): ParsedReply {
		if (!this.#done && this.#finish === undefined) throw new LlmError("network", "the LLM reply stream ended before the reply was complete", { retryable: false });
		const text = this.#text.text();
		const raw: JsonObject = { role: "assistant", content: text || (this.#callCount ? null : "") };
		if (this.#reasoning.pieces) {
			const reasoning = this.#reasoning.text();
			if (reasoning) raw.reasoning_content = reasoning;
		}
		if (this.#callCount) {
			const calls: JsonValue[] = [];
			for (let i = 0; i < this.#callCount; i++) {
				const c = this.#calls[i];
				calls.push({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments.text() } });
			}
			raw.tool_calls = calls;
		}
		const message = fromOpenAIMessage(raw);
		return { message, finish_reason: finishReason(this.#finish, !!message.tool_calls?.length), usage: this.#usage, model: this.#model };
	}
}

/**
 * A text or reasoning piece at position into pieces, as bytes (counted against
 * the reply's cap); when someone hears deltas, also decoded as the delta's string.
 * (Keeping the heard strings instead kept a string and an array slot per token
 * until the reply ended: more heap than the reply's bytes.)
 */
function addPiece(r: JsonReader, position: number, pieces: TextPieces, sink: DeltaSink, type: "text" | "reasoning"): void {
	if (r.addText(position, pieces) && sink.hearsDeltas()) sink.delta({ type, text: r.textAt(position) });
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
	assembler: (reader) => new OpenAIStreamAssembler(reader),
});
