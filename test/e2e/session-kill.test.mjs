// The session store survives SIGKILL in the middle of a request (issue 5): a
// conversation through the console against the mock LLM over TLS, the firmware
// killed while its third `ask` is in flight, restarted on the same data dir; the
// history the model receives with the next question holds the earlier turns, the
// interrupted question exactly once, and never half a tool round.
//
// Kill points for the third ask, per protocol and host variant:
//  - "first call stalls": killed while its first LLM call hangs (only the USER
//    record of the turn is on flash);
//  - "second call stalls": the first call asked for system_info, the tool ran, the
//    round was persisted, then the second call hangs: killed there. The round waits
//    in memory for the turn's commit (its answer), as littlefs keeps it uncommitted
//    until the file's sync on the device, so it is gone and the question stays;
//  - "tool round in flight": the first call asks for two tools and the firmware is
//    killed 0, 2 or 10 ms after the mock finished sending that reply, i.e. while the
//    firmware parses it, runs the tools, writes the round or sends the next call.
//    Where exactly it dies cannot be timed from outside: the assertion (the round
//    comes back whole or not at all) holds for every point, and the test reports
//    which one it saw (on an idle machine 0 ms lands before the round is written,
//    2 ms either side, 10 ms after).
// The core persists a tool round as one batch (one data write with the turn's
// commit, or on its own when large), so a SIGKILL cannot split it; the test still
// checks every call against its results.
// After each kill tools/session-inspect.mjs must find the files clean, or report
// only what open() repairs after a lost write (a torn tail, an index behind).
//
// Known limits: a SIGKILL is not a power cut (writes that returned are in the
// page cache and survive); power cuts at every write are test/e2e/store-powerloss.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { truncateSync } from "node:fs";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { makeTestCA } from "../../tools/testca.mjs";
import { APP_MAP, ROOT } from "../../tools/build.mjs";
import { SANITIZER_ERROR, VARIANTS, withTempDir } from "./xs.mjs";
// Every wait is bounded (WAIT_MS); generous because the ASan host on a loaded 2-core machine is slow.
import { WAIT_MS, startFirmware, until } from "./firmware.mjs";

// SESSION_KILL_MAP runs the test on another module map (how a mutant store or core was shown to fail it).
const MAP = process.env.SESSION_KILL_MAP ?? APP_MAP;
const KEY = "sk-session-kill-secret-0123456789";
const PROTOCOLS = [
	{ name: "openai", lines: (port) => ["config set llm.provider custom", `config set llm.base_url https://localhost:${port}/v1`, "config set llm.model gpt-mock"] },
	{ name: "anthropic", lines: (port) => ["config set llm.provider anthropic", `config set llm.base_url https://localhost:${port}/v1`, "config set llm.model claude-mock"] },
];

const Q1 = "what time is it?";
const A1 = "It is tea time on the lin host.";
const Q2 = "and what is the capital of France?";
const A2 = "Paris.";
const Q3 = "how is the board doing?";
const Q4 = "are you still there after the restart?";
const A4 = "Yes, and I remember what you asked.";
// What precedes the volatile block in the current user message (core.ts #buildContext).
const CONTEXT_BLOCK = "\n\n[request context]\n";


async function configure(fw, mock, protocol) {
	for (const line of [...protocol.lines(mock.port), `config set llm.api_key ${KEY}`]) {
		const from = fw.stdout.length;
		fw.send(line);
		await fw.until(/^ok: /m, { from });
	}
}

/** Starts the firmware (recorded in `firmwares` for the clean-up), waits for its banner and points it at the mock. */
async function startConfigured(args, variant, mock, protocol, firmwares) {
	const fw = startFirmware(args, variant);
	firmwares.push(fw);
	await fw.until(/type help for the commands\n/);
	await configure(fw, mock, protocol);
	return fw;
}

/** Types `ask text` and waits for `answer` on a line of its own. */
async function ask(fw, text, answer) {
	const from = fw.stdout.length;
	fw.send(`ask ${text}`);
	await fw.until(new RegExp(`^${answer.replace(/[.?*+^$()[\]{}|\\]/g, "\\$&")}$`, "m"), { from });
}

/**
 * The two completed turns every test starts from (Q1 with a get_time round, then
 * Q2), on a configured firmware; returns the console's session, checked to hold
 * their six records.
 */
