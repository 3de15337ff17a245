// tools/test-beside.mjs (npm run test:beside) itself, with stand-in commands for
// `npm test`: it runs the command N times in a row with a companion beside it the
// whole time (started again when it finishes), prints each run's node --test
// counts, and exits 1 when a run or a companion run fails.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../../tools/build.mjs";
import { runCommand } from "./xs.mjs";

const TOOL = join(ROOT, "tools", "test-beside.mjs");
const SUMMARY = (pass, fail) => `printf '# tests ${pass + fail}\\n# pass ${pass}\\n# fail ${fail}\\n# cancelled 0\\n# skipped 0\\n'`;

test("two passing runs, each beside a companion restarted when it ends: exit 0, one line per run with its counts", async () => {
	const result = await runCommand(process.execPath, [TOOL, "--runs", "2", "--command", `sleep 0.3; ${SUMMARY(5, 0)}`], { cwd: ROOT });
	assert.equal(result.code, 0, result.stdout + result.stderr);
	const runs = result.stdout.split("\n").filter((l) => /^run \d\/2 /.test(l));
	assert.equal(runs.length, 2, result.stdout);
	for (const line of runs) assert.match(line, /^run \d\/2 ok: pass 5, fail 0, cancelled 0, skipped 0 of 5; 0 min \d\d s; 1-min load average mean [\d.]+, max [\d.]+; companion run\(s\) \d+-\d+ beside it/);
	assert.match(result.stdout, /^test:beside: 2\/2 runs passed beside \d+ companion run\(s\) \(0 of those that finished failed\)/m);
});

test("a failing run, or a companion run failing on its own, makes it exit 1 and keep the logs", async () => {
	const failing = await runCommand(process.execPath, [TOOL, "--runs", "1", "--command", `${SUMMARY(4, 1)}; exit 1`], { cwd: ROOT });
	assert.equal(failing.code, 1, failing.stdout);
	assert.match(failing.stdout, /^run 1\/1 FAILED \(exit 1\): pass 4, fail 1/m);
	assert.match(failing.stdout, /^test:beside: the logs are kept in /m);
	// The companion's first run fails (the tool names each command's role), the run passes.
	const companion = await runCommand(process.execPath, [TOOL, "--runs", "1", "--command", `if [ "$XSCLAW_BESIDE_ROLE" = companion-1 ]; then ${SUMMARY(0, 1)}; exit 1; fi; sleep 0.5; ${SUMMARY(1, 0)}`], { cwd: ROOT });
	assert.equal(companion.code, 1, companion.stdout);
	assert.match(companion.stdout, /^ {2}companion run 1 FAILED/m);
	assert.match(companion.stdout, /^run 1\/1 ok:/m);
	assert.match(companion.stdout, /\(1 of those that finished failed\)/);
	for (const r of [failing, companion]) {
		const kept = /the logs are kept in (\S+)/.exec(r.stdout)[1];
		await runCommand("rm", ["-rf", kept]);
	}
});

test("--runs must be a whole number of at least 1", async () => {
	const result = await runCommand(process.execPath, [TOOL, "--runs", "0"], { cwd: ROOT });
	assert.equal(result.code, 64);
	assert.match(result.stderr, /--runs takes a whole number of at least 1 \(got 0\)/);
});
