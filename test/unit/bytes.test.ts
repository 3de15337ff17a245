// host/bytes (hosts/common/bytes/bytes.c, the same C on the device): what each
// scan finds at the edges of its range, and that every bad argument throws a
// specific error before a byte is read.
import { copy, crc32, equal, find, jsonFields, jsonMembers, jsonSkip, jsonStringStop, jsonText, jsonTextInto, sseEvent, utf8Invalid } from "host/bytes";
import { allocate, free } from "psram";
import { assert, test } from "testing";

const of = (...values: number[]) => new Uint8Array(values);
const ascii = (text: string) => new Uint8Array(ArrayBuffer.fromString(text));
type Loose = (...args: unknown[]) => unknown;
/** jsonMembers' names: each one's length, then its bytes. */
const packNames = (...names: string[]) => of(...names.flatMap((name) => [name.length, ...ascii(name)]));
/** One jsonFields field: its name, slot (255 none), kinds and child offset. */
const field = (name: string, slot: number, kinds: number, child = 0) => [name.length, ...ascii(name), slot, kinds, child & 0xFF, child >> 8];
const STRING = 1, NUMBER = 2, OBJECT = 4, ARRAY = 8, ANY = 127;

test("find: the first of one or two byte values inside [from, end), -1 when absent", () => {
	const bytes = ascii("ab:cd\r\nef:");
	assert.equal(find(bytes, 0, bytes.length, 0x3A), 2);
	assert.equal(find(bytes, 3, bytes.length, 0x3A), 9, "from skips the earlier match");
	assert.equal(find(bytes, 0, bytes.length, 10, 13), 5, "CR before LF");
	assert.equal(find(bytes, 6, bytes.length, 10, 13), 6, "a match at from");
	assert.equal(find(bytes, 0, 9, 0x3A, 0x3A), 2);
	assert.equal(find(bytes, 3, 9, 0x3A), -1, "a match at end is outside");
	assert.equal(find(bytes, 3, 10, 0x3A), 9, "a match at end - 1 is inside");
	assert.equal(find(bytes, 0, bytes.length, 0x7A), -1);
	assert.equal(find(bytes, 4, 4, 0x64), -1, "an empty range");
	assert.equal(find(bytes, bytes.length, bytes.length, 0x3A), -1, "an empty range at the end");
	assert.equal(find(new Uint8Array(0), 0, 0, 0), -1, "an empty buffer");
	assert.equal(find(of(0, 255), 0, 2, 255), 1);
	assert.equal(find(of(0, 255), 0, 2, 255, undefined), 1, "b undefined is b absent");
	assert.equal(find(of(1, 0), 0, 2, 0), 1);
});

test("find: indexes are the view's own, through a subarray, an ArrayBuffer and a PSRAM buffer", () => {
	const whole = ascii("xx\nyy\n");
	const view = whole.subarray(3);
	assert.equal(find(view, 0, view.length, 10), 2, "subarray");
	assert.equal(find(view, 0, 2, 10), -1, "the view ends where its range says");
	assert.equal(find(whole.buffer, 0, whole.length, 10), 2, "ArrayBuffer");
	const buffer = allocate(8, "internal");
	const bytes = new Uint8Array(buffer);
	bytes[7] = 9;
	assert.equal(find(bytes, 0, 8, 9), 7, "a view of a host buffer");
	assert.equal(find(bytes.subarray(4, 8), 0, 4, 9), 3);
	free(buffer);
	assert.throws(() => find(bytes, 0, 0, 9), /bytes: find: argument 1 must be a Uint8Array or an ArrayBuffer, not detached/, TypeError);
});

test("jsonStringStop: a quote, a backslash or a control character stops; DEL, space and UTF-8 do not", () => {
	const plain = of(0x20, 0x7F, 0xC3, 0xA9, 0x41, 0xFF);
	assert.equal(jsonStringStop(plain, 0, plain.length), -1);
	for (const stop of [0x22, 0x5C, 0x00, 0x0A, 0x1F]) {
		const bytes = of(0x61, 0x62, stop, 0x22);
		assert.equal(jsonStringStop(bytes, 0, 4), 2, `byte ${stop}`);
		assert.equal(jsonStringStop(bytes, 2, 4), 2, "at from");
		assert.equal(jsonStringStop(bytes, 0, 2), -1, "at end: outside");
	}
	assert.equal(jsonStringStop(of(0x22), 1, 1), -1, "an empty range");
});

test("utf8Invalid: clean text is -1 in both modes, whatever its length", () => {
	for (const text of ["", "a", "hello, world: seventeen", "café 30 °C ☀ 🌤 and more ASCII after it"]) {
		const bytes = ascii(text);
		assert.equal(utf8Invalid(bytes, 0, bytes.length, "wire"), -1, text);
		assert.equal(utf8Invalid(bytes, 0, bytes.length, "xs"), -1, text);
	}
});

