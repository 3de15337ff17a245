// The agent port (modules/shared/agent): its messages round-trip through their
// checks, malformed and unknown messages are refused with a sentence while both
// ends keep working, and the client, the service and the supervisor work
// together over an in-process link that copies every message.
import { AGENT_PORT_CALLS_MAX, AGENT_PORT_REPLY_MAX_CHARS, AGENT_PORT_TEXT_MAX_CHARS, LLM_REPLY_MAX_BYTES } from "budgets";
import { PortError, TextParts, postInParts, readFromAgent, readToAgent, type FromAgent, type ToAgent, type WatchableEvent } from "agent/protocol";
import { AgentSupervisor } from "agent/supervisor";
import { RequestFlag, type AgentEvent, type CallCap, type OutEvent } from "core/types";
import { Core } from "core/core";
import type { ChatOptions, ChatRequest } from "llm/types";
import type { OnlineGate } from "net/online";
import { wellFormed } from "net/utf8";
import Timer from "timer";
import { assert, test } from "testing";
import { FakeAgents, HEAP, copy, echoCommands, partsOf } from "test/unit/agent_fakes";
import { FakeModel, delay, deferred, harness, waitFor } from "test/unit/core_fakes";

const SOURCE = { channel: "console", chat_id: "local", sender_id: "console", message_id: "", cap: "" };
const RESPONSE = { request_id: 3, session_id: "console-local", ok: true, text: "hi" };

const TO_AGENT: ToAgent[] = [
	{ type: "start", settings: { "llm.model": "m", "memory.mode": "light" }, online: "waiting", channels: [{ name: "console", running: true, chats: ["local"] }] },
	{ type: "channels", channels: [{ name: "console", running: true, chats: ["local"] }, { name: "qq", running: false, off: "off (no credentials)", chats: ["c2c:A"] }] },
	{ type: "online", state: "online" },
	{ type: "setting", name: "llm.model", value: "other" },
	{ type: "setting", name: "llm.model", value: null },
	{ type: "submit", call: 1, request: { flags: 0, user_text: "hello", source: SOURCE }, wait_ms: 5000, response: true, response_ms: 130000, events: ["tool_execution_start"] },
	{ type: "submit", call: 2, request: { flags: 3, session_id: "", user_text: "x", source: SOURCE, target: { channel: "qq", chat_id: "9" }, role: "user" }, wait_ms: 0, response: false, response_ms: 0, events: [] },
	{ type: "call_cap", call: 8, name: "gpio_write", args: { pin: 2, value: 1 }, request: { flags: 0, session_id: "", user_text: "lights on", source: SOURCE, role: "owner" } },
	{ type: "cancel", call: 3, request_id: 0 },
	{ type: "status", call: 4 },
	{ type: "status", call: 4, collect: true },
	{ type: "command", call: 5, name: "session list", args: "", chat: { channel: "telegram", chat_id: "42" } },
	{ type: "stop", call: 6 },
	{ type: "wipe", call: 7 },
	{ type: "ping", call: 9 },
];

const FROM_AGENT: FromAgent[] = [
	{ type: "ready", commands: [{ name: "session", usage: "", help: "the session" }], warnings: ["memory is light"] },
	{ type: "accepted", call: 1, request_id: 3 },
	{ type: "response", call: 1, response: RESPONSE },
	{ type: "response", call: 1, response: { ...RESPONSE, ok: false, text: "", error: "request cancelled" } },
	{ type: "event", call: 1, event: { type: "tool_execution_start", agent_id: "root", request_id: 3, session_id: "s", call: { id: "c", name: "get_time", arguments: "{}" } } },
	{ type: "out", event: { type: "out_message", channel: "console", chat_id: "local", text: "later", request_id: 4, correlation_id: "" } },
	{ type: "out", event: { type: "out_message", channel: "console", chat_id: "local", text: "at seven", request_id: 5, correlation_id: "", label: "schedule s1" } },
	{ type: "out", event: { type: "agent_stage", channel: "qq", chat_id: "9", text: "running get_time", request_id: 4 } },
	{ type: "cancelled", call: 3, request_id: 0 },
	{ type: "status", call: 4, status: { phase: "IN_LLM_HTTP", in_flight: 3, queued: 1, subagents: [{ agent_id: "sub-1", phase: "IDLE" }], heap: HEAP } },
	{ type: "command_result", call: 5, lines: ["a", "b"] },
	{ type: "wiped", call: 7, wiped: ["sessions (3 files)"], errors: [] },
	{ type: "command_result", call: 5, lines: [], error: "no such session" },
	{ type: "command_result", call: 5, lines: [], usage: true },
	{ type: "stopped", call: 6 },
	{ type: "pong", call: 9 },
	{ type: "cap_result", call: 8, content: "pin 2 is high" },
	{ type: "failed", call: 7, error: "the agent is busy" },
	{ type: "refused", error: "that was not a message" },
	{ type: "log", line: "llm: retry 1 of 3 after HTTP 503" },
];

test("every message to the agent round-trips through its check unchanged (after a copy)", () => {
	for (const message of TO_AGENT) assert.deepEqual(readToAgent(copy(message)), message, `${message.type} round trip`);
});

test("every message from the agent round-trips through its check unchanged (after a copy)", () => {
	for (const message of FROM_AGENT) assert.deepEqual(readFromAgent(copy(message)), message, `${message.type} round trip`);
});

function refusal(read: (m: unknown) => unknown, message: unknown): PortError {
	try {
		read(message);
	} catch (error) {
		if (error instanceof PortError) return error;
		throw error;
	}
	return assert.fail(`${JSON.stringify(message)} was accepted`);
}

