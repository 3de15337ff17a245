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
// The pieces of one store window (StoredRef.group: every placeholder of a
// session's window shares it) live together in one pool buffer per protocol, a
// PieceArena, found by the record's key: no object and no pool buffer per
// message (a full window of 256 messages held 256 buffers and ~15 heap slots
// each). Records that leave the window leave dead bytes behind; when a body
// used less than half of an arena, the arena is rewritten with only what that
// body used (amortised: each piece is copied a bounded number of times). A
// "list" piece is kept with the comma that goes before it in a body, so the
// pieces of a window, which follow each other in their arena as in the body,
// are copied into a body as one run (no view per message: in XS each costs heap).
//
// Known limits: an arena lives as long as the store keeps its window (a
// WeakMap on the group), and its pool buffer is given back when the garbage
// collector takes it, not at once.
import { LLM_BODY_START_BYTES, LLM_CACHE_BREAKPOINTS, LLM_PIECE_ARENA_START_BYTES } from "budgets";
import { copy } from "host/bytes";
import { encodeUtf8 } from "net/utf8";
import type { BufferPool } from "util/buffers";
import { KeyedRun, type RunView } from "util/run";
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

/**
 * The wire pieces of one store window in one protocol, one after the other in a
 * pool buffer. at: record key -> start * 2^24 + length * 2 + (1 for an
 * assistant piece); one number per piece in one array (util/run), no object.
 */
class PieceArena {
	store: BodyWriter;
	at = new KeyedRun<number>();
	/** The body that last read from this arena (bodyCount), and how many of its bytes and pieces it read. */
	usedBy = 0;
	usedBytes = 0;
	usedPieces = 0;

	/** startBytes 0: a message of its own (no group), sized by its first piece. */
	constructor(buffers: BufferPool, startBytes: number) {
		this.store = new BodyWriter(buffers, startBytes, startBytes === 0);
	}
}

const PIECE_SHIFT = 16_777_216;   // 2^24: a piece's length (times 2, plus its role bit) stays below it
const pieceArenas = new WeakMap<object, Partial<Record<WireProtocol, PieceArena>>>();
/** Counts bodies written, so an arena knows which body its usage figures belong to. */
let bodyCount = 0;
/** Arenas read by the body being written (reused: no array per body). */
const touched: PieceArena[] = [];

const NO_BYTES = new Uint8Array(0);

function ascii(text: string): Uint8Array {
	return new Uint8Array(ArrayBuffer.fromString(text));
}
const COMMA = ascii(",");
const CLOSE_LIST = ascii("]}");
const CACHE_CONTROL = ascii(",\"cache_control\":{\"type\":\"ephemeral\"}}");
const TURN_OPEN = { user: ascii("{\"role\":\"user\",\"content\":["), assistant: ascii("{\"role\":\"assistant\",\"content\":[") };
// A turn's end and the next one's opening, written at once: the roles alternate, so it comes between most messages.
const TURN_NEXT = { user: ascii("]},{\"role\":\"user\",\"content\":["), assistant: ascii("]},{\"role\":\"assistant\",\"content\":[") };
// The last turn's end and the body's.
const CLOSE_TURNS = ascii("]}]}");

/** A body growing in one pool buffer (in place where the pool can resize, else by copying to a buffer twice the size). */
export class BodyWriter {
	readonly #buffers: BufferPool;
	#buffer: ArrayBufferLike | undefined = undefined;
	#bytes: Uint8Array = NO_BYTES;
	#capacity = 0;   // #bytes' length (XS reads a typed array's through a getter)
	#length = 0;
	#released = false;
	/** Grows to exactly what is written (a message's own arena) rather than by doubling. */
	readonly #exact: boolean;

	/** startBytes 0 with exact: nothing is taken from the pool until the first write, and then exactly its size. */
	constructor(buffers: BufferPool, startBytes = LLM_BODY_START_BYTES, exact = false) {
		this.#buffers = buffers;
		this.#exact = exact;
		if (startBytes > 0) {
			this.#buffer = buffers.allocate(startBytes);
			this.#bytes = new Uint8Array(this.#buffer, 0, startBytes);
			this.#capacity = startBytes;
		}
	}

