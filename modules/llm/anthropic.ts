// llm/anthropic: the anthropic_compatible backend, POST {base_url}/messages with
// x-api-key and anthropic-version: 2023-06-01, and the two-way conversion between
// canonical (OpenAI-shaped) messages and Anthropic Messages.
//
// Request direction (toAnthropicRequest):
//  - system messages, wherever they are, become the top-level `system` (a string,
//    or text blocks when one carries a cache breakpoint);
//  - consecutive `tool` messages (and any user text right after them) merge into ONE
//    user message of tool_result blocks: Anthropic wants every tool_use answered in
//    the very next user message;
//  - an assistant message whose raw form came from this protocol is sent with its
//    content blocks verbatim (thinking signatures, redacted thinking, citations);
//    otherwise reasoning_content + signature -> a thinking block first, text -> a
//    text block, tool_calls -> tool_use blocks with `input` parsed from arguments.
//    Arguments that are not a JSON object are sent as {} and reported in `notes`
//    (the conversation stays sendable; the model sees the tool's error result).
//    Reasoning without a signature (e.g. from DeepSeek) is dropped, also noted.
//  - tools: function.parameters -> input_schema;
//  - images: data URLs -> base64 source blocks, http(s) URLs -> url source blocks;
//  - empty text blocks and messages left empty are dropped (the API rejects them).
//
// Reply direction (fromAnthropicMessage): text blocks -> content, thinking ->
// reasoning_content (+ signature), tool_use -> tool_calls (input serialised back to
// a string); the reply itself is kept as raw. Streamed replies are assembled into the
// message the API would have sent unstreamed, then converted the same way.
import { LLM_CACHE_BREAKPOINTS } from "budgets";
import { arrayAt, emptyUsage, isObject, numberAt, objectAt, parseJson, stringAt } from "llm/json";
import { JsonReader, JsonSyntax, Kind, MemberNames, ascii } from "llm/scan";
import {
	LlmError,
	type AssistantDelta, type AssistantMessage, type BackendRegistration, type ChatRequest, type ContentPart, type FinishReason,
	type JsonObject, type JsonValue, type Message, type ModelProfile, type ToolCall, type Usage,
} from "llm/types";
import { protocolBackend, retryableStatus, type ParsedReply, EventAssembler } from "llm/wire";
import type { PieceSpec } from "llm/body";
import { BUILT_IN_DEFAULTS } from "llm/profiles";

export interface ConvertedRequest {
	body: JsonObject;
	/** Sentences about what the conversion had to change (logged, never fatal). */
	notes: string[];
}

const DATA_URL = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+);base64,/i;