test("malformed and unknown messages are refused with a sentence naming what is wrong, keeping the call to answer", () => {
	const cases: Array<[unknown, RegExp, number]> = [
		[null, /not an object with a type/, 0],
		["status", /not an object with a type/, 0],
		[{ call: 4 }, /has no type/, 4],
		[{ type: "reboot_everything", call: 9 }, /does not know the message type "reboot_everything"/, 9],
		[{ type: "status" }, /call must be a whole number from 1/, 0],
		[{ type: "cancel", call: 2, request_id: -1 }, /request_id must be a whole number/, 2],
		[{ type: "submit", call: 3, request: { flags: 0, source: SOURCE }, wait_ms: 0, response: true, events: [] }, /request\.user_text must be a string/, 3],
		[{ type: "submit", call: 3, request: { flags: 0, user_text: "x".repeat(AGENT_PORT_TEXT_MAX_CHARS + 1), source: SOURCE }, wait_ms: 0, response: true, events: [] }, /more than 32768/, 3],
		[{ type: "submit", call: 3, request: { flags: 0, user_text: "x", source: SOURCE }, wait_ms: 0, response: true, events: ["secrets"] }, /"secrets", which is not an event a submitter can watch/, 3],
		[{ type: "command", call: 5, name: "session", args: "", chat: "console" }, /chat must be an object/, 5],
		[{ type: "setting", name: "llm.model", value: 3 }, /value must be a string/, 0],
		[{ type: "online", state: "maybe" }, /online state must be one of online, waiting, offline/, 0],
		[{ type: "start", settings: {} }, /online state must be one of/, 0],
		[{ type: "start", settings: {}, online: "online", channels: [{ name: "qq", running: "yes", chats: [] }] }, /channels\[0\]\.running must be/, 0],
		[{ type: "channels", channels: [{ name: "qq", running: true, chats: [7] }] }, /channels\[0\]\.chats\[0\] must be a string/, 0],
		[{ type: "submit", call: 6, request: { flags: 0, user_text: "x", source: SOURCE, role: "root" }, wait_ms: 0, response: false, events: [] }, /request\.role must be owner or user/, 6],
		[{ type: "call_cap", call: 7, name: "gpio_write", args: [1, 2], request: { flags: 0, user_text: "x", source: SOURCE } }, /args must be an object/, 7],
	];
	for (const [message, pattern, call] of cases) {
		const error = refusal(readToAgent, message);
		assert.match(error.message, pattern);
		assert.match(error.message, /^the agent port/);
		assert.equal(error.call, call, `call kept for ${JSON.stringify(message).slice(0, 60)}`);
	}
	assert.match(refusal(readFromAgent, { type: "status", call: 1, status: { phase: "DANCING", in_flight: 0, queued: 0, subagents: [], heap: HEAP } }).message, /status\.phase is not a phase/);
	assert.match(refusal(readFromAgent, { type: "out", event: { type: "secret_event" } }).message, /out_message or agent_stage/);
	assert.match(refusal(readFromAgent, { type: "out", event: { type: "out_message", channel: "console", chat_id: "local", text: "x", request_id: 5, correlation_id: "", label: 7 } }).message, /event\.label/);
	assert.match(refusal(readFromAgent, { type: "hello" }).message, /does not know the message type "hello" from the agent/);
	assert.match(refusal(readFromAgent, { type: "log", line: 5 }).message, /line/);
});

/** A supervisor over in-process agents whose core answers with model. */
function setup(model: FakeModel, options: { commands?: boolean; backoffMs?: number[]; windowMs?: number; callCap?: CallCap; deadlineMs?: number } = {}) {
	const notices: string[] = [];
	const logs: string[] = [];
	const cores: ReturnType<typeof harness>[] = [];
	const collections = { count: 0 };
	const agents = new FakeAgents((settings, publish) => {
		const h = harness(model, { publish, ...(options.callCap ? { callCap: options.callCap } : {}) });
		cores.push(h);
		return partsOf(h.core, { collect: () => void collections.count++, commands: () => (options.commands ? echoCommands() : []), warnings: settings.get("memory.mode") ? [`memory is ${settings.get("memory.mode")}`] : [] });
	});
	const values = new Map<string, string>([["llm.model", "m1"], ["telegram.bot_token", "123:secret"]]);
	const listeners: Array<(name: string, value: string | undefined) => void> = [];
	const config = {
		entries: () => [...values],
		onChange: (listener: (name: string, value: string | undefined) => void) => { listeners.push(listener); return () => {}; },
		set(name: string, value: string | undefined) {
			if (value === undefined) values.delete(name); else values.set(name, value);
			for (const l of listeners) l(name, value);
		},
	};
	const supervisor = new AgentSupervisor({
		spawn: agents.spawn, config, now: () => Date.now(), notice: (line) => notices.push(line), log: (line) => logs.push(line),
		backoffMs: options.backoffMs ?? [10, 20], windowMs: options.windowMs ?? 60_000, startTimeoutMs: 2000,
		...(options.deadlineMs ? { deadlineMs: options.deadlineMs } : {}),
	});
	return { supervisor, client: supervisor.client, agents, notices, logs, cores, config, collections };
}

const ask = (text: string, more: { session_id?: string; flags?: number } = {}) => ({ flags: more.flags ?? 0, user_text: text, source: SOURCE, ...(more.session_id === undefined ? {} : { session_id: more.session_id }) });

