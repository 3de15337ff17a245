// The agent core's loop: the tool-round cap, failing tools as is_error results,
// parallel and run-alone rounds, persistence batches, user interrupts during
// HTTP, stage messages, the not-configured answer, observers and events.
import { assert, test } from "testing";
import { CORE_STAGE_ARGS_PREVIEW_MAX_CHARS, CORE_STAGE_SUMMARY_MAX_CHARS, MAX_TOOL_ITERATIONS } from "budgets";
import { ProviderFlag, RequestFlag, type ChatModel, type ContextProvider, type OutEvent, type PersistBatch, type ToolCallInfo } from "core/types";
import { Sessions } from "store/sessions";
import { ANSWER_MS, FakeModel, ROUTER_FLAGS, delay, harness, request, textOf, waitFor, type Step } from "./core_fakes";

test("the tool loop stops at the iteration cap with a clear error", async () => {
	const steps: Step[] = [];
	for (let i = 0; i < MAX_TOOL_ITERATIONS + 2; i++) steps.push({ calls: [{ name: "again" }] });
	const model = new FakeModel(...steps);
	const { core } = harness(model);
	const answer = await core.receiveFor(await core.submit(request("loop forever")), ANSWER_MS);
	assert.equal(answer.ok, false);
	assert.match(answer.error ?? "", /^stopped after 10 tool rounds without a final answer/);
	assert.equal(model.requests.length, MAX_TOOL_ITERATIONS);
});

test("a lone surrogate in the model's answer becomes U+FFFD before the session or the next round sees it", async () => {
	const lone = `half ${String.fromCharCode(0xd83d)} of a pair, 😀 whole`;
	const model = new FakeModel({ text: lone }, { text: "again" });
	const { core } = harness(model);
	const answer = await core.receiveFor(await core.submit(request("hi")), ANSWER_MS);
	assert.equal(answer.text, "half \ufffd of a pair, 😀 whole");
	await core.receiveFor(await core.submit({ ...request("more"), session_id: answer.session_id }), ANSWER_MS);
	assert.ok(!JSON.stringify(model.requests.at(-1)).includes("\\ud83d"), "the next request carries no lone surrogate");
});

test("a failing tool is returned to the model as is_error and the loop goes on", async () => {
	const model = new FakeModel({ calls: [{ name: "broken", id: "c1" }, { name: "fine", id: "c2" }] }, { text: "I worked around it" });
	const { core } = harness(model, {
		callCap: (call: ToolCallInfo) => {
			if (call.name === "broken") throw new Error("sensor not connected");
			return { content: "42" };
		},
	});
	const answer = await core.receiveFor(await core.submit(request("read it")), ANSWER_MS);
	assert.equal(answer.text, "I worked around it");
	const tools = model.requests[1].messages.filter((m) => m.role === "tool");
	assert.deepEqual(tools, [
		{ role: "tool", tool_call_id: "c1", content: "sensor not connected", is_error: true },
		{ role: "tool", tool_call_id: "c2", content: "42" },
	], "results in call order");
});

function concurrencyProbe() {
	const probe = { active: 0, most: 0, order: [] as string[] };
	const callCap = async (call: ToolCallInfo) => {
		probe.active++;
		probe.most = Math.max(probe.most, probe.active);
		probe.order.push(call.name);
		await delay(15);
		probe.active--;
		return { content: call.name };
	};
	return { probe, callCap };
}

test("independent calls of one round run concurrently", async () => {
	const { probe, callCap } = concurrencyProbe();
	const { core } = harness(new FakeModel({ calls: [{ name: "a" }, { name: "b" }, { name: "c" }] }, { text: "done" }), { callCap });
	await core.receiveFor(await core.submit(request("all at once")), ANSWER_MS);
	assert.equal(probe.most, 3);
});

test("a round with a run-alone tool runs its calls one by one, in order", async () => {
	const { probe, callCap } = concurrencyProbe();
	const { core } = harness(new FakeModel({ calls: [{ name: "a" }, { name: "gpio" }, { name: "b" }] }, { text: "done" }), {
		callCap, runsAlone: (name) => name === "gpio",
	});
	await core.receiveFor(await core.submit(request("careful")), ANSWER_MS);
	assert.equal(probe.most, 1);
	assert.deepEqual(probe.order, ["a", "gpio", "b"]);
});