test("utf8Invalid: 00 needs repair in xs mode only, at any position of the word-at-a-time scan", () => {
	for (let at = 0; at < 20; at++) {
		const bytes = new Uint8Array(20).fill(0x61);
		bytes[at] = 0;
		assert.equal(utf8Invalid(bytes, 0, 20, "xs"), at, `00 at ${at}`);
		assert.equal(utf8Invalid(bytes, 0, 20, "wire"), -1);
		assert.equal(utf8Invalid(bytes, at + 1, 20, "xs"), -1, "from after it");
		assert.equal(utf8Invalid(bytes, 0, at, "xs"), -1, "end before it");
	}
});

test("utf8Invalid: the first broken sequence, at its lead byte, for each way UTF-8 breaks", () => {
	const cases: [string, number[]][] = [
		["a stray continuation byte", [0x80]],
		["C0 80 (XS's U+0000, overlong)", [0xC0, 0x80]],
		["C1 BF (overlong)", [0xC1, 0xBF]],
		["E0 80 80 (overlong)", [0xE0, 0x80, 0x80]],
		["ED A0 80 (a surrogate)", [0xED, 0xA0, 0x80]],
		["F0 80 80 80 (overlong)", [0xF0, 0x80, 0x80, 0x80]],
		["F4 90 80 80 (above U+10FFFF)", [0xF4, 0x90, 0x80, 0x80]],
		["F5 (no such lead)", [0xF5, 0x80, 0x80, 0x80]],
		["FF", [0xFF]],
		["E2 82 without its last byte", [0xE2, 0x82, 0x41]],
	];
	for (const [name, sequence] of cases) {
		for (let before = 0; before < 10; before++) {
			const bytes = new Uint8Array(before + sequence.length + 3).fill(0x62);
			bytes.set(sequence, before);
			assert.equal(utf8Invalid(bytes, 0, bytes.length, "wire"), before, `${name} after ${before} bytes`);
		}
	}
});

test("utf8Invalid: a sequence cut by end is broken; the same bytes with room are clean", () => {
	const euro = of(0x41, 0xE2, 0x82, 0xAC);
	assert.equal(utf8Invalid(euro, 0, 4, "wire"), -1);
	assert.equal(utf8Invalid(euro, 0, 3, "wire"), 1);
	assert.equal(utf8Invalid(euro, 0, 2, "xs"), 1);
	assert.equal(utf8Invalid(euro, 2, 4, "wire"), 2, "from inside a sequence: a stray continuation");
	const emoji = of(0xF0, 0x9F, 0x8C, 0xA4);
	for (let end = 1; end < 4; end++) assert.equal(utf8Invalid(emoji, 0, end, "wire"), 0, `cut at ${end}`);
	assert.equal(utf8Invalid(emoji, 0, 4, "wire"), -1);
});

test("equal: exactly the other's bytes, in the range", () => {
	const bytes = ascii("data: x");
	assert.equal(equal(bytes, 0, 4, ascii("data")), true);
	assert.equal(equal(bytes, 0, 4, ascii("date")), false);
	assert.equal(equal(bytes, 0, 5, ascii("data")), false, "longer range");
	assert.equal(equal(bytes, 0, 3, ascii("data")), false, "shorter range");
	assert.equal(equal(bytes, 3, 3, new Uint8Array(0)), true, "both empty");
	assert.equal(equal(bytes, 6, 7, ascii("x").buffer), true, "an ArrayBuffer as other");
});

test("every function refuses what is not a byte buffer, by name", () => {
	const calls: [string, Loose, unknown[]][] = [
		["find", find as Loose, [0x3A]],
		["jsonStringStop", jsonStringStop as Loose, []],
		["utf8Invalid", utf8Invalid as Loose, ["wire"]],
		["jsonSkip", jsonSkip as Loose, [4]],
		["jsonMembers", jsonMembers as Loose, [4, packNames("a"), new ArrayBuffer(4)]],
		["equal", equal as Loose, [new Uint8Array(0)]],
		["copy", copy as Loose, [new Uint8Array(0), 0]],
	];
	for (const [name, fn, rest] of calls) {
		for (const bad of [undefined, null, 1, "abc", [1, 2], {}, { length: 2, 0: 1, 1: 2 }]) {
			assert.throws(() => fn(bad, 0, 0, ...rest), `bytes: ${name}: argument 1 must be a Uint8Array or an ArrayBuffer`, TypeError);
		}
		assert.throws(() => fn(new Uint16Array(4), 0, 0, ...rest), `bytes: ${name}: argument 1 must be a Uint8Array or an ArrayBuffer, not detached`, TypeError);
		assert.throws(() => fn(), `bytes: ${name}: argument 1 must be a Uint8Array or an ArrayBuffer`, TypeError);
	}
});

