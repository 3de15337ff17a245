// Runs the host on a pseudo-terminal through test/e2e/pty_driver.py (node has no
// pty; python3's os.openpty does), following a script of steps: see the driver.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT, hostBinary } from "../../tools/build.mjs";

const DRIVER = join(ROOT, "test", "e2e", "pty_driver.py");
// The driver gives up on each wait after 60 s (its WAIT_SECONDS) and on the exit
// after 60 s more; this stops a driver that hangs anyway.
const DRIVER_TIMEOUT_MS = 600_000;

// Runs the host binary of variant with args and returns the driver's report:
// { output, code, signal, modes, restored, failure, stderr }. Throws when
// python3 or the driver fails.
export function runOnPty(args, steps, { variant = "release" } = {}) {
	const result = spawnSync("python3", [DRIVER, JSON.stringify(steps), hostBinary(variant), ...args], {
		encoding: "utf8",
		timeout: DRIVER_TIMEOUT_MS,
		killSignal: "SIGKILL",
		env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS: "print_stacktrace=1" },
	});
	assert.equal(result.error, undefined, "python3 is needed for the terminal tests");
	assert.equal(result.status, 0, `the pty driver failed:\n${result.stderr}`);
	return { ...JSON.parse(result.stdout), stderr: result.stderr };
}

// Steps typing text on the terminal, then waiting to see what follows.
export const type = (text) => ({ write: text });
export const see = (text) => ({ wait: text });
export const mode = (label) => ({ mode: label });
export const signal = (name) => ({ signal: name });
export const touch = (path) => ({ touch: path });

// Character mode as the Serial sets it: no line editing, no echo; signals and
// output processing as before.
export const CHARACTER_MODE = { icanon: false, echo: false, isig: true, opost: true };