test("ask over the port answers in the chat's current session, and only the watched events come back", async () => {
	const s = setup(new FakeModel({ calls: [{ name: "get_time" }] }, { text: "it is noon" }));
	const ready = await s.supervisor.start();
	assert.ok(ready, "the agent said it was ready");
	const seen: AgentEvent[] = [];
	let accepted = 0;
	const response = await s.client.ask(ask("what time is it?"), {
		waitMs: 1000, responseMs: 5000, events: ["agent_start", "tool_execution_start", "agent_end"], onEvent: (e) => seen.push(e), onAccepted: (id) => (accepted = id),
	});
	assert.equal(response.ok, true);
	assert.equal(response.text, "it is noon");
	assert.equal(response.session_id, "console-local", "the agent machine chose the chat's session");
	assert.ok(accepted > 0 && response.request_id === accepted, "the accepted id is the answered one");
	assert.deepEqual(seen.map((e) => e.type), ["agent_start", "tool_execution_start", "agent_end"], "from agent_start on, though the core may start it before submit settles");
	await s.supervisor.stop();
});

test("a console ask crosses the port in as few messages as it needs: no accepted, a tool's end only when it failed", async () => {
	const s = setup(new FakeModel({ calls: [{ name: "get_time" }] }, { text: "it is noon" }, { calls: [{ name: "broken" }] }, { text: "that failed" }), {
		callCap: (call) => (call.name === "broken" ? { content: "the pin is not wired: check it", is_error: true } : { content: "12:00" }),
	});
	await s.supervisor.start();
	const types = (from: number) => s.agents.last.sent.slice(from).map((m) => {
		const message = m as { type: string; event?: { type: string; is_error?: boolean } };
		return message.event ? `${message.type}:${message.event.type}${message.event.is_error ? "!" : ""}` : message.type;
	});
	const seen: string[] = [];
	const options = { waitMs: 1000, responseMs: 5000, events: ["tool_execution_start", "tool_execution_failed"] as WatchableEvent[], onEvent: (e: AgentEvent) => seen.push(e.type) };
	let from = s.agents.last.sent.length;
	assert.equal((await s.client.ask(ask("what time is it?"), options)).text, "it is noon");
	assert.deepEqual(types(from), ["event:tool_execution_start", "response"], "one message for the tool, one for the answer");
	from = s.agents.last.sent.length;
	assert.equal((await s.client.ask(ask("and the pin?"), options)).text, "that failed");
	assert.deepEqual(types(from), ["event:tool_execution_start", "event:tool_execution_end!", "response"], "a failed tool's end comes");
	assert.deepEqual(seen, ["tool_execution_start", "tool_execution_start", "tool_execution_end"]);
	from = s.agents.last.sent.length;
	let accepted = 0;
	await s.client.ask(ask("again"), { waitMs: 1000, responseMs: 5000, onAccepted: (id) => (accepted = id) });
	assert.deepEqual(types(from), ["accepted", "response"], "accepted comes to an ask that wants it");
	assert.ok(accepted > 0);
	await s.supervisor.stop();
});

test("a watched tool start crosses when the agent's callback ends, not while the tool runs; the answer follows it", async () => {
	let sentWhileRunning: string[] = [];
	let from = 0;
	let s: ReturnType<typeof setup>;
	const types = () => s.agents.last.sent.slice(from).map((m) => {
		const message = m as { type: string; event?: { type: string } };
		return message.event ? `${message.type}:${message.event.type}` : message.type;
	});
	s = setup(new FakeModel({ calls: [{ name: "get_time" }, { name: "get_date" }] }, { text: "it is noon" }), {
		callCap: (call) => {
			sentWhileRunning = sentWhileRunning.concat(types());
			return { content: call.name === "get_time" ? "12:00" : "today" };
		},
	});
	await s.supervisor.start();
	from = s.agents.last.sent.length;
	const seen: string[] = [];
	const response = await s.client.ask(ask("what time is it?"), {
		waitMs: 1000, responseMs: 5000, events: ["tool_execution_start"], onEvent: (e) => seen.push(e.type === "tool_execution_start" ? e.call.name : e.type),
	});
	assert.equal(response.text, "it is noon");
	assert.deepEqual(sentWhileRunning, [], "nothing crossed while the round's tools ran");
	assert.deepEqual(types(), ["event:tool_execution_start", "event:tool_execution_start", "response"], "both starts, in order, then the answer");
	assert.deepEqual(seen, ["get_time", "get_date"]);
	await s.supervisor.stop();
});

test("a watched stream's deltas cross the port joined: fewer messages, the same text, in order with the other events", async () => {
	const inner = new FakeModel({ text: "one two three four five" });
	// The reply streamed as five deltas, as an LLM's would be.
	const streaming = {
		chat: (request: ChatRequest, options: ChatOptions = {}) => inner.chat(request, {
			...options,
			onEvent: (e) => {
				if (e.type !== "message_update" || e.delta.type !== "text") return options.onEvent?.(e);
				for (const text of e.delta.text.split(/(?= )/)) options.onEvent?.({ type: "message_update", delta: { type: "text", text } });
			},
		}),
	};
	const s = setup(streaming as unknown as FakeModel);
	await s.supervisor.start();
	const seen: string[] = [];
	let text = "";
	let ended!: () => void;
	const end = new Promise<void>((resolve) => (ended = resolve));
	const from = s.agents.last.sent.length;
	await s.client.submit(ask("count", { flags: RequestFlag.SKIP_RESPONSE_QUEUE }), {
		waitMs: 1000, events: ["agent_start", "message_update", "agent_end"],
		onEvent: (e) => {
			seen.push(e.type);
			if (e.type === "message_update") text += e.delta.text;
			if (e.type === "agent_end") ended();
		},
	});
	await Promise.race([end, new Promise((resolve) => Timer.set(resolve, 3000))]);
	assert.equal(text, "one two three four five", "the joined deltas are the reply");
	const deltas = s.agents.last.sent.slice(from).filter((m) => (m as { event?: { type: string } }).event?.type === "message_update").length;
	assert.equal(deltas, 1, "five deltas of one read crossed as one message");
	assert.deepEqual(seen.filter((t) => t !== "message_update"), ["agent_start", "agent_end"]);
	assert.ok(seen.indexOf("message_update") > seen.indexOf("agent_start") && seen.indexOf("message_update") < seen.indexOf("agent_end"), seen.join(", "));
	await s.supervisor.stop();
});

