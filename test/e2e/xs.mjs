// Runs XS unit-test modules on the lin host from node:test. Each XS test
// becomes a node subtest, so the node summary counts them.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, TEST_MAP, hostBinary, hostCommand } from "../../tools/build.mjs";

export const VARIANTS = ["release", "asan"].filter((v) => existsSync(hostBinary(v)));
// The TLS tests also run on the host built against Mbed TLS 4.0 (the board's
// version), when `npm test` could build it (tools/mbedtls4.mjs).
// And on the hosts whose TLS is the board's own glue (hosts/esp32/tls/tls_esp32.c
// over hosts/lin/boardtls' shims, Mbed TLS 4.0; node tools/build.mjs --board-tls).
export const BOARD_TLS_VARIANTS = ["boardtls", "boardtls-asan"].filter((v) => existsSync(hostBinary(v)));
export const TLS_VARIANTS = [...VARIANTS, ...["mbedtls4"].filter((v) => existsSync(hostBinary(v))), ...BOARD_TLS_VARIANTS];
/** Whether a host variant's TLS is Mbed TLS 4.0 (TLS 1.3 on). */
export const tls13 = (variant) => variant === "mbedtls4" || variant.startsWith("boardtls");

// Every XS unit-test module (test/unit/*.test.ts) by its specifier.
export const UNIT_MODULES = readdirSync(join(ROOT, "test", "unit")).filter((f) => f.endsWith(".test.ts")).sort().map((f) => `test/unit/${f.replace(/\.ts$/, "")}`);

// How long a host run (one XS test module) may take before it counts as hung and
// is killed: bounds for a hang, not speed targets (two test runs on two cores,
// the ASan host). Speed is measured by npm run bench.
export const HOST_LIMIT_MS = 300_000;
export const XS_MODULE_LIMIT_MS = 600_000;

// What a sanitizer or UBSan prints when it finds something.
export const SANITIZER_ERROR = /ERROR: (Address|Leak)Sanitizer|runtime error:/;

// Asserts that a runHost result exited 0 and no sanitizer spoke; the message
// carries stderr, or its last `tail` characters.
export function assertClean(result, tail = Infinity) {
	assert.equal(result.code, 0, `exit ${result.code} ${result.signal ?? ""}\n${result.stderr.slice(-tail)}`);
	assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
}

// withTempDir(prefix)(fn): a test function that runs fn(dir, t) with a fresh
// temporary directory, removed afterwards.
export function withTempDir(prefix) {
	return (fn) => async (t) => {
		const dir = mkdtempSync(join(tmpdir(), prefix));
		try {
			await fn(dir, t);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	};
}

// Spawns the host; resolves {code, signal, stdout, stderr}. Killed after timeoutMs.
// stdin is a pipe that gets `input` and is then closed; input null leaves it
// open; stdin "ignore" gives the host /dev/null.
export function runHost(args, { variant = "release", ...options } = {}) {
	const host = hostCommand(variant);
	return runCommand(host.command, [...host.args, ...args], options);
}

// Spawns any command the same way (e.g. npm start, node tools/...): the same
// result shape and stdin handling as runHost; cwd defaults to this process's.
export function runCommand(command, args, { input, stdin = "pipe", env = {}, timeoutMs = HOST_LIMIT_MS, cwd } = {}) {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, {
			env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS: "print_stacktrace=1", ...env },
			stdio: [stdin, "pipe", "pipe"],
			cwd,
		});
		let stdout = "", stderr = "";
		child.stdout.on("data", (d) => (stdout += d));
		child.stderr.on("data", (d) => (stderr += d));
		const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
		child.on("error", reject);
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			resolve({ code, signal, stdout, stderr });
		});
		if (stdin !== "pipe" || input === null) return;
		child.stdin.on("error", () => {}); // it may exit (a usage error) before reading all of its input
		if (input !== undefined) child.stdin.end(input);
		else child.stdin.end();
	});
}

// Runs one XS test module (e.g. "test/unit/engine.test") and reports each of
// its tests as a subtest of t. options become --name value pairs.
export async function runXsTests(t, specifier, { variant = "release", options = {}, timeoutMs = XS_MODULE_LIMIT_MS, env, map = TEST_MAP } = {}) {
	const data = mkdtempSync(join(tmpdir(), "xsclaw-test-"));
	try {
		const args = ["--modules", map, "--main", "test/run", "--test", specifier, "--data", data];
		for (const [name, value] of Object.entries(options)) args.push(`--${name}`, String(value));
		const result = await runHost(args, { variant, timeoutMs, env });
		const lines = result.stderr.split("\n");
		const results = lines.filter((l) => /^(not )?ok /.test(l));
		for (const line of results) {
			const failed = line.startsWith("not ok ");
			const [name, message] = line.replace(/^(not )?ok /, "").split(" # ");
			await t.test(name, () => {
				if (failed) throw new Error(message);
			});
		}
		const noise = lines.filter((l) => l && !/^(not )?ok |^# pass /.test(l)).join("\n");
		await t.test(`${specifier} exits cleanly (${variant})`, () => {
			if (result.code !== 0 || !results.length || SANITIZER_ERROR.test(result.stderr)) {
				throw new Error(`exit ${result.code} ${result.signal ?? ""}\n${noise.slice(-4000)}`);
			}
		});
		return result;
	} finally {
		rmSync(data, { recursive: true, force: true });
	}
}
