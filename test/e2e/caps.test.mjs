// The capabilities as the model meets them: the firmware on the lin host, its
// console on a pipe, the mock LLM over TLS scripting tool calls. One conversation
// drives an allowed pin (the simulated pin changes) and a forbidden one (refused,
// the model told why); makes a schedule that fires a role-cron request whose own
// schedule_create is refused and whose answer is printed on the console;
// activates a skill (its hidden tool group appears in the tool list); makes and
// runs a macro tool; runs a script that reads the time and one that loops
// forever (stopped by its bound, the agent answers). The system prompt is the
// same bytes in every request. A second test: a schedule survives a reboot and
// fires once, not twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PROTOCOLS, withMockAndFirmware } from "./firmware.mjs";

const KEY = "sk-caps-e2e-secret-0123456789";
const VARIANT = "release";

/** The firmware and the mock LLM (OpenAI protocol, over TLS), configured, with pins 2 and 4 allowed; checks a clean exit with the key never logged. */
const withFirmware = (fn) => withMockAndFirmware(VARIANT, fn, {
	key: KEY, prefix: "xsclaw-caps-", protocol: PROTOCOLS[0], settings: ["config set gpio.allow 2,4", "config set script.grants time,math"],
});

/** The tool results a request sends back (OpenAI shape): [{id, content}]. */
const toolResults = (record) => record.json.messages.filter((m) => m.role === "tool").map((m) => ({ id: m.tool_call_id, content: m.content }));
const resultOf = (record, id) => toolResults(record).find((r) => r.id === id)?.content;
const offered = (record) => (record.json.tools ?? []).map((d) => d.function.name);
const call = (id, name, args) => ({ type: "tool_calls", calls: [{ id, name, arguments: args }] });

/** Sends `ask text` and waits for a line matching answer. */
async function ask(fw, text, answer) {
	const from = fw.stdout.length;
	fw.send(`ask ${text}`);
	await fw.until(answer, { from });
	return fw.printed(from);
}

async function gpioLevel(fw, pin) {
	const from = fw.stdout.length;
	fw.send(`gpio ${pin}`);
	await fw.until(new RegExp(`^pin ${pin}: [01]$`, "m"), { from });
	return Number(new RegExp(`^pin ${pin}: ([01])$`, "m").exec(fw.printed(from))[1]);
}