test("the core builds only the events its listeners hear (a streamed delta nobody watches costs no object)", async () => {
	const model = new FakeModel({ text: "a streamed answer" });
	const asked: string[] = [];
	const heard: string[] = [];
	const core = new Core({ agentId: "root", model, systemPrompt: "You are a test agent.", callCap: () => ({ content: "" }), log: () => {} });
	core.addListener((event) => heard.push(event.type), (type) => {
		asked.push(type);
		return type === "agent_start" || type === "agent_end";
	});
	core.start();
	const id = await core.submit({ request_id: 0, flags: 0, session_id: "", user_text: "hi", source: SOURCE }, 1000);
	assert.equal((await core.receiveFor(id, 5000)).text, "a streamed answer");
	assert.deepEqual(heard, ["agent_start", "agent_end"], "only the types it hears reach it");
	assert.ok(asked.includes("message_update"), "the delta was offered to the filter, and not built");
	core.stop();
});

test("a submit nobody waits on still hears its request's watched events after it was accepted (a chat's streamed reply)", async () => {
	const s = setup(new FakeModel({ calls: [{ name: "get_time" }] }, { text: "it is noon" }));
	await s.supervisor.start();
	const seen: string[] = [];
	let ended!: () => void;
	const end = new Promise<void>((resolve) => (ended = resolve));
	const id = await s.client.submit(ask("what time is it?", { flags: RequestFlag.SKIP_RESPONSE_QUEUE }), {
		waitMs: 1000, events: ["agent_start", "tool_execution_start", "agent_end"],
		onEvent: (e) => { seen.push(e.type); if (e.type === "agent_end") ended(); },
	});
	assert.ok(id > 0, "accepted");
	await Promise.race([end, new Promise((resolve) => Timer.set(resolve, 3000))]);
	assert.deepEqual(seen.filter((t) => t !== "agent_start"), ["tool_execution_start", "agent_end"], "events after acceptance reach the submitter");
	await s.supervisor.stop();
});

test("settings reach the agent machine: only the agent's ones at start, then each change at once", async () => {
	const s = setup(new FakeModel());
	await s.supervisor.start();
	const mirror = s.agents.last.settings!;
	assert.equal(mirror.get("llm.model"), "m1");
	assert.equal(mirror.get("telegram.bot_token"), undefined, "a channel's secret never enters the agent machine");
	const heard: string[] = [];
	mirror.onChange((name, value) => heard.push(`${name}=${value}`));
	s.config.set("llm.model", "m2");
	s.config.set("telegram.bot_token", "456:other");
	s.config.set("llm.base_url", undefined);
	s.config.set("llm.model", undefined);
	await waitFor(() => heard.length === 3, "the changes in the agent machine");
	await delay(5);
	assert.deepEqual(heard.filter((h) => !h.startsWith("log.secret_prints=")), ["llm.model=m2", "llm.model=undefined"], "the agent's settings only, in order");
	assert.equal(mirror.get("llm.model"), undefined);
	// Of a channel's secret the agent gets only a fingerprint, at start and on each change.
	const prints = heard.filter((h) => h.startsWith("log.secret_prints="));
	assert.equal(prints.length, 1, "the token's change changed the fingerprints");
	assert.ok(!heard.join().includes("456:other") && !heard.join().includes("123:secret"), heard.join());
	assert.deepEqual(JSON.parse(mirror.get("log.secret_prints")!).map((p: { length: number }) => p.length), [9]);
	await s.supervisor.stop();
});

test("the agent's name lookups follow the Wi-Fi station's state, told at start and at each change, also to a restarted machine", async () => {
	const s = setup(new FakeModel(), { backoffMs: [10] });
	s.client.online("waiting");
	await s.supervisor.start();
	const outcome = (gate: OnlineGate) => {
		const seen = { result: "held" };
		gate(() => { seen.result = "ready"; }, () => { seen.result = "failed"; });
		return seen;
	};
	const held = outcome(s.agents.last.online!);
	await delay(5);
	assert.equal(held.result, "held", "a lookup waits while the board joins Wi-Fi");
	s.client.online("online");
	await waitFor(() => held.result === "ready", "the held lookup to go once online");
	assert.equal(outcome(s.agents.last.online!).result, "ready", "later lookups go at once");
	s.client.online("offline");
	await waitFor(() => s.agents.last.received.some((m) => (m as { state?: string }).state === "offline"), "the change posted");
	await delay(5);
	assert.equal(outcome(s.agents.last.online!).result, "failed", "lookups fail at once with nothing configured");
	s.agents.last.kill("out of memory");
	await waitFor(() => s.agents.machines.length === 2 && s.agents.last.online !== undefined, "the restarted machine");
	assert.equal(outcome(s.agents.last.online!).result, "failed", "a new machine starts with the latest state");
	assert.deepEqual((s.agents.last.received[0] as { online: string }).online, "offline");
	await s.supervisor.stop();
});

