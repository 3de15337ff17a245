// The agent manager: a subagent's result reaches the root session as a
// <subagent_completed> user message; slots are bounded and freed; subagents
// cannot spawn and cannot run restricted tools. The spawn_subagent tool, and the
// subagent profile openCore gives the firmware, end to end over a fake model.
import { assert, test } from "testing";
import { heap, now } from "host/platform";
import { MAX_SUBAGENTS } from "budgets";
import { agentCommands, agentStatusLines } from "agent/console";
import { Router } from "router/router";
import { consoleMessages } from "console/channel";
import { AgentSupervisor } from "agent/supervisor";
import { AgentManager } from "core/agents";
import { spawnSubagentTool } from "caps/agents";
import { boardTools } from "caps/board";
import { Registry } from "caps/registry";
import { parseTimeZone } from "util/tz";
import { SUBAGENT_PROMPT, openCore, type CoreSetup } from "core/setup";
import { FakeAgents, partsOf } from "./agent_fakes";
import type { AgentEvent, CallCap, ChatModel, PersistBatch, ToolCallInfo, ToolContext } from "core/types";
import type { Message } from "llm/types";
import { Aborter } from "net/abort";
import { FakeModel, ROUTER_FLAGS, deferred, request, textOf, waitFor } from "./core_fakes";

function manager(root: FakeModel, sub: FakeModel, callCap?: CallCap) {
	const logs: string[] = [];
	const spawnCap = async (call: ToolCallInfo, context: ToolContext) => {
		if (call.name !== "spawn") return { content: "ok" };
		const id = await agents.spawn(JSON.parse(call.arguments).task, context.request);
		return { content: `started ${id}` };
	};
	const agents: AgentManager = new AgentManager({
		root: { model: root, systemPrompt: "You are root.", callCap: spawnCap, log: (l) => logs.push(l) },
		subagent: { model: sub, systemPrompt: "You are a helper.", callCap: callCap ?? spawnCap, log: (l) => logs.push(l) },
		isRestricted: (name) => name === "spawn" || name === "gpio_write",
	});
	agents.start();
	return { agents, logs };
}

test("a subagent's completion arrives in the root session as a <subagent_completed> user message", async () => {
	const release = deferred();
	const root = new FakeModel({ calls: [{ name: "spawn", arguments: '{"task":"find the answer"}' }] }, { text: "a helper is on it" }, { text: "the helper found 42" });
	const sub = new FakeModel({ until: release.promise, then: { text: "the answer is 42" } });
	const { agents } = manager(root, sub);
	const starts: AgentEvent[] = [];
	agents.root.addListener((e) => { if (e.type === "agent_start") starts.push(e); });
	const parent = await agents.root.submit(request("research this", { session_id: "chat-9", flags: ROUTER_FLAGS, target: { channel: "telegram", chat_id: "9" } }));
	await waitFor(() => root.requests.length === 2 && agents.root.phase === "IDLE", "the root's first answer");
	assert.equal(agents.subagents().length, 1);
	assert.equal(firstUser(sub.requests[0]), "find the answer");
	release.resolve();
	await waitFor(() => root.requests.length === 3 && agents.root.phase === "IDLE", "the root's answer to the report");
	assert.equal(firstUser(root.requests[2]), '<subagent_completed agent_id="sub-1">\nthe answer is 42\n</subagent_completed>');
	const report = starts[1];
	assert.ok(report.type === "agent_start" && report.request.session_id === "chat-9", "in the parent's session");
	if (report.type === "agent_start") {
		assert.deepEqual(report.request.target, { channel: "telegram", chat_id: "9" });
		assert.ok(report.request.request_id > parent);
	}
	assert.equal(agents.subagents().length, 0, "the slot is free again");
});

function firstUser(chat: { messages: { role: string }[] }): string {
	const user = chat.messages.find((m) => m.role === "user") as Parameters<typeof textOf>[0];
	return textOf(user).split("\n\n[request context]")[0];
}

test("at most MAX_SUBAGENTS run at once, and a subagent cannot spawn another", async () => {
	const hold = new FakeModel();
	for (let i = 0; i < MAX_SUBAGENTS; i++) hold.script({ hang: true });
	const { agents } = manager(new FakeModel(), hold);
	const parent = request("p");
	for (let i = 0; i < MAX_SUBAGENTS; i++) await agents.spawn(`task ${i}`, parent);
	await assert.rejects(agents.spawn("one more", parent), `all ${MAX_SUBAGENTS} subagents are busy`);
	await assert.rejects(agents.spawn("nested", request("x", { source: { channel: "subagent", chat_id: "sub-1", sender_id: "", message_id: "", cap: "subagent" } })), "a subagent cannot start another subagent");
	assert.equal(agents.cancel("sub-1"), true);
	await waitFor(() => agents.subagents().length === MAX_SUBAGENTS - 1, "the cancelled subagent's slot");
	agents.stop();
});

test("a subagent's restricted tool call is refused as an is_error result", async () => {
	const ran: string[] = [];
	const sub = new FakeModel({ calls: [{ name: "gpio_write", id: "g1" }] }, { text: "could not" });
	const { agents } = manager(new FakeModel({ text: "ok" }), sub, (call) => { ran.push(call.name); return { content: "wrote" }; });
	await agents.spawn("toggle the pin", request("p", { session_id: "" }));
	await waitFor(() => sub.requests.length === 2, "the subagent's second call");
	const tool = sub.requests[1].messages.find((m) => m.role === "tool");
	assert.deepEqual(tool, { role: "tool", tool_call_id: "g1", content: "the tool gpio_write is not available to subagents", is_error: true });
	assert.deepEqual(ran, []);
	agents.stop();
});

