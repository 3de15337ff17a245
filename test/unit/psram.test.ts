// The "psram" module on the lin host (hosts/lin/src/buffers.c): host buffers
// counted against the emulated "psram" and "internal" pools.
import { allocate, free, resize, resetPeak, stats, type Pool } from "psram";
import { collectGarbage, option } from "host/platform";
import { INTERNAL_RAM_BYTES, PSRAM_BYTES } from "budgets";
import { assert, test } from "testing";

const native = __xsclaw.Psram;
const KIB = 1024;

function used(pool: Pool): number {
	return stats()[pool].used;
}

test("pool sizes are the budgets unless --psram-bytes / --internal-bytes say otherwise", () => {
	const s = stats();
	assert.equal(s.psram.size, Number(option("psram-bytes") ?? PSRAM_BYTES));
	assert.equal(s.internal.size, Number(option("internal-bytes") ?? INTERNAL_RAM_BYTES));
});

test("stats() has exactly the declared shape", () => {
	const s = stats();
	assert.deepEqual(Object.keys(s).sort(), ["internal", "psram"]);
	for (const pool of ["psram", "internal"] as const) {
		assert.deepEqual(Object.keys(s[pool]).sort(), ["count", "fallbacks", "peak", "size", "used"]);
		for (const value of Object.values(s[pool])) assert.equal(typeof value, "number");
	}
});

test("an allocation lands in the named pool only, and free returns it to its starting level", () => {
	const before = stats();
	const buffer = allocate(64 * KIB, "psram");
	const during = stats();
	assert.equal(during.psram.used, before.psram.used + 64 * KIB);
	assert.equal(during.psram.count, before.psram.count + 1);
	assert.equal(during.internal.used, before.internal.used, "internal untouched");
	const small = allocate(100, "internal");
	assert.equal(used("internal"), before.internal.used + 100);
	free(buffer);
	free(small);
	const after = stats();
	assert.equal(after.psram.used, before.psram.used);
	assert.equal(after.psram.count, before.psram.count);
	assert.equal(after.internal.used, before.internal.used);
});

test("a buffer is zero-filled and viewable with Uint8Array and DataView; byteLength works", () => {
	const buffer = allocate(16, "internal");
	assert.equal(buffer.byteLength, 16);
	const bytes = new Uint8Array(buffer);
	assert.equal(bytes.length, 16);
	assert.ok(bytes.every((b) => b === 0), "zero-filled");
	bytes.set([1, 2, 3, 4], 0);
	const view = new DataView(buffer);
	assert.equal(view.getUint32(0), 0x01020304);
	view.setUint16(14, 0xBEEF);
	assert.equal(bytes[14], 0xBE);
	assert.equal(new Uint8Array(buffer, 2, 2)[1], 4, "offset views work");
	free(buffer);
});

test("a freed buffer is detached: length 0, DataView access throws, views see nothing", () => {
	const buffer = allocate(8, "psram");
	const bytes = new Uint8Array(buffer);
	const view = new DataView(buffer);
	bytes[0] = 7;
	free(buffer);
	assert.equal(buffer.byteLength, 0);
	assert.equal(bytes.length, 0);
	assert.equal(bytes[0], undefined);
	assert.throws(() => view.getUint8(0), "detached", TypeError);
	free(buffer); // twice is harmless
	assert.throws(() => resize(buffer, 4), "psram: the buffer was freed", TypeError);
});

test("peak follows the highest use and resetPeak brings it down to the current use", () => {
	resetPeak();
	const start = stats().psram;
	assert.equal(start.peak, start.used);
	const a = allocate(100 * KIB, "psram");
	free(a);
	const b = allocate(10 * KIB, "psram");
	assert.equal(stats().psram.peak, start.used + 100 * KIB);
	resetPeak();
	assert.equal(stats().psram.peak, start.used + 10 * KIB);
	free(b);
});

