// The tools table (core/tools) and the built-in tools (core/basic_tools): what is
// checked before a tool runs, what the model gets back, and what the provider offers.
import { basicTools } from "core/basic_tools";
import { describeCall, toolbox } from "core/tools";
import type { AgentRequest, ToolContext, ToolSpec } from "core/types";
import type { JsonObject } from "llm/types";
import { Aborter } from "net/abort";
import { assert, test } from "testing";

function request(channel = "console"): AgentRequest {
	return {
		request_id: 1, flags: 0, session_id: "", user_text: "hi",
		source: { channel, chat_id: "", sender_id: "", message_id: "", cap: "" },
	};
}

function context(channel = "console", signal = new Aborter().signal): ToolContext {
	return { request: request(channel), signal, progress() {} };
}

function tool(name: string, run: ToolSpec["run"], extra: Partial<ToolSpec> = {}, parameters: JsonObject = { type: "object", properties: {} }): ToolSpec {
	return { definition: { type: "function", function: { name, description: name, parameters } }, run, ...extra };
}

// A tool that records what it was given.
function recorder(parameters: JsonObject) {
	const seen: JsonObject[] = [];
	const spec = tool("gpio_write", (args) => {
		seen.push(args);
		return "done";
	}, {}, parameters);
	return { spec, seen };
}

const GPIO_SCHEMA: JsonObject = {
	type: "object",
	properties: {
		pin: { type: "integer", minimum: 0, maximum: 48 },
		level: { type: "string", enum: ["high", "low"] },
		label: { type: "string", minLength: 1, maxLength: 4 },
		pulse: { type: "object", properties: { ms: { type: "number", maximum: 1000 } }, required: ["ms"] },
		pins: { type: "array", items: { type: "integer" }, maxItems: 3 },
	},
	required: ["pin", "level"],
};

const call = (name: string, args: string) => ({ id: "call_1", name, arguments: args });

test("two tools with the same name are refused when the table is built", () => {
	assert.throws(() => toolbox([tool("get_time", () => "a"), tool("get_time", () => "b")]), /"get_time" is used twice/);
});

test("a schema that is not an object schema or names an unknown type is refused when the table is built", () => {
	assert.throws(() => toolbox([tool("bad", () => "", {}, { type: "string" })]), /must be an object schema/);
	assert.throws(() => toolbox([tool("bad", () => "", {}, { type: "object", properties: { x: { type: "float" } } })]), /unknown type "float"/);
});

test("an unknown tool gives an is_error result naming the known tools", async () => {
	const box = toolbox([tool("get_time", () => "t"), tool("system_info", () => "s")]);
	const result = await box.callCap(call("reboot_now", "{}"), context());
	assert.equal(result.is_error, true);
	assert.equal(result.content, `unknown tool "reboot_now": the known tools are get_time, system_info`);
});

test("arguments that are not valid JSON give an is_error result and the tool does not run", async () => {
	const { spec, seen } = recorder(GPIO_SCHEMA);
	const result = await toolbox([spec]).callCap(call("gpio_write", `{"pin": 4,`), context());
	assert.equal(result.is_error, true);
	assert.match(result.content, /^the arguments are not valid JSON: .+; send a JSON object$/);
	assert.equal(seen.length, 0);
});

test("arguments that are JSON but not an object give an is_error result", async () => {
	const { spec, seen } = recorder(GPIO_SCHEMA);
	const result = await toolbox([spec]).callCap(call("gpio_write", `[4, "high"]`), context());
	assert.deepEqual(result, { content: "the arguments must be a JSON object, not an array", is_error: true });
	assert.equal(seen.length, 0);
});