test("a request nobody waits for is answered through an out event", async () => {
	const s = setup(new FakeModel({ text: "to the chat" }));
	await s.supervisor.start();
	const out: string[] = [];
	s.client.onOut((e) => out.push(`${e.type} ${e.channel}:${e.chat_id} ${e.text}`));
	const id = await s.client.submit({ ...ask("hi", { flags: 3, session_id: "" }), source: { ...SOURCE, channel: "qq", chat_id: "9" } }, { waitMs: 1000 });
	assert.ok(id > 0);
	await waitFor(() => out.length === 1, "the out event");
	assert.deepEqual(out, ["out_message qq:9 to the chat"]);
	await assert.rejects(s.client.ask(ask("x", { flags: 2 }), { waitMs: 100, responseMs: 100 }), /SKIP_RESPONSE_QUEUE has no response/);
	await s.supervisor.stop();
});

test("a router's call_cap runs a tool in the agent machine: its result, or its failure as a sentence", async () => {
	const s = setup(new FakeModel());
	await s.supervisor.start();
	assert.equal(await s.client.callCap("get_time", { zone: "UTC" }, ask("time", { session_id: "" })), 'get_time ran with {"zone":"UTC"}');
	await assert.rejects(s.client.callCap("fails", {}, ask("x", { session_id: "" })), "the tool failed: check its pin");
	await s.supervisor.stop();
});

test("cancel through the port ends the waiting ask with request cancelled and names the request", async () => {
	const s = setup(new FakeModel({ hang: true }));
	await s.supervisor.start();
	let id = 0;
	const answer = s.client.ask(ask("wait"), { waitMs: 1000, responseMs: 5000, onAccepted: (n) => (id = n) });
	await waitFor(() => s.cores[0].core.phase === "IN_LLM_HTTP", "the call in flight");
	assert.equal(await s.client.cancel(0), id);
	const response = await answer;
	assert.equal(response.ok, false);
	assert.equal(response.error, "request cancelled");
	assert.equal(await s.client.cancel(0), 0, "nothing is running any more");
	await s.supervisor.stop();
});

test("a request's role crosses the port to the core: a paired owner's chat runs as owner, a user's as user", async () => {
	const s = setup(new FakeModel({ text: "a" }, { text: "b" }));
	await s.supervisor.start();
	for (const role of ["owner", "user"] as const) {
		const seen: AgentEvent[] = [];
		await s.client.ask({ ...ask(`as ${role}`), source: { ...SOURCE, channel: "telegram" }, role }, { waitMs: 1000, responseMs: 5000, events: ["agent_start"], onEvent: (e) => seen.push(e) });
		const start = seen.find((e) => e.type === "agent_start");
		assert.equal(start?.type === "agent_start" ? start.request.role : undefined, role);
	}
	await s.supervisor.stop();
});

test("lone UTF-16 surrogates in a request's text become U+FFFD where it enters the agent; pairs, NUL and the rest are kept", async () => {
	const s = setup(new FakeModel({ text: "a" }));
	await s.supervisor.start();
	const seen: AgentEvent[] = [];
	const high = String.fromCharCode(0xd83d), low = String.fromCharCode(0xde00);
	const given = `a${high}b${low}c ${high}${low} 😀 \u0000 \u00e9 中 ${low}${high}`;
	await s.client.ask({ ...ask(given), source: { ...SOURCE, channel: "telegram" } }, { waitMs: 1000, responseMs: 5000, events: ["agent_start"], onEvent: (e) => seen.push(e) });
	const start = seen.find((e) => e.type === "agent_start");
	assert.equal(start?.type === "agent_start" ? start.request.user_text : undefined, "a\ufffdb\ufffdc 😀 😀 \u0000 \u00e9 中 \ufffd\ufffd");
	assert.equal(wellFormed("plain text, 中文 😀"), "plain text, 中文 😀");
	assert.equal(wellFormed(""), "");
	await s.supervisor.stop();
});

test("when the agent machine dies, each chat still waiting for its out_message answer gets one saying so; an answered chat hears nothing more", async () => {
	const s = setup(new FakeModel({ text: "first" }, { hang: true }));
	await s.supervisor.start();
	const outs: OutEvent[] = [];
	s.client.onOut((e) => void outs.push(e));
	const fromChat = (id: string) => ({
		flags: RequestFlag.PUBLISH_OUT_MESSAGE | RequestFlag.SKIP_RESPONSE_QUEUE, user_text: `hi from ${id}`,
		source: { channel: "telegram", chat_id: id, sender_id: id, message_id: `m${id}`, cap: "" },
	});
	await s.client.submit(fromChat("1"), { waitMs: 1000 });
	await waitFor(() => outs.some((e) => e.type === "out_message" && e.chat_id === "1"), "chat 1's answer");
	await s.client.submit(fromChat("2"), { waitMs: 1000 });
	await s.client.submit(fromChat("2"), { waitMs: 1000 });
	await waitFor(() => s.cores[0].core.phase === "IN_LLM_HTTP", "chat 2's call in flight");
	s.agents.last.kill("out of memory");
	await waitFor(() => outs.some((e) => e.chat_id === "2"), "chat 2 told");
	const told = outs.filter((e) => e.type === "out_message" && e.chat_id === "2");
	assert.equal(told.length, 1, "one sentence per chat, not one per request");
	assert.match(told[0].type === "out_message" ? told[0].text : "", /^the agent stopped \(out of memory\) and is restarting; ask again in a moment$/);
	assert.equal(told[0].type === "out_message" ? told[0].correlation_id : "", "m2", "it answers the chat's message");
	assert.equal(outs.filter((e) => e.chat_id === "1").length, 1, "the answered chat hears nothing more");
	await s.supervisor.stop();
});