async function twoTurns(fw, mock) {
	mock.script(
		{ type: "tool_calls", calls: [{ id: "call_time", name: "get_time", arguments: {} }] },
		{ type: "text", text: A1 },
	);
	await ask(fw, Q1, A1);
	mock.script({ type: "text", text: A2 });
	await ask(fw, Q2, A2);
	const session = await currentSession(fw);
	assert.equal(session.records, 6, "two turns on flash: user, tool call, tool result, answer, user, answer");
	return session;
}

/** The console's current session as `session` prints it: {id, records}. */
async function currentSession(fw) {
	const from = fw.stdout.length;
	fw.send("session");
	const line = /^current session: (\S+) \((\d+) records,/m;
	await fw.until(line, { from });
	const [, id, records] = line.exec(fw.printed(from));
	return { id, records: Number(records) };
}

/**
 * A recorded request's conversation, the same for both protocols: [{role: 'user',
 * text} | {role: 'assistant', text, calls: [id]} | {role: 'tool', id}], system
 * prompt left out. Anthropic's user messages are split into their tool_result
 * blocks (one 'tool' each) and text blocks (one 'user' each), in order.
 */
function conversation(record) {
	const text = (content) => typeof content === "string" ? content : (content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
	const out = [];
	for (const m of record.json.messages) {
		if (record.protocol === "openai") {
			if (m.role === "system") continue;
			if (m.role === "tool") out.push({ role: "tool", id: m.tool_call_id });
			else if (m.role === "assistant") out.push({ role: "assistant", text: text(m.content), calls: (m.tool_calls ?? []).map((c) => c.id) });
			else out.push({ role: m.role, text: text(m.content) });
			continue;
		}
		const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
		if (m.role === "assistant") {
			out.push({ role: "assistant", text: text(blocks), calls: blocks.filter((b) => b.type === "tool_use").map((b) => b.id) });
			continue;
		}
		for (const b of blocks) {
			if (b.type === "tool_result") out.push({ role: "tool", id: b.tool_use_id });
			else if (b.type === "text") out.push({ role: "user", text: b.text });
			else out.push({ role: "user", text: `(${b.type} block)` });
		}
	}
	return out;
}

/** One short line per message, for comparing and for the record: U:text, A:text[calls], T:id. */
function shape(messages) {
	return messages.map((m) => {
		if (m.role === "tool") return `T:${m.id}`;
		if (m.role === "assistant") return `A:${m.text}${m.calls.length ? `[${m.calls.join(",")}]` : ""}`;
		// A question carries the volatile block after its text.
		const cut = m.text.indexOf(CONTEXT_BLOCK);
		return `U:${cut < 0 ? m.text : `${m.text.slice(0, cut)} +context`}`;
	});
}

/**
 * Problems with tool rounds: an assistant call not followed at once by the results
 * of exactly its ids, or a result with no call right before it.
 */
function halfRounds(messages) {
	const problems = [];
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i];
		if (m.role === "tool") {
			problems.push(`message ${i}: a tool result (${m.id}) with no tool call right before it`);
			continue;
		}
		if (m.role !== "assistant" || !m.calls.length) continue;
		const results = [];
		let j = i + 1;
		for (; j < messages.length && messages[j].role === "tool"; j++) results.push(messages[j].id);
		if ([...results].sort().join() !== [...m.calls].sort().join()) {
			problems.push(`message ${i}: tool calls [${m.calls}] answered by [${results}]`);
		}
		i = j - 1;
	}
	return problems;
}

/** The earlier turns as the history must give them back: the store keeps whole tool rounds. */
// Each question is kept as it was sent, its volatile block too (the next request repeats it byte for byte).
const EARLIER = [`U:${Q1} +context`, "A:[call_time]", "T:call_time", `A:${A1}`, `U:${Q2} +context`, `A:${A2}`, `U:${Q3} +context`];

