// The board's tools in modules/agent/caps and modules/agent/skills, each with good and bad
// arguments: the sandboxed folder (no path escapes, bounded sizes), GPIO on the
// allow-list over the lin host's simulated pins, skills (the catalogue bytes do
// not change on activation), macros (persisted, at most 8), scripts (bounded in
// steps and memory, only granted globals), send_message and inspect_image, and
// the console's tools/gpio/skills commands.
import { level, release } from "host/pins";
import { FILES_FILE_MAX_BYTES, FILES_READ_MAX_BYTES, MACROS_MAX, SCRIPT_MAX_STEPS } from "budgets";
import { fileTools, Workspace } from "caps/files";
import { GpioBank, gpioCommands, gpioTools, parseAllowList } from "caps/gpio";
import { Macros, macroTools } from "caps/macros";
import { messagingTools } from "caps/messaging";
import { Registry } from "caps/registry";
import { lockedDown, parseGrants, runScript, scriptTools } from "caps/script";
import { stopped } from "host/sandbox";
import { toolCommands } from "caps/console";
import type { Capability } from "caps/types";
import type { AgentRequest, ToolContext } from "core/types";
import type { ChatResponse, MediaRequest } from "llm/types";
import { Aborter } from "net/abort";
import { parseTimeZone } from "util/tz";
import { SkillCatalog, parseSkill } from "skills/catalog";
import { SkillState, skillCommands, skillTools } from "skills/tools";
import { freshDirectory, Lines, names, readText, writeRaw } from "./memory_fakes";
import { assert, test } from "testing";

// Scripts need a locked-down machine, as main.ts makes the firmware's.
if (!lockedDown()) lockdown();

function request(channel = "console", session = "", role?: AgentRequest["role"]): AgentRequest {
	return { request_id: 1, flags: 0, session_id: session, user_text: "hi", source: { channel, chat_id: "c1", sender_id: "", message_id: "", cap: "" }, ...(role ? { role } : {}) };
}
const context = (r = request()): ToolContext => ({ request: r, signal: new Aborter().signal, progress() {} });
const call = (registry: Registry, name: string, args: string, r = request()) => registry.callCap({ id: "c", name, arguments: args }, context(r));

