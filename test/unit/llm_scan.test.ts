// llm/scan: the byte-level JSON reader the reply parsers use gives what
// JSON.parse(decodeUtf8(bytes)) gives (the path it replaced) and refuses what
// it refuses: escapes, surrogate pairs, invalid UTF-8 inside strings, numbers,
// duplicate keys, __proto__, nesting. The fuzz part mutates replies (seeded,
// bounded; a failure prints its seed and case) and holds the reader to the same
// rule; it also runs under the ASan/UBSan host with the other unit tests.
import { generator, iterationsFor, seedFor, type Random } from "test/fuzz";
import { assert, test } from "testing";
import { LLM_JSON_DEPTH_MAX, LLM_JSON_PARSE_DEPTH_MAX, LLM_JSON_PARSE_MAX_BYTES } from "budgets";
import { JsonReader, JsonSyntax, Kind, ascii } from "llm/scan";
import { decodeUtf8, encodeUtf8 } from "net/utf8";
import { bytesOf } from "./llm_fakes";

const SEED = seedFor(0x5CA7);
const ITERATIONS = iterationsFor(600);

type Outcome = { ok: true; value: unknown } | { ok: false };

function viaParse(bytes: Uint8Array): Outcome {
	try {
		return { ok: true, value: JSON.parse(decodeUtf8(bytes)) };
	} catch {
		return { ok: false };
	}
}

const reader = new JsonReader();

function viaReader(bytes: Uint8Array): Outcome {
	try {
		const value = reader.reset(bytes).value();
		reader.end();
		return { ok: true, value };
	} catch (error) {
		if (!(error instanceof JsonSyntax)) throw error;
		return { ok: false };
	}
}

function skips(bytes: Uint8Array): boolean {
	try {
		reader.reset(bytes).skip();
		reader.end();
		return true;
	} catch (error) {
		if (!(error instanceof JsonSyntax)) throw error;
		return false;
	}
}

// Whitespace before a value makes it longer than LLM_JSON_PARSE_MAX_BYTES: value() builds it piece by piece, not by JSON.parse.
const PAD = LLM_JSON_PARSE_MAX_BYTES + 1;

function padded(bytes: Uint8Array): Uint8Array {
	const out = new Uint8Array(PAD + bytes.length).fill(0x20);
	out.set(bytes, PAD);
	return out;
}

/** Same outcome both ways; the failure names the case. built: also past LLM_JSON_PARSE_MAX_BYTES (value()'s other path). */
function same(bytes: Uint8Array, label: string, built = true): void {
	const expected = viaParse(bytes);
	const actual = viaReader(bytes);
	const shown = `${label}: ${JSON.stringify(decodeUtf8(bytes).slice(0, 120))}`;
	assert.equal(actual.ok, expected.ok, `${shown}: accepted`);
	assert.equal(skips(bytes), expected.ok, `${shown}: skip() accepted`);
	if (actual.ok && expected.ok) assert.deepEqual(actual.value, expected.value, shown);
	if (!built) return;
	const long = viaReader(padded(bytes));
	assert.equal(long.ok, expected.ok, `${shown}: accepted when built piece by piece`);
	if (long.ok && expected.ok) assert.deepEqual(long.value, expected.value, `${shown} (built piece by piece)`);
}

const text = (s: string) => encodeUtf8(s);
const VALID = [
	"0", "-0", "12", "-7.25e+3", "1E2", "0.5", "123456789012345678", "1e400", "true", "false", "null", "\"\"",
	"\"plain\"", "\"Héllo, 世界 😀\"", "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\"\\u00e9\\u4e16\"", "\"\\ud83d\\ude00\"",
	"\"\\ud83d\"", "\"\\ude00\\ud83d\"", "\"\\ud83dx\\ude00\"", "\"\\uD83D\\uDE00 caps\"",
	"[]", "{}", " [1, [2, [3, {}]], \"x\"] ", "{\"a\":1,\"a\":2}", "{\"b\":[],\"a\":{\"c\":null}}",
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"It is mo\"},\"finish_reason\":null}],\"usage\":null}",
	"{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Pa\"}}",
	"{\"k\\u0065y\":\"v\",\"\":0}", "\t\r\n {\"a\" : [ true , false ] } \n",
];

