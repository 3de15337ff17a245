// Fuzz for host/bytes (hosts/common/bytes/bytes.c), run on the ASan/UBSan host
// too: seeded random buffers rich in the bytes the scans look for (line ends,
// quotes, backslashes, UTF-8 leads and continuations, 00), random views and
// ranges, in range or not. Each native answer must equal a plain JavaScript
// reference (the loops the native scans replaced), and a range outside the view
// must throw RangeError, never read. Then net/utf8's sanitiser, now built on
// utf8Invalid, must give exactly what the JavaScript-only sanitiser gave.
import { copy, crc32, equal, find, jsonFields, jsonMembers, jsonSkip, jsonStringStop, jsonText, jsonTextInto, sseEvent, utf8Invalid } from "host/bytes";
import { JsonReader, JsonSyntax, TextPieces } from "llm/scan";
import { sanitizeUtf8 } from "net/utf8";
import { generator, iterationsFor, seedFor } from "test/fuzz";
import { assert, test } from "testing";

const ascii = (text: string) => new Uint8Array(ArrayBuffer.fromString(text));
const SEED = seedFor(0xB17E5);
const ITERATIONS = iterationsFor(400);

const INTERESTING = [0x00, 0x0A, 0x0D, 0x1F, 0x20, 0x22, 0x3A, 0x5C, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
	0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF];
const SEQUENCES = [[0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x8C, 0xA4], [0xED, 0xA0, 0xBD], [0xED, 0xB8, 0x80], [0xC0, 0x80]];

function randomBytes(rand: (n: number) => number, length: number): Uint8Array {
	const out = new Uint8Array(length);
	let i = 0;
	while (i < length) {
		const kind = rand(4);
		if (kind === 0) out[i++] = INTERESTING[rand(INTERESTING.length)];
		else if (kind === 1) {
			for (const b of SEQUENCES[rand(SEQUENCES.length)]) if (i < length) out[i++] = b;
		} else if (kind === 2) out[i++] = rand(256);
		else for (let run = rand(12); run > 0 && i < length; run--) out[i++] = 0x61 + rand(26);
	}
	return out;
}

// ---- references: the JavaScript loops the native scans replaced ----------

function refFind(bytes: Uint8Array, from: number, end: number, a: number, b: number): number {
	for (let i = from; i < end; i++) if (bytes[i] === a || bytes[i] === b) return i;
	return -1;
}
function refStop(bytes: Uint8Array, from: number, end: number): number {
	for (let i = from; i < end; i++) if (bytes[i] === 0x22 || bytes[i] === 0x5C || bytes[i] < 0x20) return i;
	return -1;
}
const isContinuation = (b: number) => (b & 0xC0) === 0x80;
/** net/utf8's step(): the length of the valid unit at i, or minus the bytes to replace. */
function refStep(bytes: Uint8Array, i: number, end: number): number {
	const lead = bytes[i];
	if (lead < 0x80) return 1;
	const length = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
	if (!length || i + 1 >= end) return -1;
	const second = bytes[i + 1];
	const low = lead === 0xE0 ? 0xA0 : lead === 0xF0 ? 0x90 : 0x80;
	const high = lead === 0xED ? 0x9F : lead === 0xF4 ? 0x8F : 0xBF;
	if (second < low || second > high) return -1;
	for (let n = 2; n < length; n++) if (i + n >= end || !isContinuation(bytes[i + n])) return -n;
	return length;
}
function refUtf8Invalid(bytes: Uint8Array, from: number, end: number, mode: "wire" | "xs"): number {
	let i = from;
	while (i < end) {
		if (bytes[i] === 0 && mode === "xs") return i;
		const n = refStep(bytes, i, end);
		if (n < 0) return i;
		i += n;
	}
	return -1;
}
/** net/utf8's sanitiser before host/bytes, byte by byte. */
function refSanitize(bytes: Uint8Array, mode: "wire" | "xs", start: number, end: number): Uint8Array | undefined {
	if (refUtf8Invalid(bytes, start, end, mode) < 0) return undefined;
	const out: number[] = [];
	let i = start;
	while (i < end) {
		const b = bytes[i];
		if (b === 0) {
			if (mode === "xs") out.push(0xC0, 0x80);
			else out.push(0);
			i++;
		} else if (mode === "wire" && b === 0xC0 && i + 1 < end && bytes[i + 1] === 0x80) {
			out.push(0);
			i += 2;
		} else if (mode === "wire" && b === 0xED && i + 2 < end && bytes[i + 1] >= 0xA0 && isContinuation(bytes[i + 2])) {
			if (bytes[i + 1] <= 0xAF && i + 5 < end && bytes[i + 3] === 0xED && bytes[i + 4] >= 0xB0 && bytes[i + 4] <= 0xBF && isContinuation(bytes[i + 5])) {
				const cp = 0x10000 + ((((bytes[i + 1] & 0x0F) << 6) | (bytes[i + 2] & 0x3F)) << 10) + (((bytes[i + 4] & 0x0F) << 6) | (bytes[i + 5] & 0x3F));
				out.push(0xF0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3F), 0x80 | ((cp >> 6) & 0x3F), 0x80 | (cp & 0x3F));
				i += 6;
			} else {
				out.push(0xEF, 0xBF, 0xBD);
				i += 3;
			}
		} else {
			const n = refStep(bytes, i, end);
			if (n > 0) {
				for (let k = 0; k < n; k++) out.push(bytes[i + k]);
				i += n;
			} else {
				out.push(0xEF, 0xBF, 0xBD);
				i -= n;
			}
		}
	}
	return new Uint8Array(out);
}