test("schema violations are reported one at a time, the first problem named with its path", async () => {
	const { spec, seen } = recorder(GPIO_SCHEMA);
	const box = toolbox([spec]);
	const problem = async (args: string) => {
		const result = await box.callCap(call("gpio_write", args), context());
		assert.equal(result.is_error, true, `is_error for ${args}`);
		return result.content.replace("the arguments do not fit the schema of gpio_write: ", "");
	};
	assert.equal(await problem(`{"level": "high"}`), "arguments.pin is required");
	assert.equal(await problem(`{"pin": "4", "level": "high"}`), "arguments.pin must be an integer, not a string");
	assert.equal(await problem(`{"pin": 4.5, "level": "high"}`), "arguments.pin must be an integer, not a number");
	assert.equal(await problem(`{"pin": 49, "level": "high"}`), "arguments.pin must be at most 48, not 49");
	assert.equal(await problem(`{"pin": -1, "level": "high"}`), "arguments.pin must be at least 0, not -1");
	assert.equal(await problem(`{"pin": 4, "level": "up"}`), `arguments.level must be one of "high", "low", not "up"`);
	assert.equal(await problem(`{"pin": 4, "level": "low", "label": ""}`), "arguments.label must have at least 1 characters, not 0");
	assert.equal(await problem(`{"pin": 4, "level": "low", "label": "abcde"}`), "arguments.label must have at most 4 characters, not 5");
	assert.equal(await problem(`{"pin": 4, "level": "low", "pulse": {}}`), "arguments.pulse.ms is required");
	assert.equal(await problem(`{"pin": 4, "level": "low", "pulse": {"ms": 5000}}`), "arguments.pulse.ms must be at most 1000, not 5000");
	assert.equal(await problem(`{"pin": 4, "level": "low", "pins": [1, "2"]}`), "arguments.pins[1] must be an integer, not a string");
	assert.equal(await problem(`{"pin": 4, "level": "low", "pins": [1, 2, 3, 4]}`), "arguments.pins must have at most 3 items, not 4");
	assert.equal(seen.length, 0, "the tool never ran");
});

test("a required property named like an Object.prototype member must really be sent", async () => {
	const { spec } = recorder({ type: "object", properties: { toString: { type: "string" } }, required: ["toString"] });
	const result = await toolbox([spec]).callCap(call("gpio_write", "{}"), context());
	assert.deepEqual(result, { content: "the arguments do not fit the schema of gpio_write: arguments.toString is required", is_error: true });
});

test("arguments that fit reach the tool parsed, and empty arguments count as {}", async () => {
	const { spec, seen } = recorder(GPIO_SCHEMA);
	const ok = await toolbox([spec]).callCap(call("gpio_write", `{"pin": 4, "level": "high", "pulse": {"ms": 10}}`), context());
	assert.deepEqual(ok, { content: "done" });
	assert.deepEqual(seen, [{ pin: 4, level: "high", pulse: { ms: 10 } }]);
	const time = await toolbox([tool("get_time", () => "noon")]).callCap(call("get_time", ""), context());
	assert.deepEqual(time, { content: "noon" });
});

test("a restricted tool is refused for subagent and cron requests and allowed for the console", async () => {
	let runs = 0;
	const box = toolbox([tool("cron_add", () => String(++runs), { restricted: true }), tool("get_time", () => "t")]);
	for (const channel of ["subagent", "cron"]) {
		const result = await box.callCap(call("cron_add", "{}"), context(channel));
		assert.deepEqual(result, { content: `the tool cron_add is not available to ${channel} requests`, is_error: true });
	}
	assert.equal(runs, 0);
	assert.deepEqual(await box.callCap(call("cron_add", "{}"), context("console")), { content: "1" });
});

test("the tools provider offers only the tools the policy allows for the request", () => {
	const box = toolbox([tool("cron_add", () => "", { restricted: true }), tool("get_time", () => "t")]);
	const names = (channel: string) => {
		const content = box.provider.collect(request(channel));
		if (!content || content instanceof Promise || content.kind !== "tools") throw new Error("expected tools content");
		return content.content.map((d) => d.function.name);
	};
	assert.equal(box.provider.name, "tools");
	assert.deepEqual(names("console"), ["cron_add", "get_time"]);
	assert.deepEqual(names("cron"), ["get_time"]);
	assert.equal(toolbox([]).provider.collect(request()), undefined, "no tools is nothing this time, not empty content");
});

