// A seeded test module that fails on purpose, for test/e2e/seed.test.mjs: a
// failing test prints the file's seed and how to replay it, and --seed N
// replays the same input. Not a *.test.ts, so npm test's unit run leaves it out.
import { generator, seedFor } from "test/fuzz";
import { assert, test } from "testing";

const SEED = seedFor(0xF00D);

test("draws five numbers and fails", () => {
	const rand = generator(SEED);
	const drawn = [rand(1000), rand(1000), rand(1000), rand(1000), rand(1000)];
	trace(`drawn ${drawn.join(",")}\n`);
	assert.fail(`failed on purpose after ${drawn.join(",")}`);
});