	get length(): number { return this.#length; }

	/** The buffer to give back to the pool once the body was sent (undefined after release). */
	get buffer(): ArrayBufferLike | undefined { return this.#buffer; }

	/** The bytes written so far: a view of the pool buffer, no copy. */
	view(): Uint8Array { return this.#bytes.subarray(0, this.#length); }

	/** The whole buffer (valid until the next write: a write may move it); bytes [0, length) are written. */
	get bytes(): Uint8Array { return this.#bytes; }

	write(piece: Uint8Array, end = piece.length): void {
		this.writeRange(piece, 0, end);
	}

	/** Bytes [start, end) of source: one native copy, no view made. */
	writeRange(source: Uint8Array, start: number, end: number): void {
		if (this.#released) throw new Error("llm: a body was written after it was released");
		const need = this.#length + end - start;
		if (need > this.#capacity) this.#grow(need);
		this.#length = copy(source, start, end, this.#bytes, this.#length);
	}

	/** A string, as UTF-8 (lone surrogates become U+FFFD, as the HTTP client does). */
	text(text: string): void {
		this.write(encodeUtf8(text));
	}

	release(): void {
		const buffer = this.#buffer;
		this.#released = true;
		this.#buffer = undefined;
		this.#bytes = NO_BYTES;
		this.#capacity = this.#length = 0;
		if (buffer) this.#buffers.free(buffer);
	}

	#grow(need: number): void {
		let size = this.#exact ? need : Math.max(this.#capacity * 2, LLM_BODY_START_BYTES);
		while (size < need) size *= 2;
		const old = this.#buffer;
		if (!old) {
			this.#buffer = this.#buffers.allocate(size);
			this.#bytes = new Uint8Array(this.#buffer, 0, size);
			this.#capacity = size;
			return;
		}
		if (this.#buffers.resize) {
			this.#buffers.resize(old, size);
			this.#bytes = new Uint8Array(old, 0, size);
			this.#capacity = size;
			return;
		}
		const buffer = this.#buffers.allocate(size);
		const bytes = new Uint8Array(buffer, 0, size);
		copy(this.#bytes, 0, this.#length, bytes, 0);
		this.#buffer = buffer;
		this.#bytes = bytes;
		this.#capacity = size;
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

// Compared once per message in the loops below, named once.
const SYSTEM = "system", LIST = "list", USER = "user", ASSISTANT = "assistant";

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
	bodyCount++;
	letGo();   // also after a body that threw halfway
	// turns: the last piece of the open turn waits until it is known whether the turn goes on.
	let piece = PIECE_A, pending: Piece | undefined = undefined, pendingCache = false;
	// list: arena pieces that follow each other in their arena, as they do in a
	// window, go out as one run (a list piece is stored with its leading comma):
	// one copy, not a view and a copy per message.
	let run: PieceArena | undefined = undefined, runStart = 0, runEnd = 0;
	const flushRun = () => {
		if (run) writer.writeRange(run.store.bytes, runStart, runEnd);
		run = undefined;
	};
	// The open turn's last piece (its end, "]}", the caller writes with what follows).
	const closeTurn = (turn: Piece) => {
		if (pendingCache && allowBreakpoint()) {
			// The last block's closing brace moves after cache_control.
			writer.writeRange(sourceOf(turn), turn.start, turn.end - 1);
			writer.write(CACHE_CONTROL);
		} else {
			writePiece(writer, turn);
		}
	};
	// The window of the last stored message and its arena's ring: the next message of
	// that window whose piece is there is read in place, without a call or a lookup
	// (a body is mostly one window's messages, in order).
	// The ring's fields are held in locals (no property read per message), and what the
	// body reads of the arena is counted in locals, added to the arena when it changes.
	let group: object | undefined = undefined, arena: PieceArena | undefined = undefined;
	let items: readonly (number | undefined)[] = [], lo = 0, hi = 0, offset = 0, mask = 0, usedBytes = 0, usedPieces = 0;
	const messages = request.messages, count = messages.length;
	for (let i = lead.start; i < count; i++) {
		const message = messages[i];
		const stored = message.stored;
		let inArena = false;
		if (stored !== undefined && group !== undefined && stored.group === group) {
			const key = stored.key ?? 0;
			const packed = key >= lo && key < hi ? items[(offset + key) & mask] : undefined;
			if (packed !== undefined) {
				const rest = packed % PIECE_SHIFT, start = (packed - rest) / PIECE_SHIFT, length = rest >> 1;
				usedBytes += length;
				usedPieces++;
				if (list) {
					// Straight into the run (a list needs no piece): the first message goes without its comma.
					const from = listed++ ? start : start + 1;
					if (run === arena && runEnd === from) runEnd = start + length;
					else {
						flushRun();
						run = arena;
						runStart = from;
						runEnd = start + length;
					}
					continue;
				}
				piece.role = rest & 1 ? ASSISTANT : USER;
				piece.from = arena as PieceArena;
				piece.start = start;
				piece.end = start + length;
				inArena = true;
			}
		}
		if (!inArena) {
			pieceOf(spec, message, buffers, notes, piece);
			inArena = piece.from instanceof PieceArena;
			if (inArena && stored?.group !== undefined) {
				if (arena) {
					arena.usedBytes += usedBytes;
					arena.usedPieces += usedPieces;
				}
				usedBytes = usedPieces = 0;
				group = stored.group;
				arena = piece.from as PieceArena;
				// After pieceOf: its set() may have moved the ring.
				const view: RunView<number> = arena.at.view();
				items = view.items;
				lo = view.lo;
				hi = view.hi;
				offset = view.offset;
				mask = view.mask;
			}
		}
		if (list) {
			const from = piece.from;
			if (inArena) {
				const start = listed++ ? piece.start : piece.start + 1;   // the first message goes without its comma
				if (run === from && runEnd === start) runEnd = piece.end;
				else {
					flushRun();
					run = from as PieceArena;
					runStart = start;
					runEnd = piece.end;
				}
				continue;
			}
			flushRun();
			if (listed++) writer.write(COMMA);
			writePiece(writer, piece);
			continue;
		}
		if (piece.end === piece.start) continue;   // no blocks: the API rejects empty messages, and its neighbours merge
		if (pending && pending.role === piece.role) {
			writePiece(writer, pending);
			writer.write(COMMA);
		} else if (pending) {
			closeTurn(pending);
			writer.write(TURN_NEXT[piece.role]);
		} else {
			// The first turn (pending is set from the first turn on).
			writer.write(TURN_OPEN[piece.role]);
		}
		pending = piece;
		pendingCache = message.cache_breakpoint === true;
		piece = piece === PIECE_A ? PIECE_B : PIECE_A;
	}
	flushRun();
	if (pending) {
		closeTurn(pending);
		writer.write(CLOSE_TURNS);
	} else writer.write(CLOSE_LIST);
	if (arena) {
		arena.usedBytes += usedBytes;
		arena.usedPieces += usedPieces;
	}
	// An arena mostly of pieces this body did not use (records that left the window) is rewritten.
	for (let i = 0; i < touched.length; i++) {
		const arena = touched[i];
		if (arena.store.length > 2 * arena.usedBytes + LLM_PIECE_ARENA_START_BYTES || arena.at.size > 2 * arena.usedPieces + 16) compactArena(arena, request.messages, spec.protocol, buffers);
	}
	letGo();
	return prefix;
}

/** The module's reused pieces and list point at nothing between bodies: a window let go of by its store must not stay alive through them. */
function letGo(): void {
	touched.length = 0;
	PIECE_A.from = PIECE_B.from = NO_BYTES;
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

/** Where a message's wire piece is: bytes [start, end) of from, and the role of its turn. */
interface Piece { role: "user" | "assistant"; from: Uint8Array | PieceArena; start: number; end: number }
// The two pieces the loop alternates between (the current one, and the turn's pending one): no object per message.
const PIECE_A: Piece = { role: USER, from: NO_BYTES, start: 0, end: 0 };
const PIECE_B: Piece = { role: USER, from: NO_BYTES, start: 0, end: 0 };

function sourceOf(piece: Piece): Uint8Array {
	const from = piece.from;
	return from instanceof PieceArena ? from.store.bytes : from;
}

function writePiece(writer: BodyWriter, piece: Piece): void {
	if (piece.end > piece.start) writer.writeRange(sourceOf(piece), piece.start, piece.end);
}

/** The arena of a stored message's window (its own when the store gives no group) in a protocol, made on first use. */
function arenaOf(stored: StoredRef, protocol: WireProtocol, buffers: BufferPool | undefined): PieceArena | undefined {
	const group = stored.group ?? stored;
	let arenas = pieceArenas.get(group);
	let arena = arenas?.[protocol];
	if (arena || !buffers) return arena;
	if (!arenas) pieceArenas.set(group, arenas = {});
	return arenas[protocol] = new PieceArena(buffers, stored.group ? LLM_PIECE_ARENA_START_BYTES : 0);
}

/** A message's wire piece into `into`: from its window's arena for a stored message (encoded there on first use), else encoded now. */
function pieceOf(spec: PieceSpec, message: Message, buffers: BufferPool, notes: string[], into: Piece): void {
	const stored = message.stored;
	if (!stored) {
		const piece = spec.piece(message, notes);
		const bytes = encodeUtf8(piece.text);
		into.role = piece.role;
		into.from = bytes;
		into.start = 0;
		into.end = bytes.length;
		return;
	}
	const arena = arenaOf(stored, spec.protocol, buffers)!;
	const key = stored.key ?? 0;
	let packed = arena.at.get(key);
	if (packed === undefined) {
		const piece = spec.piece(load(stored), notes);
		const start = arena.store.length;
		if (piece.text && spec.join === LIST) arena.store.write(COMMA);   // see writeBody: runs of list pieces
		if (piece.text) arena.store.write(encodeUtf8(piece.text));
		packed = start * PIECE_SHIFT + (arena.store.length - start) * 2 + (piece.role === ASSISTANT ? 1 : 0);
		arena.at.set(key, packed);
	}
	const rest = packed % PIECE_SHIFT, start = (packed - rest) / PIECE_SHIFT, length = rest >> 1;
	into.role = rest & 1 ? ASSISTANT : USER;
	into.from = arena;
	into.start = start;
	into.end = start + length;
	if (arena.usedBy !== bodyCount) {
		arena.usedBy = bodyCount;
		arena.usedBytes = 0;
		arena.usedPieces = 0;
		touched.push(arena);
	}
	arena.usedBytes += length;
	arena.usedPieces++;
}

/** Rewrites an arena with only the pieces of messages (the body just written) that are in it. */
function compactArena(arena: PieceArena, messages: Message[], protocol: WireProtocol, buffers: BufferPool): void {
	const old = arena.store, oldAt = arena.at;
	const store = new BodyWriter(buffers, Math.max(LLM_PIECE_ARENA_START_BYTES, arena.usedBytes));
	const at = new KeyedRun<number>();
	try {
		for (let i = 0; i < messages.length; i++) {
			const stored = messages[i].stored;
			if (!stored || arenaOf(stored, protocol, undefined) !== arena) continue;
			const key = stored.key ?? 0;
			const packed = oldAt.get(key);
			if (packed === undefined || at.has(key)) continue;
			const start = Math.floor(packed / PIECE_SHIFT), rest = packed - start * PIECE_SHIFT;
			at.set(key, store.length * PIECE_SHIFT + rest);
			store.writeRange(old.bytes, start, start + (rest >> 1));
		}
	} catch (error) {
		store.release();   // the old arena stands
		throw error;
	}
	arena.store = store;
	arena.at = at;
	old.release();
}
