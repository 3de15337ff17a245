// The agent core's context pipeline: provider order and error contract, the
// request-start cache, the current user message injected once, the
// prompt-cache-friendly order (stable | history | volatile | runtime), cache
// breakpoints, and request bodies that keep their prefix between iterations.
import { assert, test } from "testing";
import { LLM_MAX_TOKENS } from "budgets";
import { ProviderFlag, type CompletionSummary, type ContextContent, type ContextProvider } from "core/types";
import { toAnthropicRequest } from "llm/anthropic";
import { toOpenAIRequest } from "llm/openai";
import type { ChatRequest, Message, ModelProfile, ToolDefinition } from "llm/types";
import { ANSWER_MS, FakeModel, harness, request, textOf, userTexts, waitFor } from "./core_fakes";

const TOOL: ToolDefinition = { type: "function", function: { name: "lookup", description: "finds things", parameters: { type: "object", properties: {} } } };

function system(name: string, content: string, flags = 0): ContextProvider {
	return { name, flags, collect: () => ({ kind: "system_prompt", content }) };
}

test("providers are asked in order; undefined is skipped and the names that gave content are reported", async () => {
	const summaries: CompletionSummary[] = [];
	const model = new FakeModel({ text: "fine" });
	const { core } = harness(model, {
		providers: [
			system("persona", "You are kind."),
			{ name: "nothing", collect: () => undefined },
			{ name: "tools", collect: () => ({ kind: "tools", content: [TOOL] }) },
			system("memory", "The user likes tea."),
		],
	});
	core.addCompletionObserver((s) => summaries.push(s));
	const id = await core.submit(request("hi"));
	await core.receiveFor(id, ANSWER_MS);
	const sent = model.requests[0];
	assert.equal(sent.messages[0].role, "system");
	assert.equal(textOf(sent.messages[0]), "You are a test agent.\n\n## persona\nYou are kind.\n\n## memory\nThe user likes tea.");
	assert.deepEqual(sent.tools, [TOOL]);
	assert.equal(summaries[0].providers_csv, "persona,tools,memory");
});

test("a provider that throws fails the request naming it, and agent_end is still emitted", async () => {
	const model = new FakeModel();
	const { core, events } = harness(model, { providers: [{ name: "memory", collect: () => { throw new Error("disk on fire"); } }] });
	const id = await core.submit(request("hi"));
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.equal(answer.ok, false);
	assert.equal(answer.error, 'the context provider "memory" failed: disk on fire');
	assert.equal(model.requests.length, 0);
	assert.deepEqual(events.map((e) => e.type), ["agent_start", "agent_end"]);
});

test("a provider that rejects fails the request like one that throws", async () => {
	const { core } = harness(new FakeModel(), { providers: [{ name: "skills", collect: () => Promise.reject(new Error("no catalogue")) }] });
	const answer = await core.receiveFor(await core.submit(request("hi")), ANSWER_MS);
	assert.equal(answer.error, 'the context provider "skills" failed: no catalogue');
});

test("empty provider content fails the request as a provider bug", async () => {
	const empties: ContextContent[] = [{ kind: "system_prompt", content: "" }, { kind: "messages", content: [] }, { kind: "tools", content: [] }];
	for (const content of empties) {
		const { core } = harness(new FakeModel(), { providers: [{ name: "broken", collect: () => content }] });
		const answer = await core.receiveFor(await core.submit(request("hi")), ANSWER_MS);
		assert.match(answer.error ?? "", /the context provider "broken" returned empty or unknown content/, content.kind);
	}
});

test("history (REQUEST_START_ONLY) is collected once per request, other providers once per iteration", async () => {
	let historyCalls = 0, memoryCalls = 0;
	const model = new FakeModel({ calls: [{ name: "a" }] }, { calls: [{ name: "b" }] }, { text: "done" });
	const { core } = harness(model, {
		providers: [
			{ name: "history", flags: ProviderFlag.REQUEST_START_ONLY, collect: () => { historyCalls++; return { kind: "messages", content: [{ role: "user", content: "earlier" }, { role: "assistant", content: "noted" }] }; } },
			{ name: "memory", collect: () => { memoryCalls++; return { kind: "system_prompt", content: "facts" }; } },
		],
	});
	await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	assert.equal(model.requests.length, 3);
	assert.equal(historyCalls, 1, "history once");
	assert.equal(memoryCalls, 3, "memory per iteration");
	for (const sent of model.requests) assert.equal(textOf(sent.messages[1]), "earlier", "every iteration reuses the history");
});

