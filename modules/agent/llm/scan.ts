// llm/scan: a JSON reader over bytes (an SSE event's data, or a whole reply in
// its PSRAM buffer), so a reply is read without turning every event into an
// object tree or the whole body into a string. The assemblers walk an event's
// members, note where the values they need start, and decode only those
// afterwards: text deltas, tool-call ids, names and arguments, stop reasons,
// usage numbers. What a reply keeps verbatim (an Anthropic content block, an
// OpenAI message) is built straight from the bytes by value().
//
// Same answers as JSON.parse(decodeUtf8(bytes)), which it replaces:
//  - the whole input is checked (a syntax error anywhere throws JsonSyntax),
//    whitespace is JSON's four characters, and a raw control character in a
//    string is an error;
//  - invalid UTF-8 inside a string becomes U+FFFD per maximal subpart (as
//    decodeUtf8 does); outside strings any byte of 0x80 or more is an error;
//  - \uXXXX escapes of a surrogate pair become one character, a lone
//    surrogate stays one (as JSON.parse leaves it);
//  - object keys: the last of a duplicate wins, "__proto__" is an own property.
// Nesting is bounded by LLM_JSON_DEPTH_MAX (JsonSyntax beyond).
//
// One reader is reused for every event of a reply: reset() points it at new
// bytes, which must stay unchanged while it reads them.
import { LLM_JSON_DEPTH_MAX, LLM_JSON_PARSE_DEPTH_MAX, LLM_JSON_PARSE_MAX_BYTES, LLM_REPLY_MAX_BYTES, LLM_TEXT_CHUNK_BYTES, LLM_TEXT_KEEP_BYTES, LLM_TEXT_START_BYTES } from "budgets";
import { equal, find, jsonFields, jsonMembers, jsonSkip, jsonStringStop, jsonText, jsonTextInto } from "host/bytes";
import { decodeUtf8, encodeUtf8 } from "net/utf8";
import type { JsonObject, JsonValue } from "llm/types";

/** The bytes are not one JSON value. */
export class JsonSyntax extends Error {
	override name = "JsonSyntax";
}

const QUOTE = 0x22, BACKSLASH = 0x5C, COMMA = 0x2C, COLON = 0x3A;
const OPEN_OBJECT = 0x7B, CLOSE_OBJECT = 0x7D, OPEN_ARRAY = 0x5B, CLOSE_ARRAY = 0x5D;
const MINUS = 0x2D, PLUS = 0x2B, DOT = 0x2E, ZERO = 0x30, NINE = 0x39;

/** What the value at the reader's position is, from its first byte. */
export const enum Kind { None, String, Number, Object, Array, True, False, Null }

function isSpace(b: number): boolean {
	return b === 0x20 || b === 0x0A || b === 0x0D || b === 0x09;
}

