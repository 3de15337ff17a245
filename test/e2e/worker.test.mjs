// The lin host's worker module from outside (hosts/lin/src/worker.c; the unit
// tests are test/unit/worker.test.ts): a worker's sockets against a Node echo
// server, the SIGUSR2 kill hook ending a worker mid-request, an out of memory
// in the main machine still ending the process, and the worker tests on the
// ThreadSanitizer host when npm test built it (node tools/build.mjs --tsan).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import { TEST_MAP, hostBinary } from "../../tools/build.mjs";
import { closer, listen } from "../../tools/peers.mjs";
import { SANITIZER_ERROR, VARIANTS, runHost, runXsTests, withTempDir } from "./xs.mjs";

const inTempDir = withTempDir("xsclaw-worker-");
const main = (specifier, data) => ["--modules", TEST_MAP, "--main", specifier, "--data", data];

// Spawns the host; resolves once a stderr line matches `ready`, with the child,
// a getter for stderr so far and a promise of {code, signal}.
function start(args, variant, ready) {
	const child = spawn(hostBinary(variant), args, {
		env: { ...process.env, ASAN_OPTIONS: "detect_leaks=1:abort_on_error=0" },
		stdio: ["ignore", "pipe", "pipe"],
	});
	let stderr = "";
	const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
	const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
	exited.then(() => clearTimeout(timer));
	return new Promise((resolve, reject) => {
		child.stderr.on("data", (d) => {
			stderr += d;
			if (ready.test(stderr)) resolve({ child, stderr: () => stderr, exited });
		});
		exited.then(({ code }) => reject(new Error(`exited ${code} before ready:\n${stderr}`)));
	});
}

// Every variant built: release and asan (VARIANTS), and tsan here only.
const WORKER_VARIANTS = [...VARIANTS, ...(existsSync(hostBinary("tsan")) ? ["tsan"] : [])];
const TSAN_WARNING = /WARNING: ThreadSanitizer/;

for (const variant of WORKER_VARIANTS.filter((v) => v === "tsan")) {
	test(`the worker unit tests find no data race on the ThreadSanitizer host`, async (t) => {
		const result = await runXsTests(t, "test/unit/worker.test", { variant, env: { TSAN_OPTIONS: "halt_on_error=0" } });
		assert.doesNotMatch(result.stderr, TSAN_WARNING, result.stderr.slice(-4000));
	});
}

for (const variant of WORKER_VARIANTS) {
	test(`a worker's TCP sockets and timers against a Node echo server [${variant}]`, async (t) => {
		const server = net.createServer((s) => s.pipe(s));
		const stop = closer(server);
		try {
			const result = await runXsTests(t, "test/peer/worker-net", { variant, options: { "echo-port": await listen(server) } });
			assert.doesNotMatch(result.stderr, TSAN_WARNING, result.stderr.slice(-4000));
		} finally {
			await stop();
		}
	});

	test(`SIGUSR2 kills the worker mid-request: onerror at once (the request was due in a minute), postMessage then throws [${variant}]`, inTempDir(async (data, t) => {
		const run = await start(main("test/peer/worker-kill", data), variant, /^ready /m);
		run.child.kill("SIGUSR2");
		const { code } = await run.exited;
		const stderr = run.stderr();
		assert.equal(code, 0, stderr);
		assert.match(stderr, /^onerror \S+ worker was killed \(SIGUSR2/m);
		assert.match(stderr, /^postMessage worker: the worker ended: worker was killed/m);
		// The host's own clock: from the worker holding the request to onerror.
		const readyMs = Number(/^ready (\S+)/m.exec(stderr)[1]);
		const errorMs = Number(/^onerror (\S+)/m.exec(stderr)[1]);
		// Before the worker's answer was due (60 s) and the peer's own 30 s bound: the
		// kill ended it. How soon is a figure, not a pass mark (a loaded machine is slow).
		t.diagnostic(`onerror came ${errorMs - readyMs} ms after the request was in flight`);
		assert.doesNotMatch(stderr, SANITIZER_ERROR);
		assert.doesNotMatch(stderr, TSAN_WARNING);
	}));

	test(`an out of memory in the main machine still ends the process with exit 2 while a worker runs [${variant}]`, inTempDir(async (data) => {
		const r = await runHost(main("test/peer/oom-with-worker", data), { variant, env: { ASAN_OPTIONS: "detect_leaks=0" } });
		assert.equal(r.code, 2, r.stderr);
		assert.match(r.stderr, /^xsclaw: out of memory: the XS heap .* is exhausted; raise creation sizes in manifest.json/m);
		assert.doesNotMatch(r.stderr, /Segmentation|AddressSanitizer|runtime error:/);
	}));
}
