// The firmware on the lin host with its console on a pipe, for end-to-end tests:
// startFirmware(args, variant, {env}) and until(fn) (poll a condition).
import { spawn } from "node:child_process";
import { hostBinary } from "../../tools/build.mjs";

export const PROMPT = "xsclaw> ";
export const WAIT_MS = 30_000;
const CHILD_LIMIT_MS = 180_000;

/**
 * The firmware with its console on a pipe kept open. send(line) types a line;
 * until(pattern, {from}) waits for the output since `from` (prompts removed) to
 * match; kill() sends SIGKILL; end() closes stdin; both resolve {code, signal,
 * stdout, stderr} once the process is gone. A watchdog kills it after CHILD_LIMIT_MS.
 */
export function startFirmware(args, variant, { env = {} } = {}) {
	const child = spawn(hostBinary(variant), args, {
		env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0", ...env },
		stdio: ["pipe", "pipe", "pipe"],
	});
	const state = { stdout: "", stderr: "", exited: false };
	const waiters = new Set();
	const wake = () => { for (const w of [...waiters]) w(); };
	child.stdout.on("data", (d) => { state.stdout += d; wake(); });
	child.stderr.on("data", (d) => { state.stderr += d; });
	// A write to a dead child's stdin must not crash the test runner.
	child.stdin.on("error", () => {});
	const exited = new Promise((resolve) => child.on("close", (code, signal) => {
		state.exited = true;
		wake();
		resolve({ code, signal, stdout: state.stdout, stderr: state.stderr });
	}));
	const watchdog = setTimeout(() => child.kill("SIGKILL"), CHILD_LIMIT_MS);
	exited.then(() => clearTimeout(watchdog));
	const printed = (from) => state.stdout.slice(from).replaceAll(PROMPT, "");
	return {
		get stdout() { return state.stdout; },
		get stderr() { return state.stderr; },
		send(line) { child.stdin.write(`${line}\n`); },
		printed,
		until(pattern, { from = 0, timeoutMs = WAIT_MS } = {}) {
			return new Promise((resolve, reject) => {
				const waiter = () => {
					if (pattern.test(printed(from))) {
						done();
						resolve();
					} else if (state.exited) {
						done();
						reject(new Error(`the firmware exited before printing ${pattern}; output:\n${state.stdout.slice(from)}\nstderr:\n${state.stderr.slice(-3000)}`));
					}
				};
				const timer = setTimeout(() => {
					done();
					reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${state.stdout.slice(from)}\nstderr:\n${state.stderr.slice(-3000)}`));
				}, timeoutMs);
				const done = () => { waiters.delete(waiter); clearTimeout(timer); };
				waiters.add(waiter);
				waiter();
			});
		},
		kill() {
			if (!state.exited) child.kill("SIGKILL");
			return exited;
		},
		end() {
			if (!state.exited) child.stdin.end();
			return exited;
		},
	};
}

/** Waits until fn() is truthy, checking every `stepMs`; throws after timeoutMs. */
export async function until(fn, what, { timeoutMs = WAIT_MS, stepMs = 5 } = {}) {
	const start = Date.now();
	while (!fn()) {
		if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await new Promise((r) => setTimeout(r, stepMs));
	}
}