function same(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
	if (!a || !b) return a === b;
	if (a.length !== b.length) return false;
	for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
	return true;
}

/** A view of random bytes at a random offset of a larger buffer, so a read past the view would show. */
function randomView(rand: (n: number) => number): Uint8Array {
	const before = rand(9), length = rand(70), after = rand(9);
	const whole = randomBytes(rand, before + length + after);
	return whole.subarray(before, before + length);
}

test("fuzz: find, jsonStringStop, utf8Invalid and equal agree with the JavaScript loops on any range of any view", () => {
	const rand = generator(SEED);
	for (let n = 0; n < ITERATIONS * 4; n++) {
		const view = randomView(rand);
		const from = rand(view.length + 1), end = from + rand(view.length - from + 1);
		const a = rand(3) ? INTERESTING[rand(INTERESTING.length)] : rand(256);
		const b = rand(2) ? a : INTERESTING[rand(INTERESTING.length)];
		const where = `case ${n} (seed ${SEED}): [${from}, ${end}) of ${view.length}`;
		assert.equal(find(view, from, end, a, b), refFind(view, from, end, a, b), `find ${a}/${b} ${where}`);
		assert.equal(find(view, from, end, a), refFind(view, from, end, a, a), `find ${a} ${where}`);
		assert.equal(jsonStringStop(view, from, end), refStop(view, from, end), `jsonStringStop ${where}`);
		for (const mode of ["wire", "xs"] as const) assert.equal(utf8Invalid(view, from, end, mode), refUtf8Invalid(view, from, end, mode), `utf8Invalid ${mode} ${where}`);
		const other = rand(2) ? view.slice(from, end) : randomBytes(rand, rand(4) ? end - from : rand(8));
		let expected = other.length === end - from;
		for (let i = 0; expected && i < other.length; i++) expected = other[i] === view[from + i];
		assert.equal(equal(view, from, end, other), expected, `equal ${where}`);
		const start = rand(2) ? 0 : rand(2 ** 32);
		assert.equal(crc32(view, from, end, start), refCrc32(view, from, end, start), `crc32 from ${start} ${where}`);
		// copy into another random view (or the same one: overlapping ranges) against set() of a subarray, the buffers around untouched.
		const into = rand(4) ? randomView(rand) : view;
		const at = rand(into.length + 1);
		const expectedOut = new Uint8Array((into.buffer as ArrayBuffer).slice(0));
		const fits = end - from <= into.length - at;
		if (fits) new Uint8Array(expectedOut.buffer, into.byteOffset, into.length).set(view.slice(from, end), at);
		if (fits) assert.equal(copy(view, from, end, into, at), at + end - from, `copy at ${at} ${where}`);
		else assert.throws(() => copy(view, from, end, into, at), "bytes: copy: out has room for", RangeError);
		assert.ok(same(new Uint8Array(into.buffer as ArrayBuffer), expectedOut), `copy's out at ${at} ${where}`);
	}
});

/** CRC-32 bit by bit (the JavaScript table loop host/bytes crc32 replaced computed the same). */
function refCrc32(view: Uint8Array, from: number, end: number, crc: number): number {
	let c = ~crc;
	for (let i = from; i < end; i++) {
		c ^= view[i];
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
	}
	return ~c >>> 0;
}