const INVALID = [
	"", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "01", "1.", ".5", "-", "1e", "+1", "0x10",
	"tru", "nul", "True", "\"unterminated", "\"bad \\x escape\"", "\"\\u12\"", "\"\\u12g4\"", "'single'", "[1]]", "{} {}",
	"\"a\tb\"", "\"nl\nin string\"", "NaN", "Infinity", "[\"a\",]", "{\"a\":}", "{,}", "\u00a0[]",
];

test("the reader builds what JSON.parse builds, and refuses what it refuses", () => {
	for (const json of VALID) same(text(json), "valid");
	for (const json of INVALID) same(text(json), "invalid");
	for (const json of VALID) assert.equal(viaReader(text(json)).ok, true, `${json} is read`);
	for (const json of INVALID) assert.equal(viaReader(text(json)).ok, false, `${json} is refused`);
});

test("\\uXXXX: a surrogate pair becomes one character, a lone surrogate stays one, as JSON.parse makes them", () => {
	const pair = viaReader(text("\"\\ud83d\\ude00\"")) as { ok: true; value: string };
	assert.equal(pair.value, "😀");
	const lone = viaReader(text("\"\\ud83d\"")) as { ok: true; value: string };
	assert.equal(lone.value, JSON.parse("\"\\ud83d\""));
	assert.equal(lone.value, String.fromCharCode(0xD83D));
	// Escaped surrogate then a raw one (invalid UTF-8 on the wire): U+FFFD for the raw one.
	same(bytesOf("\"\\ud83d", [0xED, 0xB8, 0x80], "\""), "escaped + raw surrogate");
});

test("invalid UTF-8 inside a string becomes U+FFFD per broken sequence; outside strings it is refused", () => {
	same(bytesOf("\"a", [0xE4, 0xB8], "b\""), "truncated 3-byte sequence");
	same(bytesOf("\"", [0xFF, 0xC0, 0x80, 0xED, 0xA0, 0x80], "\""), "bad lead, overlong NUL, encoded surrogate");
	same(bytesOf("\"tail ", [0xF0, 0x9F, 0x98], "\""), "sequence cut by the closing quote");
	same(bytesOf("\"", [0xE4, 0xB8], "\\n", [0x96], "\""), "bytes around an escape");
	const value = viaReader(bytesOf("\"a", [0xE4, 0xB8], "b\"")) as { ok: true; value: string };
	assert.equal(value.value, "a\uFFFDb");
	same(bytesOf("[", [0xC3, 0xA9], "]"), "UTF-8 outside a string");
	same(bytesOf("\"nul", [0x00], "\""), "a raw NUL in a string");
});

test("__proto__ is an own property and the last of duplicate keys wins", () => {
	const read = viaReader(text("{\"__proto__\":{\"polluted\":1},\"a\":1,\"a\":[2]}")) as { ok: true; value: Record<string, unknown> };
	const parsed = JSON.parse("{\"__proto__\":{\"polluted\":1},\"a\":1,\"a\":[2]}");
	assert.equal(Object.getPrototypeOf(read.value), Object.prototype);
	assert.deepEqual(Object.keys(read.value), Object.keys(parsed));
	assert.deepEqual(read.value.a, [2]);
	assert.equal(({} as Record<string, unknown>).polluted, undefined, "nothing leaked into Object.prototype");
});

