// tools/session-inspect.mjs on a session a power loss left behind: it reports
// what open() would repair, prints the records, and changes nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, TEST_MAP } from "../../tools/build.mjs";
import { runHost, withTempDir } from "./xs.mjs";

const withData = withTempDir("xsclaw-inspect-");
const inspect = (...args) => spawnSync(process.execPath, [join(ROOT, "tools", "session-inspect.mjs"), ...args], { encoding: "utf8" });
const snapshot = (dir) => Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name)).toString("hex")]));

test("session-inspect reports a torn record and a stale index after a power loss, prints the records, and writes nothing", withData(async (data) => {
	// The power loss tears (seed 3) a data-file write after the 100th operation: the first of them that
	// leaves whole records of its batch before the torn one (so the index, written after the data, lists
	// fewer records than the data holds). Found from a counted clean run, so the test does not depend on
	// how many operations come before it; at most 8 candidates are tried.
	const clean = await runHost(["--modules", TEST_MAP, "--main", "test/peer/store_powerloss", "--data", join(data, "clean"), "--step", "run", "--count-writes", "1"]);
	const dataWrites = [...clean.stderr.matchAll(/^OP (\d+) write \S+\.dat$/gm)].map((m) => Number(m[1])).filter((n) => n > 100).slice(0, 8);
	assert.ok(dataWrites.length, clean.stderr.slice(-500));
	let out, dir, before;
	for (const [i, dataWrite] of dataWrites.entries()) {
		const at = join(data, `crash${i}`);
		const r = await runHost(["--modules", TEST_MAP, "--main", "test/peer/store_powerloss", "--data", at, "--step", "run", "--crash-after", String(dataWrite - 1), "--crash-seed", "3"]);
		assert.equal(r.code, 86, r.stderr.slice(-500));
		dir = join(at, "files", "sessions");
		before = snapshot(dir);
		out = inspect(at, "--records", "3");
		if (/finding: the index lists/.test(out.stdout)) break;
	}
	assert.equal(out.status, 1, out.stdout + out.stderr);
	assert.match(out.stdout, /^session \w+: \d+ bytes, \d+ intact records, generation \d+$/m);
	assert.match(out.stdout, /finding: a record torn by a power loss: \d+ bytes at offset \d+ \(open\(\) cuts them\)/);
	assert.match(out.stdout, /finding: the index lists \d+ records, the data file holds \d+ \(open\(\) rebuilds the index\)/);
	assert.equal((out.stdout.match(/^ {2}#\d+ /gm) ?? []).length, 3, "the newest 3 records");
	assert.match(out.stdout, /2 finding\(s\): the firmware repairs them when it opens the session\n$/);
	assert.deepEqual(snapshot(dir), before, "the inspector only reads");
}));

test("session-inspect on a clean session says so and exits 0; an unknown session or directory exits 2 with a hint", withData(async (data) => {
	const r = await runHost(["--modules", TEST_MAP, "--main", "test/peer/store_powerloss", "--data", data, "--step", "run"]);
	assert.equal(r.code, 0, r.stderr.slice(-500));
	const clean = inspect(data, "--records", "0");
	assert.equal(clean.status, 0, clean.stdout);
	assert.match(clean.stdout, /files are consistent\n[^]*no findings\n$/);
	const missing = inspect(data, "--session", "nope");
	assert.equal(missing.status, 2);
	assert.match(missing.stdout, /^no session nope; sessions here: \w+\n$/);
	const empty = inspect(join(data, "elsewhere"));
	assert.equal(empty.status, 2);
	assert.match(empty.stdout, /no sessions\/ directory in this storage/);
}));
