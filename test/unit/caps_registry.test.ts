// The tool registry (caps/registry) and the board's tools (caps/board): what is
// checked before a tool runs (each validation keyword), the role x tool policy,
// the hooks, what the model gets back, and what the provider offers.
import { CAPS_TIME_ZONES_CACHED } from "budgets";
import { boardTools } from "caps/board";
import { Registry, describeCall } from "caps/registry";
import type { Capability } from "caps/types";
import type { AgentRequest, ToolContext } from "core/types";
import { parseTimeZone } from "util/tz";
import type { JsonObject } from "llm/types";
import { Aborter } from "net/abort";
import { assert, test } from "testing";

function request(channel = "console", role?: AgentRequest["role"]): AgentRequest {
	return {
		request_id: 1, flags: 0, session_id: "", user_text: "hi",
		source: { channel, chat_id: "", sender_id: "", message_id: "", cap: "" },
		...(role ? { role } : {}),
	};
}

function context(channel = "console", signal = new Aborter().signal, role?: AgentRequest["role"]): ToolContext {
	return { request: request(channel, role), signal, progress() {} };
}

function tool(name: string, run: Capability["run"], extra: Partial<Capability> = {}, parameters: JsonObject = { type: "object", properties: {} }): Capability {
	return { group: "test", definition: { type: "function", function: { name, description: name, parameters } }, run, ...extra };
}

const toolbox = (caps: Capability[]) => new Registry(caps);

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

