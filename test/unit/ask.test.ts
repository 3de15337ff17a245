// The console's agent commands (core/console): ask, cancel and the status line,
// over a scripted AgentConsole, so the paths the firmware test cannot reach
// quickly (a full queue, no answer in time) are covered too.
import { consoleMessages, coreConsole, type AgentConsole } from "core/console";
import { ResponseTimeout } from "core/mailbox";
import type { AgentEvent, AgentRequest, AgentResponse, Phase } from "core/types";
import { UsageError } from "console/types";
import { assert, test } from "testing";

interface FakeCore extends AgentConsole {
	submitted: AgentRequest[];
	cancelled: number[];
	listeners: Array<(event: AgentEvent) => void>;
}

function fakeCore(options: { submit?: () => Promise<number>; answer?: (id: number) => Promise<AgentResponse>; phase?: Phase; inFlight?: number; queued?: number; cancels?: boolean } = {}): FakeCore {
	const core: FakeCore = {
		submitted: [],
		cancelled: [],
		listeners: [],
		submit(request) {
			core.submitted.push(request);
			return options.submit ? options.submit() : Promise.resolve(7);
		},
		receiveFor(id) {
			return options.answer ? options.answer(id) : Promise.resolve({ request_id: id, session_id: "s1", ok: true, text: "line one\nline two" });
		},
		cancel(id) {
			core.cancelled.push(id);
			return options.cancels ?? true;
		},
		phase: () => options.phase ?? "IDLE",
		queueDepth: () => options.queued ?? 0,
		inFlight: () => options.inFlight ?? 0,
		watch(listener) {
			core.listeners.push(listener);
			return () => core.listeners.splice(core.listeners.indexOf(listener), 1);
		},
	};
	return core;
}

function commands(core: AgentConsole, session = "s1") {
	const { commands, statusLines } = coreConsole({ core, session: () => session });
	const out: string[] = [];
	const run = async (name: string, args: string) => {
		out.length = 0;
		await commands.find((c) => c.name === name)!.run(args, { line: (text) => out.push(text) });
		return out;
	};
	return { run, statusLines, commands };
}

test("ask submits a console request in the current session and prints the answer line by line", async () => {
	const core = fakeCore();
	const out = await commands(core, "s1").run("ask", "what time is it?");
	assert.deepEqual(out, ["line one", "line two"]);
	assert.equal(core.submitted.length, 1);
	const request = core.submitted[0];
	assert.equal(request.user_text, "what time is it?");
	assert.equal(request.session_id, "s1");
	assert.equal(request.source.channel, "console");
	assert.equal(request.flags, 0);
	assert.equal(core.listeners.length, 0, "the event listener is removed after the answer");
});

test("ask with no text is a usage error and submits nothing", async () => {
	const core = fakeCore();
	const error = await assert.rejects(commands(core).run("ask", ""), "wrong arguments");
	assert.ok(error instanceof UsageError, "the console prints the usage for a UsageError");
	assert.equal(core.submitted.length, 0);
});

test("ask prints a failed request's error sentence", async () => {
	const core = fakeCore({ answer: async (id) => ({ request_id: id, session_id: "", ok: false, text: "", error: "request cancelled" }) });
	assert.deepEqual(await commands(core).run("ask", "hello"), ["error: request cancelled"]);
});

test("ask prints the busy sentence when the queue stays full", async () => {
	const core = fakeCore({ submit: () => Promise.reject(new Error("the agent is busy: 4 requests are waiting; try again shortly")) });
	assert.deepEqual(await commands(core).run("ask", "hello"), ["error: the agent is busy: 4 requests are waiting; try again shortly"]);
});

test("ask with no answer in time cancels its request and says so", async () => {
	const core = fakeCore({ answer: () => Promise.reject(new ResponseTimeout("no answer to request 7 within 130 s")) });
	const out = await commands(core).run("ask", "hello");
	assert.deepEqual(core.cancelled, [7]);
	assert.match(out[0], /^error: no answer within 130 s, so the request was cancelled; try again/);
});

