// The peer comparison's checks (tools/bench/peer/check.mjs): a conversation heard
// whole passes, and each way of hearing it wrong (a cut answer, other tool
// arguments, a failed or missing tool result, an extra request, other reply
// bytes) is refused. Then the peer driver (tools/bench/peer/pi-agent.mjs, on
// @mariozechner/pi-agent-core) talks two turns to the mock in each protocol and
// passes the same checks, and two mocks with the fixed clock serve a script's
// replies byte for byte (what lets the bench compare the sides' reply digests).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { CREATED, checkSameReplies, checkTurn, consoleTurn, conversation, toolRound } from "../../tools/bench/peer/check.mjs";

// Bounds for hangs, not speed targets: a child Node process starts slowly on a loaded machine.
const T = { timeout: 120_000 };
const DRIVER = fileURLToPath(new URL("../../tools/bench/peer/pi-agent.mjs", import.meta.url));

/** The two request records of a turn heard right, as the mock keeps them, in the protocol's shape. */
function records(protocol, turn, { args = turn.call.arguments, result, callId = turn.call.id } = {}) {
	const content = result ?? JSON.stringify({ utc: "2026-12-01T18:00:00.000Z", local: "2026-12-01 18:00:00", timezone: args.timezone, clock_set: true, uptime_s: 3 });
	const user = { role: "user", content: `${turn.question}\n\n[time: now]` };
	const messages = protocol === "openai"
		? [user, { role: "assistant", content: "Let me look.", tool_calls: [{ id: callId, type: "function", function: { name: "get_time", arguments: JSON.stringify(args) } }] },
			{ role: "tool", tool_call_id: callId, content }]
		: [user, { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: callId, name: "get_time", input: args }] },
			{ role: "user", content: [{ type: "tool_result", tool_use_id: callId, content }] }];
	const record = (body, i) => ({ protocol, path: protocol === "openai" ? "/v1/chat/completions" : "/v1/messages", stream: true, body: JSON.stringify(body), response: { status: 200, complete: true, sha256: `digest${i}` } });
	return [record({ messages: [user] }, 1), record({ messages }, 2)];
}

