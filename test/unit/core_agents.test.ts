// The agent manager: a subagent's result reaches the root session as a
// <subagent_completed> user message; slots are bounded and freed; subagents
// cannot spawn and cannot run restricted tools.
import { assert, test } from "testing";
import { MAX_SUBAGENTS } from "budgets";
import { AgentManager } from "core/agents";
import type { AgentEvent, CallCap, ToolCallInfo, ToolContext } from "core/types";
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