const KILL_POINTS = [
	{
		name: "the first call of the third ask stalls",
		third: [{ type: "text", fault: "stall" }],
		// The USER record is flushed once the first round is laid out, before the request is sent.
		killWhen: (requests, n) => requests.length >= n + 1,
		expected: () => [[...EARLIER, `U:${Q4} +context`]],
	},
	{
		name: "the second call of the third ask stalls after a tool round",
		third: [{ type: "tool_calls", calls: [{ id: "call_info3", name: "system_info", arguments: {} }] }, { type: "text", fault: "stall" }],
		// The round is persisted before the next call is built, so before it is sent; it
		// waits in memory for the turn's commit (store/session append): the kill loses it, not the question.
		killWhen: (requests, n) => requests.length >= n + 2,
		expected: () => [[...EARLIER, `U:${Q4} +context`]],
	},
	...[0, 2, 10].map((delayMs) => ({
		name: `killed ${delayMs} ms after the third ask's tool-call reply was sent`,
		delayMs,
		third: [
			{ type: "tool_calls", calls: [{ id: "call_time3", name: "get_time", arguments: {} }, { id: "call_info3", name: "system_info", arguments: {} }] },
			{ type: "text", fault: "stall" },
		],
		killWhen: (requests, n) => requests.length >= n + 1 && requests[n].response.complete,
		// Whether the round reached the file depends on where the kill landed: whole or nothing.
		expected: () => [
			[...EARLIER, `U:${Q4} +context`],
			[...EARLIER, "A:[call_time3,call_info3]", "T:call_time3", "T:call_info3", `U:${Q4} +context`],
		],
	})),
];

function inspectSessions(data) {
	return spawnSync(process.execPath, [join(ROOT, "tools", "session-inspect.mjs"), data], { encoding: "utf8", timeout: 60_000 });
}

// What session-inspect may report after a SIGKILL: open() repairs of a lost write.
const RECOVERABLE = [
	/^a record torn by a power loss: \d+ bytes at offset \d+ \(open\(\) cuts them\)$/,
	/\(open\(\) rebuilds the index\)$/,
];

for (const variant of VARIANTS) {
	for (const protocol of PROTOCOLS) {
		for (const point of KILL_POINTS) {
			test(`after SIGKILL when ${point.name}, the next request's history has the earlier turns, the interrupted question once and no half tool round [${protocol.name}, ${variant}]`, (t) => withTempDir("xsclaw-kill-")(async (dir) => {
				const ca = await makeTestCA(join(dir, "ca"));
				const data = join(dir, "data");
				const args = ["--modules", MAP, "--data", data, "--ca", ca.paths.ca];
				const mocks = [];
				const firmwares = [];
				try {
					// Before the kill: two completed turns, then the third ask in flight.
					const mock = await startMockLLM({ tls: ca.server, host: "127.0.0.1" });
					mocks.push(mock);
					const fw = await startConfigured(args, variant, mock, protocol, firmwares);
					const before = await twoTurns(fw, mock);
					assert.equal(mock.requests.length, 3, "three LLM calls for the two turns");

					const n = mock.requests.length;
					mock.script(...point.third);
					fw.send(`ask ${Q3}`);
					await until(() => point.killWhen(mock.requests, n), "the kill point of the third ask", { stepMs: 1 });
					if (point.delayMs) await new Promise((r) => setTimeout(r, point.delayMs));
					const killed = await fw.kill();
					assert.equal(killed.signal, "SIGKILL", `the firmware died of SIGKILL, not ${killed.code} ${killed.signal}\n${killed.stderr.slice(-2000)}`);
					t.diagnostic(`third ask: the mock had received ${mock.requests.length - n} request(s) when the firmware was killed`);

					// What the killed firmware left: clean, or only what open() repairs.
					const inspected = inspectSessions(data);
					const findings = [...inspected.stdout.matchAll(/^ {2}finding: (.*)$/gm)].map((m) => m[1]);
					t.diagnostic(`session-inspect exit ${inspected.status}: ${findings.length ? findings.join("; ") : "no findings"}`);
					assert.ok(inspected.status === 0 || inspected.status === 1, `session-inspect exit ${inspected.status}\n${inspected.stdout}${inspected.stderr}`);
					if (inspected.status === 0) assert.match(inspected.stdout, /files are consistent\n[^]*no findings\n$/);
					else {
						assert.ok(findings.length > 0, `exit 1 names its findings:\n${inspected.stdout}`);
						for (const f of findings) assert.ok(RECOVERABLE.some((r) => r.test(f)), `after a SIGKILL only a torn tail or a stale index are expected, found: ${f}`);
						assert.match(inspected.stdout, /\d+ finding\(s\): the firmware repairs them when it opens the session\n$/);
					}
					assert.ok(inspected.stdout.includes(Q3), `the inspector lists the interrupted question:\n${inspected.stdout}`);

					// After the restart: the fourth question, against a fresh mock (so no
					// scenario left over from the kill can answer it).
					const mock2 = await startMockLLM({ tls: ca.server, host: "127.0.0.1" });
					mocks.push(mock2);
					const fw2 = await startConfigured(args, variant, mock2, protocol, firmwares);
					const after = await currentSession(fw2);
					assert.equal(after.id, before.id, "the console talks in the same session after the restart");
					mock2.script({ type: "text", text: A4 });
					await ask(fw2, Q4, A4);
					assert.equal(mock2.requests.length, 1, "one LLM call for the fourth question");
					const sent = mock2.requests[0];
					assert.equal(sent.protocol, protocol.name);
					const messages = conversation(sent);
					const got = shape(messages);
					t.diagnostic(`roles the mock received: ${messages.map((m) => m.role).join(" ")}`);
					t.diagnostic(`messages: ${JSON.stringify(got)}`);

					assert.deepEqual(halfRounds(messages), [], "no half tool round");
					assert.equal(got.filter((s) => s === `U:${Q3} +context`).length, 1, "the interrupted question exactly once");
					assert.equal(got.filter((s) => s.startsWith(`U:${Q4}`)).length, 1, "the fourth question exactly once");
					assert.equal(got.at(-1), `U:${Q4} +context`, "the fourth question last, with its context block");
					const expected = point.expected();
					assert.ok(expected.some((e) => JSON.stringify(e) === JSON.stringify(got)), `the history is one of\n${expected.map((e) => JSON.stringify(e)).join("\n")}\ngot\n${JSON.stringify(got)}`);
					// Once a request opened the session its count is the data file's (see the
					// stale-index test below for the count before that).
					const used = await currentSession(fw2);
					assert.equal(used.records, got.length + 1, "every record on flash reached the history: the records are the history, the fourth question and its answer");
					if (expected.length > 1) t.diagnostic(`the kill landed ${got.includes("T:call_info3") ? "after the tool round was written" : "before the tool round was written"}`);

					const result = await fw2.end();
					assert.equal(result.code, 0, `exit ${result.code} ${result.signal ?? ""}\n${result.stderr.slice(-3000)}`);
					assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
					for (const f of firmwares) assert.ok(!f.stderr.includes(KEY), "the key is never logged");
				} finally {
					for (const f of firmwares) await f.kill();
					for (const m of mocks) await m.close();
				}
			})());
		}
	}
}