test("a custom policy can refuse a call with its own sentence", async () => {
	const box = toolbox([tool("get_time", () => "t")], { refuse: (spec, r) => (r.source.sender_id === "" ? `${spec.definition.function.name} is for the owner only` : undefined) });
	assert.deepEqual(await box.callCap(call("get_time", "{}"), context()), { content: "get_time is for the owner only", is_error: true });
});

test("a tool that throws gives an is_error result carrying the message", async () => {
	const box = toolbox([tool("flaky", async () => { throw new Error("the sensor did not answer: check its wiring"); })]);
	assert.deepEqual(await box.callCap(call("flaky", "{}"), context()), { content: "the sensor did not answer: check its wiring", is_error: true });
});

test("a string result becomes the content, and a ToolOutcome passes through", async () => {
	const box = toolbox([tool("plain", () => "42"), tool("outcome", async () => ({ content: "no such file", is_error: true }))]);
	assert.deepEqual(await box.callCap(call("plain", "{}"), context()), { content: "42" });
	assert.deepEqual(await box.callCap(call("outcome", "{}"), context()), { content: "no such file", is_error: true });
});

test("a tool does not start once the request is cancelled", async () => {
	let runs = 0;
	const aborter = new Aborter();
	aborter.abort("request cancelled");
	const result = await toolbox([tool("get_time", () => String(++runs))]).callCap(call("get_time", "{}"), context("console", aborter.signal));
	assert.equal(result.is_error, true);
	assert.equal(runs, 0);
});

test("runsAlone reports the table's flag", () => {
	const box = toolbox([tool("flash_write", () => "", { runsAlone: true }), tool("get_time", () => "")]);
	assert.equal(box.runsAlone("flash_write"), true);
	assert.equal(box.runsAlone("get_time"), false);
	assert.equal(box.runsAlone("nothing"), false);
});

test("describeCall masks secret-looking argument values and never shows invalid JSON", () => {
	const line = describeCall("wifi_set", `{"ssid": "home", "password": "hunter22", "api_key": "sk-1"}`);
	assert.equal(line, `wifi_set {"ssid":"home","password":"********","api_key":"********"}`);
	assert.equal(describeCall("wifi_set", `{"password": "hunter22"`), "wifi_set (23 characters of invalid JSON)");
});

test("get_time answers the UTC time and uptime, and says when the clock is not set", async () => {
	const deps = {
		wallClockMs: () => Date.UTC(2026, 0, 2, 3, 4, 5),
		now: () => 65_000, bootMs: 5_000,
		heap: () => ({ chunkUsed: 1, chunkPeak: 2, chunkSize: 3, slotUsed: 4, slotPeak: 5, slotSize: 6, sockets: 7 }),
		firmware: { name: "xsclaw", version: "1.2.3", platform: "lin" },
	};
	const box = toolbox(basicTools(deps));
	const time = await box.callCap(call("get_time", "{}"), context());
	assert.deepEqual(JSON.parse(time.content), { utc: "2026-01-02T03:04:05.000Z", clock_set: true, uptime_s: 60 });
	const unset = toolbox(basicTools({ ...deps, wallClockMs: () => 1000 }));
	const early = JSON.parse((await unset.callCap(call("get_time", "{}"), context())).content);
	assert.equal(early.clock_set, false);
	assert.equal(early.utc, null);
});

test("system_info answers the firmware, uptime and heap figures it is given, in three short lines", async () => {
	const box = toolbox(basicTools({
		wallClockMs: () => 0, now: () => 10_500, bootMs: 500,
		heap: () => ({ chunkUsed: 300 * 1024, chunkPeak: 400 * 1024 + 1, chunkSize: 2048 * 1024, slotUsed: 100, slotPeak: 2048, slotSize: 1024 * 1024, sockets: 7 }),
		firmware: { name: "xsclaw", version: "1.2.3", platform: "lin" },
	}));
	const info = (await box.callCap(call("system_info", "{}"), context())).content;
	assert.equal(info, [
		"xsclaw 1.2.3 on lin, up 10 s",
		"JS heap: chunks 300/2048 KiB used (peak 401), slots 1/1024 KiB (peak 2)",
		"open sockets: 7",
	].join("\n"));
});