test("every function refuses a range that is not whole numbers inside the buffer", () => {
	const bytes = new Uint8Array(8);
	const calls: [string, Loose, unknown[]][] = [
		["find", find as Loose, [0]],
		["jsonStringStop", jsonStringStop as Loose, []],
		["utf8Invalid", utf8Invalid as Loose, ["xs"]],
		["jsonSkip", jsonSkip as Loose, [4]],
		["jsonMembers", jsonMembers as Loose, [4, packNames("a"), new ArrayBuffer(4)]],
		["equal", equal as Loose, [bytes]],
		["copy", copy as Loose, [new Uint8Array(8), 0]],
	];
	for (const [name, fn, rest] of calls) {
		assert.throws(() => fn(bytes), `bytes: ${name}: from required`, TypeError);
		assert.throws(() => fn(bytes, 0), `bytes: ${name}: end required`, TypeError);
		assert.throws(() => fn(bytes, "0", 8, ...rest), `bytes: ${name}: from must be a number`, TypeError);
		assert.throws(() => fn(bytes, 0, undefined, ...rest), `bytes: ${name}: end must be a number`, TypeError);
		assert.throws(() => fn(bytes, -1, 8, ...rest), `bytes: ${name}: from -1 is outside 0..8`, RangeError);
		assert.throws(() => fn(bytes, 0, 9, ...rest), `bytes: ${name}: end 9 is outside 0..8`, RangeError);
		assert.throws(() => fn(bytes, 5, 4, ...rest), `bytes: ${name}: from 5 is after end 4`, RangeError);
		for (const bad of [0.5, NaN, Infinity, -Infinity, 2 ** 40, -0.5]) {
			assert.throws(() => fn(bytes, bad, 8, ...rest), `bytes: ${name}: from must be a whole number in 0..8`, RangeError);
			assert.throws(() => fn(bytes, 0, bad, ...rest), `bytes: ${name}: end must be a whole number in 0..8`, RangeError);
		}
		assert.throws(() => fn(bytes.subarray(2), 0, 7, ...rest), `bytes: ${name}: end 7 is outside 0..6`, RangeError);
	}
	assert.equal(find(bytes, 8.0, 8, 0), -1, "a whole double is fine");
	assert.equal(find(bytes, -0, 8, 0), 0, "-0 is 0");
});

test("find's byte values, utf8Invalid's mode and equal's other are checked", () => {
	const bytes = new Uint8Array(4);
	assert.throws(() => (find as Loose)(bytes, 0, 4), "bytes: find: byte required", TypeError);
	assert.throws(() => find(bytes, 0, 4, 256), "bytes: find: byte 256 is outside 0..255", RangeError);
	assert.throws(() => find(bytes, 0, 4, -1), "bytes: find: byte -1 is outside 0..255", RangeError);
	assert.throws(() => find(bytes, 0, 4, 1.5), "bytes: find: byte must be a whole number in 0..255", RangeError);
	assert.throws(() => (find as Loose)(bytes, 0, 4, "a"), "bytes: find: byte must be a number", TypeError);
	assert.throws(() => find(bytes, 0, 4, 1, 300), "bytes: find: second byte 300 is outside 0..255", RangeError);
	assert.throws(() => (utf8Invalid as Loose)(bytes, 0, 4), `bytes: utf8Invalid: mode must be "wire" or "xs"`, TypeError);
	assert.throws(() => (utf8Invalid as Loose)(bytes, 0, 4, 1), `bytes: utf8Invalid: mode must be "wire" or "xs"`, TypeError);
	assert.throws(() => (utf8Invalid as Loose)(bytes, 0, 4, "utf8"), `bytes: utf8Invalid: unknown mode (use "wire" or "xs")`, RangeError);
	assert.throws(() => (equal as Loose)(bytes, 0, 4), "bytes: equal: argument 4 must be a Uint8Array or an ArrayBuffer", TypeError);
	assert.throws(() => (equal as Loose)(bytes, 0, 4, "abcd"), "bytes: equal: argument 4 must be a Uint8Array or an ArrayBuffer", TypeError);
});

test("jsonSkip: the index after one whole value, whitespace before it skipped, nothing after it read", () => {
	const cases: [string, number][] = [
		[`"a\\"b" ,`, 6], [` \t\r\n-12.5e+3]`, 12], [`0x`, 1], [`true,`, 4], [`false`, 5], [`null}`, 4],
		[`{"a": [1, {"b": null}], "c": "\\u00e9"} tail`, 38], [`[]`, 2], [`{ }`, 3], [`[[[]]]`, 6],
	];
	for (const [text, expected] of cases) {
		const bytes = ascii(text);
		assert.equal(jsonSkip(bytes, 0, bytes.length, 8), expected, text);
	}
	const inner = ascii(`xx[1,2]yy`);
	assert.equal(jsonSkip(inner, 2, 7, 1), 7, "from and end inside the buffer");
	assert.equal(jsonSkip(inner.subarray(2), 0, 5, 1), 5, "a view's own indexes");
});