// FORMAT.md: the index is a 16-byte header and one 16-byte entry per record.
const INDEX_HEADER_BYTES = 16;
const INDEX_ENTRY_BYTES = 16;

// A SIGKILL between a batch's data flush and its index write leaves an index that
// lists fewer records than the data file holds (the kill tests above hit it now and
// then). Made deterministic here by cutting the index back by whole entries.
for (const variant of VARIANTS) {
	test(`after a kill between a batch's data and its index write, \`session\` counts the records on flash, and the next request's history has them all [${variant}]`, (t) => withTempDir("xsclaw-kill-")(async (dir) => {
		const ca = await makeTestCA(join(dir, "ca"));
		const data = join(dir, "data");
		const args = ["--modules", MAP, "--data", data, "--ca", ca.paths.ca];
		const mock = await startMockLLM({ tls: ca.server, host: "127.0.0.1" });
		const firmwares = [];
		try {
			const fw = await startConfigured(args, variant, mock, PROTOCOLS[0], firmwares);
			const before = await twoTurns(fw, mock);
			const first = await fw.end();
			assert.equal(first.code, 0, first.stderr.slice(-2000));

			// The index as it was before the last two batches ([user Q2], [answer A2]).
			truncateSync(join(data, "files", "sessions", `${before.id}.idx`), INDEX_HEADER_BYTES + 4 * INDEX_ENTRY_BYTES);
			const inspected = inspectSessions(data);
			assert.equal(inspected.status, 1, inspected.stdout);
			assert.match(inspected.stdout, /finding: the index lists 4 records, the data file holds 6 \(open\(\) rebuilds the index\)/);

			const fw2 = await startConfigured(args, variant, mock, PROTOCOLS[0], firmwares);
			const listed = await currentSession(fw2);
			t.diagnostic(`\`session\` after the restart: ${listed.records} records (6 on flash)`);
			assert.equal(listed.id, before.id);
			assert.equal(listed.records, 6, "`session` counts the records in the data file, not the entries of an index left behind");

			const n = mock.requests.length;
			mock.script({ type: "text", text: A4 });
			await ask(fw2, Q4, A4);
			assert.deepEqual(shape(conversation(mock.requests[n])), [...EARLIER.slice(0, -1), `U:${Q4} +context`]);
			const result = await fw2.end();
			assert.equal(result.code, 0, result.stderr.slice(-2000));
			assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
		} finally {
			for (const f of firmwares) await f.kill();
			await mock.close();
		}
	})());
}
