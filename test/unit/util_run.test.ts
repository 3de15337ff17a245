// util/run: values under close whole-number keys in one array.
import { assert, test } from "testing";
import { KeyedRun } from "util/run";

test("a run keeps values by key, counts them, and lets go of the old end", () => {
	const run = new KeyedRun<string | null>();
	assert.equal(run.get(5), undefined);
	run.set(10, "a");
	run.set(12, null);
	run.set(11, "b");
	assert.equal(run.size, 3);
	assert.equal(run.get(10), "a");
	assert.equal(run.get(12), null, "null is a value");
	assert.ok(run.has(12) && !run.has(13) && !run.has(9));
	run.set(7, "before");   // a key before the run moves it
	assert.deepEqual([7, 8, 9, 10, 11, 12].map((k) => run.get(k)), ["before", undefined, undefined, "a", "b", null]);
	assert.equal(run.size, 4);
	run.set(10, "again");
	assert.equal(run.size, 4, "setting a key again does not count it twice");
	run.dropBelow(11);
	assert.equal(run.size, 2);
	assert.equal(run.get(10), undefined);
	assert.equal(run.get(11), "b");
	run.dropBelow(100);
	assert.equal(run.size, 0);
	run.set(500, "fresh");
	assert.equal(run.get(500), "fresh", "an emptied run starts again at any key");
	assert.throws(() => run.set(501, undefined as unknown as string), "undefined is not a value", TypeError);
});

test("a run's view reads each key's value inline, and covers() says when a range has no gap", () => {
	const run = new KeyedRun<string | null>();
	assert.ok(run.covers(3, 3), "an empty range is covered");
	assert.ok(!run.covers(0, 1));
	for (let k = 20; k < 30; k++) run.set(k, `v${k}`);
	run.dropBelow(26);            // the ring's head moves
	for (let k = 30; k < 45; k++) run.set(k, k % 5 ? `v${k}` : null);   // and it wraps, then grows
	const view = run.view();
	assert.equal(view.lo, 26);
	assert.equal(view.hi, 45);
	for (let k = 26; k < 45; k++) assert.equal(view.items[(view.offset + k) & view.mask], run.get(k), `key ${k}`);
	assert.ok(run.covers(26, 45) && run.covers(30, 31), "null is a value");
	assert.ok(!run.covers(25, 30) && !run.covers(40, 46), "keys outside the run are not covered");
	const gaps = new KeyedRun<number>();
	gaps.set(1, 1);
	gaps.set(4, 4);
	assert.ok(gaps.covers(1, 2) && !gaps.covers(1, 5) && gaps.covers(4, 5), "a run with a gap is looked at key by key");
});