test("jsonSkip: each error is its own negative code, the first one met", () => {
	const cases: [string, number][] = [
		[``, -1], [`   `, -1], [`}`, -2], [`\u00e9`, -2], [`"abc`, -3], [`"a\\`, -3], [`"a\\u12`, -3],
		["\"a\u0001\"", -4], [`"\\u12G4"`, -5], [`"\\x"`, -6], [`-`, -7], [`1.`, -7], [`1e+`, -7],
		[`tru`, -8], [`nul1`, -8], [`[[1]]`, -9], [`{"a":1 "b"}`, -10], [`{"a":1`, -10], [`{1:2}`, -11],
		[`{"a":1,}`, -11], [`{"a" 1}`, -12], [`[1 2]`, -13], [`[1,`, -1], [`["a\\q", }`, -6],
	];
	for (const [text, code] of cases) {
		const bytes = ascii(text);
		assert.equal(jsonSkip(bytes, 0, bytes.length, 1), code, JSON.stringify(text));
	}
	assert.equal(jsonSkip(ascii(`[]`), 0, 2, 0), -9, "levels 0: no container at all");
	assert.equal(jsonSkip(ascii(`7`), 0, 1, 0), 1, "levels 0: a scalar is fine");
	const deep = ascii("[".repeat(1024) + "]".repeat(1024));
	assert.equal(jsonSkip(deep, 0, deep.length, 1024), deep.length, "the most levels a call takes");
	assert.equal(jsonSkip(deep, 0, deep.length, 1023), -9);
	assert.throws(() => jsonSkip(deep, 0, deep.length, 1025), "bytes: jsonSkip: levels 1025 is outside 0..1024", RangeError);
	assert.throws(() => (jsonSkip as Loose)(deep, 0, 2), "bytes: jsonSkip: levels required", TypeError);
});

test("jsonMembers: where the last member of each name starts, escaped keys decoded, the index after the object", () => {
	const text = `  {"b": 1, "a" : [ {"a": 2} ], "c\\u0061": "x", "b":{"z":null} ,"\\u00e9": 3, "ab": 4}  tail`;
	const bytes = ascii(text);
	const out = new Int32Array(4);
	const after = jsonMembers(bytes, 0, bytes.length, 8, packNames("a", "b", "ca", "zz"), out.buffer);
	assert.equal(after, text.indexOf("}  tail") + 1, "the index after the object");
	assert.equal(out[0], text.indexOf("[ {"), "a: its value, after the colon's whitespace; the nested a is not a member");
	assert.equal(out[1], text.indexOf(`{"z"`), "b: the last one wins");
	assert.equal(out[2], text.indexOf(`"x"`), "c\\u0061 is ca");
	assert.equal(out[3], -1, "no zz");
	const empty = new Int32Array([7, 7]);
	assert.equal(jsonMembers(ascii("{ }"), 0, 3, 1, packNames("a", "b"), empty.buffer), 3);
	assert.equal(empty[0], -1, "every slot is reset");
	assert.equal(empty[1], -1);
	assert.equal(jsonMembers(ascii(`{"a":1}`), 0, 7, 1, new Uint8Array(0), new ArrayBuffer(0)), 7, "no names: a checked skip");
	const inner = ascii(`xx{"a":1}yy`);
	assert.equal(jsonMembers(inner.subarray(2), 0, 7, 1, packNames("a"), out.buffer), 7, "a view's own indexes");
	assert.equal(out[0], 5);
});

test("jsonMembers: no object is -14 with nothing read; errors are jsonSkip's codes", () => {
	const out = new Int32Array(1);
	for (const text of [``, `  `, `[1]`, `"a"`, `1`, `null`, `}`]) {
		const bytes = ascii(text);
		assert.equal(jsonMembers(bytes, 0, bytes.length, 4, packNames("a"), out.buffer), -14, JSON.stringify(text));
	}
	const cases: [string, number][] = [
		[`{`, -11], [`{"a"`, -12], [`{"a":`, -1], [`{"a":1`, -10], [`{"a":1 "b":2}`, -10], [`{1:2}`, -11], [`{"a":1,}`, -11],
		[`{"a" 1}`, -12], [`{"a":tru}`, -8], [`{"a\\x":1}`, -6], [`{"a":[[1]]}`, -9], [`{"a":{"b":{}}}`, -9],
	];
	for (const [text, code] of cases) {
		const bytes = ascii(text);
		assert.equal(jsonMembers(bytes, 0, bytes.length, 2, packNames("a"), out.buffer), code, JSON.stringify(text));
		assert.equal(jsonSkip(bytes, 0, bytes.length, 2), code, `jsonSkip agrees on ${JSON.stringify(text)}`);
	}
	assert.equal(jsonMembers(ascii(`{}`), 0, 2, 0, packNames("a"), out.buffer), -9, "levels 0: not even the object");
});

