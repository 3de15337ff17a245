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
