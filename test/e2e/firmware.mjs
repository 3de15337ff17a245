// The firmware on the lin host with its console on a pipe, for end-to-end tests
// (the one helper: console, core, agent, caps, telegram, session-kill and the
// proof tests build on it).
//
//   startFirmware(args, variant, {env})   the firmware, console on a pipe kept open
//   until(fn, what, {timeoutMs, stepMs})  polls a condition
//   setSettings(fw, lines)                types lines, each waiting for its "ok:"
//   withMockAndFirmware(variant, fn, {key, prefix, args, env, settings})
//                                         a temp data dir, a test CA, the mock LLM
//                                         over TLS and the firmware; checks the exit
//   PROTOCOLS, configureLlm(fw, mock, protocol, key)
//   filesUnder(dir)                       every file below dir but the settings store (secret scans)
//
// Every wait is bounded by a generous WAIT_MS, never by how fast the machine is:
// a test waits for the event itself, and a loaded machine only makes it slower.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { makeTestCA } from "../../tools/testca.mjs";
import { APP_MAP, hostCommand } from "../../tools/build.mjs";
import { SANITIZER_ERROR, withTempDir } from "./xs.mjs";

export const PROMPT = "xsclaw> ";

/** Every file under dir except the settings store (config.kv keeps the secrets it is given, by design). */
export function filesUnder(dir) {
	const found = [];
	for (const name of readdirSync(dir)) {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) found.push(...filesUnder(path));
		else if (name !== "config.kv") found.push(path);
	}
	return found;
}
/** How long a test waits for one thing the firmware should print (ASan, two suites on two cores). */
export const WAIT_MS = 60_000;
/** A firmware a test forgot (or that hangs) is killed after this. */
const CHILD_LIMIT_MS = 300_000;

// On a pipe the console does not echo: a command's output follows the prompt on its line.
const unprompted = (text) => text.replaceAll(PROMPT, "");

/**
 * The firmware with its console on a pipe kept open. send(line) types a line;
 * run(line, pattern) types it and waits for pattern in what follows, returning
 * that output; until(pattern, {from}) waits for the output since `from` (prompts
 * removed) to match, and rejects at once if the firmware exits first; printed(from)
 * is that output; signal(name) sends a signal; kill() sends SIGKILL; end() closes
 * stdin; both resolve {code, signal, stdout, stderr} once the process is gone.
 * A watchdog kills it after limitMs (default CHILD_LIMIT_MS: a soak run gives more).
 */
export function startFirmware(args, variant, { env = {}, limitMs = CHILD_LIMIT_MS } = {}) {
	const host = hostCommand(variant);   // the m32 host may run under qemu-i386
	const child = spawn(host.command, [...host.args, ...args], {
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
	const watchdog = setTimeout(() => child.kill("SIGKILL"), limitMs);
	exited.then(() => clearTimeout(watchdog));
	const printed = (from = 0) => unprompted(state.stdout.slice(from));
	const fw = {
		get stdout() { return state.stdout; },
		get stderr() { return state.stderr; },
		get pid() { return child.pid; },
		get exited() { return state.exited; },
		send(line) { child.stdin.write(`${line}\n`); },
		/** Raw bytes on the console's input (e.g. invalid UTF-8). */
		write(bytes) { child.stdin.write(bytes); },
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
		async run(line, pattern, options = {}) {
			const from = state.stdout.length;
			fw.send(line);
			await fw.until(pattern, { ...options, from });
			return printed(from);
		},
		signal(name) {
			if (!state.exited) child.kill(name);
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
	return fw;
}

/**
 * Waits until fn() is truthy, checking every `stepMs`; throws after timeoutMs.
 * The third argument is {timeoutMs, stepMs} or a number (timeoutMs).
 */
export async function until(fn, what, options = {}) {
	const { timeoutMs = WAIT_MS, stepMs = 5 } = typeof options === "number" ? { timeoutMs: options } : options;
	const start = Date.now();
	while (!fn()) {
		if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await new Promise((r) => setTimeout(r, stepMs));
	}
}

/** Types each line (a `config set ...`), waiting for its "ok:" before the next. */
export async function setSettings(fw, lines) {
	for (const line of lines) await fw.run(line, /^ok: /m);
}

export const PROTOCOLS = [
	{ name: "openai", lines: (port) => ["config set llm.provider custom", `config set llm.base_url https://localhost:${port}/v1`, "config set llm.model gpt-mock"] },
	{ name: "anthropic", lines: (port) => ["config set llm.provider anthropic", `config set llm.base_url https://localhost:${port}/v1`, "config set llm.model claude-mock"] },
];

/** Types a protocol's llm.* settings and the key, each waiting for its "ok:". */
export function configureLlm(fw, mock, protocol, key) {
	return setSettings(fw, [...protocol.lines(mock.port), `config set llm.api_key ${key}`]);
}

/**
 * Runs fn({fw, mock, dir}) against a fresh data directory (dir/data), a test CA
 * (dir/ca, passed as --ca) and the mock LLM over TLS on an ephemeral loopback
 * port. `protocol` (with `key`) configures the LLM before fn, `settings` are more
 * `config set` lines typed after it. Checks a clean exit (code 0, no sanitizer
 * report) and that `key` never reached stderr. mock.hooks.onRequest, set by a
 * test, sees each request before the mock takes its scenario.
 */
export async function withMockAndFirmware(variant, fn, { key, prefix = "xsclaw-fw-", args = [], env = {}, protocol, settings = [] } = {}) {
	return withTempDir(prefix)(async (dir) => {
		const ca = await makeTestCA(join(dir, "ca"));
		const hooks = {};
		const mock = await startMockLLM({ tls: ca.server, host: "127.0.0.1", onRequest: (record) => hooks.onRequest?.(record) });
		mock.hooks = hooks;
		const fw = startFirmware(["--modules", APP_MAP, "--data", join(dir, "data"), "--ca", ca.paths.ca, ...args], variant, { env });
		try {
			await fw.until(/type help for the commands\n/);
			if (protocol) await configureLlm(fw, mock, protocol, key);
			await setSettings(fw, settings);
			await fn({ fw, mock, dir });
			const result = await fw.end();
			assert.equal(result.code, 0, `exit ${result.code} ${result.signal ?? ""}\n${result.stderr.slice(-3000)}`);
			assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
			if (key) assert.ok(!result.stderr.includes(key), "the key is never logged");
		} finally {
			await fw.kill();
			await mock.close();
		}
	})();
}
