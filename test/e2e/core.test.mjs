// The agent core as a person meets it: the firmware on the lin host, its console on
// a pipe, the mock LLM (tools/mock-llm) over TLS with the test CA (--ca). Each test
// configures the LLM with `config set llm.*`, then talks through `ask`, `cancel`
// and `status`, and checks what the console printed and what the mock received:
// the tool results sent back, and how much of each request repeats the previous
// one byte for byte (prompt-cache friendliness, SPEC §4).
import { test } from "node:test";
import assert from "node:assert/strict";
import { PROTOCOLS, WAIT_MS, configureLlm, until, withMockAndFirmware } from "./firmware.mjs";
import { VARIANTS } from "./xs.mjs";

const KEY = "sk-core-e2e-secret-0123456789";

/** How many bytes `current` and `previous` share from the start. */
function commonPrefix(previous, current) {
	const a = Buffer.from(previous), b = Buffer.from(current);
	const n = Math.min(a.length, b.length);
	let i = 0;
	while (i < n && a[i] === b[i]) i++;
	return i;
}

/** The tool results of a request body, by protocol: [{id, content, is_error}]. */
function toolResults(record) {
	const results = [];
	for (const m of record.json.messages) {
		if (m.role === "tool") results.push({ id: m.tool_call_id, content: m.content, is_error: m.is_error === true });
		if (m.role === "user" && Array.isArray(m.content)) {
			for (const block of m.content) {
				if (block.type !== "tool_result") continue;
				const content = typeof block.content === "string" ? block.content : block.content.map((c) => c.text).join("");
				results.push({ id: block.tool_use_id, content, is_error: block.is_error === true });
			}
		}
	}
	return results;
}

const withFirmware = (variant, fn) => withMockAndFirmware(variant, fn, { key: KEY, prefix: "xsclaw-core-" });
const configure = (fw, mock, protocol) => configureLlm(fw, mock, protocol, KEY);