test("jsonMembers: names and out are checked", () => {
	const bytes = ascii(`{"a":1}`);
	const bad = (names: Uint8Array) => () => jsonMembers(bytes, 0, 7, 4, names, new ArrayBuffer(16));
	const packing = "bytes: jsonMembers: names must be packed as a length of 1..255 and that many bytes, each";
	assert.throws(bad(of(0)), packing, RangeError);
	assert.throws(bad(of(2, 0x61)), packing, RangeError);
	assert.throws(bad(of(1, 0x61, 5)), packing, RangeError);
	assert.throws(() => jsonMembers(bytes, 0, 7, 4, packNames("a", "b"), new ArrayBuffer(7)), "bytes: jsonMembers: out has room for 1 positions, not the 2 names", RangeError);
	assert.throws(() => (jsonMembers as Loose)(bytes, 0, 7, 4, "a", new ArrayBuffer(4)), "bytes: jsonMembers: argument 5 must be a Uint8Array or an ArrayBuffer", TypeError);
	assert.throws(() => (jsonMembers as Loose)(bytes, 0, 7, 4, packNames("a")), "bytes: jsonMembers: argument 6 must be a Uint8Array or an ArrayBuffer", TypeError);
	assert.throws(() => jsonMembers(bytes, 0, 7, 1025, packNames("a"), new ArrayBuffer(4)), "bytes: jsonMembers: levels 1025 is outside 0..1024", RangeError);
});

test("jsonFields: positions in nested objects and an array's first item, by kind; the last member wins and resets what its first noted", () => {
	// node 0 (20 bytes): a (string), o (object -> node 1 at 20), l (array -> node 2 at 28, its item's slot 4);
	// node 1: x (number); node 2: y (any kind)
	const program = of(3, 255, ...field("a", 0, STRING), ...field("o", 1, OBJECT, 20), ...field("l", 3, ARRAY, 28),
		1, 255, ...field("x", 2, NUMBER), 1, 4, ...field("y", 5, ANY));
	assert.equal(program.length, 36);
	const out = new Int32Array(6);
	const text = ` {"a":"s", "o":{"x":7,"z":[1]}, "l":[ {"y":null}, 5 ], "q":{"x":1}} `;
	const bytes = ascii(text);
	assert.equal(jsonFields(bytes, 0, bytes.length, 8, program, out.buffer), text.lastIndexOf("}") + 1);
	assert.equal(out[0], text.indexOf(`"s"`), "a: a string");
	assert.equal(out[1], text.indexOf(`{"x":7`), "o: the object");
	assert.equal(out[2], text.indexOf("7"), "o.x: a number");
	assert.equal(out[3], text.indexOf("[ {"), "l: the array");
	assert.equal(out[4], text.indexOf(`{"y"`), "l[0]: its position in the node's own slot");
	assert.equal(out[5], text.indexOf("null"), "l[0].y: any kind");
	const twice = ascii(`{"a":1,"o":{"x":2},"o":[3],"l":[4,{"y":1}]}`);
	assert.equal(jsonFields(twice, 0, twice.length, 8, program, out.buffer), twice.length);
	assert.equal(out[0], -1, "a: a number is not a kind it is noted for");
	assert.equal(out[1], -1, "o: the last one, an array, is not an object");
	assert.equal(out[2], -1, "o.x: reset by the second o");
	assert.equal(out[4], -1, "l: the first item is no object");
	assert.equal(out[5], -1);
	assert.equal(jsonFields(ascii(`[]`), 0, 2, 8, program, out.buffer), -14, "no object");
	for (let k = 0; k < 6; k++) assert.equal(out[k], -1, `slot ${k} reset even without an object`);
});

test("jsonFields: errors are jsonSkip's codes, the first one met, within levels", () => {
	const program = of(2, 255, ...field("o", 0, OBJECT, 14), ...field("l", 1, ARRAY, 14), 1, 2, ...field("x", 3, ANY));
	assert.equal(program[14], 1, "the child node is at offset 14");
	const out = new Int32Array(4);
	const cases: [string, number][] = [
		[`{`, -11], [`{"o":`, -1], [`{"o":{"x":1`, -10], [`{"o":{"x":1 "y":2}}`, -10], [`{"l":[{"x":1},]}`, -2], [`{"l":[{"x":1} 2]}`, -13],
		[`{"l":[`, -1], [`{"l":[{"x":tru}]}`, -8], [`{"o":{"x":[[1]]}}`, -9], [`{"l":[[[1]]]}`, -9], [`{"o":{"x\\q":1}}`, -6],
	];
	for (const [text, code] of cases) {
		const bytes = ascii(text);
		assert.equal(jsonFields(bytes, 0, bytes.length, 3, program, out.buffer), code, JSON.stringify(text));
		assert.equal(jsonSkip(bytes, 0, bytes.length, 3), code, `jsonSkip agrees on ${JSON.stringify(text)}`);
	}
	const ok = ascii(`{"l":[{"x":[1]}]}`);
	assert.equal(jsonFields(ok, 0, ok.length, 4, program, out.buffer), ok.length, "four levels are enough");
	assert.equal(jsonFields(ok, 0, ok.length, 3, program, out.buffer), -9, "three are not");
});

