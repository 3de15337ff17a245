// The console's agent commands (agent/console) through the router and the port's client: ask,
// cancel, the agent's status lines, proxied agent commands, and answers nobody
// waits for. The agent machine is in process (test/unit/agent_fakes).
import { agentCommands, agentStatusLines, proxyCommand } from "agent/console";
import { Router } from "router/router";
import { consoleMessages } from "console/channel";
import { AgentSupervisor } from "agent/supervisor";
import { UsageError, type Command } from "console/types";
import { assert, test } from "testing";
import { FakeAgents, echoCommands, partsOf } from "test/unit/agent_fakes";
import { FakeModel, harness, waitFor, type Harness } from "test/unit/core_fakes";

async function consoleOver(model: FakeModel, options: { askTimeoutMs?: number; submitTimeoutMs?: number } = {}) {
	let h: Harness | undefined;
	const agents = new FakeAgents((_settings, publish) => {
		h = harness(model, { publish });
		return partsOf(h.core, { commands: echoCommands, sessionFor: (chat) => `session-of-${chat.channel}-${chat.chat_id}` });
	});
	const supervisor = new AgentSupervisor({ spawn: agents.spawn, config: { entries: () => [], onChange: () => () => {} }, now: () => Date.now(), notice: () => {} });
	const ready = await supervisor.start();
	const router = new Router({ port: supervisor.client, log: () => {} });
	const commands = [...agentCommands({ router, ...options }), ...ready!.commands.map((info) => proxyCommand(router, info))];
	const out: string[] = [];
	const run = async (name: string, args: string) => {
		out.length = 0;
		await commands.find((c) => c.name === name)!.run(args, { line: (text) => out.push(text) });
		return [...out];
	};
	return { run, commands, supervisor, core: () => h!, out, agents };
}

test("ask submits a console request that the agent puts in the console's session, and prints the answer line by line", async () => {
	const c = await consoleOver(new FakeModel({ text: "line one\nline two" }));
	assert.deepEqual(await c.run("ask", "what time is it?"), ["line one", "line two"]);
	const started = c.core().events.find((e) => e.type === "agent_start");
	if (started?.type !== "agent_start") return assert.fail("no agent_start");
	assert.equal(started.request.user_text, "what time is it?");
	assert.equal(started.request.session_id, "session-of-console-local");
	assert.equal(started.request.source.channel, "console");
	assert.equal(started.request.flags, 0);
	await c.supervisor.stop();
});

test("ask with no text is a usage error and submits nothing", async () => {
	const c = await consoleOver(new FakeModel());
	const error = await assert.rejects(c.run("ask", ""), "wrong arguments");
	assert.ok(error instanceof UsageError);
	assert.equal(c.core().events.length, 0);
	await c.supervisor.stop();
});

test("ask prints a line per tool its request runs, then the answer; a failed request prints its sentence", async () => {
	const c = await consoleOver(new FakeModel({ calls: [{ name: "get_time" }] }, { text: "noon" }, { error: "connection refused" }));
	assert.deepEqual(await c.run("ask", "time?"), ["… get_time", "noon"]);
	const failed = await c.run("ask", "again");
	assert.equal(failed.length, 1);
	assert.match(failed[0], /^error: .*connection refused/);
	await c.supervisor.stop();
});

test("ask with no answer in time has the agent cancel it and says so", async () => {
	const model = new FakeModel({ hang: true });
	const c = await consoleOver(model, { askTimeoutMs: 100 });
	const out = await c.run("ask", "hello");
	assert.match(out[0], /^error: no answer within 0 s, so the request was cancelled; try again/);
	await waitFor(() => model.aborted === 1, "the call aborted");
	await c.supervisor.stop();
});

test("cancel cancels the request in flight and says which; with nothing running it says so; a bad id is a usage error", async () => {
	const c = await consoleOver(new FakeModel({ hang: true }));
	assert.deepEqual(await c.run("cancel", ""), ["nothing is running"]);
	const answer = c.run("ask", "wait");
	await waitFor(() => c.core().core.phase === "IN_LLM_HTTP", "the call in flight");
	const id = c.core().core.inFlightId;
	const cancel = c.commands.find((x) => x.name === "cancel")!;
	const lines: string[] = [];
	await cancel.run("", { line: (t) => lines.push(t) });
	assert.deepEqual(lines, [`request ${id} cancelled`]);
	assert.deepEqual(await answer, ["error: request cancelled"]);
	lines.length = 0;
	await cancel.run("12", { line: (t) => lines.push(t) });
	assert.deepEqual(lines, ["request 12 is not running or waiting: nothing to cancel"]);
	await assert.rejects(async () => cancel.run("abc", { line: () => {} }), "wrong arguments");
	assert.equal(cancel.concurrent, true);
	assert.notEqual(c.commands.find((x) => x.name === "ask")!.concurrent, true);
	await c.supervisor.stop();
});

test("the agent's status lines give the phase, the request in flight, the queue, subagents and the agent machine's heap", async () => {
	const c = await consoleOver(new FakeModel());
	assert.deepEqual(await agentStatusLines(c.supervisor.client), [
		"agent: IDLE, nothing in flight, 0 waiting",
		"subagents: none running",
		"agent heap: chunks 0.0 KiB of 0.0 KiB (peak 0.0 KiB), slots 0.0 KiB of 0.0 KiB (peak 0.0 KiB)",
	]);
	await c.supervisor.stop();
});

test("a proxied agent command prints its lines, is never concurrent, and fails or shows usage like a local one", async () => {
	const c = await consoleOver(new FakeModel());
	assert.deepEqual(await c.run("echo", "x y"), ["x y", "x y"]);
	const find = (name: string) => c.commands.find((x) => x.name === name) as Command;
	assert.notEqual(find("slow echo").concurrent, true, "never concurrent: it would overtake lines typed before it");
	const usage = await assert.rejects(c.run("usage", ""), "wrong arguments");
	assert.ok(usage instanceof UsageError);
	await assert.rejects(c.run("fails", ""), "it failed: try again later");
	assert.deepEqual(c.out, ["partly"], "lines printed before the failure are shown");
	await c.supervisor.stop();
});

test("consoleMessages prints out_messages for the console channel with their request, and ignores other channels and stage messages", () => {
	const printed: string[] = [];
	const publish = consoleMessages((line) => printed.push(line));
	publish({ type: "out_message", channel: "telegram", chat_id: "9", text: "not here", request_id: 3, correlation_id: "" });
	publish({ type: "agent_stage", channel: "console", chat_id: "console", text: "running tools: get_time", request_id: 4 });
	publish({ type: "out_message", channel: "console", chat_id: "console", text: "the helper found 40 pins\nanything else?", request_id: 5, correlation_id: "" });
	assert.deepEqual(printed, ["agent (request 5):", "the helper found 40 pins", "anything else?"]);
	printed.length = 0;
	const label = "schedule s1, due 2026-12-01 07:00:00 (+00:00), 12 min late (missed while the board was off)";
	publish({ type: "out_message", channel: "console", chat_id: "console", text: "Good morning.", request_id: 4000, correlation_id: "", label });
	assert.deepEqual(printed, [`agent (request 4000, ${label}):`, "Good morning."], "a schedule's answer says which schedule, and that it fired late");
});