test("persist batches come in order: USER first, one per tool round, FINAL with turn_completed", async () => {
	const batches: PersistBatch[] = [];
	const model = new FakeModel({ calls: [{ name: "a" }] }, { calls: [{ name: "b" }, { name: "c" }] }, { text: "done" });
	const { core } = harness(model, {
		persist: (b) => { batches.push(JSON.parse(JSON.stringify(b))); },
	});
	await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	assert.deepEqual(batches.map((b) => [b.records.map((r) => r.kind).join("+"), b.turn_completed]), [
		["user", false], ["assistant_tool+tool_result", false], ["assistant_tool+tool_result+tool_result", false], ["assistant_final", true],
	]);
	const sent = model.requests[0].messages.at(-1)!;
	assert.match(textOf(sent), /^go\n\n\[request context\]\ntime: /);
	assert.equal(textOf(batches[0].records[0].message), textOf(sent), "the question as the first round sent it, its volatile block too: the next request's history repeats it byte for byte");
	const assistant = batches[1].records[0].message;
	assert.ok(assistant.role === "assistant" && assistant.raw !== undefined, "the assistant message keeps raw");
	assert.ok(batches.every((b) => b.session_id === "s1"));
});

test("across requests of a session the next request repeats the previous one byte for byte from its start: the question is kept as it was sent", async () => {
	const sessions = new Sessions({ log: () => {} });
	const session = `across-${Date.now().toString(36)}`;
	// A volatile section that differs with every question, as memory's relevant picks do.
	const picks: ContextProvider = { name: "relevant", flags: ProviderFlag.VOLATILE | ProviderFlag.REQUEST_START_ONLY, collect: (r) => ({ kind: "system_prompt", content: `picked for ${r.user_text}` }) };
	const model = new FakeModel({ text: "one" }, { calls: [{ name: "a" }] }, { text: "two" }, { text: "three" });
	// The history's messages are the store's placeholders: loaded as a backend writes them.
	const loading: ChatModel = { chat: (r, options) => model.chat({ ...r, messages: r.messages.map((m) => (m.stored ? m.stored.load() : m)) }, options) };
	const { core } = harness(model, { model: loading, providers: [picks, sessions.historyProvider], persist: sessions.persist });
	try {
		for (const question of ["first?", "second?", "third?"]) {
			const answer = await core.receiveFor(await core.submit(request(question, { session_id: session })), ANSWER_MS);
			assert.ok(answer.ok, `${question}: ${answer.error}`);
		}
		// The cache marks move with the history's end (a provider's cache key is the content, not them).
		const bodies = model.requests.map((r) => JSON.stringify(r.messages, (key, value) => (key === "cache_breakpoint" ? undefined : value)));
		assert.equal(bodies.length, 4);
		// Request 2's first call repeats request 1's call whole; request 3's repeats request 2's last call (after its tool round).
		for (const [previous, next] of [[0, 1], [2, 3]]) {
			const a = bodies[previous].slice(0, -1), b = bodies[next];
			assert.ok(b.startsWith(a), `call ${next} does not repeat call ${previous}:\n${a.slice(-300)}\n---\n${b.slice(a.length - 300, a.length + 100)}`);
		}
	} finally {
		sessions.close();
	}
});

test("a failed request persists a failure note with the tool summary and not the failed call's text", async () => {
	const batches: PersistBatch[] = [];
	const { core } = harness(new FakeModel({ calls: [{ name: "a" }] }, { error: "HTTP 500: upstream broke" }), {
		persist: (b) => { batches.push(JSON.parse(JSON.stringify(b))); },
	});
	const answer = await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	assert.equal(answer.error, "HTTP 500: upstream broke");
	assert.deepEqual(batches.map((b) => b.records.map((r) => r.kind).join("+")), ["user", "assistant_tool+tool_result", "failure_note"]);
	const note = batches[2];
	assert.equal(note.turn_completed, true);
	assert.equal(textOf(note.records[0].message), "(no answer to this request: HTTP 500: upstream broke)\ntools run:\n- a: ok");
});

test("nothing is persisted for a request without a session", async () => {
	let batches = 0;
	const { core } = harness(new FakeModel({ calls: [{ name: "a" }] }, { text: "done" }), { persist: () => { batches++; } });
	await core.receiveFor(await core.submit(request("go", { session_id: "" })), ANSWER_MS);
	assert.equal(batches, 0);
});

