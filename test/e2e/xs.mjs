// Runs XS unit-test modules on the lin host from node:test. Each XS test
// becomes a node subtest, so the node summary counts them.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_MAP, hostBinary } from "../../tools/build.mjs";

export const VARIANTS = ["release", "asan"].filter((v) => existsSync(hostBinary(v)));

// Spawns the host; resolves {code, signal, stdout, stderr}. Killed after timeoutMs.
export function runHost(args, { variant = "release", input, env = {}, timeoutMs = 60_000 } = {}) {
	return new Promise((resolve, reject) => {
		const child = spawn(hostBinary(variant), args, {
			env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS: "print_stacktrace=1", ...env },
			stdio: ["pipe", "pipe", "pipe"],
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
		if (input !== undefined) child.stdin.end(input);
		else child.stdin.end();
	});
}

// Runs one XS test module (e.g. "test/unit/engine.test") and reports each of
// its tests as a subtest of t. options become --name value pairs.
export async function runXsTests(t, specifier, { variant = "release", options = {}, timeoutMs = 120_000, env } = {}) {
	const data = mkdtempSync(join(tmpdir(), "xsclaw-test-"));
	try {
		const args = ["--modules", TEST_MAP, "--main", "test/run", "--test", specifier, "--data", data];
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
			if (result.code !== 0 || !results.length || /ERROR: (Address|Leak)Sanitizer|runtime error:/.test(result.stderr)) {
				throw new Error(`exit ${result.code} ${result.signal ?? ""}\n${noise.slice(-4000)}`);
			}
		});
		return result;
	} finally {
		rmSync(data, { recursive: true, force: true });
	}
}
