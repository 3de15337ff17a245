// The event router (modules/main/router): the rules file's parser names the field at
// fault, a malformed file leaves the rules in force, the first matching rule's
// action runs (run_agent with its flags, send_message, call_cap) and the fallback
// takes the rest, outbound events reach their channel's binding, and the local
// agent port resolves sessions and hands a submitter its events.
import { test, assert } from "testing";
import { RequestFlag, type AgentEvent, type AgentRequest, type AgentResponse, type EventListener, type OutEvent } from "core/types";
import { CHAT_FLAGS, RulesError, fill, parseRules } from "router/rules";
import { Router } from "router/router";
import type { AgentPort, AskOptions, InMessage, PortRequest, SubmitOptions } from "router/types";

function fakePort() {
	const submitted: PortRequest[] = [];
	const asked: PortRequest[] = [];
	const cancelled: number[] = [];
	const commands: string[] = [];
	const outListeners: Array<(e: OutEvent) => void> = [];
	const port: AgentPort = {
		async ask(request: PortRequest, options: AskOptions) {
			asked.push(request);
			options.onEvent?.({ type: "tool_execution_start", request_id: 9, call: { id: "c1", name: "get_time", arguments: "{}" } } as AgentEvent);
			return { request_id: 9, ok: true, text: `answer to ${request.user_text}` } as AgentResponse;
		},
		async submit(request: PortRequest, _options: SubmitOptions) {
			submitted.push(request);
			return submitted.length;
		},
		async cancel(id: number) { cancelled.push(id); return id; },
		onOut(listener) {
			outListeners.push(listener);
			return () => {};
		},
		async command(name, args, chat) { commands.push(`${name} ${args} ${chat.channel}:${chat.chat_id}`); return { lines: [] }; },
	};
	return { port, submitted, asked, cancelled, commands, out: (e: OutEvent) => outListeners.forEach((l) => l(e)) };
}

const message = (text: string, over: Partial<InMessage> = {}): InMessage => ({
	type: "in_message", channel: "telegram", chat_id: "42", sender_id: "7", message_id: "1", text, role: "owner", ...over,
});

function parseError(source: string): string {
	try {
		parseRules(source);
	} catch (error) {
		assert.ok(error instanceof RulesError, "a RulesError");
		return (error as Error).message;
	}
	return assert.fail(`parsed: ${source}`);
}

test("a rules file is read into rules and a fallback", () => {
	const set = parseRules(JSON.stringify({
		version: 1,
		rules: [
			{ name: "ping", match: { channel: "telegram", text: "^ping$", ignore_case: true }, action: { type: "send_message", text: "pong {sender}" } },
			{ match: { role: "user" }, action: { type: "run_agent", flags: ["PUBLISH_OUT_MESSAGE", "SKIP_RESPONSE_QUEUE"], text: "[user] {text}" } },
			{ match: { text: "^/time" }, action: { type: "call_cap", cap: "get_time" } },
		],
		fallback: { type: "send_message", text: "nobody home" },
	}));
	assert.equal(set.rules.length, 3);
	assert.equal(set.rules[0].name, "ping");
	assert.equal(set.rules[1].name, "rule 2");
	assert.ok(set.rules[0].match.text?.test("PING"));
	assert.deepEqual(set.rules[1].action, { type: "run_agent", flags: RequestFlag.PUBLISH_OUT_MESSAGE | RequestFlag.SKIP_RESPONSE_QUEUE, text: "[user] {text}" });
	assert.deepEqual(set.rules[2].action, { type: "call_cap", cap: "get_time", args: {}, reply: true });
	assert.deepEqual(set.fallback, { type: "send_message", text: "nobody home" });
	assert.equal(parseRules("{}").fallback.type, "run_agent");
	assert.equal((parseRules("{}").fallback as { flags: number }).flags, CHAT_FLAGS);
});