test("fuzz: a range outside the view throws RangeError and reads nothing", () => {
	const rand = generator(SEED + 1);
	for (let n = 0; n < ITERATIONS * 2; n++) {
		const view = randomView(rand);
		const pick = () => [view.length + 1 + rand(16), -1 - rand(16), rand(view.length + 1) + 0.5, 2 ** 31 + rand(8), rand(view.length + 1)][rand(5)];
		const from = pick(), end = pick();
		const valid = Number.isInteger(from) && Number.isInteger(end) && from >= 0 && from <= end && end <= view.length;
		const calls = [
			() => find(view, from, end, 0x0A, 0x0D),
			() => jsonStringStop(view, from, end),
			() => utf8Invalid(view, from, end, "xs"),
			() => jsonSkip(view, from, end, 4),
			() => equal(view, from, end, view),
			() => crc32(view, from, end),
			() => copy(view, from, end, new Uint8Array(view.length), 0),
		];
		for (const call of calls) {
			if (valid) call();
			else assert.throws(call, "bytes: ", RangeError);
		}
	}
});

test("fuzz: net/utf8's sanitiser gives exactly what its byte-by-byte form gave, for any range, in both modes", () => {
	const rand = generator(SEED + 2);
	for (let n = 0; n < ITERATIONS * 2; n++) {
		const bytes = randomBytes(rand, rand(90));
		const start = rand(bytes.length + 1), end = start + rand(bytes.length - start + 1);
		for (const mode of ["wire", "xs"] as const) {
			assert.ok(same(sanitizeUtf8(bytes, mode, start, end), refSanitize(bytes, mode, start, end)), `case ${n} ${mode} [${start}, ${end}) (seed ${SEED + 2})`);
		}
	}
});

/** A random JSON value as text, with random whitespace between its tokens. */
function randomJson(rand: (n: number) => number, depth: number): string {
	const space = () => ["", " ", "\n", "\t ", "\r\n"][rand(5)];
	const kind = depth > 3 ? rand(4) : rand(6);
	let text: string;
	if (kind === 0) text = JSON.stringify(["", "a", "é\"\\/\n\u0001", "🌤 x"][rand(4)]);
	else if (kind === 1) text = JSON.stringify([0, -1, 12.5, 1e21, -0.25e-7, 123456789][rand(6)]);
	else if (kind === 2) text = ["true", "false", "null"][rand(3)];
	else if (kind === 3) text = `"\\u${"0123456789abcdefABCDEF"[rand(22)]}0e9"`;
	else if (kind === 4) text = `[${Array.from({ length: rand(4) }, () => space() + randomJson(rand, depth + 1) + space()).join(",")}]`;
	else text = `{${Array.from({ length: rand(4) }, (_, i) => `${space()}"k${i}"${space()}:${space()}${randomJson(rand, depth + 1)}${space()}`).join(",")}}`;
	return space() + text;
}

test("fuzz: jsonSkip finds the end of valid JSON exactly, agrees with JSON.parse on damaged JSON, and stays in its range", () => {
	const rand = generator(SEED + 3);
	for (let n = 0; n < ITERATIONS * 2; n++) {
		const text = randomJson(rand, 0);
		const valid = new Uint8Array(ArrayBuffer.fromString(text));
		assert.equal(jsonSkip(valid, 0, valid.length, 8), valid.length, `case ${n} (seed ${SEED + 3}): ${text}`);
		// Damaged: cut or changed; accepted (as a whole, nothing after) exactly when JSON.parse accepts it.
		const damaged = valid.slice(0, rand(4) ? valid.length : rand(valid.length + 1));
		for (let k = rand(3); k > 0 && damaged.length; k--) damaged[rand(damaged.length)] = INTERESTING[rand(INTERESTING.length)];
		const at = jsonSkip(damaged, 0, damaged.length, 8);
		let whole = at >= 0;
		for (let i = at; whole && i < damaged.length; i++) whole = [0x20, 0x0A, 0x0D, 0x09].includes(damaged[i]);
		let parsed = true;
		try {
			if (refUtf8Invalid(damaged, 0, damaged.length, "xs") >= 0) throw new Error("not clean");
			JSON.parse(String.fromArrayBuffer(damaged.slice().buffer));
		} catch {
			parsed = false;
		}
		if (parsed) assert.ok(whole, `case ${n}: JSON.parse accepts what jsonSkip refused (${at})`);
		else if (refUtf8Invalid(damaged, 0, damaged.length, "xs") < 0) assert.ok(!whole, `case ${n}: jsonSkip accepts what JSON.parse refused`);
		assert.ok(at >= -13 && at <= damaged.length && at !== 0, `case ${n}: ${at} in range`);
		// Random bytes in a random range of a random view: an index inside the range or an error code, never a read outside (ASan).
		const view = randomView(rand);
		const from = rand(view.length + 1), end = from + rand(view.length - from + 1);
		const result = jsonSkip(view, from, end, rand(6));
		assert.ok((result >= -13 && result < 0) || (result > from && result <= end), `case ${n}: ${result} for [${from}, ${end})`);
	}
});

