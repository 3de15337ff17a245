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