function imageBlock(url: string): JsonObject {
	const match = DATA_URL.exec(url);
	if (match) return { type: "image", source: { type: "base64", media_type: match[1].toLowerCase(), data: url.slice(match[0].length) } };
	if (/^https?:\/\//i.test(url)) return { type: "image", source: { type: "url", url } };
	throw new LlmError("invalid", "an image must be a base64 data URL or an http(s) URL");
}

function userBlocks(content: string | ContentPart[]): JsonObject[] {
	if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
	const blocks: JsonObject[] = [];
	for (const part of content) {
		if (part.type === "text") {
			if (part.text) blocks.push({ type: "text", text: part.text });
		} else if (part.type === "image_url") {
			blocks.push(imageBlock(part.image_url.url));
		}
	}
	return blocks;
}

function toolInput(call: ToolCall, notes: string[]): JsonObject {
	const text = call.function.arguments.trim();
	if (!text) return {};
	const parsed = parseJson(text);
	if (isObject(parsed)) return parsed;
	notes.push(`tool call ${call.id} (${call.function.name}) has arguments that are not a JSON object; they were sent as {}`);
	return {};
}

function assistantBlocks(message: AssistantMessage, notes: string[]): JsonValue[] {
	if (message.raw?.protocol === "anthropic") {
		const content = message.raw.message.content;
		if (Array.isArray(content)) return content;
	}
	const blocks: JsonObject[] = [];
	if (message.reasoning_content) {
		if (message.reasoning_signature) blocks.push({ type: "thinking", thinking: message.reasoning_content, signature: message.reasoning_signature });
		else notes.push("reasoning without an Anthropic signature was left out of the request");
	}
	if (message.content) blocks.push({ type: "text", text: message.content });
	for (const call of message.tool_calls ?? []) blocks.push({ type: "tool_use", id: call.id, name: call.function.name, input: toolInput(call, notes) });
	return blocks;
}

interface Turn { role: "user" | "assistant"; content: JsonValue[]; cache: boolean }

/** The role and content blocks a non-system message contributes to a turn (none: it is left out). */
export function turnBlocks(message: Exclude<Message, { role: "system" }>, notes: string[]): { role: "user" | "assistant"; content: JsonValue[] } {
	switch (message.role) {
		case "user":
			return { role: "user", content: userBlocks(message.content) };
		case "assistant":
			return { role: "assistant", content: assistantBlocks(message, notes) };
		case "tool": {
			const block: JsonObject = { type: "tool_result", tool_use_id: message.tool_call_id, content: message.content };
			if (message.is_error) block.is_error = true;
			return { role: "user", content: [block] };
		}
	}
}

/** The JSON body of a Messages request for profile. */
export function toAnthropicRequest(request: ChatRequest, profile: ModelProfile, stream: boolean): ConvertedRequest {
	const notes: string[] = [];
	const system: { text: string; cache: boolean }[] = [];
	const turns: Turn[] = [];
	const add = (role: "user" | "assistant", content: JsonValue[], cache: boolean) => {
		if (!content.length) return; // the API rejects empty messages; a dropped one merges its neighbours
		const last = turns[turns.length - 1];
		if (last && last.role === role) {
			// Copy before appending: content may be a raw message's own array.
			last.content = [...last.content, ...content];
			last.cache = cache;
		} else {
			turns.push({ role, content, cache });
		}
	};
	for (const message of request.messages) {
		const cache = message.cache_breakpoint === true;
		if (message.role === "system") {
			if (message.content) system.push({ text: message.content, cache });
			continue;
		}
		const turn = turnBlocks(message, notes);
		add(turn.role, turn.content, cache);
	}

	let breakpoints = 0;
	const allowBreakpoint = () => {
		if (breakpoints < LLM_CACHE_BREAKPOINTS) return ++breakpoints;
		notes.push(`more than ${LLM_CACHE_BREAKPOINTS} cache breakpoints; the later ones were left out`);
		return 0;
	};
	// Key order is prompt-prefix order (and Anthropic's own cache order): model,
	// max_tokens, stream, tools, system, then `messages`, which grows every tool
	// round, last, so two iterations' bodies share the longest possible prefix.
	const body: JsonObject = { model: profile.model, max_tokens: request.max_tokens ?? profile.max_tokens };
	if (stream) body.stream = true;
	if (request.tools?.length) {
		body.tools = request.tools.map((t) => {
			const tool: JsonObject = { name: t.function.name, input_schema: t.function.parameters };
			if (t.function.description) tool.description = t.function.description;
			return tool;
		});
	}
	if (system.length) {
		if (system.some((s) => s.cache)) {
			body.system = system.map((s) => {
				const block: JsonObject = { type: "text", text: s.text };
				if (s.cache && allowBreakpoint()) block.cache_control = { type: "ephemeral" };
				return block;
			});
		} else {
			body.system = system.map((s) => s.text).join("\n\n");
		}
	}
	body.messages = turns.map((turn) => {
		let content = turn.content;
		if (turn.cache && allowBreakpoint()) {
			// Marks a copy of the last block, so a raw message stays as it was.
			const last = content[content.length - 1];
			if (isObject(last)) content = [...content.slice(0, -1), { ...last, cache_control: { type: "ephemeral" } }];
		}
		return { role: turn.role, content };
	});
	return { body, notes };
}

/** Body assembly in pieces (llm/body): messages merged into turns; breakpoints spent by the system field counted. */
export const anthropicPieces: PieceSpec = {
	protocol: "anthropic",
	join: "turns",
	prefix: (request, system, profile) => {
		const { body, notes } = toAnthropicRequest({ ...request, messages: system }, profile, profile.stream);
		const cached = system.filter((s) => s.content && s.cache_breakpoint === true).length;
		return { json: JSON.stringify(body), breakpoints: Math.min(cached, LLM_CACHE_BREAKPOINTS), notes };
	},
	piece: (message, notes) => {
		if (message.role === "system") throw new LlmError("invalid", "a system message cannot be a piece of the conversation");
		const { role, content } = turnBlocks(message, notes);
		return { role, text: content.length ? JSON.stringify(content).slice(1, -1) : "" };
	},
};

// The names read, as bytes (llm/scan ascii()).
const NAME = Object.freeze({
	citation: ascii("citation"),
	citations_delta: ascii("citations_delta"),
	content_block: ascii("content_block"),
	content_block_delta: ascii("content_block_delta"),
	content_block_start: ascii("content_block_start"),
	content_block_stop: ascii("content_block_stop"),
	error: ascii("error"),
	input_json_delta: ascii("input_json_delta"),
	message: ascii("message"),
	message_delta: ascii("message_delta"),
	message_start: ascii("message_start"),
	message_stop: ascii("message_stop"),
	signature: ascii("signature"),
	signature_delta: ascii("signature_delta"),
	text: ascii("text"),
	text_delta: ascii("text_delta"),
	thinking: ascii("thinking"),
	thinking_delta: ascii("thinking_delta"),
});

// ---- reply ----

function finishReason(reason: string | undefined, hasCalls: boolean): FinishReason {
	if (hasCalls) return "tool_calls";
	switch (reason) {
		case "end_turn": case "stop_sequence": return "stop";
		case "tool_use": return "tool_calls";
		case "max_tokens": return "length";
		case "refusal": return "content_filter";
		default: return "other";
	}
}

/** Canonical input_tokens count every prompt token, cached or not (as OpenAI's do). */
function usageOf(u: JsonObject | undefined): Usage {
	const usage = emptyUsage();
	if (!u) return usage;
	usage.cache_read_tokens = numberAt(u, "cache_read_input_tokens");
	usage.cache_write_tokens = numberAt(u, "cache_creation_input_tokens");
	usage.input_tokens = numberAt(u, "input_tokens") + usage.cache_read_tokens + usage.cache_write_tokens;
	usage.output_tokens = numberAt(u, "output_tokens");
	return usage;
}

/** The canonical assistant message for an Anthropic `message` object (kept as raw). */
export function fromAnthropicMessage(raw: JsonObject): AssistantMessage {
	if (raw.role !== "assistant" || !Array.isArray(raw.content))
		throw new LlmError("protocol", "the LLM reply is not an Anthropic assistant message with content blocks");
	let text = "", sawText = false, reasoning = "", signature: string | undefined = undefined;
	const calls: ToolCall[] = [];
	for (const block of raw.content) {
		switch (stringAt(block, "type")) {
			case "text":
				sawText = true;
				text += stringAt(block, "text") ?? "";
				break;
			case "thinking":
				reasoning += stringAt(block, "thinking") ?? "";
				signature = stringAt(block, "signature") ?? signature;
				break;
			case "tool_use": {
				const id = stringAt(block, "id"), name = stringAt(block, "name");
				if (!id || !name) throw new LlmError("protocol", "a tool_use block in the LLM reply has no id or name");
				const input = isObject(block) ? block.input : undefined;
				calls.push({ id, type: "function", function: { name, arguments: JSON.stringify(isObject(input) ? input : {}) } });
				break;
			}
			default:
				break; // redacted_thinking, server tools, ...: kept in raw only
		}
	}
	const message: AssistantMessage = { role: "assistant", content: sawText || !calls.length ? text : null };
	if (reasoning) message.reasoning_content = reasoning;
	if (signature) message.reasoning_signature = signature;
	if (calls.length) message.tool_calls = calls;
	message.raw = { protocol: "anthropic", message: raw };
	return message;
}

export function parseAnthropicResponse(json: JsonValue): ParsedReply {
	if (!isObject(json) || json.type === "error") {
		const error = stringAt(objectAt(json, "error"), "message");
		throw new LlmError("protocol", error ? `the LLM reply is an error: ${error}` : "the LLM reply is not a message object");
	}
	const message = fromAnthropicMessage(json);
	return {
		message,
		finish_reason: finishReason(stringAt(json, "stop_reason"), !!message.tool_calls?.length),
		usage: usageOf(objectAt(json, "usage")),
		model: stringAt(json, "model") ?? "",
	};
}

/** A whole (unstreamed) reply in bytes: the message, built straight from them (it is kept as raw). Throws JsonSyntax when it is not JSON. */
export function parseAnthropicBytes(bytes: Uint8Array, reader = new JsonReader()): ParsedReply {
	const r = reader.reset(bytes);
	const json = r.value();
	r.end();
	r.release();
	return parseAnthropicResponse(json);
}

// The members a stream event's objects are read for (JsonReader.members), by position.
const MEMBERS = Object.freeze({
	top: new MemberNames(["type", "index", "message", "content_block", "usage", "delta", "error"]),
	delta: new MemberNames(["type", "text", "thinking", "signature", "partial_json", "citation", "stop_reason", "stop_sequence"]),
	error: new MemberNames(["type", "message"]),
});
const enum TOP { type, index, message, content_block, usage, delta, error }
const enum DELTA { type, text, thinking, signature, partial_json, citation, stop_reason, stop_sequence }
const enum ERROR { type, message }
/** position when the value there is a string, else -1. */
const stringPosition = (r: JsonReader, position: number) => r.kindAt(position) === Kind.String ? position : -1;

// Text, thinking and tool input grow as lists of pieces, joined once at the end.
interface BlockState { block: JsonObject; pieces: string[]; signature: string[]; callIndex: number }

/**
 * Assembles the Messages event stream into the message the API would have sent.
 * Each event is read from its bytes (llm/scan): the members it has are noted,
 * then only what its type uses is decoded; what the message keeps verbatim (the
 * message of message_start, content blocks, citations) is built from the bytes.
 */
export class AnthropicStreamAssembler extends EventAssembler {
	#emit: (delta: AssistantDelta) => void;
	#message: JsonObject | undefined = undefined;
	#blocks = new Map<number, BlockState>();
	#calls = 0;
	#usage: JsonObject = {};
	#done = false;
	// Where the current event's members are (-1: absent, or not of the type used), reset per event.
	#type = -1; #index = 0; #messageAt = -1; #blockAt = -1; #usageAt = -1;
	#delta = false; #deltaType = -1; #text = -1; #thinking = -1; #signature = -1; #partialJson = -1; #citation = -1;
	#stopReason = -1; #stopSequence = -1;
	#error = false; #errorType = -1; #errorMessage = -1;
	// What members() fills, one set per assembler.
	readonly #at = { top: MEMBERS.top.slots(), delta: MEMBERS.delta.slots(), error: MEMBERS.error.slots() };

	constructor(emit: (delta: AssistantDelta) => void, reader?: JsonReader) {
		super(reader);
		this.#emit = emit;
	}

	protected scan(r: JsonReader): void {
		this.#type = this.#messageAt = this.#blockAt = this.#usageAt = -1;
		this.#index = 0;
		this.#resetDelta();
		this.#error = false;
		this.#errorType = this.#errorMessage = -1;
		const top = this.#at.top;
		if (!r.members(MEMBERS.top, top)) throw new JsonSyntax("not an object");
		r.end();
		if (r.kindAt(top[TOP.type]) === Kind.String) this.#type = top[TOP.type];
		if (r.kindAt(top[TOP.index]) === Kind.Number) {
			// a finite number of at least 0, else 0
			const n = r.seek(top[TOP.index]).number();
			this.#index = Number.isFinite(n) && n >= 0 ? n : 0;
		}
		if (r.kindAt(top[TOP.message]) === Kind.Object) this.#messageAt = top[TOP.message];
		if (r.kindAt(top[TOP.content_block]) === Kind.Object) this.#blockAt = top[TOP.content_block];
		if (r.kindAt(top[TOP.usage]) === Kind.Object) this.#usageAt = top[TOP.usage];
		if (top[TOP.delta] >= 0 && r.seek(top[TOP.delta]).members(MEMBERS.delta, this.#at.delta)) {
			this.#delta = true;
			const delta = this.#at.delta;
			this.#deltaType = stringPosition(r, delta[DELTA.type]);
			this.#text = stringPosition(r, delta[DELTA.text]);
			this.#thinking = stringPosition(r, delta[DELTA.thinking]);
			this.#signature = stringPosition(r, delta[DELTA.signature]);
			this.#partialJson = stringPosition(r, delta[DELTA.partial_json]);
			this.#citation = r.kindAt(delta[DELTA.citation]) === Kind.Object ? delta[DELTA.citation] : -1;
			this.#stopReason = delta[DELTA.stop_reason];     // any value, null too
			this.#stopSequence = delta[DELTA.stop_sequence];
		}
		if (top[TOP.error] >= 0 && r.seek(top[TOP.error]).members(MEMBERS.error, this.#at.error)) {
			this.#error = true;
			const error = this.#at.error;
			this.#errorType = r.kindAt(error[ERROR.type]) === Kind.String ? error[ERROR.type] : -1;
			this.#errorMessage = r.kindAt(error[ERROR.message]) === Kind.String ? error[ERROR.message] : -1;
		}
	}

	#resetDelta(): void {
		this.#delta = false;
		this.#deltaType = this.#text = this.#thinking = this.#signature = this.#partialJson = this.#citation = -1;
		this.#stopReason = this.#stopSequence = -1;
	}

	/** The string noted at position, or fallback when there was none. */
	#string(at: number, fallback: string): string {
		return at >= 0 ? this.reader.seek(at).string() : fallback;
	}

	#typeIs(name: Uint8Array): boolean {
		return this.#type >= 0 && this.reader.seek(this.#type).stringIs(name);
	}

	protected apply(r: JsonReader): void {
		if (this.#typeIs(NAME.content_block_delta)) return this.#applyDelta(r);
		if (this.#typeIs(NAME.message_start)) {
			const message = this.#messageAt >= 0 ? r.seek(this.#messageAt).value() as JsonObject : undefined;
			if (!message) throw new LlmError("protocol", "message_start without a message");
			this.#message = { ...message, content: [] };
			this.#usage = { ...(objectAt(message, "usage") ?? {}) };
		} else if (this.#typeIs(NAME.content_block_start)) {
			const index = this.#index;
			const block = this.#blockAt >= 0 ? r.seek(this.#blockAt).value() as JsonObject : undefined;
			if (!block) throw new LlmError("protocol", "content_block_start without a content block");
			const state: BlockState = { block: { ...block }, pieces: [], signature: [], callIndex: -1 };
			if (block.type === "tool_use") {
				state.callIndex = this.#calls++;
				const delta: AssistantDelta = { type: "tool_call", index: state.callIndex, arguments: "" };
				const id = stringAt(block, "id"), name = stringAt(block, "name");
				if (id) delta.id = id;
				if (name) delta.name = name;
				this.#emit(delta);
			}
			this.#blocks.set(index, state);
		} else if (this.#typeIs(NAME.content_block_stop)) {
			const state = this.#blocks.get(this.#index);
			if (state) this.#close(state);
		} else if (this.#typeIs(NAME.message_delta)) {
			if (this.#message && this.#delta) {
				if (this.#stopReason >= 0) this.#message.stop_reason = r.seek(this.#stopReason).value();
				if (this.#stopSequence >= 0) this.#message.stop_sequence = r.seek(this.#stopSequence).value();
			}
			// Counts here are cumulative: they replace those of message_start.
			if (this.#usageAt >= 0) {
				const usage = r.seek(this.#usageAt).value() as JsonObject;
				for (const [key, value] of Object.entries(usage)) if (value !== null) this.#usage[key] = value;
			}
		} else if (this.#typeIs(NAME.message_stop)) {
			this.#done = true;
		} else if (this.#typeIs(NAME.error)) {
			const type = this.#error ? this.#string(this.#errorType, "error") : "error";
			const message = this.#error ? this.#string(this.#errorMessage, "no message") : "no message";
			const status = type === "overloaded_error" ? 529 : type === "api_error" ? 500 : type === "rate_limit_error" ? 429 : 0;
			throw new LlmError("http", `the LLM stream failed: ${type}: ${message}`, { retryable: retryableStatus(status), status: status || undefined });
		}
		// ping and future event types: nothing
	}

	#applyDelta(r: JsonReader): void {
		const index = this.#index;
		const state = this.#blocks.get(index);
		if (!state || !this.#delta) throw new LlmError("protocol", `content_block_delta for unknown block ${index}`);
		const type = this.#deltaType;
		if (type < 0) return;
		r.seek(type);
		if (r.stringIs(NAME.text_delta)) {
			const text = this.#string(this.#text, "");
			state.pieces.push(text);
			if (text) this.#emit({ type: "text", text });
		} else if (r.seek(type).stringIs(NAME.thinking_delta)) {
			const text = this.#string(this.#thinking, "");
			state.pieces.push(text);
			if (text) this.#emit({ type: "reasoning", text });
		} else if (r.seek(type).stringIs(NAME.signature_delta)) {
			state.signature.push(this.#string(this.#signature, ""));
		} else if (r.seek(type).stringIs(NAME.input_json_delta)) {
			const part = this.#string(this.#partialJson, "");
			state.pieces.push(part);
			if (part) this.#emit({ type: "tool_call", index: state.callIndex, arguments: part });
		} else if (r.seek(type).stringIs(NAME.citations_delta)) {
			const citations = arrayAt(state.block, "citations") ?? [];
			if (this.#citation >= 0) state.block.citations = [...citations, r.seek(this.#citation).value()];
		}
	}

	/** Writes the pieces of a block into it (once; content_block_stop may be missing). */
	#close(state: BlockState): void {
		const block = state.block;
		if (block.type === "tool_use") {
			const json = state.pieces.join("");
			const input = json.trim() ? parseJson(json) : isObject(block.input) ? block.input : {};
			if (!isObject(input)) throw new LlmError("protocol", `the LLM streamed tool input for ${stringAt(block, "name")} that is not a JSON object`);
			block.input = input;
		} else if (block.type === "text" && state.pieces.length) {
			block.text = (stringAt(block, "text") ?? "") + state.pieces.join("");
		} else if (block.type === "thinking" && state.pieces.length) {
			block.thinking = (stringAt(block, "thinking") ?? "") + state.pieces.join("");
		}
		if (state.signature.length) block.signature = (stringAt(block, "signature") ?? "") + state.signature.join("");
		state.pieces = [];
		state.signature = [];
	}

	finish(): ParsedReply {
		if (!this.#done || !this.#message) throw new LlmError("network", "the LLM reply stream ended before the reply was complete");
		for (const state of this.#blocks.values()) this.#close(state);
		const indexes = [...this.#blocks.keys()].sort((a, b) => a - b);
		const raw: JsonObject = { ...this.#message, content: indexes.map((i) => this.#blocks.get(i)!.block), usage: this.#usage };
		return parseAnthropicResponse(raw);
	}
}

// ---- backend ----

export const anthropicCompatible: BackendRegistration = protocolBackend({
	id: "anthropic_compatible",
	defaults: BUILT_IN_DEFAULTS.anthropic_compatible,
	path: "messages",
	headers: { "anthropic-version": "2023-06-01" }, // the Messages API version this code speaks
	toBody: (request, profile) => toAnthropicRequest(request, profile, profile.stream),
	pieces: anthropicPieces,
	mediaContent: (prompt, image) => [image, { type: "text", text: prompt }], // Anthropic advises the image first
	parse: (bytes, reader) => parseAnthropicBytes(bytes, reader),
	assembler: (emit, reader) => new AnthropicStreamAssembler(emit, reader),
});