test("with a history provider that keeps to its contract, the current user message appears exactly once in every iteration", async () => {
	const model = new FakeModel({ calls: [{ name: "a" }] }, { calls: [{ name: "b" }] }, { text: "done" });
	const { core } = harness(model, {
		providers: [{
			name: "history", flags: ProviderFlag.REQUEST_START_ONLY,
			collect: () => ({ kind: "messages", content: [{ role: "user", content: "old" }, { role: "assistant", content: "old answer" }] }),
		}],
	});
	await core.receiveFor(await core.submit(request("what now?")), ANSWER_MS);
	assert.equal(model.requests.length, 3);
	for (const sent of model.requests) assert.deepEqual(userTexts(sent).map((t) => t.split("\n")[0]), ["old", "what now?"]);
});

test("an earlier message with the same words as the current one stays in the history", async () => {
	// A person answered "yes", the request died (no answer), and they say "yes" again.
	const model = new FakeModel({ text: "done" });
	const { core } = harness(model, {
		providers: [{
			name: "history", flags: ProviderFlag.REQUEST_START_ONLY,
			collect: () => ({ kind: "messages", content: [{ role: "assistant", content: "Shall I water the plants?" }, { role: "user", content: "yes" }] }),
		}],
	});
	await core.receiveFor(await core.submit(request("yes")), ANSWER_MS);
	assert.deepEqual(model.requests[0].messages.map((m) => [m.role, textOf(m).split("\n")[0]]), [
		["system", "You are a test agent."], ["assistant", "Shall I water the plants?"], ["user", "yes"], ["user", "yes"],
	]);
});

test("stable sections come before the history and the volatile block after it, with cache breakpoints", async () => {
	const model = new FakeModel({ calls: [{ name: "a", id: "c1" }] }, { text: "done" });
	const { core } = harness(model, {
		wallNow: () => Date.UTC(2026, 0, 2, 3, 4, 59),
		providers: [
			system("persona", "Be brief."),
			system("weather", "It is sunny.", ProviderFlag.VOLATILE),
			{ name: "history", flags: ProviderFlag.REQUEST_START_ONLY, collect: () => ({ kind: "messages", content: [{ role: "user", content: "earlier" }, { role: "assistant", content: "noted" }] }) },
		],
	});
	await core.receiveFor(await core.submit(request("now", { source: { channel: "telegram", chat_id: "42", sender_id: "7", message_id: "9", cap: "" } })), ANSWER_MS);
	const [first, second] = model.requests;
	const roles = second.messages.map((m) => m.role);
	assert.deepEqual(roles, ["system", "user", "assistant", "user", "assistant", "tool"]);
	const systemText = textOf(first.messages[0]);
	assert.ok(systemText.includes("## persona\nBe brief."), "stable section in the system prompt");
	assert.ok(!systemText.includes("sunny"), "no volatile text in front of the history");
	assert.equal(first.messages[0].cache_breakpoint, true, "breakpoint after the stable prefix");
	assert.equal(first.messages[2].cache_breakpoint, true, "breakpoint after the history");
	assert.equal(first.messages[1].cache_breakpoint, undefined);
	assert.equal(textOf(first.messages[3]), [
		"now", "", "[request context]", "time: 2026-01-02 03:04 UTC", "source: channel telegram, chat 42, sender 7",
		"note: your final answer is delivered to the user automatically; do not send it again with a messaging tool.",
		"## weather\nIt is sunny.",
	].join("\n"));
	assert.equal(textOf(second.messages[3]), textOf(first.messages[3]), "the volatile block is computed once per request");
});

test("two iterations' messages share their whole first iteration as a byte prefix", async () => {
	const model = new FakeModel({ calls: [{ name: "a" }] }, { calls: [{ name: "b" }] }, { text: "done" });
	const { core } = harness(model, {
		providers: [system("persona", "Be brief."), { name: "tools", collect: () => ({ kind: "tools", content: [TOOL] }) }],
	});
	await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	for (let i = 1; i < model.requests.length; i++) {
		const before = JSON.stringify(model.requests[i - 1].messages).slice(0, -1);
		const after = JSON.stringify(model.requests[i].messages);
		assert.ok(after.startsWith(before), `iteration ${i + 1} keeps the prefix of iteration ${i}`);
	}
});