test("jsonFields: the program and out are checked", () => {
	const bytes = ascii(`{"a":1}`);
	const run = (program: Uint8Array, slots = 4) => () => jsonFields(bytes, 0, 7, 4, program, new ArrayBuffer(4 * slots));
	assert.throws(run(of()), "bytes: jsonFields: program must be 1..1024 bytes", RangeError);
	assert.throws(run(new Uint8Array(1025)), "bytes: jsonFields: program must be 1..1024 bytes", RangeError);
	assert.throws(run(of(0, 255)), "bytes: jsonFields: program: a node needs a field count of 1..255 and its slot", RangeError);
	assert.throws(run(of(1, 7, ...field("a", 0, 1))), "bytes: jsonFields: program: a node's slot is outside out", RangeError);
	assert.throws(run(of(1, 255, 2, 0x61)), "bytes: jsonFields: program: a field needs a name of 1..255 bytes, its slot, kinds and child", RangeError);
	assert.throws(run(of(2, 255, ...field("a", 0, 1))), "bytes: jsonFields: program: a field needs a name of 1..255 bytes, its slot, kinds and child", RangeError);
	assert.throws(run(of(1, 255, ...field("a", 4, 1))), "bytes: jsonFields: program: a field's slot is outside out", RangeError);
	assert.throws(run(of(1, 255, ...field("a", 0, 0))), "bytes: jsonFields: program: a field's kinds must be 1..127", RangeError);
	assert.throws(run(of(1, 255, ...field("a", 0, 128))), "bytes: jsonFields: program: a field's kinds must be 1..127", RangeError);
	assert.throws(run(of(1, 255, ...field("a", 0, OBJECT, 0x100))), "bytes: jsonFields: program: a field's child must be a node further on", RangeError);
	assert.throws(run(of(1, 255, ...field("a", 0, OBJECT, 3))), "bytes: jsonFields: program: a field's child must be a node further on", RangeError);
	assert.throws(run(of(1, 255, ...field("a", 0, STRING, 8), 1, 255, ...field("b", 1, 1))), "bytes: jsonFields: program: a field with a child must take an object or an array", RangeError);
	assert.throws(run(of(1, 255, ...field("a", 0, OBJECT, 8), 1, 255, ...field("b", 1, OBJECT, 8))), "bytes: jsonFields: program: a field's child must be a node further on", RangeError);
	assert.throws(() => (jsonFields as Loose)(bytes, 0, 7, 4, of(1, 255, ...field("a", 0, 1))), "bytes: jsonFields: argument 6 must be a Uint8Array or an ArrayBuffer", TypeError);
	assert.throws(() => jsonFields(bytes, 0, 7, 1025, of(1, 255, ...field("a", 0, 1)), new ArrayBuffer(4)), "bytes: jsonFields: levels 1025 is outside 0..1024", RangeError);
	assert.equal(jsonFields(bytes, 0, 7, 4, of(1, 255, ...field("a", 255, NUMBER)), new ArrayBuffer(0)), 7, "no slot noted: a checked walk");
});

