// The scripted conversation of the peer comparison (tools/bench/peer.mjs) and the
// checks that each side heard all of it: both sides get these turns from the
// mock LLM, byte for byte, and a turn counts only when its answer is complete and
// its tool ran with the arguments the model asked for. Plain functions over the
// mock's request records, so test/e2e/peer-check.test.mjs can feed them wrong
// conversations and see each one refused.

export const TURNS = 20;
/** Every OpenAI reply's `created`, so replies do not depend on the clock. */
export const CREATED = 1_764_547_200;

const ZONES = ["UTC", "+08:00", "-05:00", "+05:30"];

/**
 * The conversation: per turn a question, the tool call the model makes (with the
 * text before it) and the answer after the tool's result. Answers are a few
 * hundred bytes with non-ASCII text (streamed 8 code points a delta, so some
 * deltas end inside a multi-byte character on the wire), as real ones are.
 */
export function conversation(protocol, turns = TURNS) {
	const prefix = protocol === "anthropic" ? "toolu_bench" : "call_bench";
	return Array.from({ length: turns }, (_, i) => {
		const n = i + 1;
		const timezone = ZONES[i % ZONES.length];
		const call = { id: `${prefix}_${n}`, name: "get_time", arguments: { timezone } };
		const answer = `Turn ${n}: I asked the clock for ${timezone}. It says the day is young — café au lait at the terrace, ` +
			`30 °C in the shade, a good hour for the ${n}th walk. Naïve plans hold until noon; after that, ` +
			`see what the sky brings (☀, 🌤 or ☂). The tool answered in time, and this answer is ${n} of ${turns}.`;
		return {
			question: `Question ${n}: what time is it in ${timezone}? Then tell me about the day.`,
			call,
			answer,
			scenarios: [
				{ type: "tool_calls", text: `Let me look at the clock (${timezone}).`, calls: [call], usage: { input_tokens: 1000 + n, output_tokens: 20 } },
				{ type: "text", text: answer, usage: { input_tokens: 1100 + n, output_tokens: 90 } },
			],
		};
	});
}

function parseBody(record) {
	if (record.json && typeof record.json === "object") return record.json;
	try {
		return JSON.parse(record.body);
	} catch {
		return null;
	}
}

const textOf = (content) =>
	typeof content === "string" ? content : Array.isArray(content) ? content.filter((b) => b?.type === "text").map((b) => b.text).join("") : "";

/**
 * The tool round a request sends back: the calls of its last assistant message
 * and the results that follow it. {calls: [{id, name, arguments}], results:
 * [{id, content, isError}]}, arguments parsed (null when they are not JSON).
 */
export function toolRound(protocol, body) {
	const messages = Array.isArray(body?.messages) ? body.messages : [];
	const at = messages.findLastIndex((m) => m?.role === "assistant");
	if (at < 0) return { calls: [], results: [] };
	const after = messages.slice(at + 1);
	if (protocol === "openai") {
		const calls = (messages[at].tool_calls ?? []).map((c) => {
			let args = null;
			try {
				args = JSON.parse(c.function?.arguments ?? "");
			} catch {
				// stays null: not JSON
			}
			return { id: c.id, name: c.function?.name, arguments: args };
		});
		const results = after.filter((m) => m.role === "tool").map((m) => ({ id: m.tool_call_id, content: textOf(m.content), isError: false }));
		return { calls, results };
	}
	const blocks = Array.isArray(messages[at].content) ? messages[at].content : [];
	const calls = blocks.filter((b) => b?.type === "tool_use").map((b) => ({ id: b.id, name: b.name, arguments: b.input ?? null }));
	const results = after.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
		.filter((b) => b?.type === "tool_result")
		.map((b) => ({ id: b.tool_use_id, content: textOf(b.content), isError: b.is_error === true }));
	return { calls, results };
}