test("value() builds a long or deep value piece by piece, as it parses a short shallow one", () => {
	// One value just under and one just over each bound: the same value as JSON.parse either way, and the reader past it.
	const member = "\"caf\u00e9 \ud83d\ude00\",";
	const items = (bytes: number) => "[" + member.repeat(Math.floor((bytes - 2) / member.length)).slice(0, -1) + "]";
	for (const json of [items(LLM_JSON_PARSE_MAX_BYTES - 40), items(LLM_JSON_PARSE_MAX_BYTES + 40)]) {
		const bytes = text(json + " 7");
		const r = new JsonReader().reset(bytes);
		assert.deepEqual(r.value(), JSON.parse(json));
		assert.equal(r.value(), 7, "the reader is past the value");
	}
	const nest = (n: number) => "{\"a\":".repeat(n - 1) + "[1]" + "}".repeat(n - 1);
	for (const json of [nest(LLM_JSON_PARSE_DEPTH_MAX), nest(LLM_JSON_PARSE_DEPTH_MAX + 1)]) same(text(json), `nesting ${json.length}`);
	// A short value that is not JSON gets the same error as a long one.
	const bad = text("{\"a\": [1, 2,]}");
	assert.throws(() => new JsonReader().reset(bad).value(), "an unexpected character", JsonSyntax);
	assert.throws(() => new JsonReader().reset(padded(bad)).value(), "an unexpected character", JsonSyntax);
});

test("nesting up to LLM_JSON_DEPTH_MAX is read; deeper is refused by value() and skip()", () => {
	const nest = (n: number) => text("[".repeat(n) + "]".repeat(n));
	assert.equal(viaReader(nest(LLM_JSON_DEPTH_MAX)).ok, true);
	assert.equal(skips(nest(LLM_JSON_DEPTH_MAX)), true);
	assert.equal(viaReader(nest(LLM_JSON_DEPTH_MAX + 1)).ok, false);
	assert.equal(skips(nest(LLM_JSON_DEPTH_MAX + 1)), false);
	assert.throws(() => reader.reset(nest(LLM_JSON_DEPTH_MAX + 1)).skip(), `nested more than ${LLM_JSON_DEPTH_MAX} levels deep`, JsonSyntax);
});

test("members are walked without strings: keys, kinds, positions, stringIs and numbers", () => {
	const r = new JsonReader().reset(text("{\"type\" : \"message_delta\", \"index\": 12, \"n\": -3.5e1, \"esc\": \"a\\u0062\", \"o\": {\"x\": [1]}}"));
	assert.ok(r.openObject());
	const seen: string[] = [];
	while (r.nextKey()) {
		seen.push(`${r.key()}:${r.kind()}`);
		if (r.keyIs(ascii("type"))) {
			assert.ok(r.stringIs(ascii("message_delta")));
			assert.ok(!r.stringIs(ascii("message_delt")));
			assert.ok(!r.stringIs(ascii("message_deltas")));
		}
		if (r.keyIs(ascii("esc"))) assert.ok(r.stringIs(ascii("ab")), "an escaped string compares by its value");
		if (r.keyIs(ascii("index"))) {
			assert.equal(r.number(), 12);
			continue;
		}
		if (r.keyIs(ascii("n"))) {
			const at = r.position;
			assert.equal(r.number(), -35);
			assert.equal(r.seek(at).number(), -35, "seek goes back to a noted value");
			continue;
		}
		r.skip();
	}
	r.end();
	assert.deepEqual(seen, [`type:${Kind.String}`, `index:${Kind.Number}`, `n:${Kind.Number}`, `esc:${Kind.String}`, `o:${Kind.Object}`]);
});

