// Stored scripts and the automations that run them without the LLM (issue 28),
// on the lin host with its console on a pipe and the mock LLM over TLS. The
// model proposes three scripts (script_save after the automation skill); they do
// not run until the owner confirms them on the console. Then, with no request to
// the mock: a simulated GPIO edge (the `pins` command drives pin 5 from outside)
// runs one that drives pin 4 and notifies the console's chat; a schedule naming
// another runs it (pin 6, a notification); a runaway one on pin 7 is stopped by
// its bound each time, reported once, and disabled after three failures in a
// row, while the firmware keeps answering. `status` shows each automation. After
// a reboot the scripts, their states and triggers are still there and the edge
// runs the first again. Power cuts are in scripts-powerloss.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PROTOCOLS, until, withMockAndFirmware } from "./firmware.mjs";

const KEY = "sk-automations-e2e-0123456789";
const VARIANT = "release";

const call = (id, name, args) => ({ id, name, arguments: args });
const count = (text, pattern) => (text.match(new RegExp(pattern.source, "gm")) ?? []).length;

async function ask(fw, text, answer) {
	return fw.run(`ask ${text}`, answer);
}

async function level(fw, pin) {
	const printed = await fw.run(`gpio ${pin}`, new RegExp(`^pin ${pin}: [01]$`, "m"));
	return Number(new RegExp(`^pin ${pin}: ([01])$`, "m").exec(printed)[1]);
}

test(`stored scripts run on a GPIO edge and a schedule with no LLM call, a runaway one is stopped, reported once and disabled, and all survive a reboot [${VARIANT}]`, async () => {
	await withMockAndFirmware(VARIANT, async ({ fw, mock }) => {
		// The model proposes: the automation skill shows the script tools.
		mock.script(
			{ type: "tool_calls", calls: [call("sk", "activate_skill", { name: "automation" })] },
			{
				type: "tool_calls", calls: [
					call("a", "script_save", { name: "door", description: "pin 4 follows the door switch on pin 5, and says so", grants: ["gpio"], on: ["gpio 5 rising"], source: "gpio.write(4, trigger.level); notify('door opened: pin ' + trigger.pin + ' is ' + trigger.level); 'lit'" }),
					call("b", "script_save", { name: "tick", description: "switches the relay on pin 6 when its schedule fires", grants: ["gpio"], source: "gpio.write(6, 1); notify('tick from ' + trigger.kind + ' ' + trigger.schedule); 'ticked'" }),
					call("c", "script_save", { name: "spin", description: "a script that never ends", on: ["gpio 7 rising"], source: "let n = 0; for (;;) { try { n++ } catch (e) {} }" }),
				],
			},
			{ type: "text", text: "I proposed three scripts; confirm them on the console." },
		);
		await ask(fw, "set up my automations", /^I proposed three scripts; confirm them on the console\.$/m);
		const saved = mock.requests.at(-1).json.messages.filter((m) => m.role === "tool").map((m) => m.content);
		for (const result of saved.slice(1)) assert.match(result, /^saved \w+ as a proposal: it does not run until the owner confirms it on the console with: script confirm \w+$/);
		let listed = await fw.run("script", /^script spin: .*$/m);
		assert.match(listed, /^script door: proposed, on gpio 5 rising; no runs since boot$/m);

		// A proposal does not run.
		await fw.run("pins 5 1", /^pin 5 driven to 1 from outside$/m);
		assert.equal(await level(fw, 4), 0, "a proposed script did not run");
		await fw.run("pins 5 0", /^pin 5 driven to 0 from outside$/m);

		for (const name of ["door", "tick", "spin"]) await fw.run(`script confirm ${name}`, new RegExp(`^${name} is enabled`, "m"));
		const llmCalls = mock.requests.length;

		// An edge on pin 5: pin 4 is driven and the console's chat told.
		let from = fw.stdout.length;
		await fw.run("pins 5 1", /^door opened: pin 5 is 1$/m);
		assert.equal(await level(fw, 4), 1);

		// A schedule naming tick: it fires in 2 s and runs the script.
		await fw.run("script on tick in 2", /^created s1: once, .*runs script tick$/m);
		await fw.until(/^tick from cron s1$/m, { from });
		assert.equal(await level(fw, 6), 1);

		// The runaway: stopped by its bound each time, reported once, disabled at the third failure.
		from = fw.stdout.length;
		for (let i = 1; i <= 3; i++) {
			// The edge reaches the script on a later turn of the agent's loop than the command.
			await fw.run("pins 7 1", /^pin 7 driven to 1 from outside$/m);
			await until(() => fw.stderr.includes(`automations: spin failed (gpio 7 went 1), ${i} in a row`), `the runaway's failure ${i}`);
			await fw.run("pins 7 0", /^pin 7 driven to 0 from outside$/m);
		}
		await fw.until(/^The script spin failed 3 times in a row, so it is disabled\./m, { from });
		const reports = fw.printed(from);
		assert.equal(count(reports, /^The script spin failed \(gpio 7 went 1\): the script was stopped after \d+ steps/), 1, `reported once:\n${reports}`);
		assert.equal(count(reports, /^The script spin failed/), 2, "the first failure and the disabling, nothing between");
		await fw.run("pins 7 1", /^pin 7 driven to 1 from outside$/m);
		await fw.run("gpio 4", /^pin 4: 1$/m);   // a turn of the agent's loop: the edge would have run it by now
		listed = await fw.run("script show spin", /^script spin: .*$/m);
		assert.match(listed, /^script spin: disabled \(3 failures in a row, the last: the script was stopped after \d+ steps.*\), on gpio 7 rising; runs 3 \(3 failed/m, "a disabled script does not run");

		// None of it asked the LLM.
		assert.equal(mock.requests.length, llmCalls, "no LLM call from any trigger");

		// The firmware keeps answering, and status shows each automation.
		mock.script({ type: "text", text: "Still here." });
		await ask(fw, "are you there?", /^Still here\.$/m);
		const status = await fw.run("status", /^script spin: .*$/m);
		assert.match(status, /^script door: enabled, on gpio 5 rising; runs 1 \(0 failed, 0 skipped\), notified 1, asked 0; last .* gpio 5 went 1: ok in [\d.]+ ms: lit$/m);
		assert.match(status, /^script tick: enabled, on nothing \(run by hand\); runs 1 .* schedule s1: ok .*: ticked$/m);

		// A reboot: the scripts, their states and triggers are kept; the edge runs door again.
		await fw.run("pins 5 0", /^pin 5 driven to 0 from outside$/m);
		await fw.run("gpio 4 0", /^pin 4 set to 0$/m);
		from = fw.stdout.length;
		fw.send("reboot");
		await fw.until(/type help for the commands\n/, { from });
		listed = await fw.run("script", /^script spin: .*$/m);
		assert.match(listed, /^script door: enabled, on gpio 5 rising; no runs since boot$/m);
		assert.match(listed, /^script tick: enabled, on nothing/m, "the one-shot schedule is spent");
		assert.match(listed, /^script spin: disabled \(3 failures in a row/m);
		await fw.run("pins 5 1", /^door opened: pin 5 is 1$/m);
		assert.equal(await level(fw, 4), 1);
		assert.equal(mock.requests.length, llmCalls + 1, "only the one question asked the LLM");
	}, { key: KEY, prefix: "xsclaw-automations-", protocol: PROTOCOLS[0], settings: ["config set gpio.allow 4,5,6,7"] });
});