test("ask's wait ending for another reason than a timeout says that reason, not a timeout", async () => {
	const core = fakeCore({ answer: () => Promise.reject(new Error("too many callers are waiting for answers; try again shortly")) });
	const out = await commands(core).run("ask", "hello");
	assert.deepEqual(out, ["error: too many callers are waiting for answers; try again shortly; request 7 was cancelled, try again"]);
	assert.ok(!out[0].includes("no answer within"));
});

test("ask prints a line per tool its own request runs, and none for other requests", async () => {
	let release: (r: AgentResponse) => void = () => {};
	const core = fakeCore({ answer: () => new Promise((resolve) => (release = resolve)) });
	const { run } = commands(core);
	const done = run("ask", "hello");
	await Promise.resolve();
	await Promise.resolve();
	const base = { agent_id: "root", session_id: "s1" };
	const call = { id: "c1", name: "get_time", arguments: "{}" };
	for (const listener of core.listeners) {
		listener({ ...base, request_id: 7, type: "tool_execution_start", call });
		listener({ ...base, request_id: 8, type: "tool_execution_start", call: { ...call, name: "other" } });
		listener({ ...base, request_id: 7, type: "tool_execution_end", call_id: "c1", name: "get_time", is_error: true, ms: 1 });
	}
	release({ request_id: 7, session_id: "s1", ok: true, text: "done" });
	assert.deepEqual(await done, ["… get_time", "… get_time failed", "done"]);
});

test("cancel cancels the request in flight and says which", () => {
	const core = fakeCore({ inFlight: 3 });
	const out: string[] = [];
	commands(core).commands.find((c) => c.name === "cancel")!.run("", { line: (t) => out.push(t) });
	assert.deepEqual(core.cancelled, [3]);
	assert.deepEqual(out, ["request 3 cancelled"]);
});

test("cancel says nothing was running when the core is idle, and refuses a malformed id", () => {
	const core = fakeCore();
	const cancel = commands(core).commands.find((c) => c.name === "cancel")!;
	const out: string[] = [];
	cancel.run("", { line: (t) => out.push(t) });
	assert.deepEqual(out, ["nothing is running"]);
	assert.deepEqual(core.cancelled, []);
	assert.throws(() => cancel.run("abc", { line: () => {} }), "wrong arguments", UsageError);
	assert.throws(() => cancel.run("1 2", { line: () => {} }), "wrong arguments", UsageError);
});

test("cancel of an id that matches nothing says so", () => {
	const core = fakeCore({ cancels: false });
	const out: string[] = [];
	commands(core).commands.find((c) => c.name === "cancel")!.run("12", { line: (t) => out.push(t) });
	assert.deepEqual(core.cancelled, [12]);
	assert.deepEqual(out, ["request 12 is not running or waiting: nothing to cancel"]);
});

test("cancel is concurrent and ask is not", () => {
	const { commands: list } = commands(fakeCore());
	assert.equal(list.find((c) => c.name === "cancel")!.concurrent, true);
	assert.notEqual(list.find((c) => c.name === "ask")!.concurrent, true);
});

test("the status line gives the phase, the request in flight and the queue", () => {
	assert.equal(commands(fakeCore({ phase: "IN_LLM_HTTP", inFlight: 5, queued: 2 })).statusLines[0](), "agent: IN_LLM_HTTP, request 5 in flight, 2 waiting");
	assert.equal(commands(fakeCore()).statusLines[0](), "agent: IDLE, nothing in flight, 0 waiting");
});

test("consoleMessages prints out_messages for the console channel with their request, and ignores other channels and stage messages", () => {
	const printed: string[] = [];
	const publish = consoleMessages((line) => printed.push(line));
	publish({ type: "out_message", channel: "telegram", chat_id: "9", text: "not here", request_id: 3, correlation_id: "" });
	publish({ type: "agent_stage", channel: "console", chat_id: "console", text: "running tools: get_time", request_id: 4 });
	publish({ type: "out_message", channel: "console", chat_id: "console", text: "the helper found 40 pins\nanything else?", request_id: 5, correlation_id: "" });
	assert.deepEqual(printed, ["agent (request 5):", "the helper found 40 pins", "anything else?"]);
});
