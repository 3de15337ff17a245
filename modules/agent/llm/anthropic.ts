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
import { LLM_CACHE_BREAKPOINTS, LLM_REPLY_BLOCKS_MAX, LLM_REPLY_TOOL_CALLS_MAX, LLM_TEXT_SPARES } from "budgets";
import { arrayAt, emptyUsage, isObject, numberAt, objectAt, parseJson, stringAt } from "llm/json";
import { FieldProgram, JsonReader, JsonSyntax, ReplyMeter, TextPieces, Want, ascii } from "llm/scan";
import {
	LlmError,
	type AssistantDelta, type AssistantMessage, type BackendRegistration, type ChatRequest, type ContentPart, type FinishReason,
	type JsonObject, type JsonValue, type Message, type ModelProfile, type ToolCall, type Usage,
} from "llm/types";
import { protocolBackend, retryableStatus, type DeltaSink, type ParsedReply, EventAssembler } from "llm/wire";
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

// What a stream event is read for (JsonReader.fields: one native walk per event), by slot.
const enum F {
	type, index, message, block, usage, delta, deltaType, text, thinking, signature, partialJson, citation, stopReason, stopSequence,
	error, errorType, errorMessage, COUNT,
}
const FIELDS = new FieldProgram([
	{ name: "type", slot: F.type, kinds: Want.String },
	{ name: "index", slot: F.index, kinds: Want.Number },
	{ name: "message", slot: F.message, kinds: Want.Object },
	{ name: "content_block", slot: F.block, kinds: Want.Object },
	{ name: "usage", slot: F.usage, kinds: Want.Object },
	{ name: "delta", slot: F.delta, kinds: Want.Object, fields: [
		{ name: "type", slot: F.deltaType, kinds: Want.String },
		{ name: "text", slot: F.text, kinds: Want.String },
		{ name: "thinking", slot: F.thinking, kinds: Want.String },
		{ name: "signature", slot: F.signature, kinds: Want.String },
		{ name: "partial_json", slot: F.partialJson, kinds: Want.String },
		{ name: "citation", slot: F.citation, kinds: Want.Object },
		{ name: "stop_reason", slot: F.stopReason, kinds: Want.Any },     // any value, null too
		{ name: "stop_sequence", slot: F.stopSequence, kinds: Want.Any },
	] },
	{ name: "error", slot: F.error, kinds: Want.Object, fields: [
		{ name: "type", slot: F.errorType, kinds: Want.String },
		{ name: "message", slot: F.errorMessage, kinds: Want.String },
	] },
], F.COUNT);

// A content block being assembled: its text, thinking or tool input, and its
// signature, gathered as bytes (llm/scan TextPieces) and decoded once, when it closes.
interface BlockState { block: JsonObject; pieces: TextPieces; signature: TextPieces; callIndex: number }
const UNKNOWN_END = -2;   // a plainEnd() not asked yet
const EMPTY_BLOCK: JsonObject = Object.freeze({}) as JsonObject;

/**
 * Assembles the Messages event stream into the message the API would have sent,
 * handing deltas to the sink as they come (only while it hears them). Each
 * event is read from its bytes (llm/scan): the members it has are noted, then
 * only what its type uses is decoded; what the message keeps verbatim (the
 * message of message_start, content blocks, citations) is built from the
 * bytes. One assembler serves a backend's calls (reset()).
 */
export class AnthropicStreamAssembler extends EventAssembler {
	#message: JsonObject | undefined = undefined;
	/** The reply's text, thinking, signatures and tool input together, against LLM_REPLY_MAX_BYTES. */
	readonly #meter = new ReplyMeter();
	readonly #blocks = new Map<number, BlockState>();
	/** Block states of past replies, their gatherers kept for the next (at most LLM_TEXT_SPARES). */
	readonly #spare: BlockState[] = [];
	#calls = 0;
	#usage: JsonObject = {};
	#done = false;
	// Where the current event's values are (FIELDS' slots; -1: absent, or not of the kind used), and its block index.
	readonly #at = FIELDS.slots();
	readonly #atBuffer = this.#at.buffer as ArrayBuffer;
	#index = 0;
	// Where the event's type closes when it has no escapes (llm/scan plainEnd), -1 otherwise; UNKNOWN_END until asked.
	#typeEnd = UNKNOWN_END;

