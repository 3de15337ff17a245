// The script sandbox against scripts that try to outlive their bounds (issue 25,
// "The script sandbox"): work queued as promise jobs, which the host would run
// after run() returned, and built-ins whose own C loops never reach a meter
// check. Each case runs in a host of its own (test/peer/sandbox_escape.ts) with
// a short time limit: a case that escaped hangs the machine, and the limit
// fails it. Every case must end with the script stopped or answered, and the
// machine alive after it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TEST_MAP } from "../../tools/build.mjs";
import { SANITIZER_ERROR, VARIANTS, runHost, withTempDir } from "./xs.mjs";

const LIMIT_MS = 30_000;   // a bound for a hang; each case takes well under a second
const inTempDir = withTempDir("xsclaw-sandbox-");

function escape(variant, data, name) {
	return runHost(["--modules", TEST_MAP, "--main", "test/peer/sandbox_escape", "--data", data, "--case", name], { variant, timeoutMs: LIMIT_MS });
}

const STOPPED = {
	"job-loop": /^error the script was stopped after \d+ steps/,
	"job-alloc": /^error the script was stopped: it used more than/,
	"job-chain": /^error the script was stopped/,
	"job-reject": /^result /,
	indexOf: /^error the script was stopped after \d+ steps/,
	lastIndexOf: /^error the script was stopped/,
	includes: /^error the script was stopped after \d+ steps/,
	join: /^error the script was stopped/,
	fill: /^error the script was stopped/,
	reverse: /^error the script was stopped/,
	copyWithin: /^error the script was stopped/,
	keys: /^error the script was stopped: it made more than \d+ new property names/,
	recursion: /^error the script was stopped: its calls nest too deep/,
	"job-ok": /^result {"done":1}$/,
};

for (const variant of VARIANTS) {
	for (const [name, expected] of Object.entries(STOPPED)) {
		test(`a script's ${name} is bounded by its call, and the machine goes on [${variant}]`, inTempDir(async (data) => {
			const r = await escape(variant, data, name);
			assert.notEqual(r.signal, "SIGKILL", `the case hung the machine (killed after ${LIMIT_MS} ms):\n${r.stderr.slice(-1500)}`);
			assert.equal(r.code, 0, r.stderr.slice(-1500));
			assert.doesNotMatch(r.stderr, SANITIZER_ERROR);
			const line = new RegExp(`^sandbox-escape: ${name}: (.*)$`, "m").exec(r.stderr)?.[1];
			assert.ok(line !== undefined, r.stderr.slice(-1500));
			assert.match(line, expected);
			assert.match(r.stderr, /^sandbox-escape: alive; next script: 42$/m);
		}));
	}
}