test("a malformed rules file names the field at fault", () => {
	assert.match(parseError("{"), /not valid JSON/);
	assert.match(parseError("[]"), /^file: must be an object/);
	assert.match(parseError(`{"rules": [{"match": {"chanel": "telegram"}, "action": {"type": "run_agent"}}]}`), /^rules\[0\]\.match\.chanel: is not a field/);
	assert.match(parseError(`{"rules": [{"action": {"type": "run_agent"}}, {"match": {"text": "(unclosed"}, "action": {"type": "run_agent"}}]}`), /^rules\[1\]\.match\.text: is not a valid regular expression/);
	assert.match(parseError(`{"rules": [{"action": {"type": "run_agent", "flags": ["PUBLISH_OUT_MESSAGE", "LOUD"]}}]}`), /^rules\[0\]\.action\.flags\[1\]: must be one of/);
	assert.match(parseError(`{"rules": [{"action": {"type": "explode"}}]}`), /^rules\[0\]\.action\.type: must be run_agent, call_cap, run_script or send_message/);
	assert.match(parseError(`{"rules": [{"action": {"type": "send_message"}}]}`), /^rules\[0\]\.action\.text: must be a string/);
	assert.match(parseError(`{"rules": [{"action": {"type": "call_cap", "cap": "x", "args": []}}]}`), /^rules\[0\]\.action\.args: must be an object/);
	assert.match(parseError(`{"rules": [{"match": {"role": "root"}, "action": {"type": "run_agent"}}]}`), /^rules\[0\]\.match\.role: must be one of owner, user/);
	assert.match(parseError(`{"rules": [{"name": "a", "action": {"type": "run_agent"}}, {"name": "a", "action": {"type": "run_agent"}}]}`), /^rules\[1\]\.name: "a" is used/);
	assert.match(parseError(`{"version": 2}`), /^version: must be 1/);
	assert.match(parseError(`{"fallback": {"type": "send_message", "text": ""}}`), /^fallback\.text: must not be empty/);
});

test("a malformed rules file leaves the rules in force", () => {
	const { port } = fakePort();
	const router = new Router({ port, log: () => {} });
	assert.equal(router.load(`{"rules": [{"name": "one", "action": {"type": "send_message", "text": "hi"}}]}`), undefined);
	assert.equal(router.rules.length, 1);
	const problem = router.load(`{"rules": [{"match": {"text": 5}, "action": {"type": "run_agent"}}]}`);
	assert.match(problem ?? "", /rules\[0\]\.match\.text: must be a string; the previous rules stay in force|rules\[0\]\.match\.text: must be a string\); the previous rules stay in force/);
	assert.equal(router.rules.length, 1);
	assert.equal(router.rules[0].name, "one");
	assert.equal(router.load(undefined), undefined);
	assert.equal(router.rules.length, 0, "no file: the defaults");
});

test("the first matching rule runs; the fallback runs the agent with every chat flag", async () => {
	const { port, submitted } = fakePort();
	const router = new Router({ port, log: () => {} });
	const delivered: OutEvent[] = [];
	router.bind("telegram", { deliver: (e) => delivered.push(e) });
	router.load(JSON.stringify({
		rules: [
			{ name: "ping", match: { text: "^ping" }, action: { type: "send_message", text: "pong to {chat}" } },
			{ name: "users", match: { role: "user" }, action: { type: "run_agent", flags: ["PUBLISH_OUT_MESSAGE"], text: "user says: {text}" } },
		],
	}));
	assert.deepEqual(await router.publish(message("ping me")), { kind: "sent", rule: "ping" });
	assert.equal(submitted.length, 0, "send_message never reaches the agent");
	assert.equal(delivered.length, 1);
	assert.equal(delivered[0].text, "pong to 42");
	const user = await router.publish(message("hello", { role: "user" }));
	assert.deepEqual(user, { kind: "agent", request_id: 1, rule: "users" });
	assert.equal(submitted[0].user_text, "user says: hello");
	assert.equal(submitted[0].flags, RequestFlag.PUBLISH_OUT_MESSAGE);
	assert.equal(submitted[0].role, "user");
	const owner = await router.publish(message("hello"));
	assert.deepEqual(owner, { kind: "agent", request_id: 2, rule: undefined });
	assert.equal(submitted[1].flags, CHAT_FLAGS);
	assert.deepEqual(submitted[1].source, { channel: "telegram", chat_id: "42", sender_id: "7", message_id: "1", cap: "" });
});

test("call_cap rules run a capability and reply with its result; without a runner they fail with a sentence", async () => {
	const { port } = fakePort();
	const delivered: OutEvent[] = [];
	const calls: string[] = [];
	const rules = `{"rules": [{"name": "time", "match": {"text": "^/time"}, "action": {"type": "call_cap", "cap": "get_time", "args": {"zone": "UTC"}}}]}`;
	const router = new Router({ port, log: () => {}, callCap: async (name, args) => { calls.push(`${name} ${JSON.stringify(args)}`); return "12:00"; } });
	router.bind("telegram", { deliver: (e) => delivered.push(e) });
	router.load(rules);
	assert.deepEqual(await router.publish(message("/time")), { kind: "cap", rule: "time" });
	assert.deepEqual(calls, [`get_time {"zone":"UTC"}`]);
	assert.equal(delivered[0].text, "12:00");
	const bare = new Router({ port, log: () => {} });
	bare.load(rules);
	const failed = await bare.publish(message("/time"));
	assert.equal(failed.kind, "failed");
	assert.match((failed as { error: string }).error, /no capability can be called/);
});

