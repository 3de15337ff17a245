// A fuzz of the agent port's readers (agent/protocol readToAgent, readFromAgent):
// valid messages of both directions with one part changed at a time (a field
// replaced by a hostile value, removed, or added; a list or text made too long),
// seeded and bounded. A reader either returns a message whose every field it
// checked, or throws a PortError with a sentence: never another error, which
// would stop the machine that read it (a TypeError from a null, a RangeError from
// a huge list), and never a hang.
import { AGENT_PORT_ID_MAX_CHARS, AGENT_PORT_LIST_MAX, AGENT_PORT_TEXT_MAX_CHARS } from "budgets";
import { PortError, readFromAgent, readToAgent } from "agent/protocol";
import { generator, iterationsFor, seedFor, type Random } from "test/fuzz";
import { assert, test } from "testing";

const SEED = seedFor(0xA9E47);
const ITERATIONS = iterationsFor(3000);

const SOURCE = { channel: "console", chat_id: "local", sender_id: "console", message_id: "", cap: "" };
const HEAP = { chunkUsed: 1, chunkPeak: 2, chunkSize: 3, slotUsed: 4, slotPeak: 5, slotSize: 6, sockets: 0 };

const TO_AGENT: unknown[] = [
	{ type: "start", settings: { "llm.model": "m" }, online: "waiting", channels: [{ name: "console", running: true, chats: ["local"] }] },
	{ type: "channels", channels: [{ name: "qq", running: false, off: "off (no credentials)", chats: ["c2c:A"] }] },
	{ type: "online", state: "online" },
	{ type: "setting", name: "llm.model", value: "other" },
	{ type: "submit", call: 1, request: { flags: 0, user_text: "hello", source: SOURCE }, wait_ms: 5000, response: true, response_ms: 130000, events: ["tool_execution_start"] },
	{ type: "submit", call: 2, request: { flags: 3, session_id: "", user_text: "x", source: SOURCE, target: { channel: "qq", chat_id: "9" }, role: "user" }, wait_ms: 0, response: false, response_ms: 0, events: [] },
	{ type: "call_cap", call: 8, name: "gpio_write", args: { pin: 2, value: 1 }, request: { flags: 0, session_id: "", user_text: "on", source: SOURCE, role: "owner" } },
	{ type: "cancel", call: 3, request_id: 0 },
	{ type: "status", call: 4, collect: true },
	{ type: "list_tools", call: 9, role: "user" },
	{ type: "command", call: 5, name: "session list", args: "", chat: { channel: "telegram", chat_id: "42" } },
	{ type: "stop", call: 6 },
];

const FROM_AGENT: unknown[] = [
	{ type: "ready", commands: [{ name: "session", usage: "", help: "the session" }], warnings: ["memory is light"] },
	{ type: "accepted", call: 1, request_id: 3 },
	{ type: "response", call: 1, response: { request_id: 3, session_id: "s", ok: false, text: "", error: "request cancelled" } },
	{ type: "event", call: 1, event: { type: "tool_execution_start", agent_id: "root", request_id: 3, session_id: "s", call: { id: "c", name: "get_time", arguments: "{}" } } },
	{ type: "out", event: { type: "out_message", channel: "console", chat_id: "local", text: "later", request_id: 4, correlation_id: "", label: "schedule s1" } },
	{ type: "out", event: { type: "agent_stage", channel: "qq", chat_id: "9", text: "running get_time", request_id: 4 } },
	{ type: "status", call: 4, status: { phase: "IN_LLM_HTTP", in_flight: 3, queued: 1, subagents: [{ agent_id: "sub-1", phase: "IDLE" }], heap: HEAP } },
	{ type: "command_result", call: 5, lines: ["a", "b"], error: "no such session" },
	{ type: "wiped", call: 7, wiped: ["sessions (3 files)"], errors: [] },
	{ type: "cap_result", call: 8, content: "pin 2 is high" },
	{ type: "tools", call: 9, tools: ['{"name":"get_time","description":"The time.","parameters":{"type":"object","properties":{}}}'] },
	{ type: "failed", call: 7, error: "the agent is busy" },
	{ type: "refused", error: "that was not a message" },
];