test("a tool round reuses the system, marked history and user messages the providers gave again, and rebuilds what changed", async () => {
	let memory = "facts", clock = "tick 1";
	const model = new FakeModel({ calls: [{ name: "a" }] }, { calls: [{ name: "b" }] }, { calls: [{ name: "c" }] }, { text: "done" });
	const { core } = harness(model, {
		providers: [
			{ name: "history", flags: ProviderFlag.REQUEST_START_ONLY, collect: () => ({ kind: "messages", content: [{ role: "user", content: "earlier" }, { role: "assistant", content: "noted" }] }) },
			{ name: "memory", collect: () => ({ kind: "system_prompt", content: memory }) },
			{ name: "clock", flags: ProviderFlag.VOLATILE, collect: () => ({ kind: "system_prompt", content: clock }) },
		],
	});
	core.addListener((event) => {
		// Between the second and third call: memory changes, then the volatile section.
		if (event.type === "turn_end" && event.iteration === 2) memory = "new facts";
		if (event.type === "turn_end" && event.iteration === 3) clock = "tick 2";
	});
	// The messages as the core handed them over (the fake model keeps copies).
	const handed: Message[][] = [];
	const chat = model.chat.bind(model);
	model.chat = (sent, options) => {
		handed.push(sent.messages.slice());
		return chat(sent, options);
	};
	await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	const [first, second, third, fourth] = handed;
	assert.equal(second[0], first[0], "the same system message object");
	assert.equal(second[2], first[2], "the same marked history message");
	assert.equal(second[3], first[3], "the same user message");
	assert.equal(first[2].cache_breakpoint, true);
	assert.notEqual(third[0], second[0], "memory changed: a new system message");
	assert.match(textOf(third[0]), /## memory\nnew facts/);
	assert.equal(third[3], second[3], "the volatile block did not change");
	assert.notEqual(fourth[3], third[3], "the volatile section changed: a new user message");
	assert.match(textOf(fourth[3]), /tick 2/);
	assert.match(textOf(third[3]), /tick 1/);
});

test("request bodies put messages last, after model, max_tokens, stream, tools and system", () => {
	const profile: ModelProfile = {
		provider: "custom", backend: "openai_compatible", base_url: "http://127.0.0.1:1", api_key: "", auth: "none", model: "m",
		max_tokens: LLM_MAX_TOKENS, max_tokens_field: "max_tokens", stream: true, supports_tools: true, supports_vision: false,
		image_remote_url_only: false, timeout_ms: 1000, image_max_bytes: 1,
	};
	const chat: ChatRequest = { messages: [{ role: "system", content: "s", cache_breakpoint: true }, { role: "user", content: "u" }], tools: [TOOL] };
	assert.deepEqual(Object.keys(toOpenAIRequest(chat, profile, true)), ["model", "max_tokens", "stream", "stream_options", "tools", "messages"]);
	assert.deepEqual(Object.keys(toAnthropicRequest(chat, profile, true).body), ["model", "max_tokens", "stream", "tools", "system", "messages"]);
});

test("cancel while a provider is stuck ends the request cancelled at once", async () => {
	let asked = false;
	const { core } = harness(new FakeModel(), { providers: [{ name: "slow", collect: () => { asked = true; return new Promise(() => {}); } }] });
	const id = await core.submit(request("hi"));
	await waitFor(() => asked && core.phase === "BUILDING_CONTEXT", "the provider");
	assert.equal(core.cancel(id), true);
	const answer = await core.receiveFor(id, ANSWER_MS);
	assert.equal(answer.error, "request cancelled");
	assert.equal(core.phase, "IDLE");
});

/** A REQUEST_START_ONLY history provider that pushes onto the prompt the core offers (as the store's does). */
function pushingHistory(messages: Message[], asked: (Message[] | undefined)[] = []): ContextProvider {
	return {
		name: "history", flags: ProviderFlag.REQUEST_START_ONLY,
		collect: (_request, prompt) => {
			asked.push(prompt);
			if (!prompt) return { kind: "messages", content: messages.slice() };
			for (const m of messages) prompt.push(m);
			return { kind: "messages", content: prompt };
		},
	};
}

test("a history provider pushes onto the offered prompt: one array per request, which its tool rounds extend", async () => {
	const earlier: Message = { role: "user", content: "earlier" }, noted: Message = { role: "assistant", content: "noted" };
	const asked: (Message[] | undefined)[] = [];
	const model = new FakeModel({ calls: [{ name: "a", id: "c1" }] }, { calls: [{ name: "b", id: "c2" }] }, { text: "done" });
	const { core } = harness(model, { providers: [system("persona", "Be brief."), pushingHistory([earlier, noted], asked), { name: "tools", collect: () => ({ kind: "tools", content: [TOOL] }) }] });
	const handed: Message[][] = [];
	const chat = model.chat.bind(model);
	model.chat = (sent, options) => {
		handed.push(sent.messages);
		return chat(sent, options);
	};
	await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	assert.equal(asked.length, 1, "asked once (REQUEST_START_ONLY)");
	assert.ok(asked[0] === handed[0], "offered the prompt itself");
	assert.ok(handed[1] === handed[0] && handed[2] === handed[0], "later rounds extend the same array");
	const [first, second, third] = model.requests;   // the fake's copies, as each call saw them
	assert.deepEqual(first.messages.map((m) => [m.role, textOf(m).split("\n")[0]]), [
		["system", "You are a test agent."], ["user", "earlier"], ["assistant", "noted"], ["user", "go"],
	]);
	assert.match(textOf(first.messages[0]), /## persona\nBe brief\./);
	assert.equal(first.messages[2].cache_breakpoint, true, "the history's last message is marked in the prompt");
	assert.equal(noted.cache_breakpoint, undefined, "the provider's message itself is not changed");
	assert.deepEqual(second.messages.slice(4).map((m) => m.role), ["assistant", "tool"]);
	assert.deepEqual(third.messages.slice(4).map((m) => m.role), ["assistant", "tool", "assistant", "tool"]);
	assert.equal(JSON.stringify(third.messages).startsWith(JSON.stringify(second.messages).slice(0, -1)), true, "the prefix stays");
	// The next request is offered a new prompt: the last one's array is not changed afterwards.
	const before = JSON.stringify(handed[0]);
	model.script({ text: "again" });
	await core.receiveFor(await core.submit(request("more")), ANSWER_MS);
	assert.equal(asked.length, 2);
	assert.ok(asked[1] !== handed[0], "a new array for the new request");
	assert.equal(JSON.stringify(handed[0]), before);
});

test("a pushed history and a per-iteration history in one prompt, in provider order, the last one marked", async () => {
	let round = 0;
	const model = new FakeModel({ calls: [{ name: "a", id: "c1" }] }, { text: "done" });
	const recent: ContextProvider = { name: "recent", collect: () => ({ kind: "messages", content: [{ role: "assistant", content: `recent ${++round}` }] }) };
	const { core } = harness(model, { providers: [pushingHistory([{ role: "user", content: "h1" }, { role: "assistant", content: "h2" }]), recent] });
	await core.receiveFor(await core.submit(request("go")), ANSWER_MS);
	const shape = (messages: Message[]) => messages.map((m) => [m.role, textOf(m).split("\n")[0], m.cache_breakpoint === true]);
	assert.deepEqual(shape(model.requests[0].messages), [
		["system", "You are a test agent.", true], ["user", "h1", false], ["assistant", "h2", false], ["assistant", "recent 1", true], ["user", "go", false],
	]);
	assert.deepEqual(shape(model.requests[1].messages), [
		["system", "You are a test agent.", true], ["user", "h1", false], ["assistant", "h2", false], ["assistant", "recent 2", true], ["user", "go", false],
		["assistant", "", false], ["tool", "ran a {}", false],
	]);
});

test("a provider that answers with the offered prompt without pushing onto it fails the request as a provider bug", async () => {
	const { core } = harness(new FakeModel({ text: "never" }), { providers: [{ name: "history", collect: (_r, prompt) => (prompt ? { kind: "messages", content: prompt } : undefined) }] });
	const answer = await core.receiveFor(await core.submit(request("hi")), ANSWER_MS);
	assert.match(answer.error ?? "", /the context provider "history" returned empty or unknown content/);
});
