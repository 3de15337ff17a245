// The agent core's queues and delivery: backpressure and FIFO order of the
// request queue, parked responses, SKIP_RESPONSE_QUEUE, PUBLISH_OUT_MESSAGE,
// the gate, cancel (in HTTP, in a tool, queued), interrupts of another session,
// the insert queue's limit, and the METRIC line.
import { assert, test } from "testing";
import { INSERT_QUEUE_DEPTH, REQUEST_QUEUE_DEPTH } from "budgets";
import { RequestFlag, type OutEvent, type ToolContext } from "core/types";
import { ANSWER_MS, FakeModel, FakeTimers, ROUTER_FLAGS, deferred, harness, request, userTexts, waitFor } from "./core_fakes";

const firstLine = (text: string) => text.split("\n")[0];

test("the fifth submit waits for room, then fails after its timeout with a busy sentence", async () => {
	const { core } = harness(new FakeModel({ hang: true }));
	await core.submit(request("a"));
	await waitFor(() => core.phase === "IN_LLM_HTTP", "the first request's call");
	for (const text of ["b", "c", "d", "e"]) await core.submit(request(text));
	assert.equal(core.queueDepth, REQUEST_QUEUE_DEPTH);
	const started = Date.now();
	await assert.rejects(core.submit(request("f"), 40), "the agent is busy: 4 requests are waiting; try again shortly");
	assert.ok(Date.now() - started >= 30, "the submit waited for its timeout");
	assert.equal(core.queueDepth, REQUEST_QUEUE_DEPTH, "the refused request was not queued");
	await assert.rejects(core.submit(request("g")), "the agent is busy");
	core.stop();
});

test("queued requests run in FIFO order and a waiting submit takes the room a started request leaves", async () => {
	const release = deferred();
	const model = new FakeModel({ until: release.promise, then: { text: "A" } }, { text: "B" }, { text: "C" }, { text: "D" }, { text: "E" }, { text: "G" });
	const { core } = harness(model);
	await core.submit(request("a"));
	await waitFor(() => core.phase === "IN_LLM_HTTP", "the first call");
	for (const text of ["b", "c", "d", "e"]) await core.submit(request(text));
	const waiting = core.submit(request("g"), ANSWER_MS);
	release.resolve();
	const id = await waiting;
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.equal(answer.text, "G");
	assert.deepEqual(model.requests.map((r) => firstLine(userTexts(r)[0])), ["a", "b", "c", "d", "e", "g"]);
});

test("a response for another request is parked until its owner asks", async () => {
	const { core } = harness(new FakeModel({ text: "one" }, { text: "two" }));
	const first = await core.submit(request("1"));
	const second = await core.submit(request("2"));
	const answer2 = await core.receiveFor(second, ANSWER_MS);
	assert.equal(answer2.text, "two");
	assert.equal(core.parkedResponses, 1, "the first answer waits for its owner");
	const answer1 = await core.receiveFor(first, 10);
	assert.deepEqual(answer1, { request_id: first, session_id: "s1", ok: true, text: "one" });
	assert.equal(core.parkedResponses, 0);
});

test("unclaimed responses beyond the queue depth drop the oldest with a log line", async () => {
	const model = new FakeModel();
	for (let i = 0; i < 5; i++) model.script({ text: `r${i}` });
	const { core, logs } = harness(model);
	const ids: number[] = [];
	for (let i = 0; i < 5; i++) ids.push(await core.submit(request(`q${i}`), ANSWER_MS));
	await waitFor(() => model.requests.length === 5 && core.phase === "IDLE", "all five requests");
	assert.equal(core.parkedResponses, 4);
	assert.ok(logs.some((l) => l.includes(`answer to request ${ids[0]}`) && l.includes("dropped")), "the drop is logged");
	assert.equal((await core.receiveFor(ids[4], 10)).text, "r4");
	await assert.rejects(core.receiveFor(ids[0], 20), `no answer to request ${ids[0]}`);
});

test("a SKIP_RESPONSE_QUEUE answer never enters the response queue", async () => {
	const { core, events } = harness(new FakeModel({ text: "pushed" }));
	const id = await core.submit(request("hi", { flags: RequestFlag.SKIP_RESPONSE_QUEUE }));
	await waitFor(() => events.some((e) => e.type === "agent_end"), "the end of the request");
	assert.equal(core.parkedResponses, 0);
	await assert.rejects(core.receiveFor(id, 30), `no answer to request ${id}`);
});

test("PUBLISH_OUT_MESSAGE publishes the final text to the target, correlated with the source message", async () => {
	const published: OutEvent[] = [];
	const { core } = harness(new FakeModel({ text: "hello there" }), { publish: (e) => published.push(e) });
	const id = await core.submit(request("hi", {
		flags: ROUTER_FLAGS, target: { channel: "telegram", chat_id: "42" },
		source: { channel: "router", chat_id: "r", sender_id: "u", message_id: "m9", cap: "" },
	}));
	await waitFor(() => published.length > 0, "the out_message");
	assert.deepEqual(published, [{ type: "out_message", channel: "telegram", chat_id: "42", text: "hello there", request_id: id, correlation_id: "m9" }]);
});

