// embedded:storage/key-value on the lin host (hosts/lin/src/keyvalue.c):
// typed values, iteration, NVS limits, modes and formats, argument and
// receiver checks, and the shapes typings/lin/storage.d.ts declares.
// Persistence across restarts, corrupt files and power loss are tested from
// node in test/e2e/storage.test.mjs. Each test uses namespaces of its own.
import keyValue from "embedded:storage/key-value";
import type { KeyValueStore } from "embedded:storage/key-value";
import { assert, test } from "testing";

// The C limits (KV_NAME_MAX_BYTES, KV_VALUE_MAX_BYTES, KV_NAMESPACE_MAX_BYTES).
const NAME_MAX = 15, VALUE_MAX = 4000;

function open(path: string, format: "buffer" | "string" = "buffer"): KeyValueStore {
	return keyValue.open({ path, mode: "r+", format });
}

test("a buffer value reads back as a copy of what was written", () => {
	const store = open("buffers");
	const value = new Uint8Array([1, 2, 3, 250]);
	store.write("blob", value);
	value[0] = 9;
	const read = store.read("blob");
	assert.ok(read instanceof ArrayBuffer, "an ArrayBuffer");
	assert.deepEqual(new Uint8Array(read as ArrayBuffer), new Uint8Array([1, 2, 3, 250]));
	store.write("view", new DataView(new Uint8Array([7, 8, 9]).buffer, 1, 2));
	assert.deepEqual(new Uint8Array(store.read("view") as ArrayBuffer), new Uint8Array([8, 9]));
	store.write("empty", new ArrayBuffer(0));
	assert.equal((store.read("empty") as ArrayBuffer).byteLength, 0);
	store.close();
});

test("a string reads back in format \"string\"; the other format is a TypeError, as NVS types are", () => {
	const store = open("strings", "string");
	store.write("greeting", "héllo wörld ✓ \u0000 end");
	assert.equal(store.read("greeting"), "héllo wörld ✓ \u0000 end");
	store.format = "buffer";
	assert.throws(() => store.read("greeting"), "key-value: \"greeting\" holds a string; set format to \"string\" to read it", TypeError);
	store.write("raw", new Uint8Array([1]));
	store.format = "string";
	assert.throws(() => store.read("raw"), "\"raw\" holds a buffer", TypeError);
	store.close();
});

test("overwriting a key replaces its value and its type", () => {
	const store = open("overwrite", "string");
	store.write("k", "first");
	store.write("k", "second, longer");
	assert.equal(store.read("k"), "second, longer");
	store.format = "buffer";
	store.write("k", new Uint8Array([5]));
	assert.deepEqual(new Uint8Array(store.read("k") as ArrayBuffer), new Uint8Array([5]));
	assert.deepEqual([...store], ["k"]);
	store.close();
});

test("a missing key reads undefined; delete removes a key and ignores a missing one", () => {
	const store = open("deletes", "string");
	assert.equal(store.read("nothing"), undefined);
	store.write("a", "1");
	store.write("b", "2");
	assert.equal(store.delete("a"), undefined);
	assert.equal(store.read("a"), undefined);
	assert.equal(store.read("b"), "2");
	store.delete("a");
	store.delete("never");
	assert.deepEqual([...store], ["b"]);
	store.close();
});

test("iteration yields the keys sorted, as a snapshot taken when it starts", () => {
	const store = open("iterate", "string");
	assert.deepEqual([...store], []);
	for (const key of ["zeta", "alpha", "mid", "Beta"]) store.write(key, key);
	const keys: string[] = [];
	for (const key of store) {
		keys.push(key);
		store.delete(key);
	}
	assert.deepEqual(keys, ["Beta", "alpha", "mid", "zeta"]);
	assert.deepEqual([...store], []);
	store.close();
});

test("two stores on one namespace see each other's writes; namespaces are separate", () => {
	const one = open("shared", "string");
	const two = open("shared", "string");
	const other = open("other", "string");
	one.write("x", "from one");
	two.write("y", "from two");
	assert.equal(two.read("x"), "from one");
	assert.equal(one.read("y"), "from two");
	assert.deepEqual([...one], ["x", "y"]);
	assert.equal(other.read("x"), undefined);
	one.close();
	two.close();
	other.close();
});

