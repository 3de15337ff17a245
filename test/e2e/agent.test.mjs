// The agent in its own machine (issue 9): the firmware on the lin host with its
// console on a pipe, the mock LLM over TLS. When the agent machine dies (out of
// memory on a reply too big for a heap made small for the test; the host's
// SIGUSR2 kill hook while a request waits on the model), the waiting `ask` ends
// at once with a sentence, the console says the agent stopped and why, a new
// agent machine starts, the next `ask` is answered in the same session, and no
// session file is damaged (tools/session-inspect finds nothing).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { APP_MAP, ROOT, importClosure } from "../../tools/build.mjs";
import { PROTOCOLS, configureLlm, until, withMockAndFirmware } from "./firmware.mjs";
import { VARIANTS } from "./xs.mjs";

const KEY = "sk-agent-e2e-secret-0123456789";
// The agent machine's chunk heap for the out-of-memory test: it holds the agent
// at rest (about 170 KiB live on lin) and an ordinary exchange, not a 250 KiB reply
// (the reply and its string, about 500 KiB).
const SMALL_AGENT_CHUNK_BYTES = 480_000;
const HUGE_REPLY_BYTES = 250 * 1024;
const WAIT_MS = 60_000;
const STALL_TIMEOUT_MS = 600_000;

// tools/session-inspect finds nothing to repair, and no file was set aside as damaged.
function assertSessionsIntact(t, dir) {
	const result = spawnSync(process.execPath, [join(ROOT, "tools", "session-inspect.mjs"), join(dir, "data")], { encoding: "utf8" });
	t.diagnostic(`session-inspect exit ${result.status}`);
	assert.equal(result.status, 0, `session-inspect found something:\n${result.stdout}${result.stderr}`);
	const damaged = readdirSync(join(dir, "data", "files", "sessions")).filter((name) => name.includes(".bad"));
	assert.deepEqual(damaged, [], "no session file was set aside as damaged");
}

// The agent machine's own modules (the LLM's backends and wire, the core, the
// store, memory, tools): the main machine reaches them only through the port, so
// it must not load their code too (agent/protocol, llm/profiles and the types
// they share are both machines').
const AGENT_ONLY = /^(llm\/(?!profiles$|types$)|core\/(?!types$)|store\/|memory\/|caps\/|skills\/|sched\/|agent\/(machine|service|worker)$)/;

test("the main machine loads none of the agent machine's own modules (the LLM backends, core, store, memory, tools)", () => {
	const main = importClosure(APP_MAP, "main");
	const leaked = [...main].filter(([specifier]) => AGENT_ONLY.test(specifier)).map(([specifier, from]) => `${specifier} (imported by ${from})`);
	assert.deepEqual(leaked, [], "main imports agent-only modules");
	const agent = [...importClosure(APP_MAP, "agent/worker").keys()].filter((specifier) => AGENT_ONLY.test(specifier));
	assert.ok(agent.includes("llm/openai") && agent.includes("core/core"), `the pattern names the agent's modules (the agent machine loads ${agent.length} of them)`);
});

for (const variant of VARIANTS) {
	test(`the agent machine running out of memory: the ask gets an error, the console says the agent restarted, the next ask is answered, no session file is damaged [${variant}]`, async (t) => {
		await withMockAndFirmware(variant, async ({ fw, mock, dir }) => {
			await configureLlm(fw, mock, PROTOCOLS[0], KEY);
			mock.script({ type: "text", text: "Hello, I am here." });
			let from = fw.stdout.length;
			fw.send("ask hello");
			await fw.until(/^Hello, I am here\.$/m, { from, timeoutMs: WAIT_MS });

			mock.script({ type: "text", fault: "huge", bytes: HUGE_REPLY_BYTES });
			from = fw.stdout.length;
			fw.send("ask tell me everything you know");
			await fw.until(/^error: the agent stopped \(.*out of memory.*\) and is restarting; ask again in a moment$/m, { from, timeoutMs: WAIT_MS });
			await fw.until(/^agent: the agent machine stopped \(.*out of memory.*\); restarting it in \d+ ms$/m, { from });
			await fw.until(/^agent: restarted \(restart 1\); ask again$/m, { from, timeoutMs: WAIT_MS });
			t.diagnostic(fw.printed(from).trim());

			mock.script({ type: "text", text: "Yes, I am back." });
			from = fw.stdout.length;
			const before = mock.requests.length;
			fw.send("ask are you back?");
			await fw.until(/^Yes, I am back\.$/m, { from, timeoutMs: WAIT_MS });
			const body = mock.requests[before].body;
			assert.ok(body.includes("Hello, I am here."), "the new agent machine reads the same session's history");
			assert.ok(body.includes("tell me everything you know"), "the question asked when it died was kept");
			fw.send("status");
			await fw.until(/^agent machine: running \(1 restart; last stop: .*out of memory/m, { from });
			assertSessionsIntact(t, dir);
		}, {
			key: KEY,
			prefix: "xsclaw-agent-oom-",
			args: ["--agent-chunk", String(SMALL_AGENT_CHUNK_BYTES)],
			// The one buffer XS holds outside its heap when the agent dies here (see the file).
			env: { LSAN_OPTIONS: `suppressions=${join(ROOT, "test", "e2e", "worker-oom.supp")}` },
		});
	});

	test(`the agent machine killed mid-request: the waiting ask gets a clear error at once, not at the LLM timeout, and a new agent answers [${variant}]`, async (t) => {
		await withMockAndFirmware(variant, async ({ fw, mock, dir }) => {
			await configureLlm(fw, mock, PROTOCOLS[1], KEY);
			// The stalled request could end only at this timeout, ten times WAIT_MS:
			// an error within WAIT_MS of the kill came from the kill.
			await fw.run(`config set llm.timeout_ms ${STALL_TIMEOUT_MS}`, /^ok: /m);
			mock.script({ type: "text", fault: "stall" });
			let from = fw.stdout.length;
			const before = mock.requests.length;
			fw.send("ask think about this for a long time");
			await until(() => mock.requests.length === before + 1, "the request at the mock", WAIT_MS);
			const killedAt = Date.now();
			fw.signal("SIGUSR2");
			await fw.until(/^error: the agent stopped \(.*SIGUSR2.*\) and is restarting; ask again in a moment$/m, { from, timeoutMs: WAIT_MS });
			const ms = Date.now() - killedAt;
			t.diagnostic(`SIGUSR2 -> "error: the agent stopped" printed: ${ms} ms`);
			await fw.until(/^agent: restarted \(restart 1\); ask again$/m, { from, timeoutMs: WAIT_MS });

			mock.script({ type: "text", text: "Still here." });
			from = fw.stdout.length;
			fw.send("ask still there?");
			await fw.until(/^Still here\.$/m, { from, timeoutMs: WAIT_MS });
			assertSessionsIntact(t, dir);
		}, { key: KEY, prefix: "xsclaw-agent-kill-" });
	});
}