test("status carries the core's phase and the agent machine's heap", async () => {
	const s = setup(new FakeModel());
	await s.supervisor.start();
	const status = await s.client.status();
	assert.deepEqual(status, { phase: "IDLE", in_flight: 0, queued: 0, subagents: [], heap: HEAP });
	assert.equal(s.collections.count, 0, "a plain status does not collect");
	await s.client.status({ collect: true });
	assert.equal(s.collections.count, 1, "status with collect collects the agent's garbage before reading its heap");
	await s.supervisor.stop();
});

test("agent commands print their lines; usage errors and failures come back as such; an unknown one is refused", async () => {
	const s = setup(new FakeModel(), { commands: true });
	const ready = await s.supervisor.start();
	assert.deepEqual(ready!.commands.map((c) => c.name), ["echo", "slow echo", "usage", "fails"]);
	const chat = { channel: "console", chat_id: "local" };
	assert.deepEqual(await s.client.command("echo", "hi there", chat), { lines: ["hi there", "hi there"], error: undefined, usage: undefined });
	assert.deepEqual((await s.client.command("slow echo", "later", chat)).lines, ["later"]);
	assert.equal((await s.client.command("usage", "", chat)).usage, true);
	assert.deepEqual(await s.client.command("fails", "", chat), { lines: ["partly"], error: "it failed: try again later", usage: undefined });
	await assert.rejects(s.client.command("format flash", "", chat), /the agent has no command "format flash"; type help/);
	await s.supervisor.stop();
});

test("a malformed or unknown message to the agent is refused and the agent keeps answering", async () => {
	const s = setup(new FakeModel());
	await s.supervisor.start();
	const machine = s.agents.last;
	// Straight onto the link, past the client's typed methods.
	machine.post({ type: "format_flash", call: 77 } as unknown as ToAgent);
	machine.post({ nonsense: true } as unknown as ToAgent);
	await waitFor(() => s.logs.length === 2, "both refusals");
	assert.match(s.logs[0], /a "failed" reply came for call 77, which nobody waits for any more/);
	assert.match(s.logs[1], /the agent refused a message: the agent port refused a message for the agent: it has no type/);
	assert.match(s.agents.logs.join("\n"), /does not know the message type "format_flash"/);
	assert.equal((await s.client.status()).phase, "IDLE", "the agent still answers");
	assert.equal(machine.alive, true);
	await s.supervisor.stop();
});

test("a malformed message from the agent fails only its own call and the client keeps working", async () => {
	const s = setup(new FakeModel({ hang: true }));
	await s.supervisor.start();
	const machine = s.agents.last;
	const pending = s.client.status();
	const call = (machine.received.at(-1) as { call: number }).call;
	machine.inject({ type: "status", call, status: { phase: "DANCING" } });
	await assert.rejects(pending, /status\.phase is not a phase of the agent core/);
	machine.inject({ type: "gossip" });
	await waitFor(() => s.logs.some((l) => /does not know the message type "gossip"/.test(l)), "the refusal logged");
	assert.equal((await s.client.status()).phase, "IDLE");
	await s.supervisor.stop();
});

test("messages before start are refused with a sentence", async () => {
	const agents = new FakeAgents((settings, publish) => partsOf(harness(new FakeModel(), { publish }).core));
	const replies: unknown[] = [];
	const machine = agents.spawn({ onmessage: (m) => replies.push(m), onerror: () => {} });
	machine.post({ type: "status", call: 5 });
	await waitFor(() => replies.length === 1, "the reply");
	assert.equal((replies[0] as { type: string }).type, "failed");
	assert.match((replies[0] as { error: string }).error, /is not open yet/);
});

test(`calls are bounded: beyond ${AGENT_PORT_CALLS_MAX} waiting, a call is refused at once`, async () => {
	const s = setup(new FakeModel(...Array.from({ length: AGENT_PORT_CALLS_MAX }, () => ({ hang: true as const }))));
	await s.supervisor.start();
	const asks = Array.from({ length: AGENT_PORT_CALLS_MAX }, () => s.client.ask(ask("x"), { waitMs: 10, responseMs: 5000 }).catch((e: Error) => e.message));
	await assert.rejects(s.client.status(), /already has 32 requests to answer/);
	await s.supervisor.stop();
	for (const result of await Promise.all(asks)) assert.match(String(result), /rebooting|busy|queue/);
});