test("exhausting a pool throws the specific RangeError and leaves the pool unchanged", () => {
	const before = stats();
	const free_ = before.internal.size - before.internal.used;
	assert.throws(() => allocate(free_ + 1, "internal"),
		`psram: internal pool exhausted: asked ${free_ + 1} bytes, ${free_} free`, RangeError);
	assert.throws(() => allocate(before.psram.size + 1, "psram"), "psram: psram pool exhausted", RangeError);
	const whole = allocate(free_, "internal");
	assert.throws(() => allocate(1, "internal"), "asked 1 bytes, 0 free", RangeError);
	free(whole);
	const after = stats();
	assert.deepEqual([after.internal.used, after.internal.count, after.psram.used, after.psram.count],
		[before.internal.used, before.internal.count, before.psram.used, before.psram.count]);
});

test("resize keeps the content, zero-fills growth, is counted, and stale views stay in bounds", () => {
	const before = used("psram");
	const buffer = allocate(4, "psram");
	const old = new Uint8Array(buffer);
	old.set([9, 8, 7, 6]);
	resize(buffer, 1000);
	assert.equal(buffer.byteLength, 1000);
	assert.equal(used("psram"), before + 1000);
	const grown = new Uint8Array(buffer);
	assert.deepEqual(Array.from(grown.subarray(0, 6)), [9, 8, 7, 6, 0, 0]);
	resize(buffer, 2);
	assert.equal(used("psram"), before + 2);
	assert.equal(grown.length, 2, "a length-tracking view shrinks with the buffer");
	assert.throws(() => new DataView(buffer).getUint8(2), undefined, RangeError);
	assert.equal(new Uint8Array(buffer)[1], 8);
	const rest = stats().psram.size - used("psram");
	assert.throws(() => resize(buffer, rest + 3), "psram: psram pool exhausted", RangeError);
	assert.equal(buffer.byteLength, 2, "a refused resize changes nothing");
	free(buffer);
	assert.equal(used("psram"), before);
});

test("the garbage collector releases an unreferenced buffer", () => {
	const before = stats().internal;
	(function drop() {
		for (let i = 0; i < 4; i++) allocate(KIB, "internal");
	})();
	assert.equal(stats().internal.count, before.count + 4);
	collectGarbage();
	assert.equal(stats().internal.used, before.used);
	assert.equal(stats().internal.count, before.count);
});

test("bad arguments throw specific errors", () => {
	assert.throws(() => allocate(-1, "psram"), "psram: invalid byteLength", RangeError);
	assert.throws(() => allocate(1.5, "psram"), "psram: invalid byteLength", RangeError);
	assert.throws(() => allocate(NaN, "psram"), "psram: invalid byteLength", RangeError);
	assert.throws(() => allocate(2 ** 31, "psram"), "psram: invalid byteLength", RangeError);
	assert.throws(() => allocate("8" as any, "psram"), "psram: byteLength must be a number", TypeError);
	assert.throws(() => allocate(8, "spiram" as any), 'psram: unknown pool "spiram"', RangeError);
	assert.throws(() => allocate(8, undefined as any), "psram: pool must be", TypeError);
	assert.throws(() => free(new ArrayBuffer(8) as any), "psram: expected a buffer from allocate()", TypeError);
	assert.throws(() => free(undefined as any), "psram: expected a buffer from allocate()", TypeError);
	assert.throws(() => resize({} as any, 8), "psram: expected a buffer from allocate()", TypeError);
	const buffer = allocate(8, "internal");
	assert.throws(() => resize(buffer, -1), "psram: invalid byteLength", RangeError);
	free(buffer);
});

test("byteLength with a wrong receiver throws", () => {
	const getter = Object.getOwnPropertyDescriptor(native.Buffer.prototype, "byteLength")!.get!;
	assert.throws(() => getter.call({}), "psram buffer: invalid receiver", TypeError);
	assert.throws(() => getter.call(new ArrayBuffer(4)), "psram buffer: invalid receiver", TypeError);
});

test("a buffer fills a pool exactly to its size", () => {
	const rest = stats().internal.size - used("internal");
	const buffer = allocate(rest, "internal");
	assert.equal(used("internal"), stats().internal.size);
	new Uint8Array(buffer)[rest - 1] = 1; // the last byte is really there (ASan checks)
	free(buffer);
});