for (const protocol of ["openai", "anthropic"]) {
	const turn = conversation(protocol, 3)[1];
	const ran = [{ name: "get_time", arguments: turn.call.arguments }];

	test(`${protocol}: a turn heard whole passes, and the tool round reads back`, () => {
		const requests = records(protocol, turn);
		assert.deepEqual(checkTurn(protocol, turn, { requests, answer: turn.answer, ran }), []);
		assert.deepEqual(checkTurn(protocol, turn, { requests, answer: turn.answer, ran: [{ name: "get_time" }] }), []);
		const round = toolRound(protocol, JSON.parse(requests[1].body));
		assert.deepEqual(round.calls, [{ id: turn.call.id, name: "get_time", arguments: turn.call.arguments }]);
		assert.equal(round.results.length, 1);
	});

	test(`${protocol}: each way of hearing a turn wrong is refused, naming the turn`, () => {
		const wrong = [
			["a cut answer", { requests: records(protocol, turn), answer: turn.answer.slice(0, -3), ran }, /answer is not the one/],
			["no answer", { requests: records(protocol, turn), answer: null, ran }, /answer is not the one/],
			["other arguments", { requests: records(protocol, turn, { args: { timezone: "Mars/Olympus" } }), answer: turn.answer, ran }, /came back as get_time/],
			["a failed tool", { requests: records(protocol, turn, { result: "error: unknown time zone" }), answer: turn.answer, ran }, /tool did not answer/],
			["another call id", { requests: records(protocol, turn, { callId: "call_other" }), answer: turn.answer, ran }, /does not send back the call/],
			["one request", { requests: records(protocol, turn).slice(1), answer: turn.answer, ran }, /saw 1 requests, not 2/],
			["a tool run twice", { requests: records(protocol, turn), answer: turn.answer, ran: [...ran, ...ran] }, /the side ran/],
			["another question", { requests: records(protocol, conversation(protocol, 3)[2]), answer: turn.answer, ran }, /does not carry the turn's question/],
		];
		for (const [what, input, pattern] of wrong) {
			const problems = checkTurn(protocol, turn, input);
			assert.ok(problems.some((p) => pattern.test(p) && p.startsWith("turn 2: ")), `${what}: ${JSON.stringify(problems)}`);
		}
		const unfinished = records(protocol, turn);
		unfinished[1].response = { status: 200, complete: false, sha256: null };
		assert.match(checkTurn(protocol, turn, { requests: unfinished, answer: turn.answer, ran }).join("\n"), /not delivered whole/);
	});
}

test("replies are compared request by request", () => {
	const a = records("openai", conversation("openai", 1)[0]);
	assert.deepEqual(checkSameReplies(a, records("openai", conversation("openai", 1)[0])), []);
	const b = records("openai", conversation("openai", 1)[0]);
	b[1].response.sha256 = "other";
	assert.match(checkSameReplies(a, b)[0], /reply 2 differs/);
	assert.match(checkSameReplies(a, b.slice(1))[0], /2 requests, the other 1/);
});

test("the console's lines of a turn: tool lines, then the answer", () => {
	assert.deepEqual(consoleTurn("… get_time\nIt is noon.\n"), { answer: "It is noon.", tools: ["get_time"], rest: "" });
	assert.deepEqual(consoleTurn("… get_time\n"), { answer: null, tools: ["get_time"], rest: "" });
	assert.equal(consoleTurn("error: the LLM is not configured\n").answer, "error: the LLM is not configured");
});

/** Two turns of the conversation through the peer driver; resolves the mock's records. */
async function peerTurns(protocol, turns) {
	const mock = await startMockLLM({ created: CREATED });
	mock.script(turns.flatMap((t) => t.scenarios));
	const tools = [{ name: "get_time", description: "the time", parameters: { type: "object", properties: { timezone: { type: "string" } }, additionalProperties: false } }];
	const config = { protocol, baseUrl: protocol === "openai" ? `${mock.url}/v1` : mock.url, model: "bench-model", apiKey: "sk-test", systemPrompt: "You are a test.", tools };
	const child = spawn(process.execPath, [DRIVER, JSON.stringify(config)], { stdio: ["pipe", "pipe", "inherit"] });
	const killer = setTimeout(() => child.kill("SIGKILL"), 100_000);
	try {
		const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
		assert.equal((await lines.next()).value, "ready");
		const answers = [];
		for (const turn of turns) {
			child.stdin.write(`${turn.question}\n`);
			answers.push(JSON.parse((await lines.next()).value));
		}
		child.stdin.end();
		return { answers, requests: mock.requests };
	} finally {
		clearTimeout(killer);
		child.kill("SIGKILL");
		await mock.close();
	}
}

test("pi-agent-core hears two turns whole in each protocol (both at once)", T, async () => {
	await Promise.all(["openai", "anthropic"].map(async (protocol) => {
		const turns = conversation(protocol, 2);
		const { answers, requests } = await peerTurns(protocol, turns);
		assert.equal(requests.length, 4, protocol);
		turns.forEach((turn, i) => {
			const { text, toolCalls, error } = answers[i];
			assert.equal(error, null, protocol);
			assert.deepEqual(checkTurn(protocol, turn, { requests: requests.slice(2 * i, 2 * i + 2), answer: text, ran: toolCalls }), [], protocol);
		});
	}));
});

test("two mocks with the fixed clock serve one script byte for byte (the sides' replies can match)", T, async () => {
	const digests = [];
	for (let run = 0; run < 2; run++) {
		if (run === 1) await new Promise((resolve) => setTimeout(resolve, 1100)); // another second on the clock
		const mock = await startMockLLM({ created: CREATED });
		try {
			mock.script(conversation("openai", 1)[0].scenarios);
			const response = await fetch(`${mock.url}/v1/chat/completions`, {
				method: "POST",
				headers: { "content-type": "application/json" },
				body: JSON.stringify({ model: "m", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] }),
			});
			const body = Buffer.from(await response.arrayBuffer());
			assert.equal(mock.requests[0].response.sha256, createHash("sha256").update(body).digest("hex"));
			digests.push(mock.requests[0].response.sha256);
		} finally {
			await mock.close();
		}
	}
	assert.equal(digests[0], digests[1]);
});