for (const variant of VARIANTS) {
	test(`ask with no LLM configured answers with what to set, and sends nothing [${variant}]`, async () => {
		await withFirmware(variant, async ({ fw, mock }) => {
			fw.send("ask hello");
			await fw.until(/the LLM is not configured: use `config set llm\.api_key \.\.\.`/);
			fw.send("ask");
			await fw.until(/^usage: ask TEXT$/m);
			assert.equal(mock.requests.length, 0);
		});
	});

	for (const protocol of PROTOCOLS) {
		test(`ask runs two tool rounds (get_time, then system_info) and prints the answer; each request repeats the previous one's bytes [${protocol.name}, ${variant}]`, async (t) => {
			await withFirmware(variant, async ({ fw, mock }) => {
				await configure(fw, mock, protocol);
				// One plain exchange first, so the asked question has a session history, as it usually does.
				mock.script({ type: "text", text: "Hello! I am xsclaw, running on lin." });
				const hello = fw.stdout.length;
				fw.send("ask hello, who are you?");
				await fw.until(/^Hello! I am xsclaw, running on lin\.$/m, { from: hello });
				mock.script(
					{ type: "tool_calls", calls: [{ id: "call_time", name: "get_time", arguments: {} }] },
					{ type: "tool_calls", calls: [{ id: "call_info", name: "system_info", arguments: {} }] },
					{ type: "text", text: "It is late and the board is fine.\nAnything else?" },
				);
				const from = fw.stdout.length;
				fw.send("ask what time is it, and how is the board?");
				await fw.until(/Anything else\?\n/, { from });
				const printed = fw.printed(from);
				assert.match(printed, /… get_time\n… system_info\nIt is late and the board is fine\.\nAnything else\?\n/);

				const asked = mock.requests.slice(-3);
				assert.equal(asked.length, 3, "three LLM rounds");
				assert.ok(asked.every((r) => r.protocol === protocol.name));
				assert.ok(asked[0].body.includes("Hello! I am xsclaw, running on lin."), "the session's history reaches the model");
				const [time] = toolResults(asked[1]);
				assert.equal(time.id, "call_time");
				assert.equal(time.is_error, false);
				const clock = JSON.parse(time.content);
				assert.equal(clock.clock_set, true);
				assert.ok(Math.abs(Date.parse(clock.utc) - Date.now()) < 60_000, `get_time is the wall clock: ${clock.utc}`);
				const results = toolResults(asked[2]);
				assert.deepEqual(results.map((r) => r.id), ["call_time", "call_info"], "the first round's result is kept");
				const info = results[1].content;
				assert.match(info, /^xsclaw \S+ on lin, up \d+ s$/m);
				const chunks = /JS heap: chunks (\d+)\/(\d+) KiB used/.exec(info);
				assert.ok(chunks && Number(chunks[1]) > 0 && Number(chunks[2]) >= Number(chunks[1]), info);
				const offered = protocol.name === "openai" ? asked[0].json.tools.map((d) => d.function.name) : asked[0].json.tools.map((d) => d.name);
				assert.ok(offered.includes("get_time") && offered.includes("system_info"), `tools offered: ${offered}`);

				// Each request must repeat the previous one byte for byte up to its closing
				// brackets (messages come last): all a prompt cache could reuse is reused.
				const bytes = asked.map((r) => Buffer.byteLength(r.body));
				const prefixes = [1, 2].map((i) => commonPrefix(asked[i - 1].body, asked[i].body));
				const shares = prefixes.map((p, i) => p / bytes[i + 1]);
				const share = (prefixes[0] + prefixes[1]) / (bytes[1] + bytes[2]);
				t.diagnostic(`prompt prefix [${protocol.name}]: identical-prefix bytes ${prefixes.join(", ")} of request bytes ${bytes.join(", ")}; share per request ${shares.map((x) => x.toFixed(3)).join(", ")}, over the ask ${share.toFixed(3)}`);
				for (const i of [0, 1]) assert.ok(bytes[i] - prefixes[i] <= 2, `request ${i + 2} repeats request ${i + 1} but for its last ${bytes[i] - prefixes[i]} bytes`);
				for (const [i, x] of shares.entries()) assert.ok(x >= 0.9, `request ${i + 2} repeats at least 90% of its bytes from request ${i + 1}: ${x.toFixed(3)}`);
				// The persona is said once: by the profile section, not by the framework prompt too.
				const system = protocol.name === "openai" ? asked[0].json.messages[0].content : asked[0].json.system.map((b) => b.text).join("");
				assert.equal(system.split("You are xsclaw").length - 1, 1, `one persona in the system prompt:\n${system}`);
				assert.ok(system.indexOf("You run inside xsclaw") < system.indexOf("## profile"), "the framework prompt comes first, then the profile");
			});
		});
	}

	test(`spawn_subagent: the ask answers at once, the subagent runs with no restricted tools, and the reply to its report is printed on the console [${variant}]`, async (t) => {
		await withFirmware(variant, async ({ fw, mock }) => {
			await configure(fw, mock, PROTOCOLS[0]);
			const before = mock.requests.length;
			// Two cores share the mock, so each request's reply is chosen when it arrives.
			// They also share the Llm, which runs one call at a time in arrival order:
			// the subagent's tool round puts its second call behind the root's, so its
			// report comes after the ask has its answer.
			const rootReplies = [
				{ type: "tool_calls", calls: [{ id: "call_spawn", name: "spawn_subagent", arguments: { task: "Find out how long the board has been up." } }] },
				{ type: "text", text: "A helper is looking into it." },
				{ type: "text", text: "The helper reports: up a few seconds." },
			];
			const subReplies = [
				{ type: "tool_calls", calls: [{ id: "call_sub_info", name: "system_info", arguments: {} }] },
				{ type: "text", text: "The board has been up for a few seconds." },
			];
			mock.hooks.onRequest = (record) => {
				const replies = record.body.includes("You are a subagent inside xsclaw") ? subReplies : rootReplies;
				if (replies.length) mock.script(replies.shift());
			};
			const from = fw.stdout.length;
			fw.send("ask how long has the board been up? use a helper");
			await fw.until(/^A helper is looking into it\.$/m, { from });
			await fw.until(/agent \(request \d+\):\nThe helper reports: up a few seconds\.\n/, { from });
			const calls = mock.requests.slice(before);
			const subCalls = calls.filter((r) => r.body.includes("You are a subagent inside xsclaw"));
			const rootCalls = calls.filter((r) => !subCalls.includes(r));
			assert.deepEqual([rootCalls.length, subCalls.length], [3, 2], "three root calls, two subagent calls");
			assert.match(toolResults(subCalls[1])[0].content, /^xsclaw \S+ on lin/, "the subagent ran a tool");
			assert.ok(rootCalls[0].json.tools.some((d) => d.function.name === "spawn_subagent"), "the root is offered spawn_subagent");
			const spawned = toolResults(rootCalls[1]).find((r) => r.id === "call_spawn");
			assert.match(spawned.content, /^started subagent sub-1; its result will arrive in this conversation/);
			const sub = subCalls[1];
			assert.ok(!sub.json.tools.some((d) => d.function.name === "spawn_subagent"), "no spawn_subagent for the subagent");
			assert.deepEqual(sub.json.messages.filter((m) => m.role === "user").map((m) => m.content.split("\n\n[request context]")[0]), ["Find out how long the board has been up."], "the subagent has only its task");
			const report = rootCalls[2];
			const reportText = report.json.messages.at(-1).content;
			assert.ok(reportText.startsWith('<subagent_completed agent_id="sub-1">\nThe board has been up for a few seconds.\n</subagent_completed>'), reportText);
			assert.ok(report.body.includes("how long has the board been up? use a helper"), "the report runs in the parent's session, with its history");
			fw.send("status");
			await fw.until(/^subagents: none running$/m, { from });
		});
	});

	test(`cancel during a stalled request prints "request cancelled" at once; a second ask waits its turn; status shows the phase [${variant}]`, async (t) => {
		await withFirmware(variant, async ({ fw, mock }) => {
			await configure(fw, mock, PROTOCOLS[0]);
			// The stalled call could end only at this timeout, ten times WAIT_MS: a
			// "request cancelled" within WAIT_MS of the cancel came from the cancel.
			await fw.run(`config set llm.timeout_ms ${10 * WAIT_MS}`, /^ok: /m);
			mock.script({ type: "text", fault: "stall" }, { type: "text", text: "the second answer" });
			const before = mock.requests.length;
			const from = fw.stdout.length;
			fw.send("ask wait forever");
			fw.send("ask the second question");
			await until(() => mock.requests.length === before + 1, "the first request to reach the mock");
			fw.send("status");
			await fw.until(/^agent: IN_LLM_HTTP, request \d+ in flight, \d+ waiting$/m, { from });
			await new Promise((r) => setTimeout(r, 200));
			assert.equal(mock.requests.length, before + 1, "the second ask has not been sent while the first runs");

			const cancelAt = Date.now();
			fw.send("cancel");
			await fw.until(/^error: request cancelled$/m, { from });
			const ms = Date.now() - cancelAt;
			t.diagnostic(`cancel typed -> "error: request cancelled" printed: ${ms} ms`);
			await until(() => mock.requests[before].response.closedAt !== null, "the mock to see the stalled connection closed");
			await fw.until(/^the second answer$/m, { from });
			const printed = fw.printed(from);
			assert.ok(printed.indexOf("error: request cancelled") < printed.indexOf("the second answer"), "answers in order");
			assert.match(printed, /^request \d+ cancelled$/m);
			assert.equal(mock.requests.length, before + 2);
			assert.equal(mock.requests[before + 1].json.messages.at(-1).role, "user");

			const idle = fw.stdout.length;
			fw.send("cancel");
			await fw.until(/^nothing is running$/m, { from: idle });
		});
	});
}