test("read into a buffer returns the length; a buffer too small is a RangeError", () => {
	const store = open("into");
	store.write("v", new Uint8Array([4, 5, 6]));
	const buffer = new Uint8Array(5);
	assert.equal(store.read("v", buffer), 3);
	assert.deepEqual(buffer, new Uint8Array([4, 5, 6, 0, 0]));
	assert.equal(store.read("missing", buffer), undefined);
	assert.throws(() => store.read("v", new Uint8Array(2)), "key-value: buffer too small for \"v\"", RangeError);
	assert.throws(() => store.read("v", "nope" as any), "key-value: expected a buffer", TypeError);
	store.format = "string";
	assert.throws(() => store.read("v", buffer), "key-value: reading into a buffer needs format \"buffer\"", TypeError);
	store.close();
});

test("NVS limits: keys of 15 bytes and values of 4000 bytes fit, one more is refused", () => {
	const store = open("limits");
	store.write("k".repeat(NAME_MAX), new Uint8Array(VALUE_MAX));
	assert.equal((store.read("k".repeat(NAME_MAX)) as ArrayBuffer).byteLength, VALUE_MAX);
	assert.throws(() => store.write("k".repeat(NAME_MAX + 1), new Uint8Array(1)), "key-value: key \"kkkkkkkkkkkkkkkk\" is too long (at most 15 bytes, as NVS)", RangeError);
	assert.throws(() => store.write("é".repeat(8), new Uint8Array(1)), "too long", RangeError);
	assert.throws(() => store.write("big", new Uint8Array(VALUE_MAX + 1)), "key-value: value of \"big\" is too large (4001 bytes; at most 4000)", RangeError);
	store.format = "string";
	store.write("text", "s".repeat(VALUE_MAX - 1));
	assert.throws(() => store.write("text", "s".repeat(VALUE_MAX)), "strings at most 3999", RangeError);
	assert.throws(() => store.write("", "x"), "key-value: key must not be empty", RangeError);
	assert.throws(() => store.write("a\u0000b", "x"), "key-value: key must not contain NUL", RangeError);
	store.close();
});

test("a namespace holds at most 24 KiB; past that a write is refused and nothing changes", () => {
	const store = open("full");
	let written = 0;
	assert.throws(() => {
		for (; written < 10; written++) store.write(`v${written}`, new Uint8Array(VALUE_MAX));
	}, "key-value: namespace \"full\" is full (24576 bytes at most); delete keys it no longer needs", RangeError);
	assert.equal(written, 6, "six 4000-byte values fit in 24576 bytes");
	assert.equal([...store].length, 6);
	store.delete("v0");
	store.write("v6", new Uint8Array(VALUE_MAX));
	store.close();
});

test("namespace names: 1-15 safe characters, a trailing slash as the SDK allows", () => {
	const ok = keyValue.open({ path: "n".repeat(NAME_MAX) });
	ok.close();
	const slash = keyValue.open({ path: "slashed/", format: "string" });
	slash.write("a", "b");
	slash.close();
	const same = keyValue.open({ path: "slashed", format: "string" });
	assert.equal(same.read("a"), "b");
	same.close();
	for (const path of ["n".repeat(NAME_MAX + 1), "", "a/b", "..", ".hidden", "sp ace", "/abs"])
		assert.throws(() => keyValue.open({ path }), "key-value: invalid namespace", RangeError);
});

test("mode \"r\": a missing namespace is not found; writes and deletes are refused, reads work", () => {
	assert.throws(() => keyValue.open({ path: "absent", mode: "r" }), "key-value: namespace \"absent\" not found", Error);
	const writer = open("readonly", "string");
	writer.write("k", "v");
	writer.close();
	const reader = keyValue.open({ path: "readonly", mode: "r", format: "string" });
	assert.equal(reader.read("k"), "v");
	assert.throws(() => reader.write("k", "w"), "key-value: namespace \"readonly\" is open read-only (mode \"r\"); open it with mode \"r+\" to change it");
	assert.throws(() => reader.delete("k"), "read-only");
	assert.deepEqual([...reader], ["k"]);
	reader.close();
});

