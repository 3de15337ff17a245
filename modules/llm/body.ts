// llm/body: a chat request body written into one buffer from the pool (PSRAM on
// the board) as a sequence of byte pieces, never as one JSON string in the heap:
//   1. the stable prefix — everything before the conversation (model, limits,
//      tools, the system prompt) — encoded once and kept by the backend until the
//      profile, the tools or the system prompt change;
//   2. each history message a store handed out as a `stored` placeholder: its
//      wire piece is encoded once per protocol (from `stored.load()`) into its
//      own pool buffer and copied from there on every later request;
//   3. the newest messages (the question, this request's tool rounds), encoded
//      as they come (they are small).
// The bytes are exactly JSON.stringify of the body the protocol's toBody()
// builds (test/unit/llm_body.test.ts holds them side by side), so the prompt
// cache sees the same prefix either way.
//
// How the pieces join is the protocol's: "list" (OpenAI: messages one after
// the other) or "turns" (Anthropic: consecutive messages of one role merge into
// one turn of content blocks; a turn whose last message carries a cache
// breakpoint gets cache_control on its last block).
//
// Known limits: a piece cache entry lives as long as the store keeps its
// placeholder (a WeakMap), and its pool buffer is given back when the garbage
// collector takes it, not at once.
import { LLM_BODY_START_BYTES, LLM_CACHE_BREAKPOINTS } from "budgets";
import { encodeUtf8 } from "net/utf8";
import type { BufferPool } from "util/buffers";
import { LlmError, type ChatRequest, type Message, type ModelProfile, type StoredRef, type SystemMessage, type WireProtocol } from "llm/types";

/** One message as its protocol sends it. For "turns", text is its content blocks without the brackets ("" = no blocks). */
export interface WirePiece { role: "user" | "assistant"; text: string }

/** What a protocol brings to body assembly. */
export interface PieceSpec {
	protocol: WireProtocol;
	join: "list" | "turns";
	/**
	 * The JSON text of the body with only the leading system messages, and how many
	 * cache breakpoints that spent. Its messages (or, for turns, the system
	 * field) are complete; the assembler opens the conversation after them.
	 */
	prefix(request: ChatRequest, system: SystemMessage[], profile: ModelProfile): { json: string; breakpoints: number; notes: string[] };
	/** One non-system message's wire piece; notes get what the conversion had to change. */
	piece(message: Message, notes: string[]): WirePiece;
}

const pieceCache = new WeakMap<StoredRef, Partial<Record<WireProtocol, { role: "user" | "assistant"; bytes: Uint8Array }>>>();

function ascii(text: string): Uint8Array {
	return new Uint8Array(ArrayBuffer.fromString(text));
}
const COMMA = ascii(",");
const CLOSE_LIST = ascii("]}");
const CACHE_CONTROL = ascii(",\"cache_control\":{\"type\":\"ephemeral\"}}");
const TURN_OPEN = { user: ascii("{\"role\":\"user\",\"content\":["), assistant: ascii("{\"role\":\"assistant\",\"content\":[") };

/** A body growing in one pool buffer (in place where the pool can resize, else by copying to a buffer twice the size). */
export class BodyWriter {
	readonly #buffers: BufferPool;
	#buffer: ArrayBufferLike | undefined;
	#bytes: Uint8Array;
	#length = 0;

	constructor(buffers: BufferPool, startBytes = LLM_BODY_START_BYTES) {
		this.#buffers = buffers;
		this.#buffer = buffers.allocate(startBytes);
		this.#bytes = new Uint8Array(this.#buffer, 0, startBytes);
	}