test("a persist that throws is logged and the request still succeeds", async () => {
	const { core, logs, events } = harness(new FakeModel({ text: "still here" }), { persist: () => { throw new Error("flash full"); } });
	const answer = await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	assert.equal(answer.text, "still here");
	assert.ok(logs.some((l) => l.includes("flash full")), "logged");
	assert.equal(events[events.length - 1].type, "agent_end");
});

test("an interrupt during HTTP aborts the call, keeps finished tool results and continues with the new text", async () => {
	const model = new FakeModel({ calls: [{ name: "lookup", id: "c1" }] }, { hang: true }, { text: "answer to both" });
	const { core, events } = harness(model);
	const id = await core.submit(request("first question"));
	await waitFor(() => model.requests.length === 2 && core.phase === "IN_LLM_HTTP", "the second call");
	const inserted = await core.submit(request("actually, also this", { flags: RequestFlag.USER_INTERRUPT }));
	// Aborted by the time submit resolved: no wall-clock bound needed (nor safe on a loaded machine).
	assert.equal(model.aborted, 1, "aborted at once");
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.equal(answer.text, "answer to both");
	const third = model.requests[2].messages;
	assert.deepEqual(third.slice(2).map((m) => [m.role, textOf(m)]), [
		["assistant", ""], ["tool", "ran lookup {}"], ["user", "actually, also this"],
	]);
	assert.equal(core.lastMetrics?.rounds, 2, "the aborted call is not a round");
	assert.deepEqual(events.filter((e) => e.type === "turn_start").map((e) => e.type === "turn_start" && e.iteration), [1, 2, 2]);
	assert.equal((await core.receiveFor(inserted, 100)).text, "answer to both", "the interrupt is answered by the request it joined");
});

test("stage messages in simple mode name the round's tools", async () => {
	const published: OutEvent[] = [];
	const { core } = harness(new FakeModel({ calls: [{ name: "a" }, { name: "b" }] }, { text: "done" }), { publish: (e) => published.push(e) });
	await core.submit(request("go", { flags: ROUTER_FLAGS | RequestFlag.PUBLISH_STAGE_MESSAGE }));
	await waitFor(() => published.some((e) => e.type === "out_message"), "the answer");
	const stages = published.filter((e) => e.type === "agent_stage");
	assert.deepEqual(stages.map((e) => [e.channel, e.chat_id, e.text]), [["console", "c1", "running tools: a, b"]]);
});

test("stage messages in verbose mode carry the round, a reasoning summary and argument previews", async () => {
	const published: OutEvent[] = [];
	const long = "x".repeat(400);
	const { core } = harness(new FakeModel({ reasoning: `think ${long}`, calls: [{ name: "write", arguments: `{"text":"${long}"}` }] }, { text: "done" }), {
		publish: (e) => published.push(e), stageVerbosity: "verbose",
	});
	await core.submit(request("go", { flags: ROUTER_FLAGS | RequestFlag.PUBLISH_STAGE_MESSAGE }));
	await waitFor(() => published.some((e) => e.type === "out_message"), "the answer");
	const stage = published.find((e) => e.type === "agent_stage");
	const lines = (stage?.text ?? "").split("\n");
	assert.equal(lines.length, 2);
	assert.ok(lines[0].startsWith("round 1: think xxx"), lines[0]);
	assert.equal(lines[0].length, "round 1: ".length + CORE_STAGE_SUMMARY_MAX_CHARS);
	assert.equal(lines[1], `- write(${'{"text":"' + "x".repeat(CORE_STAGE_ARGS_PREVIEW_MAX_CHARS - 10)}…)`);
});

test("stage messages in verbose mode mask secret-looking argument values", async () => {
	const published: OutEvent[] = [];
	const { core } = harness(new FakeModel({ calls: [{ name: "wifi_set", arguments: `{"ssid":"home","password":"hunter22"}` }] }, { text: "done" }), {
		publish: (e) => published.push(e), stageVerbosity: "verbose",
	});
	await core.submit(request("go", { flags: ROUTER_FLAGS | RequestFlag.PUBLISH_STAGE_MESSAGE }));
	await waitFor(() => published.some((e) => e.type === "out_message"), "the answer");
	const stage = published.find((e) => e.type === "agent_stage");
	assert.equal((stage?.text ?? "").split("\n")[1], `- wifi_set({"ssid":"home","password":"********"})`);
});

