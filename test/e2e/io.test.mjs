// The board's buses as the model meets them (issue 29): the firmware on the lin
// host with simulated devices planted in <data>/files/io/devices.json, the mock
// LLM scripting tool calls, a mock Telegram with an owner's and a user's chat.
// "What is the temperature?" runs i2c_read on the simulated SHT3x and the answer
// quotes its value; a user's chat is refused pwm_set (the output never moves)
// while the owner's drives it; a schedule made to read the ADC every minute
// fires (its time fast-forwarded in sched/schedules.json across a reboot, so the
// test takes seconds, not minutes) and its readings land in the file it names.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OWNER_CHAT, USER_CHAT, plant, startRig } from "./proof.mjs";

const DEVICES = {
	i2c: { devices: [{ type: "sht3x", address: 0x44, temperature_c: 21.7, humidity_pct: 38.5 }] },
	adc: [{ pin: 1, waveform: "constant", mv: 1234 }],
};
const SETTINGS = ["config set i2c.allow 0x44", "config set adc.allow 1", "config set pwm.allow 5"];

const call = (id, name, args) => ({ type: "tool_calls", calls: [{ id, name, arguments: args }] });
const toolResult = (record, id) => record.json.messages.find((m) => m.role === "tool" && m.tool_call_id === id)?.content;
const offered = (record) => (record.json.tools ?? []).map((d) => d.function.name);

test("board IO end to end: the temperature from the simulated sensor, pwm_set refused to a user, a schedule logging the ADC to a file", async () => {
	const rig = await startRig({ qq: false, settings: SETTINGS, prepare: (data) => plant(data, "files/io/devices.json", JSON.stringify(DEVICES)) });
	try {
		const { llm, tg } = rig;
		const ask = async (chat, text, done) => {
			const from = tg.chat(chat).length;
			tg.say({ chat, text });
			return (await tg.waitFor(() => tg.chat(chat).slice(from).find((m) => done.test(m.text)), 30_000, `an answer in chat ${chat}`)).text;
		};

		// 1. "What is the temperature?": the skill shows the io tools, i2c_read reads the sensor.
		llm.script(
			call("sk", "activate_skill", { name: "temperature" }),
			call("t", "i2c_read", { address: 0x44, register: 0x2400, length: 6, delay_ms: 20, decode: "sht3x" }),
			{ type: "text", text: "It is 21.70 °C with 38.5 % humidity: comfortable." },
		);
		const before = llm.requests.length;
		const answer = await ask(OWNER_CHAT, "what is the temperature?", /°C/);
		const rounds = llm.requests.slice(before);
		assert.ok(!offered(rounds[0]).includes("i2c_read"), "the io tools are hidden until the skill");
		assert.ok(offered(rounds[1]).includes("i2c_read"), "and offered once it is active");
		const reading = toolResult(rounds[2], "t");
		assert.equal(reading, "0x44 register 0x2400 (SHT3x): temperature 21.70 °C, humidity 38.5 %RH (bytes 61 92 7b 62 8f 59, CRC ok)");
		const quoted = /temperature (\d+\.\d+) °C/.exec(reading)[1];
		assert.ok(answer.includes(`${quoted} °C`), `the answer quotes the sensor's value: ${answer}`);

		// 2. A user's chat asks to drive a PWM output: refused; the owner's chat may.
		llm.script(
			call("u1", "activate_skill", { name: "dimmer" }),
			call("u2", "pwm_set", { pin: 5, frequency: 1000, duty: 50 }),
			{ type: "text", text: "I may not dim that light for you." },
		);
		await ask(USER_CHAT, "dim the light on pin 5 to half", /may not dim/);
		assert.match(toolResult(llm.requests.at(-1), "u2"), /^the tool pwm_set is only for the owner/);
		assert.ok(!offered(llm.requests.at(-1)).includes("pwm_set"), "a user is not even offered pwm_set");
		assert.match(await rig.command("pwm", /^(no PWM output runs|pin \d+: .*)$/m), /no PWM output runs/, "nothing was driven");
		llm.script(
			call("o1", "activate_skill", { name: "dimmer" }),
			call("o2", "pwm_set", { pin: 5, frequency: 1000, duty: 50 }),
			{ type: "text", text: "The light on pin 5 is at half." },
		);
		await ask(OWNER_CHAT, "dim the light on pin 5 to half", /at half/);
		assert.equal(toolResult(llm.requests.at(-1), "o2"), "pin 5: PWM at 1000 Hz, duty 50% (512/1023)");
		assert.match(await rig.command("pwm", /^pin 5: .*$/m), /pin 5: PWM at 1000 Hz, duty 50%/);

		// 3. A schedule that reads the ADC every minute into volts.log.
		llm.script(
			call("s1", "activate_skill", { name: "voltage_log" }),
			call("s2", "schedule_create", { kind: "every", every_seconds: 60, text: "Read adc_read pin 1 and append one line with the millivolts to volts.log." }),
			{ type: "text", text: "Logging pin 1 every minute to volts.log." },
		);
		await ask(OWNER_CHAT, "log the voltage on pin 1 every minute", /every minute/);
		assert.match(toolResult(llm.requests.at(-1), "s2"), /^created s1: /);
		const schedules = join(rig.data, "files", "sched", "schedules.json");
		const log = join(rig.data, "files", "workspace", "volts.log");
		for (const round of [1, 2]) {
			// The minute passes: the entry's next time is moved into the past, and the reboot fires it (the missed-entry rule).
			const shape = JSON.parse(readFileSync(schedules, "utf8"));
			shape.entries[0].next_ms = Date.now() - 1000;
			writeFileSync(schedules, JSON.stringify(shape));
			llm.script(
				call(`a${round}`, "activate_skill", { name: "voltage_log" }),
				call(`r${round}`, "adc_read", { pin: 1 }),
				call(`w${round}`, "file_write", { name: "volts.log", text: `reading ${round}: 1234 mV\n`, append: true }),
				{ type: "text", text: `Logged reading ${round}.` },
			);
			const from = llm.requests.length;
			const sent = tg.chat(OWNER_CHAT).length;
			await rig.command("reboot", /type help for the commands/);
			await tg.waitFor(() => tg.chat(OWNER_CHAT).slice(sent).find((m) => m.text === `Logged reading ${round}.`), 30_000, `the schedule's answer ${round}`);
			const fired = llm.requests.slice(from);
			assert.match(JSON.stringify(fired[0].json.messages.at(-1)), /\[schedule s1 fired\] Read adc_read pin 1/);
			assert.equal(toolResult(fired.at(-1), `r${round}`), "pin 1: 1234 mV (average of 8 samples, 1234-1234 mV)");
			assert.match(toolResult(fired.at(-1), `w${round}`), /volts\.log/);
			const next = JSON.parse(readFileSync(schedules, "utf8")).entries[0];
			assert.ok(next.next_ms > Date.now() + 30_000 && next.next_ms <= Date.now() + 61_000, "the next reading is a minute on");
			assert.equal(next.fired, round);
		}
		assert.equal(readFileSync(log, "utf8"), "reading 1: 1234 mV\nreading 2: 1234 mV\n");
	} finally {
		await rig.close({ scan: false });
	}
});