test("outbound events reach their channel's binding; others are logged, a throwing sink is contained", () => {
	const { port, out } = fakePort();
	const lines: string[] = [];
	const router = new Router({ port, log: (l) => lines.push(l) });
	const got: OutEvent[] = [];
	const unbind = router.bind("telegram", { deliver: (e) => got.push(e) });
	out({ type: "agent_stage", channel: "telegram", chat_id: "1", text: "running tools: get_time", request_id: 3 });
	out({ type: "out_message", channel: "qq", chat_id: "1", text: "x", request_id: 4, correlation_id: "" });
	out({ type: "out_message", channel: "console", chat_id: "local", text: "x", request_id: 5, correlation_id: "" });
	assert.equal(got.length, 1);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /no channel "qq"/);
	unbind();
	router.bind("telegram", { deliver: () => { throw new Error("boom"); } });
	out({ type: "out_message", channel: "telegram", chat_id: "1", text: "x", request_id: 6, correlation_id: "" });
	assert.match(lines[1], /failed to take out_message: boom/);
});

test("the console's ask goes through the router: a rule applies to the console (its reply is the answer, the agent is not asked); otherwise the agent is asked and its events pass through the router", async () => {
	const { port, asked, submitted } = fakePort();
	const router = new Router({ port, log: () => {} });
	const delivered: OutEvent[] = [];
	router.bind("console", { deliver: (e) => delivered.push(e) });
	router.load(JSON.stringify({ rules: [{ name: "lamp", match: { channel: "console", text: "^lamp" }, action: { type: "send_message", text: "the lamp rule took {text}" } }] }));
	const consoleAsk = (text: string) => ({ type: "in_message" as const, channel: "console", chat_id: "local", sender_id: "console", message_id: "", text, role: "owner" as const });
	const events: AgentEvent[] = [];
	const ruled = await router.ask(consoleAsk("lamp on"), { responseMs: 1000, onEvent: (e) => events.push(e) });
	assert.deepEqual(ruled, { kind: "answer", ok: true, text: "the lamp rule took lamp on", rule: "lamp" });
	assert.equal(asked.length + submitted.length, 0, "the rule answered; the agent was not asked");
	assert.equal(delivered.length, 0, "the reply is the ask's answer, not a second message");
	const plain = await router.ask(consoleAsk("what time is it?"), { responseMs: 1000, events: ["tool_execution_start"], onEvent: (e) => events.push(e) });
	assert.deepEqual(plain, { kind: "answer", ok: true, text: "answer to what time is it?", error: undefined, rule: undefined });
	assert.equal(asked[0].flags, 0, "the console's own flags: it waits for the answer itself");
	assert.deepEqual(asked[0].source, { channel: "console", chat_id: "local", sender_id: "console", message_id: "", cap: "" });
	assert.deepEqual(events.map((e) => e.type), ["tool_execution_start"]);
	assert.deepEqual({ asked: router.counts.asked, watched: router.counts.watched }, { asked: 2, watched: 1 });
	// A telegram rule does not touch the console.
	router.load(JSON.stringify({ rules: [{ name: "tg", match: { channel: "telegram" }, action: { type: "send_message", text: "no" } }] }));
	assert.equal((await router.ask(consoleAsk("hi"), { responseMs: 1000 })).kind, "answer");
	assert.equal(asked.length, 2);
});

test("a chat's /stop and its commands pass through the router to the agent", async () => {
	const { port, cancelled, commands } = fakePort();
	const router = new Router({ port, log: () => {} });
	assert.equal(await router.cancel(7), 7);
	await router.command("session new", "", { channel: "telegram", chat_id: "42" });
	assert.deepEqual(cancelled, [7]);
	assert.deepEqual(commands, ["session new  telegram:42"]);
	assert.deepEqual({ cancels: router.counts.cancels, commands: router.counts.commands }, { cancels: 1, commands: 1 });
});

test("fill replaces the known placeholders only", () => {
	assert.equal(fill("{text}|{chat}|{sender}|{channel}|{other}", message("hi")), "hi|42|7|telegram|{other}");
});

