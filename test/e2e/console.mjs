// The firmware on the lin host with its console on a pipe, for end-to-end tests
// that talk to it line by line (core.test.mjs, caps.test.mjs).
import { spawn } from "node:child_process";
import { hostBinary } from "../../tools/build.mjs";

export const PROMPT = "xsclaw> ";
// On a pipe the console does not echo: a command's output follows the prompt on its line.
export const unprompted = (text) => text.replaceAll(PROMPT, "");

/**
 * The firmware with its console on a pipe that stays open: send(line) types a
 * line, until(pattern) waits for the output (from `from` on, prompts removed) to
 * match, end() closes the input and resolves {code, signal, stdout, stderr} once
 * it exited. `printed(from)` is the output since `from` without prompts.
 */
export function startFirmware(args, variant) {
	const child = spawn(hostBinary(variant), args, {
		env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0" },
		stdio: ["pipe", "pipe", "pipe"],
	});
	const state = { stdout: "", stderr: "" };
	const waiters = new Set();
	const check = () => { for (const w of waiters) w(); };
	child.stdout.on("data", (d) => { state.stdout += d; check(); });
	child.stderr.on("data", (d) => { state.stderr += d; });
	const exited = new Promise((resolve) => child.on("close", (code, signal) => { check(); resolve({ code, signal, ...state }); }));
	const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
	return {
		get stdout() { return state.stdout; },
		get stderr() { return state.stderr; },
		send(line) { child.stdin.write(`${line}\n`); },
		printed(from = 0) { return unprompted(state.stdout.slice(from)); },
		/** Resolves once the output after `from`, prompts removed, matches; rejects after timeoutMs. */
		until(pattern, { from = 0, timeoutMs = 20_000 } = {}) {
			return new Promise((resolve, reject) => {
				const waiter = () => {
					if (pattern.test(unprompted(state.stdout.slice(from)))) {
						waiters.delete(waiter);
						clearTimeout(timer);
						resolve();
					}
				};
				const timer = setTimeout(() => {
					waiters.delete(waiter);
					reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${state.stdout.slice(from)}\nstderr:\n${state.stderr.slice(-3000)}`));
				}, timeoutMs);
				waiters.add(waiter);
				waiter();
			});
		},
		async end() {
			child.stdin.end();
			const result = await exited;
			clearTimeout(killer);
			return result;
		},
	};
}

/** Waits until fn() is truthy, checking every 10 ms. */
export async function until(fn, what, timeoutMs = 20_000) {
	const start = Date.now();
	while (!fn()) {
		if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 10));
	}
}