function sameJson(a, b) {
	if (a === b) return true;
	if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
	const keys = Object.keys(a);
	return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

/**
 * The problems of one turn (an empty array when it is complete):
 *   requests  the mock's two records of the turn (the tool call, then the answer)
 *   answer    the final text the side printed or returned
 *   ran       what the side says it ran: [{name, arguments}], or [{name}] where it
 *             shows names only (the console's `… NAME` lines); the arguments it ran
 *             with are checked through the tool's result in the next request
 */
export function checkTurn(protocol, turn, { requests, answer, ran }) {
	const problems = [];
	const n = turn.question.match(/\d+/)?.[0] ?? "?";
	const say = (why) => problems.push(`turn ${n}: ${why}`);
	if (requests.length !== 2) {
		say(`the mock saw ${requests.length} requests, not 2 (one tool round)`);
		return problems;
	}
	requests.forEach((r, i) => {
		if (r.protocol !== protocol) say(`request ${i + 1} went to ${r.path} (${r.protocol ?? "no"} protocol), not ${protocol}`);
		if (!r.stream) say(`request ${i + 1} did not ask for a streamed reply`);
		if (r.response.status !== 200 || !r.response.complete) say(`request ${i + 1}'s reply was not delivered whole (status ${r.response.status})`);
	});
	const first = parseBody(requests[0]);
	const lastUser = first?.messages?.findLast((m) => m?.role === "user");
	if (!textOf(lastUser?.content).includes(turn.question)) say("the first request does not carry the turn's question");
	const round = toolRound(protocol, parseBody(requests[1]));
	if (round.calls.length !== 1) say(`the tool round has ${round.calls.length} calls, not 1`);
	const call = round.calls.find((c) => c.id === turn.call.id);
	if (!call) say(`the tool round does not send back the call ${turn.call.id}`);
	else if (call.name !== turn.call.name || !sameJson(call.arguments, turn.call.arguments))
		say(`the call came back as ${call.name}(${JSON.stringify(call.arguments)}), not ${turn.call.name}(${JSON.stringify(turn.call.arguments)})`);
	const result = round.results.find((r) => r.id === turn.call.id);
	if (!result) say(`no tool result for ${turn.call.id}`);
	else {
		let parsed = null;
		try {
			parsed = JSON.parse(result.content);
		} catch {
			// reported below
		}
		if (result.isError || !parsed || typeof parsed.utc !== "string" || parsed.timezone !== turn.call.arguments.timezone)
			say(`the tool did not answer for ${turn.call.arguments.timezone}: ${result.content.slice(0, 200)}`);
	}
	const expected = ran?.length === 1 && !("arguments" in ran[0]) ? [{ name: turn.call.name }] : [{ name: turn.call.name, arguments: turn.call.arguments }];
	if (!sameJson(ran, expected)) say(`the side ran ${JSON.stringify(ran)}, not ${JSON.stringify(expected)}`);
	if (answer !== turn.answer) say(`the answer is not the one the mock sent: ${JSON.stringify(answer)}`);
	return problems;
}

/** Problems unless two runs of the conversation got the same reply bytes, request by request. */
export function checkSameReplies(a, b) {
	if (a.length !== b.length) return [`one side made ${a.length} requests, the other ${b.length}`];
	const differ = a.findIndex((r, i) => !r.response.sha256 || r.response.sha256 !== b[i].response.sha256);
	return differ < 0 ? [] : [`reply ${differ + 1} differs between the sides (sha256 ${a[differ].response.sha256} / ${b[differ].response.sha256})`];
}

/**
 * What the firmware's console printed for one `ask` (prompts removed): a line
 * `… NAME` per tool it ran, then the answer. {answer, tools: [NAME]}; the answer
 * is null until a line other than a tool line came.
 */
export function consoleTurn(printed) {
	const lines = printed.split("\n");
	const tools = [];
	for (let i = 0; i < lines.length - 1; i++) {
		if (lines[i].startsWith("… ")) tools.push(lines[i].slice(2));
		else return { answer: lines[i], tools, rest: lines.slice(i + 1).join("\n") };
	}
	return { answer: null, tools, rest: "" };
}