test("options and formats are checked with specific errors", () => {
	const k = keyValue as any;
	assert.throws(() => k.open(), "key-value: open needs an options object {path}", TypeError);
	assert.throws(() => k.open("config"), "key-value: open needs an options object", TypeError);
	assert.throws(() => k.open({}), "key-value: path required (the namespace)", TypeError);
	assert.throws(() => k.open({ path: 3 }), "key-value: path must be a string", TypeError);
	assert.throws(() => k.open({ path: "ok", mode: "rw" }), "key-value: invalid mode \"rw\" (use \"r\" or \"r+\")", RangeError);
	assert.throws(() => k.open({ path: "ok", mode: 1 }), "key-value: mode must be a string", TypeError);
	assert.throws(() => k.open({ path: "ok", format: "uint8" }), "key-value: unsupported format \"uint8\" (use \"buffer\" or \"string\")", RangeError);
	const store = open("formats") as any;
	assert.equal(store.format, "buffer");
	assert.throws(() => { store.format = "number"; }, "unsupported format", RangeError);
	assert.throws(() => { store.format = 1; }, "key-value: format must be a string", TypeError);
	assert.equal(store.format, "buffer");
	assert.throws(() => store.write("k"), "key-value: value required", TypeError);
	assert.throws(() => store.write("k", "text"), "key-value: value must be a buffer (format is \"buffer\"; set it to \"string\" for strings)", TypeError);
	assert.throws(() => store.write("k", 5), "key-value: expected a buffer", TypeError);
	assert.throws(() => store.write(5, new Uint8Array(1)), "key-value: key must be a string", TypeError);
	assert.throws(() => store.read(), "key-value: key must be a string", TypeError);
	assert.throws(() => store.delete(null), "key-value: key must be a string", TypeError);
	store.format = "string";
	assert.throws(() => store.write("k", new Uint8Array(1)), "key-value: value must be a string (format is \"string\")", TypeError);
	store.close();
});

test("every method refuses a wrong receiver; a closed store throws \"closed\"; close is idempotent", () => {
	const store = open("receivers");
	const s = store as any;
	const prototype = Object.getPrototypeOf(store);
	const getFormat = Object.getOwnPropertyDescriptor(prototype, "format")!.get!;
	const setFormat = Object.getOwnPropertyDescriptor(prototype, "format")!.set!;
	const methods: Function[] = [s.read, s.write, s.delete, s.close, s[Symbol.iterator], getFormat];
	for (const method of methods)
		for (const receiver of [{}, keyValue, undefined, 1]) {
			assert.throws(() => method.call(receiver, "k", new Uint8Array(1)), "key-value: invalid receiver", TypeError);
			assert.throws(() => method.call(receiver), "key-value: invalid receiver", TypeError);
		}
	assert.throws(() => setFormat.call({}, "string"), "key-value: invalid receiver", TypeError);
	store.close();
	store.close();
	assert.throws(() => store.read("k"), "key-value: closed");
	assert.throws(() => store.write("k", new Uint8Array(1)), "key-value: closed");
	assert.throws(() => store.delete("k"), "key-value: closed");
	assert.throws(() => [...store], "key-value: closed");
	assert.throws(() => store.format, "key-value: closed");
	assert.throws(() => new (prototype.constructor)({ path: "x" }), "key-value: use keyValue.open({path})", TypeError);
});

test("the shapes match typings/lin/storage.d.ts", () => {
	assert.ok(Object.isFrozen(keyValue), "the module object is frozen, as the SDK's");
	assert.deepEqual(Object.keys(keyValue), [], "open is its only, non-enumerable, member");
	assert.equal(typeof keyValue.open, "function");
	const store = open("shapes", "string");
	assert.equal(store.write("k", "v"), undefined);
	assert.equal(typeof store.read("k"), "string");
	assert.equal(store.read("none"), undefined);
	assert.equal(store.delete("k"), undefined);
	const iterator = store[Symbol.iterator]();
	assert.equal(typeof iterator.next, "function");
	assert.equal(store.close(), undefined);
});
