// The engine and the host basics: modules, timers, promises, heap figures.
import Timer from "timer";
import Instrumentation from "instrumentation";
import { heap, now, option } from "host/platform";
import { assert, test } from "testing";

test("a timer fires after its delay and passes itself to the callback", async () => {
	const start = now();
	const fired = await new Promise<unknown>((resolve) => {
		const t = Timer.set((self: unknown) => resolve(self === t), 20);
	});
	assert.equal(fired, true);
	assert.ok(now() - start >= 19, "fired too early");
});

test("a repeating timer repeats until cleared", async () => {
	let count = 0;
	await new Promise<void>((resolve) => {
		const t = Timer.repeat(() => {
			if (++count === 3) {
				Timer.clear(t);
				resolve();
			}
		}, 5);
	});
	assert.equal(count, 3);
});

test("a cleared timer never fires", async () => {
	let fired = false;
	const t = Timer.set(() => { fired = true; }, 5);
	Timer.clear(t);
	await new Promise((resolve) => Timer.set(resolve, 30));
	assert.equal(fired, false);
});

test("a timer weeks away (or at Infinity) does not hold back the others", async () => {
	// Past poll()'s int milliseconds: the host once waited forever for it.
	const far = Timer.set(() => {}, 30 * 24 * 3600 * 1000);
	const never = Timer.set(() => {}, Infinity);
	// Held back, the 5 ms timer would never fire: the test's own timeout fails it.
	let fired = false;
	await new Promise((resolve) => Timer.set(() => { fired = true; resolve(undefined); }, 5));
	assert.ok(fired);
	Timer.clear(far);
	Timer.clear(never);
});

test("Timer rejects a non-function callback and a bad interval", () => {
	assert.throws(() => Timer.set(42 as any, 1), "callback must be a function", TypeError);
	assert.throws(() => Timer.set(() => {}, -1), "invalid interval", RangeError);
	assert.throws(() => Timer.schedule({} as any, 1), "expected a timer", TypeError);
});

test("heap figures report chunk and slot use within capacity", () => {
	const h = heap();
	assert.ok(h.chunkUsed > 0 && h.chunkUsed <= h.chunkSize, "chunk used within size");
	assert.ok(h.slotUsed > 0 && h.slotUsed <= h.slotSize, "slot used within size");
	assert.ok(h.chunkPeak >= h.chunkUsed && h.slotPeak >= h.slotUsed, "peaks cover use");
});

test("command-line options reach the program", () => {
	assert.equal(option("test"), "test/unit/engine.test");
	assert.equal(option("no-such-option"), undefined);
});

test("ES2022 features run: classes with private fields, async iteration, at()", async () => {
	class Box { #v = 2; get v() { return this.#v; } }
	const seen: number[] = [];
	async function* gen() { yield 1; yield 2; }
	for await (const x of gen()) seen.push(x);
	assert.deepEqual(seen, [1, 2]);
	assert.equal(new Box().v, 2);
	assert.equal([1, 2, 3].at(-1), 3);
});

test("instrumentation maps Moddable's names to the host's heap and socket figures", () => {
	const h = heap();
	const used = Instrumentation.get(Instrumentation.map("XS Chunk Heap Used"));
	assert.equal(typeof used, "number");
	assert.ok(Math.abs((used as number) - h.chunkUsed) < 64 * 1024, "chunk use close to host/platform's figure");
	assert.equal(Instrumentation.get(Instrumentation.map("Network Sockets")), h.sockets);
	assert.equal(Instrumentation.name(Instrumentation.map("XS Slot Heap Used")), "XS Slot Heap Used");
	assert.equal(Instrumentation.map("Pixels Drawn"), undefined, "a figure the host does not keep");
	assert.equal(Instrumentation.get(0), undefined);
	assert.equal(Instrumentation.get(99), undefined);
});

// The lin host builds XS's xsDataView.c with a copy of the same type done as one
// memcpy (hosts/lin/Makefile): these are the cases that copy takes, and the
// element-by-element conversions beside it.
test("a typed array set from another of its type copies every value at the offset", () => {
	const source = new Uint8Array([1, 2, 3, 250, 255]);
	const target = new Uint8Array(8).fill(9);
	target.set(source, 2);
	assert.equal(Array.from(target).join(), "9,9,1,2,3,250,255,9");
	const wide = new Int16Array([-2, 300, -32768]);
	const into = new Int16Array(4);
	into.set(wide, 1);
	assert.equal(Array.from(into).join(), "0,-2,300,-32768");
	const floats = new Float64Array([0.1, -0, Infinity, NaN]);
	const copy = new Float64Array(4);
	copy.set(floats);
	assert.ok(copy[0] === 0.1 && Object.is(copy[1], -0) && copy[2] === Infinity && Number.isNaN(copy[3]), "float values kept");
	assert.throws(() => target.set(source, 4), "invalid offset", RangeError);
	source[0] = 77;
	assert.equal(target[2], 1, "a copy, not a view");
});

test("a typed array set from an overlapping view of its own buffer copies what was there", () => {
	const bytes = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]);
	bytes.set(bytes.subarray(0, 6), 2);   // forward over itself
	assert.equal(Array.from(bytes).join(), "0,1,0,1,2,3,4,5");
	const again = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]);
	again.set(again.subarray(2, 8), 0);   // backward over itself
	assert.equal(Array.from(again).join(), "2,3,4,5,6,7,6,7");
	const words = new Uint16Array([1, 2, 3, 4]);
	words.set(new Uint16Array(words.buffer, 2, 2), 2);
	assert.equal(Array.from(words).join(), "1,2,2,3");
});

test("a typed array made from another of its type is a copy; other types still convert", () => {
	const source = new Uint32Array([1, 0xffffffff, 65536]);
	const made = new Uint32Array(source);
	assert.equal(Array.from(made).join(), "1,4294967295,65536");
	source[1] = 5;
	assert.equal(made[1], 0xffffffff, "a copy, not a view");
	assert.equal(Array.from(new Uint8Array(new Int16Array([-1, 256, 257]))).join(), "255,0,1");
	assert.equal(Array.from(new Uint8ClampedArray(new Int16Array([-5, 300]))).join(), "0,255");
	const clamped = new Uint8ClampedArray(2);
	clamped.set(new Float32Array([1.5, 400]));
	assert.equal(Array.from(clamped).join(), "2,255");
	const narrow = new Int8Array(2);
	narrow.set(new Uint8Array([200, 5]));
	assert.equal(Array.from(narrow).join(), "-56,5");
});