/** Values a broken or hostile peer could put anywhere. */
const HOSTILE: readonly unknown[] = [
	null, undefined, true, 0, -1, 0.5, NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 31), "", "\ud800", "x".repeat(AGENT_PORT_ID_MAX_CHARS + 1),
	[], {}, [null], { type: "start" }, "__proto__", { __proto__: null }, Object.create(null),
];

/** A hostile value made for this step: the fixed ones, or a text or list just over a bound. */
function hostile(rand: Random): unknown {
	switch (rand(4)) {
		case 0: return "y".repeat(AGENT_PORT_TEXT_MAX_CHARS + 1 + rand(3));
		case 1: return Array.from({ length: AGENT_PORT_LIST_MAX + 1 }, () => "z");
		default: return copy(rand.pick(HOSTILE)); // a copy: a shared one changed later could make a cycle
	}
}

/** A deep copy of plain data (structured clone as the port makes it, without the port). */
function copy(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(copy);
	if (value && typeof value === "object") {
		const out: Record<string, unknown> = {};
		for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key]);
		return out;
	}
	return value;
}

/** Every object or array inside value (itself too), for picking where to change. */
function containers(value: unknown, into: Array<Record<string, unknown> | unknown[]> = []): Array<Record<string, unknown> | unknown[]> {
	if (value && typeof value === "object") {
		into.push(value as Record<string, unknown>);
		for (const child of Object.values(value as object)) containers(child, into);
	}
	return into;
}

/** The message with one to three changes, each in a random container: a field replaced, removed or added. */
function mutate(message: unknown, rand: Random): unknown {
	const out = copy(message);
	const changes = 1 + rand(3);
	for (let c = 0; c < changes; c++) {
		const target = rand.pick(containers(out));
		const keys = Object.keys(target);
		const key = keys.length && rand(5) ? rand.pick(keys) : rand.pick(["type", "call", "extra", "0"]);
		if (rand(6) === 0) delete (target as Record<string, unknown>)[key];
		else (target as Record<string, unknown>)[key] = hostile(rand);
	}
	return out;
}

function fuzz(name: string, messages: unknown[], read: (message: unknown) => unknown, seed: number): void {
	const rand = generator(seed);
	let refused = 0;
	for (let i = 0; i < ITERATIONS; i++) {
		const message = mutate(rand.pick(messages), rand);
		try {
			read(message);
		} catch (error) {
			if (!(error instanceof PortError)) {
				let shown: string;
				try { shown = JSON.stringify(message).slice(0, 300); } catch { shown = "(unprintable)"; }
				throw new Error(`${name}: seed ${seed} step ${i}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)} for ${shown}`);
			}
			assert.ok(error.message.startsWith("the agent port"), `${name}: a refusal is a sentence about the port: ${error.message}`);
			refused++;
		}
	}
	assert.ok(refused > ITERATIONS / 4, `${name}: ${refused} of ${ITERATIONS} changed messages refused: the changes reach the checks`);
}

test(`readToAgent refuses a changed message with a PortError or reads it, never another error (seed ${SEED}, ${ITERATIONS} messages)`, () => {
	fuzz("readToAgent", TO_AGENT, readToAgent, SEED);
});

test(`readFromAgent refuses a changed message with a PortError or reads it, never another error (seed ${SEED + 1}, ${ITERATIONS} messages)`, () => {
	fuzz("readFromAgent", FROM_AGENT, readFromAgent, SEED + 1);
});

test("the unchanged messages are read (the fuzz starts from valid ones)", () => {
	for (const message of TO_AGENT) readToAgent(copy(message));
	for (const message of FROM_AGENT) readFromAgent(copy(message));
});