test("the agent machine dying mid-ask ends the ask at once with why, and a new machine answers the next ask", async () => {
	const release = deferred();
	const s = setup(new FakeModel({ until: release.promise, then: { text: "never" } }, { text: "back again" }));
	await s.supervisor.start();
	const answer = s.client.ask(ask("slow"), { waitMs: 1000, responseMs: 5000 });
	await waitFor(() => s.cores[0].core.phase === "IN_LLM_HTTP", "the call in flight");
	s.agents.last.kill("out of memory: the XS heap is exhausted");
	// The model never answers, and a wait that ran out would say so: this error is the death's.
	await assert.rejects(answer, /the agent stopped \(out of memory: the XS heap is exhausted\) and is restarting; ask again in a moment/);
	s.cores[0].core.stop();
	assert.match(s.notices[0], /^agent: the agent machine stopped \(out of memory: the XS heap is exhausted\); restarting it in 10 ms$/);
	await waitFor(() => s.supervisor.state === "running", "the restart");
	assert.equal(s.notices[1], "agent: restarted (restart 1); ask again");
	assert.equal(s.agents.machines.length, 2);
	assert.equal(s.agents.machines[0].terminated, false, "a machine that ended by itself is not terminated again");
	const next = await s.client.ask(ask("again"), { waitMs: 1000, responseMs: 5000 });
	assert.equal(next.text, "back again");
	assert.match(s.supervisor.statusLine(), /running \(1 restart; last stop: out of memory/);
	await s.supervisor.stop();
});

test("a machine that stops answering its heartbeat is ended and restarted: the ask in flight gets why, status shows it, a new machine answers (issue 25)", async () => {
	const release = deferred();
	const s = setup(new FakeModel({ until: release.promise, then: { text: "never" } }, { text: "back again" }), { deadlineMs: 150 });
	await s.supervisor.start();
	await waitFor(() => s.supervisor.heartbeats >= 2, "two heartbeats answered");
	const answer = s.client.ask(ask("slow"), { waitMs: 1000, responseMs: 60_000 });
	await waitFor(() => s.cores[0].core.phase === "IN_LLM_HTTP", "the call in flight");
	assert.equal(s.supervisor.state, "running", "a request that waits long is not a hang: the machine still answers");
	s.agents.last.hung = true;
	await assert.rejects(answer, /the agent stopped \(it did not answer its heartbeat within 150 ms: it hung\) and is restarting; ask again in a moment/);
	assert.equal(s.agents.machines[0].terminated, true, "the hung machine is ended");
	assert.match(s.notices[0], /^agent: the agent machine stopped \(it did not answer its heartbeat within 150 ms: it hung\); restarting it in 10 ms$/);
	s.cores[0].core.stop();
	await waitFor(() => s.supervisor.state === "running" && s.agents.machines.length === 2, "the restart");
	const next = await s.client.ask(ask("again"), { waitMs: 1000, responseMs: 5000 });
	assert.equal(next.text, "back again");
	assert.match(s.supervisor.statusLine(), /^agent machine: running \(1 restart; last stop: it did not answer its heartbeat within 150 ms: it hung\)$/);
	const beats = s.supervisor.heartbeats;
	await waitFor(() => s.supervisor.heartbeats > beats, "the new machine's heartbeat");
	await s.supervisor.stop();
});

test("more deaths than back-off steps within the window leave the agent down, saying what to do; calls fail at once", async () => {
	const s = setup(new FakeModel(), { backoffMs: [5] });
	await s.supervisor.start();
	s.agents.last.kill("an uncaught error: boom");
	await waitFor(() => s.supervisor.state === "running" && s.agents.machines.length === 2, "the first restart");
	s.agents.failNext.push("its main module threw");
	s.agents.last.kill("an uncaught error: boom again");
	await waitFor(() => s.supervisor.state === "down", "down");
	assert.match(s.notices.at(-1)!, /stopped again \(an uncaught error: boom again\): 2 times within 1 min, so it stays down\. The console and config still work; .* then type reboot\.$/);
	await assert.rejects(s.client.status(), /the agent is down: it stopped 2 times within 1 min .*; type reboot to start it again/);
	assert.match(s.supervisor.statusLine(), /^agent machine: down .*type reboot/);
	assert.equal(s.agents.machines.length, 2, "no third machine");
});

test("a machine that cannot be spawned, or never says ready, counts as a death and is retried", async () => {
	const s = setup(new FakeModel(), { backoffMs: [5, 5] });
	s.agents.failNext.push("not enough memory for the worker");
	assert.equal(await s.supervisor.start(), undefined, "boot goes on without the agent");
	assert.match(s.notices[0], /stopped \(it could not be started: not enough memory for the worker\); restarting it in 5 ms/);
	await waitFor(() => s.supervisor.state === "running", "the retry");
	await s.supervisor.stop();
});

test("stop (reboot) has the agent stop its cores and close its files, then ends its machine without a restart", async () => {
	const s = setup(new FakeModel({ hang: true }));
	await s.supervisor.start();
	const answer = s.client.ask(ask("wait"), { waitMs: 1000, responseMs: 5000 });
	await waitFor(() => s.cores[0].core.phase === "IN_LLM_HTTP", "the call in flight");
	await s.supervisor.stop();
	assert.ok(s.agents.last.received.some((m) => (m as { type: string }).type === "stop"), "the agent was asked to stop");
	assert.equal(s.agents.last.terminated, true);
	assert.equal(s.cores[0].core.phase, "IDLE", "the core stopped");
	await assert.rejects(answer, /rebooting|cancelled/);
	await delay(30);
	assert.equal(s.agents.machines.length, 1, "no restart after a stop");
	assert.equal(s.supervisor.state, "stopped");
});

test("wipe (factory-reset) has the agent stop its cores first, then wipe its own directories; it takes no ask after", async () => {
	const s = setup(new FakeModel({ hang: true }));
	await s.supervisor.start();
	const answer = s.client.ask(ask("wait"), { waitMs: 1000, responseMs: 5000 });
	await waitFor(() => s.cores[0].core.phase === "IN_LLM_HTTP", "the call in flight");
	const result = await s.client.wipe();
	assert.deepEqual(result, { wiped: ["sessions (stopped first)"], errors: ["macro tools could not be wiped completely (the disk is busy)"] });
	const settled = await answer.then((response) => JSON.stringify(response), (error) => String(error));
	assert.match(settled, /cancelled/, "the request in flight ended");
	await assert.rejects(s.client.ask(ask("again"), { waitMs: 100, responseMs: 1000 }), /stopped for a reboot/);
	await s.supervisor.stop();
});

// A long text: ASCII with a surrogate pair (an emoji) across every part's boundary.
function longText(chars: number): string {
	const unit = "a".repeat(AGENT_PORT_TEXT_MAX_CHARS - 1) + "\u{1F600}";
	let text = "";
	while (text.length < chars) text += unit;
	return text.slice(0, chars - 1) + "z";
}

test("a reply or out message over one text field crosses in parts, each a checked message, and is whole again on the other side", () => {
	assert.ok(AGENT_PORT_REPLY_MAX_CHARS >= LLM_REPLY_MAX_BYTES, "any text a reply may hold fits the port's whole-text bound");
	const text = longText(5 * AGENT_PORT_TEXT_MAX_CHARS + 7);
	for (const message of [
		{ type: "response", call: 4, response: { ...RESPONSE, text } },
		{ type: "out", event: { type: "out_message", channel: "telegram", chat_id: "42", text, request_id: 4, correlation_id: "m1" } },
	] as FromAgent[]) {
		const sent: FromAgent[] = [];
		postInParts(message, (m) => sent.push(m));
		assert.equal(sent.length, 6, "five parts and the message");
		const parts = new TextParts();
		let whole: FromAgent | undefined;
		for (const m of sent) {
			const read = readFromAgent(copy(m));
			if (read.type === "part") {
				assert.ok(read.text.length <= AGENT_PORT_TEXT_MAX_CHARS);
				const last = read.text.charCodeAt(read.text.length - 1);
				assert.ok(last < 0xd800 || last > 0xdbff, "no part ends in half a surrogate pair");
				assert.ok(parts.add(read.index, read.text));
			} else whole = parts.join(read);
		}
		assert.deepEqual(whole, message, `${message.type}: the same text`);
		assert.equal(parts.waiting, 0);
	}
});

test("parts that do not add up are refused with a sentence; a text that never ended is dropped by the next; a short message passes as it is", () => {
	const message: FromAgent = { type: "response", call: 4, response: { ...RESPONSE, text: longText(3 * AGENT_PORT_TEXT_MAX_CHARS) } };
	const sent: FromAgent[] = [];
	postInParts(message, (m) => sent.push(m));
	const parts = new TextParts();
	// One part lost (a full queue): the message says 2, one came.
	parts.add(0, (sent[0] as { text: string }).text);
	let refused: unknown;
	try {
		parts.join(sent[2]);
	} catch (error) {
		refused = error;
	}
	assert.ok(refused instanceof PortError && refused.call === 4, "refused for its call");
	assert.match((refused as Error).message, /said 2 parts of its text came first, and 1 did/);
	// A text cut off after its first part, then a whole one: the stale part is dropped by index 0.
	parts.add(0, "stale");
	for (const m of sent.slice(0, 2)) assert.ok(parts.add((m as { index: number }).index, (m as { text: string }).text));
	assert.deepEqual(parts.join(sent[2]), message);
	// Out of order, or over the bound: dropped.
	assert.equal(parts.add(1, "x"), false);
	assert.equal(parts.waiting, 0);
	let total = 0, ok = true;
	const part = "b".repeat(AGENT_PORT_TEXT_MAX_CHARS);
	for (let i = 0; ok && total <= AGENT_PORT_REPLY_MAX_CHARS; i++, total += AGENT_PORT_TEXT_MAX_CHARS) ok = parts.add(i, part);
	assert.equal(ok, false, "parts over the whole text's bound are dropped");
	// A short message is sent as it is; a text over the bound is cut with a note.
	const short: FromAgent = { type: "response", call: 1, response: RESPONSE };
	const once: FromAgent[] = [];
	postInParts(short, (m) => once.push(m));
	assert.deepEqual(once, [short]);
	let chars = 0, count = 0, last: FromAgent | undefined;
	postInParts({ type: "response", call: 1, response: { ...RESPONSE, text: "c".repeat(AGENT_PORT_REPLY_MAX_CHARS + 10) } }, (m) => {
		if (m.type === "part") chars += m.text.length, count++;
		else last = m;
	});
	const cut = last as Extract<FromAgent, { type: "response" }>;
	assert.equal(cut.parts, count);
	assert.equal(chars + cut.response.text.length, AGENT_PORT_REPLY_MAX_CHARS, "cut to the bound");
	assert.match(cut.response.text, /\[… 262154 characters; the rest was left out\]$/);
});

test("a reply longer than one text field reaches the asker whole, and an out_message answer its chat", async () => {
	const text = longText(3 * AGENT_PORT_TEXT_MAX_CHARS + 100);
	const s = setup(new FakeModel({ text }, { text }));
	await s.supervisor.start();
	const response = await s.client.ask(ask("tell me a long story"), { waitMs: 1000, responseMs: 5000 });
	assert.equal(response.ok, true);
	assert.equal(response.text.length, text.length);
	assert.ok(response.text === text, "the same text");
	const outs: OutEvent[] = [];
	s.client.onOut((e) => void outs.push(e));
	await s.client.submit({
		flags: RequestFlag.PUBLISH_OUT_MESSAGE | RequestFlag.SKIP_RESPONSE_QUEUE, user_text: "again",
		source: { channel: "telegram", chat_id: "42", sender_id: "42", message_id: "m1", cap: "" },
	}, { waitMs: 1000 });
	await waitFor(() => outs.some((e) => e.type === "out_message"), "the out_message answer");
	const out = outs.find((e) => e.type === "out_message");
	assert.ok(out?.type === "out_message" && out.text === text, "the whole text reached the chat's listener");
	assert.deepEqual(s.logs.filter((line) => /agent port/.test(line)), [], "nothing refused");
	await s.supervisor.stop();
});
