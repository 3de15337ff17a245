// A hung agent machine is noticed (issue 25): the firmware on the lin host with
// the mock LLM over TLS and the heartbeat's deadline made short
// (--agent-deadline-ms). The host's hang hook (SIGUSR1) makes the agent machine
// run Array.prototype.indexOf.call({length: 2**53 - 1}, 1) while a request
// waits on the model: a built-in's loop that never gives its turn back. The
// supervisor's heartbeat goes unanswered, so within the deadline the waiting
// `ask` ends with a sentence saying the agent hung, a new agent machine starts
// and answers, `status` names the reason, and the hung machine's thread is gone
// (the process's thread count is back to what it was, and it uses no CPU).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { PROTOCOLS, configureLlm, until, withMockAndFirmware } from "./firmware.mjs";
import { VARIANTS } from "./xs.mjs";

const KEY = "sk-agent-hang-secret-0123456789";
const DEADLINE_MS = 1500;
const WAIT_MS = 60_000;
// The stalled request could end only at this timeout: an error long before it came from the heartbeat.
const STALL_TIMEOUT_MS = 600_000;

/** The process's threads, and its CPU time in clock ticks (user + system). */
const threads = (pid) => readdirSync(`/proc/${pid}/task`).length;
function cpuTicks(pid) {
	const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
	return Number(fields[11]) + Number(fields[12]);
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

for (const variant of VARIANTS) {
	test(`a hung agent machine: the heartbeat's deadline restarts it, the waiting ask gets a clear error, the firmware answers again, status says why, and no thread is left spinning [${variant}]`, async (t) => {
		await withMockAndFirmware(variant, async ({ fw, mock }) => {
			await configureLlm(fw, mock, PROTOCOLS[0], KEY);
			mock.script({ type: "text", text: "Hello, I am here." });
			await fw.run("ask hello", /^Hello, I am here\.$/m, { timeoutMs: WAIT_MS });
			await fw.run(`config set llm.timeout_ms ${STALL_TIMEOUT_MS}`, /^ok: /m);
			const baseline = threads(fw.pid);

			mock.script({ type: "text", fault: "stall" });
			let from = fw.stdout.length;
			const before = mock.requests.length;
			fw.send("ask think about this for a long time");
			await until(() => mock.requests.length === before + 1, "the request at the mock", WAIT_MS);
			const hungAt = Date.now();
			fw.signal("SIGUSR1");
			const why = `it did not answer its heartbeat within ${DEADLINE_MS} ms: it hung`;
			await fw.until(new RegExp(`^error: the agent stopped \\(${why}\\) and is restarting; ask again in a moment$`, "m"), { from, timeoutMs: WAIT_MS });
			const ms = Date.now() - hungAt;
			t.diagnostic(`SIGUSR1 -> "error: the agent stopped (... it hung)" printed: ${ms} ms`);
			assert.ok(ms < DEADLINE_MS * 4, `noticed within the deadline and a heartbeat (${ms} ms)`);
			await fw.until(new RegExp(`^agent: the agent machine stopped \\(${why}\\); restarting it in \\d+ ms$`, "m"), { from });
			await fw.until(/^agent: restarted \(restart 1\); ask again$/m, { from, timeoutMs: WAIT_MS });
			assert.match(fw.stderr, /SIGUSR1: worker "agent\/worker" hangs/, "the hook made it hang");
			assert.match(fw.stderr, /worker "agent\/worker" ended: worker was terminated while busy/, "the hung machine was ended inside its loop");

			// The firmware answers again, and status says what happened.
			mock.script({ type: "text", text: "Yes, I am back." });
			await fw.run("ask are you back?", /^Yes, I am back\.$/m, { timeoutMs: WAIT_MS });
			from = fw.stdout.length;
			fw.send("status");
			await fw.until(new RegExp(`^agent machine: running \\(1 restart; last stop: ${why}\\)$`, "m"), { from });

			// No thread of the hung machine is left: as many threads as before, and no CPU spent while idle.
			await until(() => threads(fw.pid) <= baseline, `the thread count back to ${baseline} (it is ${threads(fw.pid)})`, 10_000);
			const ticks = cpuTicks(fw.pid);
			await sleep(1000);
			const spent = cpuTicks(fw.pid) - ticks;
			t.diagnostic(`threads ${threads(fw.pid)} (before the hang ${baseline}); CPU over 1 s idle: ${spent} ticks`);
			assert.ok(spent < 30, `the firmware idles (${spent} clock ticks of CPU in 1 s): no thread spins`);

			// A second hang is noticed too (the new machine has its heartbeat).
			from = fw.stdout.length;
			fw.signal("SIGUSR1");
			await fw.until(/^agent: restarted \(restart 2\); ask again$/m, { from, timeoutMs: WAIT_MS });
			mock.script({ type: "text", text: "Back again." });
			await fw.run("ask and now?", /^Back again\.$/m, { timeoutMs: WAIT_MS });
			await until(() => threads(fw.pid) <= baseline, "the thread count back again", 10_000);
		}, { key: KEY, prefix: "xsclaw-agent-hang-", args: ["--agent-deadline-ms", String(DEADLINE_MS)] });
	});
}