test("the gate answers without calling the model or persisting", async () => {
	const model = new FakeModel();
	let batches = 0;
	const { core } = harness(model, { gate: () => "this session is full: use /session new", persist: () => { batches++; } });
	const id = await core.submit(request("hi"));
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.deepEqual(answer, { request_id: id, session_id: "s1", ok: true, text: "this session is full: use /session new" });
	assert.equal(model.requests.length, 0);
	assert.equal(batches, 0);
});

test("cancel during HTTP ends the request with request cancelled at once", async () => {
	const model = new FakeModel({ hang: true });
	const { core } = harness(model);
	const id = await core.submit(request("slow"));
	await waitFor(() => core.phase === "IN_LLM_HTTP", "the call");
	assert.equal(core.cancel(id), true);
	const answer = await core.receiveFor(id, ANSWER_MS);
	// The hanging call never ends by itself, so any answer is the cancel's (how soon
	// is no pass mark: a loaded machine running the ASan host stalls for a while).
	assert.equal(answer.ok, false);
	assert.equal(answer.error, "request cancelled");
	assert.equal(model.aborted, 1, "the call saw the abort");
	assert.equal(core.cancel(id), false, "nothing left to cancel");
	assert.equal(core.cancel(0), false);
	assert.equal(core.phase, "IDLE");
});

test("a queued request can be cancelled before it starts", async () => {
	const model = new FakeModel({ hang: true });
	const { core } = harness(model);
	const first = await core.submit(request("first"));
	await waitFor(() => core.phase === "IN_LLM_HTTP", "the call");
	const second = await core.submit(request("second"));
	assert.equal(core.cancel(second), true);
	assert.equal(core.queueDepth, 0);
	const answer = await core.receiveFor(second, 100);
	assert.equal(answer.error, "request cancelled");
	assert.equal(core.inFlightId, first, "the request in flight goes on");
	core.cancel(0);
	await core.receiveFor(first, ANSWER_MS);
	assert.equal(model.requests.length, 1, "the cancelled request never reached the model");
});

test("cancel while a tool runs gives the tool the abort signal and ends the request cancelled", async () => {
	let sawAbort = false;
	const callCap = (_call: unknown, context: ToolContext) => new Promise<{ content: string }>((resolve) => {
		context.signal.addListener(() => { sawAbort = true; resolve({ content: "stopped" }); });
	});
	const { core } = harness(new FakeModel({ calls: [{ name: "slow_tool" }] }), { callCap });
	const id = await core.submit(request("run it"));
	await waitFor(() => core.phase === "RUNNING_TOOL", "the tool");
	assert.equal(core.cancel(0), true);
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.equal(answer.error, "request cancelled");
	assert.ok(sawAbort, "the tool's signal aborted");
});

test("an interrupt for another session is queued as a request, not lost", async () => {
	const model = new FakeModel({ hang: true }, { text: "other answer" });
	const { core } = harness(model);
	const first = await core.submit(request("mine"));
	await waitFor(() => core.phase === "IN_LLM_HTTP", "the call");
	const other = await core.submit(request("from another chat", { session_id: "s2", flags: RequestFlag.USER_INTERRUPT }));
	assert.equal(core.queueDepth, 1, "queued");
	assert.equal(model.aborted, 0, "the call in flight was not interrupted");
	core.cancel(first);
	const answer = await core.receiveFor(other, ANSWER_MS);
	assert.equal(answer.text, "other answer");
	assert.equal(firstLine(userTexts(model.requests[1])[0]), "from another chat");
});

test("a full insert queue refuses the next interrupt with a sentence", async () => {
	const release = deferred();
	const model = new FakeModel({ calls: [{ name: "wait" }] }, { text: "done" });
	const { core } = harness(model, { callCap: async () => { await release.promise; return { content: "ok" }; } });
	const id = await core.submit(request("start"));
	await waitFor(() => core.phase === "RUNNING_TOOL", "the tool");
	for (let i = 0; i < INSERT_QUEUE_DEPTH; i++) await core.submit(request(`more ${i}`, { flags: RequestFlag.USER_INTERRUPT }));
	await assert.rejects(core.submit(request("one too many", { flags: RequestFlag.USER_INTERRUPT })), "already waiting to join the answer");
	release.resolve();
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.equal(answer.text, "done");
	const texts = userTexts(model.requests[1]).map(firstLine);
	assert.deepEqual(texts, ["start", "more 0", "more 1", "more 2", "more 3"], "the inserts joined the request");
});