test("jsonText and jsonTextInto: a string decoded in one call, escapes and UTF-8 as JSON.parse makes them; undefined / -1 where JavaScript must decode", () => {
	const cases = [`""`, `"plain"`, `"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t"`, `"\\u0041\\u00e9\\u20ac\\u0000x"`, `"é€🌤"`, `"\\uFFFF"`];
	for (const text of cases) {
		const bytes = new Uint8Array(ArrayBuffer.fromString(`xx${text}yy`));
		const expected = JSON.parse(text) as string;
		assert.equal(jsonText(bytes, 2, bytes.length), expected, text);
		const out = new Uint8Array(40);
		const end = jsonTextInto(bytes, 2, bytes.length, out, 3);
		assert.equal(String.fromArrayBuffer(out.slice(3, end).buffer), expected, `${text} into bytes`);
	}
	const fallback = [`"\\ud83c\\udf24"`, `"\\ud800"`, `"a\\q"`, `"open`, "\"a\u0001b\"", `x"a"`, `"\\u12"`];
	for (const text of fallback) {
		const bytes = ascii(text);
		assert.equal(jsonText(bytes, 0, bytes.length), undefined, text);
		assert.equal(jsonTextInto(bytes, 0, bytes.length, new Uint8Array(40), 0), -1, text);
	}
	const broken = of(0x22, 0x61, 0xC3, 0x22);
	assert.equal(jsonText(broken, 0, 4), undefined, "invalid UTF-8");
	assert.equal(jsonText(ascii(`"abc"`), 0, 4), undefined, "the closing quote is past end");
	assert.equal(jsonText(ascii(`"abc"`), 5, 5), undefined, "nothing at from");
	const into = new Uint8Array(4);
	assert.equal(jsonTextInto(ascii(`"abcd"`), 0, 6, into, 1), -2, "no room: nothing written");
	assert.equal(into[1], 0);
	assert.equal(jsonTextInto(ascii(`"abc"`), 0, 5, into, 1), 4, "exactly room");
	const shared = ascii(`"abcdef"`);
	assert.throws(() => jsonTextInto(shared, 0, shared.length, shared, 2), "bytes: jsonTextInto: out overlaps the string it is written from", RangeError);
	assert.throws(() => jsonTextInto(shared, 0, shared.length, new Uint8Array(4), 5), "bytes: jsonTextInto: at 5 is outside 0..4", RangeError);
	assert.throws(() => (jsonTextInto as Loose)(shared, 0, shared.length, "x", 0), "bytes: jsonTextInto: argument 4 must be a Uint8Array or an ArrayBuffer", TypeError);
	assert.throws(() => (jsonText as Loose)(shared, 0, 9), "bytes: jsonText: end 9 is outside 0..8", RangeError);
	// A string of a PSRAM buffer, and one big enough that making it may collect: the buffer is read again after.
	const buffer = allocate(16, "psram");
	try {
		const view = new Uint8Array(buffer);
		view.set(ascii(`"in psram"`));
		assert.equal(jsonText(view, 0, 10), "in psram");
	} finally {
		free(buffer);
	}
	const big = ascii(`"${"x".repeat(20000)}\\n"`);
	assert.equal(jsonText(big, 0, big.length), `${"x".repeat(20000)}\n`);
});

test("sseEvent: one event's end and its data line's value; -1 for an event not ended in the range, -2 for several data lines", () => {
	const out = new Int32Array(2);
	const run = (text: string, from = 0) => {
		const bytes = ascii(text);
		return [sseEvent(bytes, from, bytes.length, out.buffer), out[0], out[1]];
	};
	assert.deepEqual(run("data: ab\n\nnext"), [10, 6, 8]);
	assert.deepEqual(run("event: e\r\n: c\r\ndata:ab\r\n\r\n"), [26, 20, 22], "CRLF, comments and other fields skipped, no space");
	assert.deepEqual(run("data:  a\r\rx"), [10, 6, 8], "CR line ends; one space dropped, not two");
	assert.deepEqual(run("data\n\n"), [6, 4, 4], "a bare field name: an empty value");
	assert.deepEqual(run("dataa: x\nid: 1\n\n"), [16, -1, -1], "no data line: none");
	assert.deepEqual(run("\n"), [1, -1, -1], "a blank line at from");
	assert.deepEqual(run("data: a\ndata: b\n\n")[0], -2, "two data lines");
	assert.deepEqual(run("data: a\n")[0], -1, "no blank line yet");
	assert.deepEqual(run("data: a\n\r")[0], -1, "a CR last: maybe half a CRLF");
	assert.deepEqual(run("data: a")[0], -1, "no line end");
	assert.deepEqual(run("xxdata: a\n\n", 2), [11, 8, 9], "from inside the buffer");
	assert.throws(() => sseEvent(ascii("data\n\n"), 0, 6, new ArrayBuffer(4)), "bytes: sseEvent: out has room for 1 positions, not 2", RangeError);
	assert.throws(() => (sseEvent as Loose)(ascii("data\n\n"), 0, 6), "bytes: sseEvent: argument 4 must be a Uint8Array or an ArrayBuffer", TypeError);
	assert.throws(() => sseEvent(ascii("data\n\n"), 4, 2, out.buffer), "bytes: sseEvent: from 4 is after end 2", RangeError);
});

