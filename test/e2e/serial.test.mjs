// The console on embedded:io/serial (hosts/lin/src/serial.c), driven through
// stdin/stdout with test/peer/serial.ts as the program: echo, end of input,
// reboot keeping unread input, long input read fast and slow, close, and stdin
// as /dev/null or a terminal (held in character mode while the Serial is open).
import { test } from "node:test";
import assert from "node:assert/strict";
import { TEST_MAP } from "../../tools/build.mjs";
import { CHARACTER_MODE, mode, runOnPty, see, signal, type } from "./pty.mjs";
import { SANITIZER_ERROR, VARIANTS, assertClean, runHost } from "./xs.mjs";

const PEER = ["--modules", TEST_MAP, "--main", "test/peer/serial"];
// A bound for a hang (each run takes well under a second when the machine is idle).
const TIMEOUT_MS = 120_000;

function lines(text) {
	return text.split("\n").filter(Boolean);
}

// Failure messages carry the last 2000 characters of stderr.
const STDERR_TAIL = 2000;

for (const variant of VARIANTS) {
	test(`serial echoes piped lines and reports the end of input once, then exits 0 [${variant}]`, async () => {
		const result = await runHost(PEER, { variant, input: "one\ntwo\nthree\n", timeoutMs: TIMEOUT_MS });
		assertClean(result, STDERR_TAIL);
		assert.deepEqual(lines(result.stdout), ["boot", "line: one", "line: two", "line: three", "end: end of input"]);
	});

	test(`serial keeps unread input across a reboot: the next machine reads the rest [${variant}]`, async () => {
		const result = await runHost([...PEER, "--reboot", "yes"], { variant, input: "a\nreboot\nb\nc\n", timeoutMs: TIMEOUT_MS });
		assertClean(result, STDERR_TAIL);
		assert.deepEqual(lines(result.stdout), ["boot", "line: a", "line: reboot", "boot", "line: b", "line: c", "end: end of input"]);
	});

	test(`serial passes input far larger than its buffer, in order [${variant}]`, async () => {
		const sent = Array.from({ length: 3000 }, (_, i) => `line number ${i} ${"x".repeat(i % 50)}`);
		const result = await runHost(PEER, { variant, input: sent.join("\n") + "\n", timeoutMs: TIMEOUT_MS });
		assertClean(result, STDERR_TAIL);
		assert.deepEqual(lines(result.stdout), ["boot", ...sent.map((l) => `line: ${l}`), "end: end of input"]);
	});

	test(`a slow reader gets every line although input overfills the host buffer [${variant}]`, async () => {
		const sent = Array.from({ length: 300 }, (_, i) => `${i} ${"y".repeat(100)}`);
		const result = await runHost([...PEER, "--slow", "yes"], { variant, input: sent.join("\n") + "\n", timeoutMs: TIMEOUT_MS });
		assertClean(result, STDERR_TAIL);
		assert.deepEqual(lines(result.stdout), ["boot", ...sent.map((l) => `line: ${l}`), "end: end of input"]);
	});

	test(`serial on /dev/null reports the end of input at once [${variant}]`, async () => {
		const result = await runHost(PEER, { variant, stdin: "ignore", timeoutMs: TIMEOUT_MS });
		assertClean(result, STDERR_TAIL);
		assert.deepEqual(lines(result.stdout), ["boot", "end: end of input"]);
	});

	test(`a closed serial does not keep the program alive while stdin stays open [${variant}]`, async () => {
		const result = await runHost([...PEER, "--close", "yes"], { variant, input: null, timeoutMs: TIMEOUT_MS });
		assertClean(result, STDERR_TAIL);
		assert.deepEqual(lines(result.stdout), ["boot"]);
	});

	test(`serial holds a terminal in character mode, again after a reboot, and puts it back at exit [${variant}]`, () => {
		const run = runOnPty([...PEER, "--reboot", "yes"], [
			see("boot"), mode("open"),
			type("hello\n"), see("line: hello"),
			type("reboot\n"), see("line: reboot"), see("boot"), mode("rebooted"),
			type("exit\n"), see("line: exit"),
		], { variant });
		assert.equal(run.failure, null, run.output + run.stderr);
		assert.equal(run.code, 0, run.stderr.slice(-STDERR_TAIL));
		assert.deepEqual(run.modes.open, CHARACTER_MODE);
		assert.deepEqual(run.modes.rebooted, CHARACTER_MODE);
		assert.deepEqual(lines(run.output.replace(/\r/g, "")), ["boot", "line: hello", "line: reboot", "boot", "line: exit"], "the terminal echoed nothing");
		assert.ok(run.restored, `the mode after exit is the mode before: ${JSON.stringify(run.modes.after)}`);
		assert.doesNotMatch(run.stderr, SANITIZER_ERROR);
	});

	for (const [how, step] of [["Ctrl-C", type("\x03")], ["SIGTERM", signal("SIGTERM")], ["SIGHUP", signal("SIGHUP")]]) {
		test(`${how} ends serial's program as before and puts the terminal back first [${variant}]`, () => {
			const run = runOnPty(PEER, [see("boot"), mode("open"), step], { variant });
			assert.equal(run.failure, null, run.output + run.stderr);
			assert.deepEqual(run.modes.open, CHARACTER_MODE);
			assert.equal(run.signal, how === "Ctrl-C" ? "SIGINT" : how, `ended by ${run.signal ?? `exit ${run.code}`}`);
			assert.ok(run.restored, `the mode after the signal is the mode before: ${JSON.stringify(run.modes.after)}`);
		});
	}
}