test("file names that escape the folder, or are not plain names, are refused before the storage sees them", async () => {
	const workspace = new Workspace(freshDirectory("ws-names"));
	const registry = new Registry(fileTools(workspace));
	for (const name of ["../secrets", "/etc/passwd", "a/b.txt", "..", ".hidden", "x.tmp", "a\\\\b"]) {
		const result = await call(registry, "file_write", JSON.stringify({ name, text: "x" }));
		assert.equal(result.is_error, true, name);
		assert.match(result.content, /outside the agent's folder|not a file name the folder takes/, name);
	}
	assert.deepEqual(names(workspace.directory), [], "nothing was written");
});

test("files are written, appended, read in bounded parts, listed and deleted; sizes and counts are bounded", async () => {
	const workspace = new Workspace(freshDirectory("ws-files"));
	const registry = new Registry(fileTools(workspace));
	assert.deepEqual(await call(registry, "file_write", `{"name":"notes.txt","text":"hello"}`), { content: "notes.txt now has 5 bytes" });
	assert.deepEqual(await call(registry, "file_write", `{"name":"notes.txt","text":" world","append":true}`), { content: "notes.txt now has 11 bytes" });
	assert.deepEqual(await call(registry, "file_read", `{"name":"notes.txt"}`), { content: "hello world" });
	assert.deepEqual(await call(registry, "file_list", "{}"), { content: "notes.txt 11" });
	const big = "é".repeat(FILES_READ_MAX_BYTES); // two bytes each
	await call(registry, "file_write", JSON.stringify({ name: "big.txt", text: big }));
	const part = await call(registry, "file_read", `{"name":"big.txt"}`);
	assert.match(part.content, new RegExp(`\\[bytes up to ${FILES_READ_MAX_BYTES} of ${2 * FILES_READ_MAX_BYTES}; read on with offset ${FILES_READ_MAX_BYTES}\\]$`));
	const tooBig = await call(registry, "file_write", JSON.stringify({ name: "huge.txt", text: "x".repeat(FILES_FILE_MAX_BYTES) + "é" }));
	assert.equal(tooBig.is_error, true);
	assert.match(tooBig.content, /would have \d+ bytes, more than 65536|must have at most 65536 characters/);
	assert.equal((await call(registry, "file_read", `{"name":"nope.txt"}`)).content, "there is no file nope.txt; file_list shows the files");
	assert.equal((await call(registry, "file_read", `{"name":"notes.txt","offset":-1}`)).content, "the arguments do not fit the schema of file_read: arguments.offset must be at least 0, not -1");
	writeRaw(workspace.directory, "blob.bin", new Uint8Array([0, 255, 1]).buffer);
	assert.match((await call(registry, "file_read", `{"name":"blob.bin"}`)).content, /is not text \(3 bytes of binary data\)/);
	assert.deepEqual(await call(registry, "file_delete", `{"name":"notes.txt"}`), { content: "deleted notes.txt" });
	assert.equal((await call(registry, "file_delete", `{"name":"notes.txt"}`)).is_error, true);
	assert.equal((await call(registry, "file_write", `{"name":"x.txt","text":"x"}`, request("telegram"))).is_error, true, "a chat user cannot write");
	assert.equal((await call(registry, "file_read", `{"name":"big.txt"}`, request("telegram"))).is_error, undefined, "but can read");
	assert.deepEqual(await call(registry, "file_write", `{"name":"log.txt","text":"1\\n","append":true}`, request("cron", "", "cron")), { content: "log.txt now has 2 bytes" }, "an owner's schedule keeps its log");
	assert.match((await call(registry, "file_delete", `{"name":"log.txt"}`, request("cron", "", "cron"))).content, /^the tool file_delete is only for the owner/, "but deletes nothing");
});

test("GPIO: only allow-listed pins, writes drive the simulated pin, reads read it, and a user cannot write", async () => {
	const config = new Map<string, string>([["gpio.allow", "2,4"]]);
	const bank = new GpioBank({ get: (name) => config.get(name) });
	const registry = new Registry(gpioTools(bank));
	try {
		assert.deepEqual(await call(registry, "gpio_write", `{"pin":2,"value":1}`), { content: "pin 2 set to 1" });
		assert.equal(level(2), 1, "the simulated pin changed");
		assert.deepEqual(await call(registry, "gpio_read", `{"pin":2}`), { content: "pin 2 is 1" });
		await call(registry, "gpio_write", `{"pin":2,"value":0}`);
		assert.equal(level(2), 0);
		const refused = await call(registry, "gpio_write", `{"pin":5,"value":1}`);
		assert.deepEqual(refused, { content: "pin 5 is not on the allow-list (2, 4); the owner can allow it with: config set gpio.allow 2,4,5", is_error: true });
		assert.equal(level(5), 0);
		assert.equal((await call(registry, "gpio_write", `{"pin":4,"value":2}`)).content, "the arguments do not fit the schema of gpio_write: arguments.value must be one of 0, 1, not 2");
		assert.equal((await call(registry, "gpio_write", `{"pin":49,"value":1}`)).content, "the arguments do not fit the schema of gpio_write: arguments.pin must be at most 48, not 49");
		const user = await call(registry, "gpio_write", `{"pin":4,"value":1}`, request("telegram", "", "user"));
		assert.match(user.content, /^the tool gpio_write is only for the owner/);
		assert.equal(level(4), 0);
		const out = new Lines();
		await gpioCommands(bank)[0].run("4 1", out);
		await gpioCommands(bank)[0].run("", out);
		assert.deepEqual(out.all, ["pin 4 set to 1", "pin 2: 0", "pin 4: 1"]);
		config.set("gpio.allow", "2,x");
		assert.match((await call(registry, "gpio_read", `{"pin":2}`)).content, /the setting gpio.allow has "x", which is not a pin/);
		assert.deepEqual(parseAllowList(" 7, 3,7 "), [3, 7]);
		config.set("gpio.allow", "2,43");   // written before the rule, or into the file: still refused at use
		assert.match((await call(registry, "gpio_read", `{"pin":2}`)).content, /gpio.allow names pin 43, which is the console's UART0 TX: it is never allowed/);
	} finally {
		bank.close();
		release(2);
	}
});

test("skills: the catalogue lists every skill by name, activation returns the document, shows its groups, and leaves the catalogue's bytes as they were", async () => {
	const directory = freshDirectory("skills");
	writeRaw(directory, "aaa.md", "# Custom\nsummary: a skill from flash\ngroups: files\n\nDo it.\n");
	writeRaw(directory, "broken.md", "no title here\n");
	const logs: string[] = [];
	const state = new SkillState(new SkillCatalog(directory, (line) => logs.push(line)));
	assert.deepEqual(state.catalog.list().map((s) => s.name), ["aaa", "automation", "blink", "board_io", "dimmer", "plants", "reminder", "temperature", "voltage_log"]);
	assert.ok(logs.some((l) => /broken.md is left out: its first line is not a "# Title"/.test(l)), logs.join("\n"));
	const before = state.provider.collect(request("console", "s1"));
	const registry = new Registry(skillTools(state), { visibleGroups: state.visibleGroups });
	const unseen = state.visibleGroups(request("console", "s1"));
	const result = await call(registry, "activate_skill", `{"name":"blink"}`, request("console", "s1"));
	assert.ok(state.visibleGroups(request("console", "s1")) !== unseen, "a new set once the groups change (the registry's offer is made again)");
	assert.equal(unseen.size, 0, "the set given before is not changed");
	assert.match(result.content, /^# Blink a pin\n/);
	assert.match(result.content, /\[the tools of gpio, script are available from now on\]$/);
	assert.deepEqual([...state.visibleGroups(request("console", "s1"))].sort(), ["gpio", "script"]);
	assert.deepEqual([...state.visibleGroups(request("console", "s2"))], [], "another session saw nothing");
	const after = state.provider.collect(request("console", "s1"));
	assert.equal(JSON.stringify(after), JSON.stringify(before), "the system prompt section is byte-identical");
	assert.match(JSON.stringify(before), /- blink: Blink a pin\. Blink an allowed GPIO pin/);
	assert.match((await call(registry, "activate_skill", `{"name":"nope"}`)).content, /^there is no skill "nope"; the skills are aaa, automation, blink, board_io, dimmer, plants, reminder, temperature, voltage_log$/);
	assert.equal(typeof parseSkill("x", "# T\nno summary", "flash"), "string");
	const out = new Lines();
	await skillCommands(state)[1].run("reminder", out);
	assert.equal(out.all[0], "# A daily reminder");
});

test("macro tools: made by the owner, offered as tools, run by handing back their action, kept across a restart, at most 8", async () => {
	const directory = freshDirectory("macros");
	const macros = new Macros(directory, (name) => name === "get_time", () => {});
	const registry = new Registry(macroTools(macros), { sources: [macros] });
	assert.deepEqual(await call(registry, "macro_create", `{"name":"water_plants","description":"Water the plants","action":"gpio_write pin 5 to 1, then to 0"}`), { content: "the tool water_plants is made; it can be called from the next message on" });
	assert.ok(registry.offered(request()).some((d) => d.function.name === "water_plants"));
	const ran = await call(registry, "water_plants", `{"input":"twice"}`);
	assert.equal(ran.content, "Macro water_plants: carry out this stored action now with your tools, then answer the person:\ngpio_write pin 5 to 1, then to 0\nInput: twice");
	assert.match((await call(registry, "macro_create", `{"name":"get_time","description":"x","action":"y"}`)).content, /is the name of a built-in tool/);
	assert.match((await call(registry, "macro_create", `{"name":"Bad Name","description":"x","action":"y"}`)).content, /is not a macro name/);
	assert.match((await call(registry, "macro_create", `{"name":"abc","description":"x","action":"y"}`, request("telegram"))).content, /only for the owner/);
	const again = new Macros(directory, () => false, () => {});
	assert.deepEqual(again.macros().map((m) => m.name), ["water_plants"], "persisted");
	for (let i = 1; i < MACROS_MAX; i++) macros.create({ name: `macro_${i}`, description: "d", action: "a" });
	assert.throws(() => macros.create({ name: "one_more", description: "d", action: "a" }), new RegExp(`already ${MACROS_MAX} macro tools`));
	assert.deepEqual(await call(registry, "macro_delete", `{"name":"macro_1"}`), { content: "deleted macro_1" });
	assert.equal(JSON.parse(readText(directory, "macros.json")).length, MACROS_MAX - 1);
});

const scriptDeps = (config: Map<string, string>) => ({
	settings: { get: (name: string) => config.get(name) },
	gpio: new GpioBank({ get: (name) => config.get(name) }),
	wallClockMs: () => Date.UTC(2026, 11, 1, 10, 0, 0),
	zone: () => parseTimeZone("UTC"),
});

test("a script runs in a Compartment with only the granted globals and returns its last value", async () => {
	const config = new Map<string, string>([["gpio.allow", "6"]]);
	const deps = scriptDeps(config);
	const registry = new Registry(scriptTools(deps));
	assert.deepEqual(await call(registry, "run_script", JSON.stringify({ code: "let s = 0; for (let i = 0; i < 10; i++) s += i; s + ' at ' + time.iso()" })), { content: "45 at 2026-12-01T10:00:00.000Z" });
	assert.deepEqual(await call(registry, "run_script", `{"code":"({a: [1, Math.max(2, 3)]})"}`), { content: `{"a":[1,3]}` });
	const notGranted = await call(registry, "run_script", `{"code":"gpio.write(6, 1)"}`);
	assert.equal(notGranted.content, "the script failed: gpio is not granted to this script; the owner grants it with: config set script.grants time,math,gpio");
	assert.equal((await call(registry, "run_script", `{"code":"typeof gpio"}`)).content, "object", "naming it is fine; using it says which setting grants it");
	config.set("script.grants", "time");
	assert.equal((await call(registry, "run_script", `{"code":"Math.max(1, 2)"}`)).content, "the script failed: Math is not granted to this script; the owner grants it with: config set script.grants time,math");
	config.delete("script.grants");
	assert.match((await call(registry, "run_script", `{"code":"Date.now()"}`)).content, /^the script failed/, "no Date without the time grant");
	assert.equal((await call(registry, "run_script", `{"code":"typeof Promise + typeof trace + typeof __xsclaw + typeof lockdown"}`)).content, "undefinedundefinedundefinedundefined");
	assert.match((await call(registry, "run_script", `{"code":"(function(){}).constructor('return globalThis')()"}`)).content, /^the script failed/, "no way to the real global");
	assert.match((await call(registry, "run_script", `{"code":"Array.prototype.evil = 1"}`)).content, /^the script failed/, "built-ins are frozen");
	assert.equal(([] as unknown as { evil?: number }).evil, undefined);
	assert.match((await call(registry, "run_script", `{"code":"(async () => { await 0; for(;;){} })()"}`)).content, /a script may not use async/);
	assert.equal((await call(registry, "run_script", `{"code":"throw new Error('boom')"}`)).content, "the script failed: boom");
	assert.equal((await call(registry, "run_script", `{"code":"let x = ;"}`)).is_error, true, "a syntax error is an error result");
	config.set("script.grants", "gpio");
	assert.deepEqual(await call(registry, "run_script", `{"code":"gpio.write(6, 1); gpio.read(6)"}`), { content: "1" });
	assert.equal(level(6), 1);
	assert.match((await call(registry, "run_script", `{"code":"gpio.write(7, 1)"}`)).content, /pin 7 is not on the allow-list/);
	config.set("script.grants", "net");
	assert.match((await call(registry, "run_script", `{"code":"1"}`)).content, /the setting script.grants has "net"/);
	assert.match((await call(registry, "run_script", `{"code":"1"}`, request("telegram"))).content, /only for the owner/);
	deps.gpio.close();
	assert.deepEqual(parseGrants(undefined), ["time", "math"]);
});

test("a script that loops forever, catches its bound, recurses or allocates without end is stopped, and the machine goes on", () => {
	const deps = scriptDeps(new Map());
	assert.throws(() => runScript("for (;;) {}", deps, []), new RegExp(`stopped after ${SCRIPT_MAX_STEPS} steps`));
	assert.throws(() => runScript("for (;;) { try { for (;;) {} } catch (e) {} }", deps, []), /stopped after/);
	assert.throws(() => runScript("function f() { return f() + 1 } f()", deps, []), /stopped/);
	assert.throws(() => runScript("const a = []; for (;;) a.push({ n: a.length })", deps, []), /it used more than/);
	assert.throws(() => runScript("let s = 'x'; for (;;) s += s", deps, []), /it used more than/);
	assert.equal(runScript("1 + 1", deps, []), "2", "the next script runs normally");
});

test("a script's own error that reads like a bound is its failure, not a bound: the sandbox says which bound stopped it, not the message", () => {
	const deps = scriptDeps(new Map());
	for (const message of ["sandbox: step limit", "sandbox: memory limit", "sandbox: stack limit", "sandbox: key limit"])
		assert.throws(() => runScript(`throw new RangeError(${JSON.stringify(message)})`, deps, []), `the script failed: ${message}`);
	assert.throws(() => runScript("for (;;) {}", deps, []), /stopped after/);
	assert.equal(stopped(), "steps", "the last run was stopped by its step bound");
	assert.throws(() => runScript("throw new RangeError('sandbox: step limit')", deps, []), /^the script failed/);
	assert.equal(stopped(), undefined, "a run that threw its own error was stopped by no bound");
	runScript("1", deps, []);
	assert.equal(stopped(), undefined);
});

test("send_message reaches a running channel's paired chat only, saying why not, and inspect_image asks the model about one image from the folder or a URL", async () => {
	const sent: string[] = [];
	const asked: MediaRequest[] = [];
	const reply = (content: string) => ({ message: { role: "assistant", content }, finish_reason: "stop", usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, model: "m", attempts: 1, bytes_sent: 0, bytes_received: 0, elapsed_ms: 1 }) as unknown as ChatResponse;
	const registry = new Registry(messagingTools({
		send: (channel, chat, text) => { sent.push(`${channel}:${chat}:${text}`); },
		channels: () => [
			{ name: "console", running: true, chats: ["local"] },
			{ name: "telegram", running: false, off: "no token: `config set telegram.token TOKEN` from BotFather", chats: ["42"] },
			{ name: "qq", running: true, chats: ["c2c:A", "group:B"] },
		],
		inferMedia: async (r) => { asked.push(r); return reply("a red LED"); },
	}));
	assert.deepEqual(await call(registry, "send_message", `{"channel":"console","text":"hello"}`), { content: "sent to console:local" });
	assert.deepEqual(await call(registry, "send_message", `{"channel":"qq","chat_id":"group:B","text":"hi"}`), { content: "sent to qq:group:B" });
	assert.deepEqual(sent, ["console:local:hello", "qq:group:B:hi"]);
	assert.match((await call(registry, "send_message", `{"channel":"fax","text":"x"}`)).content, /there is no channel "fax" on this board; the channels are console, telegram, qq/);
	assert.match((await call(registry, "send_message", `{"channel":"telegram","chat_id":"42","text":"x"}`)).content, /nothing was sent: the telegram channel is off \(no token: `config set telegram.token TOKEN`/);
	assert.match((await call(registry, "send_message", `{"channel":"qq","text":"x"}`)).content, /give chat_id: qq's paired chats are c2c:A, group:B/);
	assert.match((await call(registry, "send_message", `{"channel":"qq","chat_id":"c2c:Z","text":"x"}`)).content, /chat c2c:Z is not paired with qq/);
	assert.equal(sent.length, 2, "nothing more was sent");
	assert.match((await call(registry, "send_message", `{"channel":"console","text":"x"}`, request("telegram"))).content, /only for the owner/);
	assert.deepEqual(await call(registry, "inspect_image", `{"file":"cam.jpg","question":"what is lit?"}`), { content: "a red LED" });
	assert.deepEqual(asked[0].image, { path: "workspace/cam.jpg" });
	await call(registry, "inspect_image", `{"url":"https://example.com/a.png","question":"q"}`);
	assert.deepEqual(asked[1].image, { url: "https://example.com/a.png" });
	assert.equal((await call(registry, "inspect_image", `{"question":"q"}`)).content, "give exactly one of file or url");
	assert.match((await call(registry, "inspect_image", `{"file":"../x.jpg","question":"q"}`)).content, /outside the agent's folder/);
	assert.equal((await call(registry, "inspect_image", `{"url":"ftp://x/y.png","question":"q"}`)).content, "url must start with http:// or https://");
});

test("tools list shows each tool's roles; tools call runs a tool as the owner and prints its result or error", async () => {
	const caps: Capability[] = [
		{ group: "t", definition: { type: "function", function: { name: "echo", description: "", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } } }, run: (args) => String(args.text) },
		{ group: "t", restricted: true, definition: { type: "function", function: { name: "secret_op", description: "", parameters: { type: "object", properties: {} } } }, run: () => "done" },
	];
	const registry = new Registry(caps);
	const commands = toolCommands({ registry: () => registry, chat: { channel: "console", chat_id: "local" }, session: () => "" });
	const run = async (name: string, args: string) => {
		const out = new Lines();
		await commands.find((c) => c.name === name)!.run(args, out);
		return out.all;
	};
	assert.deepEqual(await run("tools list", ""), ["echo [t] roles: owner,user,cron,subagent", "secret_op [t; restricted] roles: owner"]);
	assert.deepEqual(await run("tools call", `echo {"text":"hi"}`), ["hi"]);
	assert.deepEqual(await run("tools call", "secret_op"), ["done"]);
	assert.deepEqual(await run("tools call", "echo {}"), ["error: the arguments do not fit the schema of echo: arguments.text is required"]);
	assert.deepEqual(await run("tools call", "nope {}"), [`error: unknown tool "nope": the known tools are echo, secret_op`]);
});