test("the METRIC line names every figure of the request", async () => {
	const { core, logs } = harness(new FakeModel({ calls: [{ name: "t" }], tokensIn: 7, tokensOut: 3 }, { text: "ok", tokensIn: 11, tokensOut: 4 }), { heap: () => 1234 });
	const id = await core.submit(request("measure"));
	await core.receiveFor(id, ANSWER_MS);
	const line = logs.find((l) => l.startsWith("METRIC "));
	assert.ok(line, "a METRIC line was logged");
	assert.match(line as string, new RegExp(`^METRIC agent=root request=${id} outcome=ok total_ms=\\d+ llm_ms=\\d+ tool_ms=\\d+ rounds=2 tool_calls=1 tokens_in=18 tokens_out=7 bytes_sent=200 bytes_received=100 peak_heap_bytes=1234$`));
});

test("a cancelled request's METRIC line says outcome=cancelled", async () => {
	const { core, logs } = harness(new FakeModel({ hang: true }));
	const id = await core.submit(request("slow"));
	await waitFor(() => core.phase === "IN_LLM_HTTP", "the call");
	core.cancel(id);
	await core.receiveFor(id, ANSWER_MS);
	assert.ok(logs.some((l) => l.startsWith(`METRIC agent=root request=${id} outcome=cancelled `)), logs.join(" | "));
});

test("receiveFor gives up after its timeout on the core's timers, and a later answer is parked", async () => {
	const timers = new FakeTimers();
	const release = deferred();
	const { core } = harness(new FakeModel({ until: release.promise, then: { text: "late" } }), { timers });
	const id = await core.submit(request("slow"));
	const waiting = core.receiveFor(id, 130_000);
	timers.advance(129_999);
	assert.equal(timers.pending, 1, "still waiting just before the timeout");
	timers.advance(1);
	await assert.rejects(waiting, `no answer to request ${id} within 130 s`);
	release.resolve();
	await waitFor(() => core.parkedResponses === 1, "the late answer");
	assert.equal((await core.receiveFor(id, 10)).text, "late");
});

test("a gate that throws fails the request with its message and agent_end is still emitted", async () => {
	const model = new FakeModel();
	const { core, events } = harness(model, { gate: () => { throw new Error("the session index is unreadable"); } });
	const answer = await core.receiveFor(await core.submit(request("hi")), ANSWER_MS);
	assert.deepEqual([answer.ok, answer.error], [false, "the session index is unreadable"]);
	assert.deepEqual(events.map((e) => e.type), ["agent_start", "agent_end"]);
	assert.equal(model.requests.length, 0);
});

test("a malformed request is refused with a sentence naming the field", async () => {
	const { core } = harness(new FakeModel());
	await assert.rejects(core.submit(request("")), "the request has no user_text");
	await assert.rejects(core.submit({ ...request("hi"), source: undefined } as never), "the request has no source");
	await assert.rejects(core.submit({ ...request("hi"), flags: -1 }), "flags must be a sum of RequestFlag values");
	assert.equal(core.queueDepth, 0);
});

test("cancel while the final answer is being saved is refused and the answer is delivered", async () => {
	const saving = deferred();
	let finalSeen = false;
	const { core } = harness(new FakeModel({ text: "the answer" }), {
		persist: (batch) => {
			if (!batch.turn_completed) return;
			finalSeen = true;
			return saving.promise;
		},
	});
	const id = await core.submit(request("hi"));
	await waitFor(() => finalSeen, "the final batch");
	assert.equal(core.phase, "FINALIZING");
	assert.equal(core.cancel(id), false, "the answer is decided: nothing to cancel");
	assert.equal(core.cancel(0), false);
	saving.resolve();
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.deepEqual([answer.ok, answer.text], [true, "the answer"]);
});

test("a cancel while the user's message is being saved ends the request cancelled, without calling the model, and notes why", async () => {
	const saving = deferred();
	const kinds: string[] = [];
	const model = new FakeModel({ text: "never" });
	const { core } = harness(model, {
		persist: (batch) => {
			kinds.push(batch.records.map((r) => r.kind).join("+"));
			if (batch.records[0].kind === "user") return saving.promise;
		},
	});
	const id = await core.submit(request("hi"));
	await waitFor(() => kinds.length === 1, "the USER batch");
	assert.equal(core.cancel(id), true);
	saving.resolve();
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.equal(answer.error, "request cancelled");
	assert.equal(model.requests.length, 0);
	assert.deepEqual(kinds, ["user", "failure_note"]);
});

test("an interrupt still waiting when the core stops is answered with a sentence, not left unanswered", async () => {
	const release = deferred();
	const { core } = harness(new FakeModel({ calls: [{ name: "wait" }] }, { text: "done" }), { callCap: async () => { await release.promise; return { content: "ok" }; } });
	const id = await core.submit(request("start"));
	await waitFor(() => core.phase === "RUNNING_TOOL", "the tool");
	const inserted = await core.submit(request("and this", { flags: RequestFlag.USER_INTERRUPT }));
	core.stop();
	assert.equal((await core.receiveFor(id, ANSWER_MS)).error, "request cancelled");
	const answer = await core.receiveFor(inserted, 500);
	assert.deepEqual([answer.ok, answer.error], [false, "the agent stopped before this request started; send it again once it is back"]);
	assert.equal(core.queueDepth, 0);
});