test("fuzz: jsonMembers agrees with jsonSkip and JSON.parse: its positions hold each name's last value, and it stays in its range", () => {
	const rand = generator(SEED + 4);
	const names = new Uint8Array([2, 0x6B, 0x30, 2, 0x6B, 0x31, 2, 0x6B, 0x32]); // k0 k1 k2
	const out = new Int32Array(3);
	for (let n = 0; n < ITERATIONS * 2; n++) {
		const text = randomJson(rand, 0);
		const bytes = new Uint8Array(ArrayBuffer.fromString(text));
		const skip = jsonSkip(bytes, 0, bytes.length, 8);
		const after = jsonMembers(bytes, 0, bytes.length, 8, names, out.buffer);
		const object = text.trim().startsWith("{");
		assert.equal(after, object ? skip : -14, `case ${n} (seed ${SEED + 4}): ${text}`);
		if (object) {
			const parsed = JSON.parse(text) as Record<string, unknown>;
			for (let k = 0; k < 3; k++) {
				const name = `k${k}`;
				if (!(name in parsed)) {
					assert.equal(out[k], -1, `case ${n}: ${name} absent`);
					continue;
				}
				const end = jsonSkip(bytes, out[k], bytes.length, 8);
				assert.equal(JSON.stringify(JSON.parse(String.fromArrayBuffer(bytes.slice(out[k], end).buffer))), JSON.stringify(parsed[name]), `case ${n}: ${name}`);
			}
		}
		// Random bytes in a random range of a random view: an index inside the range or an error code, never a read outside (ASan).
		const view = randomView(rand);
		const from = rand(view.length + 1), end = from + rand(view.length - from + 1);
		const result = jsonMembers(view, from, end, rand(6), names, out.buffer);
		assert.ok((result >= -14 && result < 0) || (result > from && result <= end), `case ${n}: ${result} for [${from}, ${end})`);
		for (let k = 0; k < 3; k++) assert.ok(out[k] === -1 || (out[k] > from && out[k] < end), `case ${n}: position ${out[k]} inside [${from}, ${end})`);
	}
});

/** The kind bit (jsonFields) of the value starting at bytes[at]. */
function kindBit(bytes: Uint8Array, at: number): number {
	const b = bytes[at];
	return b === 0x22 ? 1 : b === 0x7B ? 4 : b === 0x5B ? 8 : b === 0x74 ? 16 : b === 0x66 ? 32 : b === 0x6E ? 64 : 2;
}

test("fuzz: jsonFields notes what jsonMembers finds object by object, kinds filtered, and stays in its range", () => {
	const rand = generator(SEED + 5);
	const name = (k: number) => [2, 0x6B, 0x30 + k];
	// node 0: k0 any (slot 0), k1 object -> node 1 (slot 1), k2 array -> node 2 (slot 2, item slot 3)
	// node 1 (offset 23): k0 string (slot 4), k2 number (slot 5); node 2 (offset 39): k1 any but null (slot 6)
	const program = new Uint8Array([3, 255, ...name(0), 0, 127, 0, 0, ...name(1), 1, 4, 23, 0, ...name(2), 2, 8, 39, 0,
		2, 255, ...name(0), 4, 1, 0, 0, ...name(2), 5, 2, 0, 0,
		1, 3, ...name(1), 6, 63, 0, 0]);
	const names = new Uint8Array([...name(0), ...name(1), ...name(2)]);
	const out = new Int32Array(7), top = new Int32Array(3), inner = new Int32Array(3);
	for (let n = 0; n < ITERATIONS * 2; n++) {
		const text = randomJson(rand, 0);
		const bytes = new Uint8Array(ArrayBuffer.fromString(text));
		const after = jsonFields(bytes, 0, bytes.length, 8, program, out.buffer);
		assert.equal(after, jsonMembers(bytes, 0, bytes.length, 8, names, top.buffer), `case ${n} (seed ${SEED + 5}): ${text}`);
		const expected = [-1, -1, -1, -1, -1, -1, -1];
		if (after >= 0) {
			expected[0] = top[0];
			if (top[1] >= 0 && kindBit(bytes, top[1]) === 4) {
				expected[1] = top[1];
				jsonMembers(bytes, top[1], bytes.length, 8, names, inner.buffer);
				if (inner[0] >= 0 && kindBit(bytes, inner[0]) === 1) expected[4] = inner[0];
				if (inner[2] >= 0 && kindBit(bytes, inner[2]) === 2) expected[5] = inner[2];
			}
			if (top[2] >= 0 && kindBit(bytes, top[2]) === 8) {
				expected[2] = top[2];
				let first = top[2] + 1;
				while ([0x20, 0x0A, 0x0D, 0x09].includes(bytes[first])) first++;
				if (bytes[first] === 0x7B) {
					expected[3] = first;
					jsonMembers(bytes, first, bytes.length, 8, names, inner.buffer);
					if (inner[1] >= 0 && kindBit(bytes, inner[1]) !== 64) expected[6] = inner[1];
				}
			}
		}
		for (let k = 0; k < 7; k++) assert.equal(out[k], expected[k], `case ${n}: slot ${k} of ${text}`);
		// Random bytes in a random range of a random view: an index inside the range or an error code, never a read outside (ASan).
		const view = randomView(rand);
		const from = rand(view.length + 1), end = from + rand(view.length - from + 1);
		const result = jsonFields(view, from, end, rand(6), program, out.buffer);
		assert.ok((result >= -14 && result < 0) || (result > from && result <= end), `case ${n}: ${result} for [${from}, ${end})`);
		for (let k = 0; k < 7; k++) assert.ok(out[k] === -1 || (out[k] >= from && out[k] < end), `case ${n}: position ${out[k]} inside [${from}, ${end})`);
	}
});