function hexDigit(b: number): number {
	if (b >= ZERO && b <= NINE) return b - ZERO;
	const lower = b | 0x20;
	return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function isDigit(bytes: Uint8Array, at: number, end: number): boolean {
	return at < end && bytes[at] >= ZERO && bytes[at] <= NINE;
}

/**
 * A name as bytes, made once at module level: the readers compare keys and
 * string values with these, since reading a primitive string's length or its
 * characters makes a wrapper object in XS each time.
 */
export function ascii(text: string): Uint8Array {
	return new Uint8Array(ArrayBuffer.fromString(text));
}

const EMPTY = new Uint8Array(0);
const TRUE = ascii("true"), FALSE = ascii("false"), NULL = ascii("null");

/** What jsonSkip's negative results mean (typings/shared/bytes.d.ts), in the reader's own words. */
const SKIP_ERRORS = ["", "unexpected end of data", "an unexpected character", "unterminated string", "a control character in a string",
	"a bad \\u escape", "a bad escape", "a bad number", "a bad literal", "", "expected , or } in an object", "expected a key in an object",
	"expected : after a key", "expected , or ] in an array"];
const SKIP_TOO_DEEP = -9;
const MEMBERS_NOT_OBJECT = -14;

/**
 * Key names an assembler looks for in one object, packed once at module level
 * for JsonReader.members (each name's length, then its ASCII bytes). `slots`
 * makes the Int32Array members() fills: one position per name, in this order.
 */
export class MemberNames {
	readonly packed: Uint8Array;
	readonly count: number;
	constructor(names: readonly string[]) {
		let length = 0;
		for (const name of names) length += 1 + name.length;
		const packed = new Uint8Array(length);
		let at = 0;
		for (const name of names) {
			const bytes = ascii(name);
			if (!bytes.length || bytes.length > 255 || bytes.length !== name.length) throw new RangeError(`llm/scan: a member name must be 1..255 ASCII characters: ${name}`);
			packed[at++] = bytes.length;
			packed.set(bytes, at);
			at += bytes.length;
		}
		this.packed = packed;
		this.count = names.length;
	}
	slots(): Int32Array {
		return new Int32Array(this.count);
	}
}

/** The kinds of value a FieldProgram field is noted for (host/bytes jsonFields' bits). */
export const enum Want { String = 1, Number = 2, Object = 4, Array = 8, True = 16, False = 32, Null = 64, Any = 127 }

/**
 * One field of a FieldProgram: its name, the slot (index of the Int32Array
 * JsonReader.fields fills) its value's position goes to (-1: none), the kinds of
 * value noted there, and optionally the fields of its value: of the object
 * itself (kinds has Want.Object) or of the first item of the array (Want.Array;
 * `item` is the slot of that item's position).
 */
export interface FieldSpec {
	name: string;
	slot: number;
	kinds: Want;
	fields?: readonly FieldSpec[];
	item?: number;
}

const NO_SLOT = 255;

/**
 * The fields an assembler reads out of an event, object within object, packed
 * once at module level for JsonReader.fields (one native walk per event: host/bytes
 * jsonFields, whose comment gives the format). `slots()` makes the Int32Array
 * it fills, one Int32 per slot.
 */
export class FieldProgram {
	readonly packed: Uint8Array;
	readonly count: number;
	constructor(fields: readonly FieldSpec[], count: number) {
		const nodes: number[][] = [];
		const slot = (n: number | undefined) => {
			if (n === undefined || n < 0) return NO_SLOT;
			if (n >= count || n >= NO_SLOT) throw new RangeError(`llm/scan: a field's slot must be below ${Math.min(count, NO_SLOT)}: ${n}`);
			return n;
		};
		// Breadth first, so every child is a node further on.
		const queue: { fields: readonly FieldSpec[]; self: number; patch?: { node: number[]; at: number } }[] = [{ fields, self: NO_SLOT }];
		const offsets: number[] = [];
		let offset = 0;
		while (queue.length) {
			const { fields: list, self, patch } = queue.shift()!;
			if (!list.length || list.length > 255) throw new RangeError("llm/scan: an object needs 1..255 fields");
			const node = [list.length, self];
			if (patch) {
				patch.node[patch.at] = offset & 0xFF;
				patch.node[patch.at + 1] = offset >> 8;
			}
			for (const field of list) {
				const name = ascii(field.name);
				if (!name.length || name.length > 255 || name.length !== field.name.length) throw new RangeError(`llm/scan: a field name must be 1..255 ASCII characters: ${field.name}`);
				node.push(name.length, ...name, slot(field.slot), field.kinds, 0, 0);
				if (field.fields) {
					if (!(field.kinds & (Want.Object | Want.Array))) throw new RangeError(`llm/scan: ${field.name} has fields but takes no object or array`);
					queue.push({ fields: field.fields, self: field.kinds & Want.Array ? slot(field.item) : NO_SLOT, patch: { node, at: node.length - 2 } });
				}
			}
			nodes.push(node);
			offsets.push(offset);
			offset += node.length;
		}
		this.packed = new Uint8Array(offset);
		let at = 0;
		for (const node of nodes) for (const b of node) this.packed[at++] = b;
		this.count = count;
	}
	slots(): Int32Array {
		return new Int32Array(this.count);
	}
}

function fail(why: string): never {
	throw new JsonSyntax(why);
}

export class JsonReader {
	#bytes: Uint8Array = EMPTY;
	#pos = 0;
	#end = 0;
	// Per open container: whether its next member is its first (1) or needs a comma (0).
	readonly #first = new Uint8Array(LLM_JSON_DEPTH_MAX + 1);
	#depth = 0;
	/** The current key's bytes [keyStart, keyEnd) inside its quotes, and whether it has escapes. */
	#keyStart = 0;
	#keyEnd = 0;
	#keyEscaped = false;

	/** Reads bytes[start, end) from now on. */
	reset(bytes: Uint8Array, start = 0, end = bytes.length): this {
		this.#bytes = bytes;
		this.#pos = start;
		this.#end = end;
		this.#depth = 0;
		return this;
	}

	/** Where the reader is: pass it to seek() to read a value noted earlier. */
	get position(): number { return this.#pos; }

	/** Goes back (or forward) to a position noted with `position`, at depth 0. */
	seek(position: number): this {
		this.#pos = position;
		this.#depth = 0;
		return this;
	}

	/** Lets go of the bytes (a view of a buffer about to be freed). */
	release(): void {
		this.#bytes = EMPTY;
		this.#pos = this.#end = 0;
	}

	#space(): number {
		const bytes = this.#bytes, end = this.#end;
		let i = this.#pos;
		while (i < end && isSpace(bytes[i])) i++;
		this.#pos = i;
		return i < end ? bytes[i] : -1;
	}

	/** The kind of the next value (after whitespace); Kind.None at the end or on a byte no value starts with. */
	kind(): Kind {
		const b = this.#space();
		switch (b) {
			case QUOTE: return Kind.String;
			case OPEN_OBJECT: return Kind.Object;
			case OPEN_ARRAY: return Kind.Array;
			case 0x74: return Kind.True;
			case 0x66: return Kind.False;
			case 0x6E: return Kind.Null;
			default: return b === MINUS || (b >= ZERO && b <= NINE) ? Kind.Number : Kind.None;
		}
	}

	/** Only whitespace is left; else JsonSyntax. */
	end(): void {
		if (this.#space() >= 0) fail("unexpected data after the JSON value");
	}

	#push(): void {
		if (this.#depth >= LLM_JSON_DEPTH_MAX) fail(`nested more than ${LLM_JSON_DEPTH_MAX} levels deep`);
		this.#depth++;
		this.#first[this.#depth] = 1;
	}

	/** Enters the object at the position; false (nothing read) when the value there is not an object. */
	openObject(): boolean {
		if (this.#space() !== OPEN_OBJECT) return false;
		this.#pos++;
		this.#push();
		return true;
	}

	/** Enters the array at the position; false (nothing read) when the value there is not an array. */
	openArray(): boolean {
		if (this.#space() !== OPEN_ARRAY) return false;
		this.#pos++;
		this.#push();
		return true;
	}

	/**
	 * The next member of the object entered last: reads its key and colon, so the
	 * value is next (read it or skip() it). False when the object closed.
	 */
	nextKey(): boolean {
		let b = this.#space();
		if (b === CLOSE_OBJECT) {
			this.#pos++;
			this.#depth--;
			return false;
		}
		if (!this.#first[this.#depth]) {
			if (b !== COMMA) fail("expected , or } in an object");
			this.#pos++;
			b = this.#space();
		}
		this.#first[this.#depth] = 0;
		if (b !== QUOTE) fail("expected a key in an object");
		this.#keyStart = this.#pos + 1;
		this.#keyEscaped = this.#skipString();
		this.#keyEnd = this.#pos - 1;
		if (this.#space() !== COLON) fail("expected : after a key");
		this.#pos++;
		return true;
	}

	/** The next item of the array entered last (its value is next); false when the array closed. */
	nextItem(): boolean {
		const b = this.#space();
		if (b === CLOSE_ARRAY) {
			this.#pos++;
			this.#depth--;
			return false;
		}
		if (!this.#first[this.#depth]) {
			if (b !== COMMA) fail("expected , or ] in an array");
			this.#pos++;
		}
		this.#first[this.#depth] = 0;
		return true;
	}

	/** Whether the current key is name (ascii()), without making a string. */
	keyIs(name: Uint8Array): boolean {
		if (this.#keyEscaped) return bytesAre(encodeUtf8(this.#decode(this.#keyStart, this.#keyEnd)), name);
		return bytesAre(this.#bytes, name, this.#keyStart, this.#keyEnd);
	}

	/** The current key as a string. */
	key(): string {
		return this.#keyEscaped ? this.#decode(this.#keyStart, this.#keyEnd) : decodeUtf8(this.#bytes, this.#keyStart, this.#keyEnd);
	}

	/** Whether the value at the position is a string of exactly these UTF-8 bytes (ascii(), encodeUtf8()), without making one; the position does not move. */
	stringIs(text: Uint8Array): boolean {
		if (this.#space() !== QUOTE) return false;
		const bytes = this.#bytes, start = this.#pos + 1;
		const stop = jsonStringStop(bytes, start, this.#end);
		if (stop < 0) return false;
		if (bytes[stop] === QUOTE) return equal(bytes, start, stop, text);
		if (bytes[stop] !== BACKSLASH || !equal(bytes, start, stop, text.subarray(0, Math.min(stop - start, text.length)))) return false;
		// Escapes: decode the whole string and compare.
		const save = this.#pos;
		const whole = encodeUtf8(this.string());
		this.#pos = save;
		return bytesAre(whole, text);
	}

	/** Skips the string at the position (checked); returns whether it had escapes. */
	#skipString(): boolean {
		const bytes = this.#bytes, end = this.#end;
		let i = this.#pos + 1, escaped = false;
		for (;;) {
			// Plain bytes up to a quote, a backslash or a control character, in one native scan.
			i = jsonStringStop(bytes, i, end);
			if (i < 0) fail("unterminated string");
			const b = bytes[i];
			if (b === QUOTE) break;
			if (b < 0x20) fail("a control character in a string");
			escaped = true;
			if (i + 1 >= end) fail("unterminated string");
			const e = bytes[i + 1];
			if (e === 0x75) { // \uXXXX
				if (i + 6 > end) fail("unterminated string");
				for (let k = 2; k < 6; k++) if (hexDigit(bytes[i + k]) < 0) fail("a bad \\u escape");
				i += 6;
			} else if (e === QUOTE || e === BACKSLASH || e === 0x2F || e === 0x62 || e === 0x66 || e === 0x6E || e === 0x72 || e === 0x74) {
				i += 2;
			} else fail("a bad escape");
		}
		this.#pos = i + 1;
		return escaped;
	}

	/** The string at the position, decoded; JsonSyntax when the value there is no string. */
	string(): string {
		if (this.#space() !== QUOTE) fail("expected a string");
		const start = this.#pos + 1;
		const escaped = this.#skipString();
		const end = this.#pos - 1;
		return escaped ? this.#decode(start, end) : decodeUtf8(this.#bytes, start, end);
	}

	/** A string's bytes [start, end) (already checked) with their escapes decoded. */
	#decode(start: number, end: number): string {
		const bytes = this.#bytes;
		let out = "";
		let run = start;
		let i = start;
		while (i < end) {
			i = find(bytes, i, end, BACKSLASH);
			if (i < 0) break;
			if (run < i) out += decodeUtf8(bytes, run, i);
			const e = bytes[i + 1];
			if (e !== 0x75) {
				out += e === 0x62 ? "\b" : e === 0x66 ? "\f" : e === 0x6E ? "\n" : e === 0x72 ? "\r" : e === 0x74 ? "\t" : String.fromCharCode(e);
				i += 2;
			} else {
				const unit = this.#hex4(i + 2);
				i += 6;
				// A high surrogate escaped right before a low one: one character, as JSON.parse makes it.
				if (unit >= 0xD800 && unit <= 0xDBFF && i + 6 <= end && bytes[i] === BACKSLASH && bytes[i + 1] === 0x75) {
					const low = this.#hex4(i + 2);
					if (low >= 0xDC00 && low <= 0xDFFF) {
						out += String.fromCharCode(unit, low);
						i += 6;
						run = i;
						continue;
					}
				}
				out += String.fromCharCode(unit);
			}
			run = i;
		}
		if (run < end) out += decodeUtf8(bytes, run, end);
		return out;
	}

	#hex4(at: number): number {
		const bytes = this.#bytes;
		return (hexDigit(bytes[at]) << 12) | (hexDigit(bytes[at + 1]) << 8) | (hexDigit(bytes[at + 2]) << 4) | hexDigit(bytes[at + 3]);
	}

	/** Skips the number at the position (checked against JSON's grammar); returns whether it is a plain integer. */
	#skipNumber(): boolean {
		const bytes = this.#bytes, end = this.#end;
		let i = this.#pos;
		if (bytes[i] === MINUS) i++;
		if (!isDigit(bytes, i, end)) fail("a bad number");
		if (bytes[i] === ZERO) i++;
		else while (isDigit(bytes, i, end)) i++;
		let integer = true;
		if (i < end && bytes[i] === DOT) {
			integer = false;
			i++;
			if (!isDigit(bytes, i, end)) fail("a bad number");
			while (isDigit(bytes, i, end)) i++;
		}
		if (i < end && (bytes[i] | 0x20) === 0x65) {
			integer = false;
			i++;
			if (i < end && (bytes[i] === PLUS || bytes[i] === MINUS)) i++;
			if (!isDigit(bytes, i, end)) fail("a bad number");
			while (isDigit(bytes, i, end)) i++;
		}
		this.#pos = i;
		return integer;
	}

	/** The number at the position; JsonSyntax when the value there is no number. */
	number(): number {
		if (this.kind() !== Kind.Number) fail("expected a number");
		const start = this.#pos;
		const integer = this.#skipNumber();
		const end = this.#pos;
		const bytes = this.#bytes;
		// Small integers (token counts, indexes) without making a string.
		if (integer && end - start <= 15) {
			const negative = bytes[start] === MINUS;
			let value = 0;
			for (let i = negative ? start + 1 : start; i < end; i++) value = value * 10 + (bytes[i] - ZERO);
			return negative ? -value : value;
		}
		return Number(decodeUtf8(bytes, start, end));
	}

	#literal(text: Uint8Array): void {
		const n = text.length;
		if (!bytesAre(this.#bytes, text, this.#pos, Math.min(this.#pos + n, this.#end))) fail("a bad literal");
		this.#pos += n;
	}

	/**
	 * Reads the object at the position in one native scan (host/bytes
	 * jsonMembers), checking all of it as skip() does: out[k] becomes where the
	 * value of the last member named names' k-th name starts (seek() there to read
	 * it), or -1, and the reader moves past the object. False, with nothing read,
	 * when the value at the position is no object.
	 */
	members(names: MemberNames, out: Int32Array): boolean {
		const after = jsonMembers(this.#bytes, this.#pos, this.#end, LLM_JSON_DEPTH_MAX - this.#depth, names.packed, out.buffer as ArrayBuffer);
		if (after === MEMBERS_NOT_OBJECT) return false;
		if (after < 0) fail(after === SKIP_TOO_DEEP ? `nested more than ${LLM_JSON_DEPTH_MAX} levels deep` : SKIP_ERRORS[-after] ?? "not JSON");
		this.#pos = after;
		return true;
	}

	/**
	 * Reads the object at the position in one native scan (host/bytes jsonFields),
	 * checking all of it as skip() does, and notes in out (program.slots()) where
	 * program's fields are, object within object (-1: absent, or of a kind not
	 * wanted); the reader moves past the object. False, with nothing read, when
	 * the value at the position is no object. outBuffer: out's buffer, passed by
	 * a caller that keeps it (XS reads a typed array's buffer through a slow getter).
	 * whole: the object must be all that is left (end() checks, only when
	 * something follows it).
	 */
	fields(program: FieldProgram, out: Int32Array, outBuffer: ArrayBuffer = out.buffer as ArrayBuffer, whole = false): boolean {
		const after = jsonFields(this.#bytes, this.#pos, this.#end, LLM_JSON_DEPTH_MAX - this.#depth, program.packed, outBuffer);
		if (after === MEMBERS_NOT_OBJECT) return false;
		if (after < 0) fail(after === SKIP_TOO_DEEP ? `nested more than ${LLM_JSON_DEPTH_MAX} levels deep` : SKIP_ERRORS[-after] ?? "not JSON");
		this.#pos = after;
		if (whole && after < this.#end) this.end();
		return true;
	}

	/**
	 * The string at position (noted by fields() or members(): its quote), decoded:
	 * one native call when it can (host/bytes jsonText), else string().
	 */
	textAt(position: number): string {
		return jsonText(this.#bytes, position, this.#end) ?? this.seek(position).string();
	}

	/**
	 * Adds the string at position (noted by fields() or members(): its quote) to
	 * pieces, decoded: as bytes when host/bytes can decode it (no string made),
	 * else as string(). Whether it had any character.
	 */
	addText(position: number, pieces: TextPieces): boolean {
		const added = pieces.addBytes(this.#bytes, position, this.#end);
		if (added >= 0) return added > 0;
		const text = this.seek(position).string();
		// Counted as its raw length (quotes left out): never less than its decoded bytes.
		return pieces.addString(text, this.#pos - position - 2);
	}

	/**
	 * Where the string at position (its quote, noted by fields()) closes when it
	 * has no escape, so rangeIs() can compare it; -1 when it has escapes (compare
	 * with stringIs()) or is no string.
	 */
	plainEnd(position: number): number {
		const bytes = this.#bytes;
		if (position < 0 || bytes[position] !== QUOTE) return -1;
		const stop = jsonStringStop(bytes, position + 1, this.#end);
		return stop >= 0 && bytes[stop] === QUOTE ? stop : -1;
	}

	/**
	 * Whether the string at position (its quote, noted by fields(); -1: none) is
	 * exactly text's bytes without an escape, in one native compare: text must
	 * hold no quote, backslash or control character (an ascii() name, or one read
	 * plain). False for a string with escapes even when it decodes to text.
	 */
	plainIs(position: number, text: Uint8Array): boolean {
		const bytes = this.#bytes, close = position + 1 + text.length;
		return position >= 0 && close < this.#end && bytes[close] === QUOTE && bytes[position] === QUOTE && equal(bytes, position + 1, close, text);
	}

	/** Whether bytes[start, end) are exactly name's bytes (a string noted with plainEnd(): start is after its quote). */
	rangeIs(start: number, end: number, name: Uint8Array): boolean {
		return equal(this.#bytes, start, end, name);
	}

	/**
	 * The number at position (noted by fields() or members(), checked): a plain
	 * integer of up to 9 digits read from its bytes, anything else by number().
	 */
	integerAt(position: number): number {
		const bytes = this.#bytes, end = this.#end;
		// One digit (a block's or a tool call's index): no loop.
		const digit = bytes[position] - ZERO;
		if (digit >= 0 && digit <= 9 && position + 1 < end) {
			const b = bytes[position + 1];
			if ((b < ZERO || b > NINE) && b !== DOT && (b | 0x20) !== 0x65) return digit;
		}
		let value = 0, i = position;
		for (; i < end && i - position < 9; i++) {
			const b = bytes[i];
			if (b < ZERO || b > NINE) break;
			value = value * 10 + (b - ZERO);
		}
		if (i > position && (i >= end || (bytes[i] !== DOT && (bytes[i] | 0x20) !== 0x65 && (bytes[i] < ZERO || bytes[i] > NINE)))) return value;
		return this.seek(position).number();
	}

	/** The kind of the value at position (noted earlier); Kind.None for -1. */
	kindAt(position: number): Kind {
		return position < 0 ? Kind.None : this.seek(position).kind();
	}

	/** Skips the value at the position, checking all of it: one native scan (host/bytes jsonSkip, the same grammar). */
	skip(): void {
		const after = jsonSkip(this.#bytes, this.#pos, this.#end, LLM_JSON_DEPTH_MAX - this.#depth);
		if (after < 0) fail(after === SKIP_TOO_DEEP ? `nested more than ${LLM_JSON_DEPTH_MAX} levels deep` : SKIP_ERRORS[-after] ?? "not JSON");
		this.#pos = after;
	}

	/**
	 * The value at the position, built (as JSON.parse would build it). A small,
	 * shallow, valid one (LLM_JSON_PARSE_MAX_BYTES, LLM_JSON_PARSE_DEPTH_MAX: a
	 * usage object, a content block, an error) is checked by one native scan
	 * (host/bytes jsonSkip) and built by JSON.parse from its text: ~20 times
	 * fewer steps than a build in JavaScript, whose errors the others get.
	 */
	value(): JsonValue {
		const bytes = this.#bytes, start = this.#pos;
		const levels = LLM_JSON_DEPTH_MAX - this.#depth;
		const after = jsonSkip(bytes, start, this.#end, levels < LLM_JSON_PARSE_DEPTH_MAX ? levels : LLM_JSON_PARSE_DEPTH_MAX);
		if (after >= 0 && after - start <= LLM_JSON_PARSE_MAX_BYTES) {
			this.#pos = after;
			return JSON.parse(decodeUtf8(bytes, start, after)) as JsonValue;
		}
		return this.#build();
	}

	/** value(), one member or item at a time. */
	#build(): JsonValue {
		const containers: (JsonObject | JsonValue[])[] = [];
		const keys: string[] = [];
		for (;;) {
			let value: JsonValue;
			switch (this.kind()) {
				case Kind.String: value = this.string(); break;
				case Kind.Number: value = this.number(); break;
				case Kind.True: this.#literal(TRUE); value = true; break;
				case Kind.False: this.#literal(FALSE); value = false; break;
				case Kind.Null: this.#literal(NULL); value = null; break;
				case Kind.Object: {
					this.openObject();
					const object: JsonObject = {};
					if (this.nextKey()) {
						containers.push(object);
						keys.push(this.key());
						continue;
					}
					value = object;
					break;
				}
				case Kind.Array: {
					this.openArray();
					const array: JsonValue[] = [];
					if (this.nextItem()) {
						containers.push(array);
						keys.push("");
						continue;
					}
					value = array;
					break;
				}
				default: fail(this.#pos < this.#end ? "an unexpected character" : "unexpected end of data");
			}
			// Put the value into its container; close every container that ends here.
			for (;;) {
				const top = containers.length - 1;
				if (top < 0) return value;
				const container = containers[top];
				if (Array.isArray(container)) {
					container.push(value);
					if (this.nextItem()) break;
				} else {
					const key = keys[top];
					if (key === "__proto__") Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
					else container[key] = value;
					if (this.nextKey()) {
						keys[top] = this.key();
						break;
					}
				}
				value = container;
				containers.pop();
				keys.pop();
			}
		}
	}
}

// XS's String.fromArrayBuffer takes an optional byte offset and length; the typings know only the buffer.
const stringFromBytes = String.fromArrayBuffer as (buffer: ArrayBufferLike, offset?: number, length?: number) => string;
const NO_BUFFER = new ArrayBuffer(0);

/** A reply's content is over LLM_REPLY_MAX_BYTES (llm/wire makes it the LLM error a person reads). */
export class ReplyTooLarge extends RangeError {
	override name = "ReplyTooLarge";
}

/**
 * What a reply's content adds up to: its text, reasoning (and signatures) and
 * every tool call's arguments, in decoded bytes, against LLM_REPLY_MAX_BYTES.
 * An assembler's TextPieces share one, reset per reply: the cap is on what the
 * reply holds, not on its stream's framing (OpenAI's ~200 bytes an event would
 * cut a 256 KiB cap at ~1,300 tokens; llm/wire bounds the raw stream by
 * LLM_STREAM_MAX_BYTES).
 */
export class ReplyMeter {
	bytes = 0;

	/** Counts more decoded bytes; throws ReplyTooLarge past the cap. */
	add(count: number): void {
		if ((this.bytes += count) > LLM_REPLY_MAX_BYTES)
			throw new ReplyTooLarge(`the LLM reply is larger than ${LLM_REPLY_MAX_BYTES} bytes of text, reasoning and tool arguments; it was cut off: lower llm.max_tokens or ask for a shorter answer`);
	}
}

/**
 * A text assembled from a reply's JSON string values (its text, reasoning, a
 * tool call's arguments), kept as bytes in XS's string form and decoded once,
 * by text(): no string, array slot or view per piece (XS grows an array by
 * copying it, so a list of pieces cost heap quadratic in their count until a
 * collection, and a string per piece besides). The bytes go into buffers of
 * LLM_TEXT_START_BYTES doubling up to LLM_TEXT_CHUNK_BYTES, each holding whole
 * pieces (so each is whole UTF-8), never copied while the reply streams. A
 * piece host/bytes cannot decode (a surrogate escape, invalid UTF-8) comes as a
 * string (JsonReader.addText), as does one a listener heard (its delta's
 * string, shared): what was gathered is decoded then, one string part, and
 * text() joins the parts.
 *
 * Invariant: the text is parts joined + the bytes of full[0..] (fullLengths
 * each) + buffer[0, length); pieces counts the pieces added, empty ones too.
 */
export class TextPieces {
	#buffer: ArrayBuffer = NO_BUFFER;
	#capacity = 0;
	#length = 0;
	#full: ArrayBuffer[] | undefined = undefined;
	#fullLengths: number[] | undefined = undefined;
	#fullBytes = 0;
	/** Pieces that came as strings, and the bytes gathered before each, decoded: the text so far, before the bytes. */
	#parts: string[] | undefined = undefined;
	#pieces = 0;
	/** Counts every piece's decoded bytes against the reply's cap (shared by an assembler's pieces, which resets it). */
	readonly #meter: ReplyMeter;
	/** Whether the meter is this one's own (no assembler's): clear() resets it. */
	readonly #ownMeter: boolean;

	constructor(meter?: ReplyMeter) {
		this.#meter = meter ?? new ReplyMeter();
		this.#ownMeter = !meter;
	}

	/** Pieces added since the last clear(), empty ones too. */
	get pieces(): number { return this.#pieces; }

	/**
	 * Adds the JSON string whose quote is bytes[from] (whole before end) as its
	 * decoded bytes: how many, or -1 when host/bytes cannot decode it (nothing added).
	 */
	addBytes(bytes: Uint8Array, from: number, end: number): number {
		const start = this.#length;
		let after = jsonTextInto(bytes, from, end, this.#buffer, start);
		if (after === -2) {
			this.#next(end - from);
			after = jsonTextInto(bytes, from, end, this.#buffer, 0);
			if (after >= 0) {
				this.#meter.add(after);
				this.#length = after;
				this.#pieces++;
				return after;
			}
		}
		if (after < 0) return -1;
		this.#meter.add(after - start);
		this.#length = after;
		this.#pieces++;
		return after - start;
	}

	/**
	 * Adds a piece decoded elsewhere (one a listener heard as a delta, or one
	 * host/bytes could not decode); whether it had any character. The bytes
	 * gathered before it become one string part; text() joins the parts.
	 */
	addString(text: string, bytes: number): boolean {
		this.#pieces++;
		if (text === "") return false;
		this.#meter.add(bytes);
		const parts = this.#parts ??= [];
		this.#flush(parts);
		parts.push(text);
		return true;
	}

	/** The gathered bytes, when any, as one more string part. */
	#flush(parts: string[]): void {
		if (!this.#fullBytes && !this.#length) return;
		parts.push(this.#bytesText());
		this.#dropFull();
		this.#length = 0;
	}

	/** A buffer with room for more bytes (at least), the current one kept in full when it holds any. */
	#next(more: number): void {
		if (this.#length) {
			(this.#full ??= []).push(this.#buffer);
			(this.#fullLengths ??= []).push(this.#length);
			this.#fullBytes += this.#length;
		}
		let capacity = Math.min(Math.max(this.#capacity * 2, LLM_TEXT_START_BYTES), LLM_TEXT_CHUNK_BYTES);
		if (capacity < more) capacity = more;
		this.#buffer = new ArrayBuffer(capacity);
		this.#capacity = capacity;
		this.#length = 0;
	}

	/** The gathered bytes as one string (full buffers and the current one, in order). */
	#bytesText(): string {
		const full = this.#full;
		if (!full) return stringFromBytes(this.#buffer, 0, this.#length);
		const lengths = this.#fullLengths as number[];
		const all = new Uint8Array(this.#fullBytes + this.#length);
		let at = 0;
		// Each buffer is let go once copied: a collection during the copy or the
		// decode takes them back, so a long reply is in the heap about twice at
		// most (the joined bytes and its string), not three times.
		for (let i = 0; i < full.length; i++) {
			all.set(new Uint8Array(full[i], 0, lengths[i]), at);
			at += lengths[i];
			full[i] = NO_BUFFER;
		}
		if (this.#length) all.set(new Uint8Array(this.#buffer, 0, this.#length), at);
		// The joined bytes are the one buffer now (clear() lets it go).
		this.#dropFull();
		this.#buffer = all.buffer as ArrayBuffer;
		this.#capacity = this.#length = all.length;
		return stringFromBytes(all.buffer, 0, all.length);
	}

	#dropFull(): void {
		this.#full = this.#fullLengths = undefined;
		this.#fullBytes = 0;
	}

	/** The text of every piece added, in order. */
	text(): string {
		const parts = this.#parts;
		if (!parts) return this.#fullBytes || this.#length ? this.#bytesText() : "";
		this.#flush(parts);
		return parts.length === 1 ? parts[0] : parts.join("");
	}

	/** Empty again, for the next reply: the current buffer is kept when at most LLM_TEXT_KEEP_BYTES. */
	clear(): void {
		if (this.#ownMeter) this.#meter.bytes = 0;
		this.#length = 0;
		this.#parts = undefined;
		this.#pieces = 0;
		this.#dropFull();
		if (this.#capacity > LLM_TEXT_KEEP_BYTES) {
			this.#buffer = NO_BUFFER;
			this.#capacity = 0;
		}
	}
}

/** bytes[start, end) are exactly text's bytes. */
export function bytesAre(bytes: Uint8Array, text: Uint8Array, start = 0, end = bytes.length): boolean {
	return equal(bytes, start, end, text);
}