	get length(): number { return this.#length; }

	/** The buffer to give back to the pool once the body was sent (undefined after release). */
	get buffer(): ArrayBufferLike | undefined { return this.#buffer; }

	/** The bytes written so far: a view of the pool buffer, no copy. */
	view(): Uint8Array { return this.#bytes.subarray(0, this.#length); }

	write(piece: Uint8Array, end = piece.length): void {
		if (!this.#buffer) throw new Error("llm: a body was written after it was released");
		const need = this.#length + end;
		if (need > this.#bytes.length) this.#grow(need);
		this.#bytes.set(end === piece.length ? piece : piece.subarray(0, end), this.#length);
		this.#length = need;
	}

	/** A string, as UTF-8 (lone surrogates become U+FFFD, as the HTTP client does). */
	text(text: string): void {
		this.write(encodeUtf8(text));
	}

	release(): void {
		const buffer = this.#buffer;
		this.#buffer = undefined;
		this.#bytes = new Uint8Array(0);
		this.#length = 0;
		if (buffer) this.#buffers.free(buffer);
	}

	#grow(need: number): void {
		let size = Math.max(this.#bytes.length * 2, LLM_BODY_START_BYTES);
		while (size < need) size *= 2;
		const old = this.#buffer!;
		if (this.#buffers.resize) {
			this.#buffers.resize(old, size);
			this.#bytes = new Uint8Array(old, 0, size);
			return;
		}
		const buffer = this.#buffers.allocate(size);
		const bytes = new Uint8Array(buffer, 0, size);
		bytes.set(this.#bytes.subarray(0, this.#length));
		this.#buffer = buffer;
		this.#bytes = bytes;
		this.#buffers.free(old);
	}
}

/** A copy of bytes in a buffer of their own from the pool. */
function kept(bytes: Uint8Array, buffers: BufferPool): Uint8Array {
	const copy = new Uint8Array(buffers.allocate(bytes.length), 0, bytes.length);
	copy.set(bytes);
	return copy;
}

/** The stable prefix a backend keeps: what it was made from, compared by identity (strings by value). */
export interface Prefix { made: unknown[]; bytes: Uint8Array; breakpoints: number }

// Compared once per message in the loops below: named once (the lin host copies a
// string literal into the heap each time it is evaluated; the device reads it in flash).
const SYSTEM = "system", LIST = "list";

/** The leading system messages of a request, and where the conversation starts; undefined when a system message comes later. */
function leadingSystem(messages: Message[]): { system: SystemMessage[]; start: number } | undefined {
	let start = 0;
	while (start < messages.length && messages[start].role === SYSTEM) start++;
	for (let i = start; i < messages.length; i++) if (messages[i].role === SYSTEM) return undefined;
	return { system: messages.slice(0, start) as SystemMessage[], start };
}

/** What a prefix is made from, in the order sameMade() compares it. */
function madeOf(spec: PieceSpec, request: ChatRequest, profile: ModelProfile, system: SystemMessage[]): unknown[] {
	return [spec.protocol, profile.model, profile.max_tokens_field, profile.max_tokens, profile.stream, request.max_tokens, ...system.map((m) => m.content), ...system.map((m) => m.cache_breakpoint === true), ...(request.tools ?? [])];
}

/** Whether made (madeOf) still describes this request: compared in place, without building a new list per call. */
function sameMade(made: unknown[], spec: PieceSpec, request: ChatRequest, profile: ModelProfile, system: SystemMessage[]): boolean {
	const tools = request.tools ?? [];
	if (made.length !== 6 + 2 * system.length + tools.length) return false;
	if (made[0] !== spec.protocol || made[1] !== profile.model || made[2] !== profile.max_tokens_field || made[3] !== profile.max_tokens
		|| made[4] !== profile.stream || made[5] !== request.max_tokens) return false;
	let at = 6;
	for (let i = 0; i < system.length; i++) if (made[at++] !== system[i].content) return false;
	for (let i = 0; i < system.length; i++) if (made[at++] !== (system[i].cache_breakpoint === true)) return false;
	for (let i = 0; i < tools.length; i++) if (made[at++] !== tools[i]) return false;
	return true;
}

/**
 * Writes the body of request into writer. Returns the prefix to keep for the
 * next call (the one given when still valid). Notes get what the conversions
 * changed. Undefined when the request cannot go in pieces (a system message
 * after the conversation started, for a protocol that lifts them out): the
 * caller then sends JSON.stringify of toBody().
 */
export function writeBody(spec: PieceSpec, request: ChatRequest, profile: ModelProfile, writer: BodyWriter, buffers: BufferPool, prefix: Prefix | undefined, notes: string[]): Prefix | undefined {
	const lead = leadingSystem(request.messages);
	if (!lead) return undefined;
	if (!prefix || !sameMade(prefix.made, spec, request, profile, lead.system)) {
		const made = madeOf(spec, request, profile, lead.system);
		const built = spec.prefix(request, lead.system, profile);
		notes.push(...built.notes);
		// The JSON ends with the (for now) closing "]}" of its messages: the conversation goes there.
		const bytes = encodeUtf8(built.json);
		prefix = { made, bytes: kept(bytes.subarray(0, bytes.length - CLOSE_LIST.length), buffers), breakpoints: built.breakpoints };
	}
	writer.write(prefix.bytes);
	let breakpoints = prefix.breakpoints;
	const allowBreakpoint = () => {
		if (breakpoints < LLM_CACHE_BREAKPOINTS) return ++breakpoints;
		notes.push(`more than ${LLM_CACHE_BREAKPOINTS} cache breakpoints; the later ones were left out`);
		return 0;
	};
	const list = spec.join === LIST;
	let listed = list ? lead.system.length : 0;
	// turns: the last piece of the open turn waits until it is known whether the turn goes on.
	let pending: { role: "user" | "assistant"; bytes: Uint8Array; cache: boolean } | undefined = undefined;
	const closeTurn = () => {
		if (!pending) return;
		const bytes = pending.bytes;
		if (pending.cache && allowBreakpoint()) {
			writer.write(bytes, bytes.length - 1);   // the last block's closing brace moves after cache_control
			writer.write(CACHE_CONTROL);
		} else {
			writer.write(bytes);
		}
		writer.write(CLOSE_LIST);
	};
	for (let i = lead.start; i < request.messages.length; i++) {
		const message = request.messages[i];
		const piece = pieceOf(spec, message, buffers, notes);
		if (list) {
			if (listed++) writer.write(COMMA);
			writer.write(piece.bytes);
			continue;
		}
		if (!piece.bytes.length) continue;   // no blocks: the API rejects empty messages, and its neighbours merge
		const cache = message.cache_breakpoint === true;
		if (pending && pending.role === piece.role) {
			writer.write(pending.bytes);
			writer.write(COMMA);
		} else {
			closeTurn();
			if (listed++) writer.write(COMMA);
			writer.write(TURN_OPEN[piece.role]);
		}
		pending = { role: piece.role, bytes: piece.bytes, cache };
	}
	closeTurn();
	writer.write(CLOSE_LIST);
	return prefix;
}

/** A stored message, or an LlmError saying it could not be read. */
function load(stored: StoredRef): Message {
	try {
		return stored.load();
	} catch (error) {
		throw new LlmError("invalid", `a message of the conversation history could not be read (${error instanceof Error ? error.message : String(error)}); send the request again`);
	}
}

/** The request with every stored placeholder replaced by its message (for a backend that takes whole messages). */
export function loadStored(request: ChatRequest): ChatRequest {
	if (!request.messages.some((m) => m.stored)) return request;
	const messages = request.messages.map((m): Message => {
		if (!m.stored) return m;
		const whole = load(m.stored);
		return m.cache_breakpoint ? { ...whole, cache_breakpoint: true } : whole;
	});
	return { ...request, messages };
}

/** A message's wire bytes: from the piece cache for a stored message (made on first use), else encoded now. */
function pieceOf(spec: PieceSpec, message: Message, buffers: BufferPool, notes: string[]): { role: "user" | "assistant"; bytes: Uint8Array } {
	const stored = message.stored;
	if (!stored) {
		const piece = spec.piece(message, notes);
		return { role: piece.role, bytes: encodeUtf8(piece.text) };
	}
	let cached = pieceCache.get(stored);
	const hit = cached?.[spec.protocol];
	if (hit) return hit;
	const piece = spec.piece(load(stored), notes);
	const entry = { role: piece.role, bytes: piece.text ? kept(encodeUtf8(piece.text), buffers) : new Uint8Array(0) };
	if (!cached) pieceCache.set(stored, cached = {});
	cached[spec.protocol] = entry;
	return entry;
}