test("spawn_subagent is restricted and answers at once with the agent id, saying the result comes into this conversation", async () => {
	const asked: string[] = [];
	const tool = spawnSubagentTool(async (task, parent) => { asked.push(`${task} for ${parent.session_id}`); return "sub-7"; });
	assert.equal(tool.restricted, true);
	assert.equal(tool.definition.function.name, "spawn_subagent");
	const box = new Registry([tool]);
	const context = { request: request("p", { session_id: "chat-1" }), signal: new Aborter().signal, progress() {} };
	const outcome = await box.callCap({ id: "c1", name: "spawn_subagent", arguments: '{"task":"count the pins"}' }, context);
	assert.equal(outcome.is_error, undefined);
	assert.match(outcome.content, /^started subagent sub-7; its result will arrive in this conversation as a <subagent_completed agent_id="sub-7"> message/);
	assert.deepEqual(asked, ["count the pins for chat-1"]);
	const cron = { ...context, request: request("p", { source: { channel: "cron", chat_id: "", sender_id: "", message_id: "", cap: "" } }) };
	assert.equal((await box.callCap({ id: "c2", name: "spawn_subagent", arguments: '{"task":"x"}' }, cron)).is_error, true, "cron may not spawn");
	assert.equal(box.provider.collect(cron.request), undefined, "nor see the tool");
});

test("spawn_subagent refused (all slots busy) is an is_error result telling the model to do it itself", async () => {
	const box = new Registry([spawnSubagentTool(() => Promise.reject(new Error(`all ${MAX_SUBAGENTS} subagents are busy; wait for one to report back, then try again`)))]);
	const outcome = await box.callCap({ id: "c1", name: "spawn_subagent", arguments: '{"task":"more"}' }, { request: request("p"), signal: new Aborter().signal, progress() {} });
	assert.deepEqual(outcome, { content: `all ${MAX_SUBAGENTS} subagents are busy; wait for one to report back, then try again`, is_error: true });
});

test("through openCore and the agent port, a subagent gets no restricted tools, and its report after the ask ended is answered in the parent's session and printed on the console", async () => {
	const release = deferred();
	const root = new FakeModel(
		{ calls: [{ name: "spawn_subagent", id: "s1", arguments: '{"task":"count the pins"}' }] },
		{ text: "a helper is counting" },
		{ text: "the helper says 40 pins" },
	);
	const sub = new FakeModel({ until: release.promise, then: { text: "40 pins" } });
	// One model for all cores, as in the firmware; replies routed by whose prompt it is.
	const model: ChatModel = { chat: (chat, options) => (textOf(chat.messages[0]).startsWith(SUBAGENT_PROMPT) ? sub : root).chat(chat, options) };
	const printed: string[] = [];
	const batches: PersistBatch[] = [];
	let setup: CoreSetup | undefined;
	// The agent machine (in process here): openCore behind the port's service.
	const agents = new FakeAgents((_settings, publish) => {
		setup = openCore({
			model, firmware: { name: "xsclaw", version: "test", platform: "lin" }, now, bootMs: now(), heap,
			tools: boardTools({ wallClockMs: () => Date.now(), now, bootMs: now(), heap, zone: () => parseTimeZone("UTC"), firmware: { name: "xsclaw", version: "test", platform: "lin" } }),
			persist: (batch) => { batches.push(JSON.parse(JSON.stringify(batch))); },
			publish,
			log: () => {},
		});
		return partsOf(setup.core, { subagents: () => setup!.agents.subagents(), sessionFor: () => "console-1", stop: () => setup!.agents.stop() });
	});
	const supervisor = new AgentSupervisor({ spawn: agents.spawn, config: { entries: () => [], onChange: () => () => {} }, now, notice: () => {} });
	supervisor.client.onOut(consoleMessages((line) => printed.push(line)));
	await supervisor.start();
	try {
		const ask = agentCommands({ router: new Router({ port: supervisor.client, log: () => {} }) }).find((c) => c.name === "ask")!;
		const out: string[] = [];
		await ask.run("count the pins in the background", { line: (l) => out.push(l) });
		assert.deepEqual(out, ["… spawn_subagent", "a helper is counting"]);
		assert.match(textOf(root.requests[1].messages.find((m) => m.role === "tool") as Message), /^started subagent sub-1;/);
		const rootTools = (root.requests[0].tools ?? []).map((t) => t.function.name);
		assert.ok(rootTools.includes("spawn_subagent"), `root tools: ${rootTools}`);
		await waitFor(() => sub.requests.length === 1, "the subagent's call");
		const subTools = (sub.requests[0].tools ?? []).map((t) => t.function.name);
		assert.deepEqual(subTools, ["get_time", "system_info"], "the subagent's tools");
		assert.ok((await agentStatusLines(supervisor.client)).includes("subagents: sub-1 IN_LLM_HTTP"), "status names the running subagent");
		release.resolve();
		await waitFor(() => printed.length > 0, "the printed answer to the report");
		assert.deepEqual(printed.slice(1), ["the helper says 40 pins"]);
		assert.match(printed[0], /^agent \(request \d+\):$/);
		assert.equal(firstUser(root.requests[2]).split("\n")[0], '<subagent_completed agent_id="sub-1">');
		const report = batches.find((b) => b.records[0].kind === "user" && textOf(b.records[0].message).startsWith("<subagent_completed"));
		assert.equal(report?.session_id, "console-1", "the report is saved in the parent's session");
		assert.ok(batches.every((b) => b.session_id === "console-1"), "nothing of the subagent is saved");
	} finally {
		await supervisor.stop();
	}
});