// Replies as the providers send them: the mutations start from these.
const SEEDS = [
	"{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Héllo \\ud83d\\ude00\",\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":{\\\"b\\\":[1,2.5e-3,null]}}\"}}]},\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"prompt_tokens_details\":{\"cached_tokens\":3}}}",
	"{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}",
	"{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"get\",\"input\":{\"deep\":[{\"x\":\"\\u00e9\\\"\"}]}}}",
	"[true,false,null,-0.0,1e-7,\"\\/\\b\\f\\n\\r\\t\",{\"\":{}}]",
];
const BYTES = [0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x20, 0x0A, 0x00, 0x30, 0x2D, 0x65, 0x75, 0x80, 0xBF, 0xC3, 0xE4, 0xED, 0xF0, 0xFF];

function mutate(bytes: Uint8Array, random: Random): Uint8Array {
	let out: Uint8Array = bytes.slice();
	const edits = 1 + random(4);
	for (let e = 0; e < edits; e++) {
		const at = random(out.length + 1);
		switch (random(5)) {
			case 0: if (at < out.length) out[at] = BYTES[random(BYTES.length)]; break;               // replace with a telling byte
			case 1: if (at < out.length) out[at] = random(256); break;                              // replace with any byte
			case 2: out = bytesOf(Array.from(out.subarray(0, at)), [BYTES[random(BYTES.length)]], Array.from(out.subarray(at))); break;
			case 3: out = bytesOf(Array.from(out.subarray(0, at)), Array.from(out.subarray(Math.min(out.length, at + 1 + random(4))))); break;
			default: out = out.slice(0, at); break;                                                     // truncate
		}
	}
	return out;
}

test("plainIs compares a string's bytes only when it has no escape, and never past the reader's end", () => {
	const r = new JsonReader();
	const text = encodeUtf8(`{"a":"gpt-4o","b":"gpt\\u002d4o","c":"","d":"gpt-4o-mini"}tail"`);
	const at = (key: string) => decodeUtf8(text).indexOf(`"${key}":`) + key.length + 3;
	r.reset(text, 0, decodeUtf8(text).indexOf("tail"));
	assert.ok(r.plainIs(at("a"), ascii("gpt-4o")));
	assert.ok(!r.plainIs(at("a"), ascii("gpt-4")), "a prefix is not the string");
	assert.ok(!r.plainIs(at("a"), ascii("gpt-4o-")), "nor a longer name");
	assert.ok(!r.plainIs(at("b"), ascii("gpt-4o")), "escapes: false even when it decodes to the name");
	assert.ok(r.seek(at("b")).stringIs(ascii("gpt-4o")));
	assert.ok(r.plainIs(at("c"), new Uint8Array(0)));
	assert.ok(!r.plainIs(at("c"), ascii("\"")), "a quote never matches");
	assert.ok(!r.plainIs(at("d"), ascii("gpt-4o")));
	assert.ok(!r.plainIs(-1, ascii("gpt-4o")), "no string");
	assert.ok(!r.plainIs(at("a") - 1, ascii(":\"gpt-4o")), "not at a quote");
	// A string cut by the reader's end is not read past it.
	const cut = encodeUtf8(`"abc"`);
	assert.ok(!r.reset(cut, 0, 4).plainIs(0, ascii("abc")));
	assert.ok(r.reset(cut, 0, 5).plainIs(0, ascii("abc")));
});

test("integerAt reads a noted number as number() does: one digit, several, a fraction, an exponent, a sign, at the end", () => {
	const r = new JsonReader();
	for (const text of ["7", "0", "75", "7.5", "7e1", "7E+1", "-7", "123456789", "1234567890123", "0.25", "9e-1"]) {
		for (const after of ["", "}", ",", " "]) {
			const bytes = encodeUtf8(text + after);
			assert.equal(r.reset(bytes).integerAt(0), JSON.parse(text), `${text}${after}`);
		}
	}
});

test("fuzz: mutated replies read as JSON.parse reads them, or both refuse", () => {
	const random = generator(SEED);
	let accepted = 0;
	for (let i = 0; i < ITERATIONS; i++) {
		const base = text(SEEDS[i % SEEDS.length]);
		const input = i < SEEDS.length ? base : mutate(base, random);
		const outcome = viaParse(input);
		if (outcome.ok) accepted++;
		same(input, `seed ${SEED} case ${i}`, i % 8 === 0);
	}
	assert.ok(accepted >= SEEDS.length, "some cases are still JSON");
}, 60_000);
