// The console on embedded:io/serial (hosts/lin/src/serial.c), driven through
// stdin/stdout with test/peer/serial.ts as the program: echo, end of input,
// reboot keeping unread input, long input read fast and slow, close, and stdin
// as /dev/null or a terminal.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { TEST_MAP, hostBinary } from "../../tools/build.mjs";
import { VARIANTS, assertClean, runHost } from "./xs.mjs";

const PEER = ["--modules", TEST_MAP, "--main", "test/peer/serial"];
const TIMEOUT_MS = 20_000;

function lines(text) {
	return text.split("\n").filter(Boolean);
}

// Failure messages carry the last 2000 characters of stderr.
const STDERR_TAIL = 2000;

// Runs the peer on a pseudo-terminal (python3's pty module: node has none):
// types "hello", waits for the echo, then types ^D, the terminal's end of input.
const PTY_DRIVER = `
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
def wait_for(text, seconds):
    global out
    end = time.time() + seconds
    while text not in out and time.time() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return text in out
wait_for(b"boot", 10)
os.write(fd, b"hello\\n")
wait_for(b"line: hello", 10)
os.write(fd, b"\\x04")
wait_for(b"end: end of input", 10)
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
`;

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

	test(`serial on a terminal echoes a typed line and ends at ^D [${variant}]`, () => {
		const result = spawnSync("python3", ["-c", PTY_DRIVER, hostBinary(variant), ...PEER], {
			encoding: "utf8",
			timeout: TIMEOUT_MS,
			env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0" },
		});
		assert.equal(result.error, undefined, "python3 with its pty module is needed for this test");
		assert.equal(result.status, 0, `exit ${result.status}\n${result.stdout}\n${result.stderr}`);
		const output = result.stdout.replace(/\r/g, "");
		assert.match(output, /^boot$/m);
		assert.match(output, /^line: hello$/m);
		assert.match(output, /^end: end of input$/m);
		assert.doesNotMatch(output, /Sanitizer|runtime error:/);
	});
}