	protected clear(): void {
		this.#meter.bytes = 0;
		for (const state of this.#blocks.values()) {
			if (this.#spare.length >= LLM_TEXT_SPARES) break;
			state.pieces.clear();
			state.signature.clear();
			state.block = EMPTY_BLOCK;
			this.#spare.push(state);
		}
		this.#blocks.clear();
		this.#message = undefined;
		this.#calls = 0;
		this.#usage = {};
		this.#done = false;
	}

	protected scan(r: JsonReader): void {
		const at = this.#at;
		if (!r.fields(FIELDS, at, this.#atBuffer, true)) throw new JsonSyntax("not an object");
		this.#index = 0;
		if (at[F.index] >= 0) {
			// a finite number of at least 0, else 0
			const n = r.integerAt(at[F.index]);
			this.#index = Number.isFinite(n) && n >= 0 ? n : 0;
		}
		this.#typeEnd = UNKNOWN_END;
	}

	/** The string noted at position, or fallback when there was none. */
	#string(at: number, fallback: string): string {
		return at >= 0 ? this.reader.textAt(at) : fallback;
	}

	#typeIs(name: Uint8Array): boolean {
		const position = this.#at[F.type];
		if (this.#typeEnd === UNKNOWN_END) this.#typeEnd = this.reader.plainEnd(position);
		return this.#is(position, this.#typeEnd, name);
	}

	/** Whether the string at position (-1: none) is name: its bytes compared at once when it has no escapes (end: its plainEnd), else decoded. */
	#is(position: number, end: number, name: Uint8Array): boolean {
		if (position < 0) return false;
		if (end >= 0) return this.reader.rangeIs(position + 1, end, name);
		return this.reader.seek(position).stringIs(name);
	}

	protected apply(r: JsonReader): void {
		// Most events are text or tool input deltas: their type is compared first, in one native call.
		if (r.plainIs(this.#at[F.type], NAME.content_block_delta) || this.#typeIs(NAME.content_block_delta)) return this.#applyDelta(r);
		if (this.#typeIs(NAME.message_start)) {
			const message = this.#at[F.message] >= 0 ? r.seek(this.#at[F.message]).value() as JsonObject : undefined;
			if (!message) throw new LlmError("protocol", "message_start without a message");
			this.#message = { ...message, content: [] };
			this.#usage = { ...(objectAt(message, "usage") ?? {}) };
		} else if (this.#typeIs(NAME.content_block_start)) {
			const index = this.#index;
			const block = this.#at[F.block] >= 0 ? r.seek(this.#at[F.block]).value() as JsonObject : undefined;
			if (!block) throw new LlmError("protocol", "content_block_start without a content block");
			if (!this.#blocks.has(index) && this.#blocks.size >= LLM_REPLY_BLOCKS_MAX) throw new LlmError("protocol", `the LLM reply stream opens more than ${LLM_REPLY_BLOCKS_MAX} content blocks`);
			if (block.type === "tool_use" && this.#calls >= LLM_REPLY_TOOL_CALLS_MAX) throw new LlmError("protocol", `the LLM reply stream has more than ${LLM_REPLY_TOOL_CALLS_MAX} tool calls`);
			const state = this.#spare.pop() ?? { block: EMPTY_BLOCK, pieces: new TextPieces(this.#meter), signature: new TextPieces(this.#meter), callIndex: -1 };
			state.block = { ...block };
			state.callIndex = -1;
			const old = this.#blocks.get(index);
			if (old && old !== state) {
				// the same index again: its gatherers go on with the new block's
				old.pieces.clear();
				old.signature.clear();
				if (this.#spare.length < LLM_TEXT_SPARES) this.#spare.push(old);
			}
			this.#blocks.set(index, state);
			if (block.type === "tool_use") {
				state.callIndex = this.#calls++;
				const sink = this.sink as DeltaSink;
				if (sink.hearsDeltas()) {
					const delta: AssistantDelta = { type: "tool_call", index: state.callIndex, arguments: "" };
					const id = stringAt(block, "id"), name = stringAt(block, "name");
					if (id) delta.id = id;
					if (name) delta.name = name;
					sink.delta(delta);
				}
			}
		} else if (this.#typeIs(NAME.content_block_stop)) {
			const state = this.#blocks.get(this.#index);
			if (state) this.#close(state);
		} else if (this.#typeIs(NAME.message_delta)) {
			const at = this.#at;
			if (this.#message && at[F.delta] >= 0) {
				if (at[F.stopReason] >= 0) this.#message.stop_reason = r.seek(at[F.stopReason]).value();
				if (at[F.stopSequence] >= 0) this.#message.stop_sequence = r.seek(at[F.stopSequence]).value();
			}
			// Counts here are cumulative: they replace those of message_start.
			if (at[F.usage] >= 0) {
				const usage = r.seek(at[F.usage]).value() as JsonObject;
				for (const [key, value] of Object.entries(usage)) if (value !== null) this.#usage[key] = value;
			}
		} else if (this.#typeIs(NAME.message_stop)) {
			this.#done = true;
		} else if (this.#typeIs(NAME.error)) {
			const at = this.#at, error = at[F.error] >= 0;
			const type = error ? this.#string(at[F.errorType], "error") : "error";
			const message = error ? this.#string(at[F.errorMessage], "no message") : "no message";
			const status = type === "overloaded_error" ? 529 : type === "api_error" ? 500 : type === "rate_limit_error" ? 429 : 0;
			throw new LlmError("http", `the LLM stream failed: ${type}: ${message}`, { retryable: retryableStatus(status), status: status || undefined });
		}
		// ping and future event types: nothing
	}

	#applyDelta(r: JsonReader): void {
		const index = this.#index;
		const state = this.#blocks.get(index);
		const at = this.#at;
		if (!state || at[F.delta] < 0) throw new LlmError("protocol", `content_block_delta for unknown block ${index}`);
		const type = at[F.deltaType];
		if (type < 0) return;
		const sink = this.sink as DeltaSink;
		if (r.plainIs(type, NAME.text_delta)) {
			addPiece(r, at[F.text], state.pieces, sink, "text", 0);
			return;
		}
		const end = r.plainEnd(type);
		if (this.#is(type, end, NAME.text_delta)) {
			addPiece(r, at[F.text], state.pieces, sink, "text", 0);
		} else if (this.#is(type, end, NAME.thinking_delta)) {
			addPiece(r, at[F.thinking], state.pieces, sink, "reasoning", 0);
		} else if (this.#is(type, end, NAME.signature_delta)) {
			if (at[F.signature] < 0) state.signature.addString("", 0);
			else r.addText(at[F.signature], state.signature);
		} else if (this.#is(type, end, NAME.input_json_delta)) {
			addPiece(r, at[F.partialJson], state.pieces, sink, "tool_call", state.callIndex);
		} else if (this.#is(type, end, NAME.citations_delta)) {
			const citations = arrayAt(state.block, "citations") ?? [];
			if (at[F.citation] >= 0) state.block.citations = [...citations, r.seek(at[F.citation]).value()];
		}
	}

	/** Writes the pieces of a block into it (once; content_block_stop may be missing). */
	#close(state: BlockState): void {
		const block = state.block;
		const pieces = state.pieces;
		if (block.type === "tool_use") {
			const json = pieces.text();
			const input = json.trim() ? parseJson(json) : isObject(block.input) ? block.input : {};
			if (!isObject(input)) throw new LlmError("protocol", `the LLM streamed tool input for ${stringAt(block, "name")} that is not a JSON object`);
			block.input = input;
		} else if (block.type === "text" && pieces.pieces) {
			block.text = (stringAt(block, "text") ?? "") + pieces.text();
		} else if (block.type === "thinking" && pieces.pieces) {
			block.thinking = (stringAt(block, "thinking") ?? "") + pieces.text();
		}
		if (state.signature.pieces) block.signature = (stringAt(block, "signature") ?? "") + state.signature.text();
		pieces.clear();
		state.signature.clear();
	}

	finish(): ParsedReply {
		if (!this.#done || !this.#message) throw new LlmError("network", "the LLM reply stream ended before the reply was complete");
		for (const state of this.#blocks.values()) this.#close(state);
		const indexes = [...this.#blocks.keys()].sort((a, b) => a - b);
		const raw: JsonObject = { ...this.#message, content: indexes.map((i) => this.#blocks.get(i)!.block), usage: this.#usage };
		return parseAnthropicResponse(raw);
	}
}

/**
 * A text, thinking or tool input piece at position (-1: none, an empty piece)
 * into pieces, as bytes (counted against the reply's cap); when someone hears
 * deltas, also decoded as the delta's string.
 */
function addPiece(r: JsonReader, position: number, pieces: TextPieces, sink: DeltaSink, type: "text" | "reasoning" | "tool_call", callIndex: number): void {
	if (position < 0) {
		pieces.addString("", 0);
		return;
	}
	if (!r.addText(position, pieces) || !sink.hearsDeltas()) return;
	const text = r.textAt(position);
	sink.delta(type === "tool_call" ? { type, index: callIndex, arguments: text } : { type, text });
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
	assembler: (reader) => new AnthropicStreamAssembler(reader),
});
