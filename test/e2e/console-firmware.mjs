// The firmware as a person meets it, for e2e tests: the lin host with its
// console on a pipe kept open, next to the mock LLM over TLS with a test CA.
// startFirmware(args, variant) -> {send, until, printed, signal, end};
// withMockAndFirmware(variant, fn, {key, prefix, args}) runs fn({fw, mock, dir})
// and checks a clean exit with the key never logged; configureLlm types the
// `config set llm.*` lines of a protocol.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { makeTestCA } from "../../tools/testca.mjs";
import { APP_MAP, hostBinary } from "../../tools/build.mjs";
import { SANITIZER_ERROR, withTempDir } from "./xs.mjs";

export const PROTOCOLS = [
	{ name: "openai", lines: (port) => ["config set llm.provider custom", `config set llm.base_url https://localhost:${port}/v1`, "config set llm.model gpt-mock"] },
	{ name: "anthropic", lines: (port) => ["config set llm.provider anthropic", `config set llm.base_url https://localhost:${port}/v1`, "config set llm.model claude-mock"] },
];

const PROMPT = "xsclaw> ";
// On a pipe the console does not echo: a command's output follows the prompt on its line.
const unprompted = (text) => text.replaceAll(PROMPT, "");

/**
 * The firmware with its console on a pipe that stays open: send(line) types a
 * line, until(pattern) waits for the output (from `from` on, prompts removed) to
 * match, signal(name) sends the process a signal, end() closes the input and
 * resolves {code, signal, stdout, stderr} once it exited. `printed(from)` is the
 * output since `from` without prompts.
 */
export function startFirmware(args, variant, env = {}) {
	const child = spawn(hostBinary(variant), args, {
		env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0", ...env },
		stdio: ["pipe", "pipe", "pipe"],
	});
	const state = { stdout: "", stderr: "" };
	const waiters = new Set();
	const check = () => { for (const w of waiters) w(); };
	child.stdout.on("data", (d) => { state.stdout += d; check(); });
	child.stderr.on("data", (d) => { state.stderr += d; });
	child.stdin.on("error", () => {});
	const exited = new Promise((resolve) => child.on("close", (code, signal) => { check(); resolve({ code, signal, ...state }); }));
	const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
	return {
		get stdout() { return state.stdout; },
		get stderr() { return state.stderr; },
		send(line) { child.stdin.write(`${line}\n`); },
		signal(name) { child.kill(name); },
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

/** Runs fn({fw, mock, dir}) against a fresh data directory; checks the exit and that key never reached stderr. */
export async function withMockAndFirmware(variant, fn, { key, prefix = "xsclaw-fw-", args = [], env = {} } = {}) {
	return withTempDir(prefix)(async (dir) => {
		const ca = await makeTestCA(join(dir, "ca"));
		// hooks.onRequest (set by a test) sees each request before the mock takes its scenario.
		const hooks = {};
		const mock = await startMockLLM({ tls: ca.server, host: "127.0.0.1", onRequest: (record) => hooks.onRequest?.(record) });
		mock.hooks = hooks;
		const fw = startFirmware(["--modules", APP_MAP, "--data", join(dir, "data"), "--ca", ca.paths.ca, ...args], variant, env);
		try {
			await fw.until(/type help for the commands\n/);
			await fn({ fw, mock, dir });
			const result = await fw.end();
			assert.equal(result.code, 0, `exit ${result.code} ${result.signal ?? ""}\n${result.stderr.slice(-3000)}`);
			assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
			if (key) assert.ok(!result.stderr.includes(key), "the key is never logged");
		} finally {
			await fw.end();
			await mock.close();
		}
	})();
}

/** Types a protocol's llm.* settings and the key, each waiting for its "ok:". */
export async function configureLlm(fw, mock, protocol, key) {
	for (const line of [...protocol.lines(mock.port), `config set llm.api_key ${key}`]) {
		const from = fw.stdout.length;
		fw.send(line);
		await fw.until(/^ok: /m, { from });
	}
}