test(`the model drives an allowed pin and is refused a forbidden one, schedules a cron request that cannot schedule, activates a skill, makes and runs a macro, and runs scripts; the system prompt never changes [${VARIANT}]`, async () => {
	await withFirmware(async ({ fw, mock }) => {
		// GPIO: pin 2 is allowed, pin 5 is not.
		mock.script(
			{ type: "tool_calls", calls: [{ id: "w2", name: "gpio_write", arguments: { pin: 2, value: 1 } }, { id: "w5", name: "gpio_write", arguments: { pin: 5, value: 1 } }] },
			{ type: "text", text: "Pin 2 is on; pin 5 is not allowed." },
		);
		assert.equal(await gpioLevel(fw, 2), 0);
		await ask(fw, "turn on pins 2 and 5", /^Pin 2 is on; pin 5 is not allowed\.$/m);
		const gpioRound = mock.requests.at(-1);
		assert.equal(resultOf(gpioRound, "w2"), "pin 2 set to 1");
		assert.equal(resultOf(gpioRound, "w5"), "pin 5 is not on the allow-list (2, 4); the owner can allow it with: config set gpio.allow 2,4,5");
		assert.equal(await gpioLevel(fw, 2), 1, "the simulated pin changed");

		// A schedule that fires a cron request; its own schedule_create is refused.
		mock.script(
			call("mk", "schedule_create", { kind: "once", in_seconds: 2, text: "Remind the person to stretch, and schedule the same again tomorrow." }),
			{ type: "text", text: "I will remind you in 2 seconds." },
			call("again", "schedule_create", { kind: "once", in_seconds: 60, text: "stretch again" }),
			{ type: "text", text: "Reminder: time to stretch!" },
		);
		const before = fw.stdout.length;
		await ask(fw, "remind me to stretch in 2 seconds", /^I will remind you in 2 seconds\.$/m);
		assert.match(resultOf(mock.requests.at(-1), "mk"), /^created s1: once, next .*, to console:local, fired 0x: Remind the person/);
		await fw.until(/^agent \(request \d+, schedule s1\):\nReminder: time to stretch!$/m, { from: before });
		const cronRound = mock.requests.at(-1);
		assert.equal(resultOf(cronRound, "again"), "a scheduled request cannot create schedules; answer with what the schedule asked for");
		const cronAsk = mock.requests.at(-2);
		assert.ok(!offered(cronAsk).includes("schedule_create"), "a cron request is not even offered schedule_create");
		assert.ok(offered(cronAsk).includes("gpio_write"), "but may drive pins, for the owner's routines");
		assert.match(JSON.stringify(cronAsk.json.messages.at(-1)), /\[schedule s1 fired\] Remind the person to stretch/);
		const list = fw.stdout.length;
		fw.send("cron list");
		await fw.until(/no schedules/, { from: list });

		// A skill: its document comes back, and its hidden group (run_script) is offered from then on.
		assert.ok(!offered(mock.requests.at(-1)).includes("run_script"), "run_script is hidden before the skill");
		mock.script(call("sk", "activate_skill", { name: "blink" }), { type: "text", text: "I know how to blink now." });
		await ask(fw, "learn to blink a pin", /^I know how to blink now\.$/m);
		assert.match(resultOf(mock.requests.at(-1), "sk"), /^# Blink a pin\n/);
		assert.ok(offered(mock.requests.at(-1)).includes("run_script"), "the skill made run_script visible");

		// A macro tool: made, then run (its action handed back), then carried out.
		mock.script(
			call("mm", "macro_create", { name: "water_plants", description: "Water the plants", action: "Call gpio_write with pin 4 and value 1." }),
			{ type: "text", text: "Made the tool water_plants." },
		);
		await ask(fw, "make a tool that waters the plants with pin 4", /^Made the tool water_plants\.$/m);
		mock.script(
			call("run", "water_plants", {}),
			call("p4", "gpio_write", { pin: 4, value: 1 }),
			{ type: "text", text: "The plants are watered." },
		);
		await ask(fw, "water the plants", /^The plants are watered\.$/m);
		const watered = mock.requests.at(-1);
		assert.ok(offered(watered).includes("water_plants"), "the macro is a tool");
		assert.equal(resultOf(watered, "run"), "Macro water_plants: carry out this stored action now with your tools, then answer the person:\nCall gpio_write with pin 4 and value 1.");
		assert.equal(await gpioLevel(fw, 4), 1);

		// Scripts: one reads the time, one loops forever and is stopped by its bound.
		mock.script(
			call("t", "run_script", { code: "'now ' + time.iso()" }),
			call("loop", "run_script", { code: "for (;;) {}" }),
			{ type: "text", text: "The time script worked; the loop was stopped." },
		);
		await ask(fw, "run two scripts", /^The time script worked; the loop was stopped\.$/m);
		const scripts = mock.requests.at(-1);
		const now = /^now (\S+)$/.exec(resultOf(scripts, "t"));
		assert.ok(now && Math.abs(Date.parse(now[1]) - Date.now()) < 60_000, resultOf(scripts, "t"));
		assert.match(resultOf(scripts, "loop"), /^the script was stopped after \d+ steps/);

		// Every request of all of it carried the same system prompt bytes.
		const systems = new Set(mock.requests.map((r) => r.json.messages[0].content));
		assert.equal(systems.size, 1, `${systems.size} different system prompts over ${mock.requests.length} requests`);
		assert.match([...systems][0], /## skills\n.*- blink: Blink a pin\./s);
	});
});

test(`a schedule survives a reboot and fires once, not twice [${VARIANT}]`, async () => {
	await withFirmware(async ({ fw, mock }) => {
		mock.script({ type: "text", text: "Ping answered." });
		const start = fw.stdout.length;
		fw.send("cron add in 3 say ping");
		await fw.until(/^created s1: once/m, { from: start });
		fw.send("reboot");
		await fw.until(/type help for the commands\n[\s\S]*agent \(request \d+, schedule s1\):\nPing answered\.$/m, { from: start });
		const fired = () => mock.requests.filter((r) => JSON.stringify(r.json.messages).includes("[schedule s1 fired] say ping")).length;
		assert.equal(fired(), 1);
		const again = fw.stdout.length;
		fw.send("reboot");
		await fw.until(/type help for the commands\n/, { from: again });
		await new Promise((resolve) => setTimeout(resolve, 4000));
		assert.equal(fired(), 1, "not again after the next reboot");
		assert.doesNotMatch(fw.printed(again), /Ping answered/);
		const list = fw.stdout.length;
		fw.send("cron list");
		await fw.until(/no schedules/, { from: list });
	});
});