test("crc32: the IEEE CRC-32 check value, continued across pieces, over views, empty ranges and every crc argument", () => {
	const digits = ascii("123456789");
	assert.equal(crc32(digits, 0, 9), 0xCBF43926, "the check value of \"123456789\"");
	assert.equal(crc32(digits, 4, 9, crc32(digits, 0, 4)), 0xCBF43926, "continued across two pieces");
	assert.equal(crc32(digits, 0, 9, 0), 0xCBF43926, "crc 0 starts one");
	assert.equal(crc32(digits, 3, 3), 0, "an empty range from 0");
	assert.equal(crc32(digits, 3, 3, 0xDEADBEEF), 0xDEADBEEF, "an empty range keeps crc");
	assert.equal(crc32(of(0xFF, 0xFF, 0xFF, 0xFF), 0, 4), 0xFFFFFFFF, "an unsigned result above 2^31");
	const whole = ascii("xx123456789yy");
	assert.equal(crc32(whole.subarray(2, 11), 0, 9), 0xCBF43926, "indexes are the view's own");
	assert.equal(crc32(whole.buffer, 2, 11), 0xCBF43926, "an ArrayBuffer");
	assert.throws(() => crc32(digits, 0, 10), "bytes: crc32: end 10 is outside 0..9", RangeError);
	assert.throws(() => crc32(digits, 0, 9, -1), "bytes: crc32: crc -1 is outside", RangeError);
	assert.throws(() => crc32(digits, 0, 9, 2 ** 32), "bytes: crc32: crc must be a whole number", RangeError);
	assert.throws(() => (crc32 as Loose)(digits, 0, 9, "0"), "bytes: crc32: crc must be a number", TypeError);
	assert.throws(() => (crc32 as Loose)("123", 0, 3), "bytes: crc32: argument 1 must be a Uint8Array or an ArrayBuffer", TypeError);
});

test("copy: a range written into another buffer at an index, as set() of a subarray; overlaps in one buffer; no room is an error", () => {
	const source = ascii("0123456789"), out = new Uint8Array(12).fill(0x2E);
	assert.equal(copy(source, 2, 5, out, 4), 7, "the index after what it wrote");
	assert.equal(String.fromArrayBuffer(out.buffer as ArrayBuffer), "....234.....");
	assert.equal(copy(source, 0, 10, out, 2), 12, "up to out's very end");
	assert.equal(String.fromArrayBuffer(out.buffer as ArrayBuffer), "..0123456789");
	assert.equal(copy(source, 3, 3, out, 12), 12, "an empty range at out's end writes nothing");
	// Views at an offset, an ArrayBuffer each way, a PSRAM buffer.
	const whole = ascii("xxabcdyy"), into = new Uint8Array(8).fill(0x2E);
	assert.equal(copy(whole.subarray(2, 6), 1, 3, into.subarray(4), 1), 3, "indexes are each view's own");
	assert.equal(String.fromArrayBuffer(into.buffer as ArrayBuffer), ".....bc.");
	assert.equal(copy(whole.buffer, 2, 6, into.buffer, 0), 4);
	assert.equal(String.fromArrayBuffer(into.buffer as ArrayBuffer), "abcd.bc.");
	const psram = allocate(16, "psram");
	try {
		const view = new Uint8Array(psram, 0, 16);
		assert.equal(copy(source, 0, 10, view, 6), 16);
		assert.equal(copy(view, 6, 14, into, 0), 8, "out of a PSRAM buffer");
		assert.equal(String.fromArrayBuffer(into.buffer as ArrayBuffer), "01234567");
	} finally {
		free(psram);
	}
	// One buffer both ways: as copyWithin, forward and backward.
	const same = ascii("abcdefgh");
	assert.equal(copy(same, 0, 6, same, 2), 8);
	assert.equal(String.fromArrayBuffer(same.buffer as ArrayBuffer), "ababcdef");
	assert.equal(copy(same, 2, 8, same, 0), 6);
	assert.equal(String.fromArrayBuffer(same.buffer as ArrayBuffer), "abcdefef");
	// Checked before a byte is written.
	const kept = new Uint8Array(4).fill(0x2E);
	assert.throws(() => copy(source, 0, 5, kept, 0), "bytes: copy: out has room for 4 bytes at 0, not 5", RangeError);
	assert.throws(() => copy(source, 0, 2, kept, 3), "bytes: copy: out has room for 1 bytes at 3, not 2", RangeError);
	assert.throws(() => copy(source, 0, 1, kept, 5), "bytes: copy: at 5 is outside 0..4", RangeError);
	assert.throws(() => copy(source, 0, 1, kept, 0.5), "bytes: copy: at must be a whole number in 0..4", RangeError);
	assert.throws(() => (copy as Loose)(source, 0, 1, kept), "bytes: copy: at required", TypeError);
	assert.throws(() => (copy as Loose)(source, 0, 1, "abcd", 0), "bytes: copy: argument 4 must be a Uint8Array or an ArrayBuffer", TypeError);
	assert.throws(() => (copy as Loose)(source, 0, 1, new Uint16Array(4), 0), "bytes: copy: argument 4 must be a writable Uint8Array or an ArrayBuffer, not detached", TypeError);
	assert.equal(String.fromArrayBuffer(kept.buffer as ArrayBuffer), "....", "nothing written by a refused call");
});