test("enum compares values structurally: an object's keys in any order, arrays in order, numbers by value", async () => {
	const { spec, seen } = recorder({ type: "object", properties: { mode: { enum: [{ a: 1, b: [2, { c: 3, d: null }] }, 10, "x"] } }, required: ["mode"] });
	const box = toolbox([spec]);
	const fits = async (args: string) => !(await box.callCap(call("gpio_write", args), context())).is_error;
	assert.equal(await fits(`{"mode": {"b": [2, {"d": null, "c": 3}], "a": 1}}`), true, "keys in another order are the same object");
	assert.equal(await fits(`{"mode": {"a": 1, "b": [2, {"c": 3, "d": null}]}}`), true);
	assert.equal(await fits(`{"mode": 10.0}`), true, "10.0 is 10");
	assert.equal(await fits(`{"mode": "x"}`), true);
	assert.equal(await fits(`{"mode": {"a": 1, "b": [{"c": 3, "d": null}, 2]}}`), false, "an array's order counts");
	assert.equal(await fits(`{"mode": {"a": 1, "b": [2, {"c": 3}]}}`), false, "a missing key");
	assert.equal(await fits(`{"mode": {"a": 1, "b": [2, {"c": 3, "d": null}], "e": 0}}`), false, "an extra key");
	assert.equal(await fits(`{"mode": {"a": "1", "b": [2, {"c": 3, "d": null}]}}`), false, "1 is not \"1\"");
	assert.equal(await fits(`{"mode": [10]}`), false);
	assert.equal(await fits(`{"mode": null}`), false);
	assert.equal(seen.length, 4);
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

test("a restricted tool is refused for user, subagent and cron requests (the model is told why) and allowed for the owner", async () => {
	let runs = 0;
	const box = toolbox([tool("file_delete", () => String(++runs), { restricted: true }), tool("get_time", () => "t")]);
	for (const [channel, who] of [["subagent", "subagent"], ["cron", "schedule"], ["telegram", "chat user"]]) {
		const result = await box.callCap(call("file_delete", "{}"), context(channel));
		assert.deepEqual(result, { content: `the tool file_delete is only for the owner (this request comes from a ${who}); tell the person it needs the owner`, is_error: true });
	}
	assert.equal(runs, 0);
	assert.deepEqual(await box.callCap(call("file_delete", "{}"), context("console")), { content: "1" });
	assert.deepEqual(await box.callCap(call("file_delete", "{}"), context("telegram", undefined, "owner")), { content: "2" }, "a chat paired as the owner");
});

test("a user cannot write GPIO; an owner's schedule (cron) may, since gpio_write is marked cron", async () => {
	const box = toolbox([tool("gpio_write", () => "set", { restricted: true, cron: true })]);
	assert.equal((await box.callCap(call("gpio_write", "{}"), context("telegram", undefined, "user"))).is_error, true);
	assert.deepEqual(await box.callCap(call("gpio_write", "{}"), context("cron")), { content: "set" });
	assert.equal((await box.callCap(call("gpio_write", "{}"), context("subagent"))).is_error, true);
});

test("a cron request cannot create or delete schedules, even though the owner made it", async () => {
	const box = toolbox([tool("schedule_create", () => "made", { restricted: true, cron: true }), tool("schedule_delete", () => "gone", { restricted: true, cron: true })]);
	assert.deepEqual(await box.callCap(call("schedule_create", "{}"), context("cron")), { content: "a scheduled request cannot create schedules; answer with what the schedule asked for", is_error: true });
	assert.equal((await box.callCap(call("schedule_delete", "{}"), context("cron"))).is_error, true);
	assert.deepEqual(await box.callCap(call("schedule_create", "{}"), context("console")), { content: "made" });
});

test("a subagent cannot spawn, and a request cannot claim a role its channel rules out", async () => {
	const box = toolbox([tool("spawn_subagent", () => "started")]);
	assert.deepEqual(await box.callCap(call("spawn_subagent", "{}"), context("subagent", undefined, "owner")), { content: "a subagent cannot start another subagent; do the task yourself", is_error: true });
	assert.deepEqual(await box.callCap(call("spawn_subagent", "{}"), context("console")), { content: "started" });
	const restricted = toolbox([tool("file_delete", () => "x", { restricted: true })]);
	assert.equal((await restricted.callCap(call("file_delete", "{}"), context("cron", undefined, "owner"))).is_error, true, "channel cron is always role cron");
});

test("the tools provider offers only the tools the role may run, and the same array for the same inputs", () => {
	const box = toolbox([tool("file_delete", () => "", { restricted: true }), tool("get_time", () => "t")]);
	const offered = (channel: string) => {
		const content = box.provider.collect(request(channel));
		if (!content || content instanceof Promise || content.kind !== "tools") throw new Error("expected tools content");
		return content.content;
	};
	const names = (channel: string) => offered(channel).map((d) => d.function.name);
	assert.equal(box.provider.name, "tools");
	assert.deepEqual(names("console"), ["file_delete", "get_time"]);
	assert.deepEqual(names("cron"), ["get_time"]);
	assert.deepEqual(names("telegram"), ["get_time"]);
	assert.equal(offered("console"), offered("console"), "the same list object: its bytes cannot drift");
	assert.equal(toolbox([]).provider.collect(request()), undefined, "no tools is nothing this time, not empty content");
});

test("a hidden tool is offered only once its group is made visible for the session", () => {
	let visible = new Set<string>();
	const box = new Registry([tool("run_script", () => "", { hidden: true, group: "script" } as Partial<Capability>), tool("get_time", () => "t")], { visibleGroups: () => visible });
	const names = () => {
		const content = box.provider.collect(request());
		return content && !(content instanceof Promise) && content.kind === "tools" ? content.content.map((d) => d.function.name) : [];
	};
	assert.deepEqual(names(), ["get_time"]);
	visible = new Set(["script"]);
	assert.deepEqual(names(), ["run_script", "get_time"]);
});

test("a request asking again with the same role, visible groups and dynamic tools gets the same content; a change in any of them is seen", () => {
	let visible: ReadonlySet<string> = new Set<string>();
	let macros: Capability[] = [tool("water_plants", () => "")];
	const box = new Registry([tool("run_script", () => "", { hidden: true, group: "script", restricted: true } as Partial<Capability>), tool("get_time", () => "t")], {
		visibleGroups: () => visible, sources: [{ list: () => macros }],
	});
	const collect = (channel = "console") => box.provider.collect(request(channel));
	const names = (channel = "console") => {
		const content = collect(channel);
		return content && !(content instanceof Promise) && content.kind === "tools" ? content.content.map((d) => d.function.name) : [];
	};
	const first = collect();
	assert.ok(first !== undefined && collect() === first, "the same content object, nothing made again");
	assert.deepEqual(names(), ["get_time", "water_plants"]);
	macros = [...macros, tool("feed_fish", () => "")];   // a macro created: a new list
	assert.deepEqual(names(), ["get_time", "water_plants", "feed_fish"]);
	visible = new Set(["script"]);                       // a skill activated: a new set
	assert.deepEqual(names(), ["run_script", "get_time", "water_plants", "feed_fish"]);
	assert.deepEqual(names("telegram"), ["get_time", "water_plants", "feed_fish"], "another role");
	assert.deepEqual(names(), ["run_script", "get_time", "water_plants", "feed_fish"]);
});

test("a before hook may veto a call with its reason, or amend its arguments (checked again), and an after hook may replace the outcome", async () => {
	const { spec, seen } = recorder(GPIO_SCHEMA);
	const box = new Registry([spec], {
		hooks: [
			{ before: (_name, args) => (args.pin === 13 ? { veto: "pin 13 is the status LED; use another" } : args.pin === 7 ? { args: { ...args, pin: 8 } } : args.pin === 9 ? { args: { ...args, pin: "nine" } } : undefined) },
			{ after: (_name, args, outcome) => (args.pin === 8 ? { content: `${outcome.content} (amended)` } : undefined) },
		],
	});
	assert.deepEqual(await box.callCap(call("gpio_write", `{"pin": 13, "level": "high"}`), context()), { content: "pin 13 is the status LED; use another", is_error: true });
	assert.deepEqual(await box.callCap(call("gpio_write", `{"pin": 7, "level": "high"}`), context()), { content: "done (amended)" });
	assert.deepEqual(seen, [{ pin: 8, level: "high" }]);
	const bad = await box.callCap(call("gpio_write", `{"pin": 9, "level": "high"}`), context());
	assert.equal(bad.content, "the amended arguments do not fit the schema of gpio_write: arguments.pin must be an integer, not a string");
	const throwing = new Registry([tool("x", () => "ran")], { hooks: [{ before: () => { throw new Error("the hook broke"); } }] });
	assert.deepEqual(await throwing.callCap(call("x", "{}"), context()), { content: "the call was stopped before it ran: the hook broke", is_error: true });
});

test("every call is logged once with its role, outcome and masked arguments", async () => {
	const lines: string[] = [];
	const box = new Registry([tool("wifi_set", () => "ok", {}, { type: "object", properties: { ssid: { type: "string" }, password: { type: "string" } } })], { log: (line) => lines.push(line), now: () => 0 });
	await box.callCap(call("wifi_set", `{"ssid": "home", "password": "hunter22"}`), context());
	assert.deepEqual(lines, [`tool wifi_set role=owner ok 0 ms args={"ssid":"home","password":"********"}`]);
});

test("progress from a tool reaches the context's progress callback", async () => {
	const seen: string[] = [];
	const box = toolbox([tool("slow", (_args, ctx) => { ctx.progress("half way"); return "done"; })]);
	await box.callCap(call("slow", "{}"), { ...context(), progress: (text: string) => seen.push(text) });
	assert.deepEqual(seen, ["half way"]);
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

test("get_time answers the UTC and local time and uptime, and says when the clock is not set", async () => {
	const deps = {
		zone: () => parseTimeZone("Asia/Shanghai"),
		wallClockMs: () => Date.UTC(2026, 0, 2, 3, 4, 5),
		now: () => 65_000, bootMs: 5_000,
		heap: () => ({ chunkUsed: 1, chunkPeak: 2, chunkSize: 3, slotUsed: 4, slotPeak: 5, slotSize: 6, sockets: 7 }),
		firmware: { name: "xsclaw", version: "1.2.3", platform: "lin" },
	};
	const box = toolbox(boardTools(deps));
	const time = await box.callCap(call("get_time", "{}"), context());
	assert.deepEqual(JSON.parse(time.content), { utc: "2026-01-02T03:04:05.000Z", local: "2026-01-02 11:04:05 (+08:00)", timezone: "Asia/Shanghai", clock_set: true, uptime_s: 60 });
	const berlin = JSON.parse((await box.callCap(call("get_time", `{"timezone": "Europe/Berlin"}`), context())).content);
	assert.equal(berlin.local, "2026-01-02 04:04:05 (+01:00)");
	const bad = await box.callCap(call("get_time", `{"timezone": "Mars/Olympus"}`), context());
	assert.equal(bad.is_error, true);
	assert.match(bad.content, /^"Mars\/Olympus" is not a time zone this firmware knows: use UTC, an offset like \+08:00/);
	assert.equal((await box.callCap(call("get_time", `{"timezone": 8}`), context())).content, "the arguments do not fit the schema of get_time: arguments.timezone must be a string, not an integer");
	// Zones are kept parsed by name (the newest CAPS_TIME_ZONES_CACHED): more zones than that, each asked twice, answer right each time.
	for (let round = 0; round < 2; round++) {
		for (let h = 1; h <= CAPS_TIME_ZONES_CACHED + 2; h++) {
			const local = JSON.parse((await box.callCap(call("get_time", `{"timezone": " +${String(h).padStart(2, "0")}:00"}`), context())).content).local;
			assert.equal(local, `2026-01-02 ${String(3 + h).padStart(2, "0")}:04:05 (+${String(h).padStart(2, "0")}:00)`, `+${h}:00, round ${round + 1}`);
		}
	}
	assert.equal(JSON.parse((await box.callCap(call("get_time", `{"timezone": "Europe/Berlin"}`), context())).content).local, "2026-01-02 04:04:05 (+01:00)");
	assert.equal((await box.callCap(call("get_time", `{"timezone": "Mars/Olympus"}`), context())).is_error, true, "a bad zone is refused again");
	const unset = toolbox(boardTools({ ...deps, wallClockMs: () => 1000 }));
	const early = JSON.parse((await unset.callCap(call("get_time", "{}"), context())).content);
	assert.deepEqual(early, { utc: null, local: null, timezone: "Asia/Shanghai", clock_set: false, note: "the clock is not set yet (no network time): the date is unknown", uptime_s: 60 });
	assert.deepEqual(Object.keys(JSON.parse(time.content)), ["utc", "local", "timezone", "clock_set", "uptime_s"], "the fields in their order");
	const quoted = toolbox(boardTools({ ...deps, zone: () => ({ name: "odd \"zone\"\\", offsetAt: () => 0 }) }));
	assert.equal(JSON.parse((await quoted.callCap(call("get_time", "{}"), context())).content).timezone, "odd \"zone\"\\", "a zone name is escaped");
});

test("system_info answers the firmware, uptime, heap, buffer pools, sockets and network it is given, in short lines", async () => {
	const box = toolbox(boardTools({
		wallClockMs: () => 0, now: () => 10_500, bootMs: 500, zone: () => parseTimeZone("UTC"),
		pools: () => ({ psram: { used: 2048, peak: 4096, size: 8192 * 1024, count: 1, fallbacks: 0 } }),
		network: () => "the Linux host's network",
		heap: () => ({ chunkUsed: 300 * 1024, chunkPeak: 400 * 1024 + 1, chunkSize: 2048 * 1024, slotUsed: 100, slotPeak: 2048, slotSize: 1024 * 1024, sockets: 7 }),
		firmware: { name: "xsclaw", version: "1.2.3", platform: "lin" },
	}));
	const info = (await box.callCap(call("system_info", "{}"), context())).content;
	assert.equal(info, [
		"xsclaw 1.2.3 on lin, up 10 s",
		"JS heap: chunks 300/2048 KiB used (peak 401), slots 1/1024 KiB (peak 2)",
		"buffers: psram 2/8192 KiB (peak 4, 1 live)",
		"open sockets: 7",
		"network: the Linux host's network",
	].join("\n"));
	const extra = await box.callCap(call("system_info", `{"verbose": true}`), context());
	assert.equal(extra.content, `the arguments do not fit the schema of system_info: arguments has no property "verbose" (known: none)`);
});