test("no stage message is published without PUBLISH_STAGE_MESSAGE", async () => {
	const published: OutEvent[] = [];
	const { core } = harness(new FakeModel({ calls: [{ name: "a" }] }, { text: "done" }), { publish: (e) => published.push(e) });
	await core.submit(request("go", { flags: ROUTER_FLAGS }));
	await waitFor(() => published.length > 0, "the answer");
	assert.deepEqual(published.map((e) => e.type), ["out_message"]);
});

test("an unconfigured model fails the request with its guidance, logs outcome=error and saves nothing", async () => {
	const guidance = "the LLM is not configured: use `config set llm.api_key ...`";
	const model = new FakeModel({ text: "never asked" });
	model.notReady = () => guidance;
	const saved: string[] = [];
	const { core, logs } = harness(model, { persist: (batch) => void saved.push(...batch.records.map((r) => r.kind)) });
	const answer = await core.receiveFor(await core.submit(request("hi")), ANSWER_MS);
	assert.deepEqual([answer.ok, answer.text, answer.error], [false, "", guidance]);
	assert.deepEqual(saved, [], "not a turn: neither the question nor a failure note is saved");
	assert.equal(model.requests.length, 0, "nothing was sent");
	assert.ok(logs.some((l) => /^METRIC agent=root request=\d+ outcome=error /.test(l)), logs.join("\n"));
});

test("events pair every start with its end and map the model's message events", async () => {
	const { core, events } = harness(new FakeModel({ text: "thinking", calls: [{ name: "a", id: "c1" }] }, { text: "done" }));
	await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	assert.deepEqual(events.map((e) => e.type), [
		"agent_start",
		"turn_start", "message_start", "message_update", "message_end", "tool_execution_start", "tool_execution_end", "turn_end",
		"turn_start", "message_start", "message_update", "message_end", "turn_end",
		"agent_end",
	]);
	assert.ok(events.every((e) => e.agent_id === "root" && e.session_id === "s1"));
});

test("a throwing completion observer is logged and the others still hear", async () => {
	let heard = "";
	const { core, logs } = harness(new FakeModel({ text: "done" }));
	core.addCompletionObserver(() => { throw new Error("observer bug"); });
	core.addCompletionObserver((s) => { heard = `${s.ok} ${s.final_text} ${s.tool_calls_csv}`; });
	await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	assert.equal(heard, "true done ");
	assert.ok(logs.some((l) => l.includes("observer bug")));
});

test("a request's LLM calls share one signal until an interrupt aborts one; cancel aborts the call in flight", async () => {
	const model = new FakeModel({ calls: [{ name: "lookup", id: "c1" }] }, { hang: true }, { calls: [{ name: "lookup", id: "c2" }] }, { text: "done" }, { hang: true });
	const signals: unknown[] = [];
	const chat = model.chat.bind(model);
	model.chat = (sent, options) => {
		signals.push(options?.signal);
		return chat(sent, options);
	};
	const { core } = harness(model);
	const id = await core.submit(request("first question"));
	await waitFor(() => model.requests.length === 2 && core.phase === "IN_LLM_HTTP", "the second call");
	await core.submit(request("and this", { flags: RequestFlag.USER_INTERRUPT }));
	assert.equal((await core.receiveFor(id, ANSWER_MS)).text, "done");
	assert.equal(signals.length, 4);
	assert.ok(signals[1] === signals[0], "the second round's call reuses the request's signal");
	assert.ok(signals[2] !== signals[1], "a new signal after the interrupt aborted the call");
	assert.ok(signals[3] === signals[2]);
	// Cancel reaches the call in flight through its own signal (the model is not raced with it).
	const next = await core.submit(request("tell me a long story"));
	await waitFor(() => model.requests.length === 5 && core.phase === "IN_LLM_HTTP", "the hanging call");
	assert.equal(core.cancel(next), true);
	assert.equal((await core.receiveFor(next, ANSWER_MS)).error, "request cancelled");
	assert.equal(model.aborted, 2, "both hanging calls ended through their signal");
});