test("fuzz: jsonText and jsonTextInto decode a string as JsonReader.string() does, or leave it to it; TextPieces joins pieces as strings would", () => {
	const rand = generator(SEED + 6);
	const reader = new JsonReader();
	const pieces = new TextPieces();
	const out = new Uint8Array(1024);
	for (let n = 0; n < ITERATIONS * 2; n++) {
		// A string: random bytes between quotes, sometimes with escapes of every kind.
		const body = randomBytes(rand, rand(40));
		const escapes = ["\\n", "\\\"", "\\u00e9", "\\u0000", "\\ud83c\\udf24", "\\ud800", "\\u20AC", "\\/", "\\q"];
		const parts: number[] = [0x22];
		for (const b of body) {
			if (!rand(6)) parts.push(...ascii(escapes[rand(escapes.length)]));
			parts.push(b);
		}
		parts.push(0x22);
		const bytes = new Uint8Array(parts);
		let expected: string | undefined;
		try {
			expected = reader.reset(bytes).string();
		} catch (error) {
			if (!(error instanceof JsonSyntax)) throw error;
			expected = undefined;
		}
		const text = jsonText(bytes, 0, bytes.length);
		if (text !== undefined) assert.equal(text, expected, `case ${n} (seed ${SEED + 6})`);
		const into = jsonTextInto(bytes, 0, bytes.length, out, 5);
		assert.equal(into >= 0, text !== undefined, `case ${n}: jsonTextInto and jsonText agree on what they take`);
		if (into >= 0) assert.equal(String.fromArrayBuffer(out.slice(5, into).buffer), text, `case ${n}: the same bytes`);
		// Pieces: strings the reader made, joined, equal the pieces gathered.
		if (expected !== undefined) {
			if (!rand(8)) pieces.clear();
			const before = pieces.text();
			if (rand(3)) reader.reset(bytes).addText(0, pieces);
			else pieces.addString(expected, bytes.length - 2);
			assert.equal(pieces.text(), before + expected, `case ${n}: TextPieces`);
		}
	}
});

test("fuzz: sseEvent on random bytes stays in its range: an index after from or -1 / -2, and a data range inside the event", () => {
	const rand = generator(SEED + 7);
	const out = new Int32Array(2);
	for (let n = 0; n < ITERATIONS * 4; n++) {
		const view = rand(2) ? randomView(rand) : ascii(["data: a\n\n", "data:\r\n\r\n", ": x\n\n", "data: a\ndata: b\n\n", "event: e\r\r"][rand(5)]);
		const from = rand(view.length + 1), end = from + rand(view.length - from + 1);
		const result = sseEvent(view, from, end, out.buffer);
		assert.ok(result === -1 || result === -2 || (result > from && result <= end), `case ${n}: ${result} for [${from}, ${end})`);
		if (result > 0) {
			assert.ok(out[0] === -1 || (out[0] >= from && out[0] <= out[1] && out[1] < result), `case ${n}: data [${out[0]}, ${out[1]}) inside [${from}, ${result})`);
			assert.ok(view[result - 1] === 0x0A || view[result - 1] === 0x0D, `case ${n}: the event ends after a line end`);
		}
	}
});
