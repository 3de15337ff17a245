// The tests' one seeded generator (test/lib/random.ts): every seeded test draws
// from it through test/fuzz (XS) or test/e2e/proof.mjs (Node); a failing XS test
// prints its file's seed and how to replay it; --seed N replays the same input;
// a bad seed is refused; no test keeps a generator of its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { BUILD, ROOT, TEST_MAP } from "../../tools/build.mjs";
import { runHost, withTempDir } from "./xs.mjs";

const { parseSeed, random } = await import(pathToFileURL(join(BUILD, "js", "test", "lib", "random.js")).href);

const run = (data, ...more) => runHost(["--modules", TEST_MAP, "--main", "test/run", "--test", "test/unit/seeded_fails", "--data", data, ...more]);
const drawn = (stderr) => /^drawn ([0-9,]+)$/m.exec(stderr)?.[1];

test("a failing seeded test prints its seed and how to replay it; --seed N draws the same numbers again, and as Node's copy does", withTempDir("xsclaw-seed-")(async (data) => {
	const plain = await run(data);
	assert.equal(plain.code, 1, plain.stderr);
	assert.match(plain.stderr, /^not ok draws five numbers and fails # AssertionError: failed on purpose .* \(seed 61453: replay with --seed 61453\)$/m);
	const first = await run(data, "--seed", "42"), again = await run(data, "--seed", "42");
	assert.match(first.stderr, /\(seed 42: replay with --seed 42\)$/m);
	assert.ok(drawn(first.stderr) && drawn(first.stderr) === drawn(again.stderr), "the same seed, the same numbers");
	assert.notEqual(drawn(first.stderr), drawn(plain.stderr), "another seed, other numbers");
	const node = random(42);
	assert.equal(drawn(first.stderr), Array.from({ length: 5 }, () => node(1000)).join(","), "XS and Node draw the same sequence");
}));

test("a seed that is not a whole number is refused with the reason, and nothing runs", withTempDir("xsclaw-seed-")(async (data) => {
	for (const bad of ["abc", "-1", "1.5", "1e3"]) {
		const result = await run(data, "--seed", bad);
		assert.notEqual(result.code, 0);
		assert.ok(result.stderr.includes(`--seed ${bad}: a seed is a whole number`), result.stderr);
		assert.equal(drawn(result.stderr), undefined);
	}
	assert.throws(() => parseSeed("x", "PROOF_SEED"), /PROOF_SEED x: a seed is a whole number/);
	assert.throws(() => random(-1), /a seed is a whole number/);
}));

test("neighbouring seeds start apart: the first draw of seeds 1..400 covers [0, 8)", () => {
	const firsts = new Set(Array.from({ length: 400 }, (_, i) => random(i + 1)(8)));
	assert.equal(firsts.size, 8);
	const r = random(7);
	for (let i = 0; i < 10_000; i++) {
		const x = r.next();
		assert.ok(x >= 0 && x < 1);
	}
});

test("no test keeps a generator of its own: the linear congruential, Park-Miller and mulberry constants and Math.random appear only in test/lib/random.ts", () => {
	const own = /\b(1103515245|48271|16807|0x6d2b79f5)\b|Math\.random\s*\(/;
	const offenders = [];
	const walk = (dir) => {
		for (const name of readdirSync(dir)) {
			const path = join(dir, name);
			if (statSync(path).isDirectory()) walk(path);
			else if (/\.(ts|mjs|js)$/.test(name) && path !== join(ROOT, "test", "lib", "random.ts") && path !== join(ROOT, "test", "e2e", "seed.test.mjs")) {
				readFileSync(path, "utf8").split("\n").forEach((line, i) => {
					if (own.test(line) && !/^\s*(\/\/|\*|\/\*)/.test(line)) offenders.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
				});
			}
		}
	};
	walk(join(ROOT, "test"));
	assert.deepEqual(offenders, []);
});
