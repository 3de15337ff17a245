// Stored scripts and their automations (caps/scripts, caps/automations,
// caps/script_tools): proposals wait for the owner; a GPIO edge on the simulated
// bank, a schedule naming the script and a router rule run it without the LLM;
// notify() and ask() go out after a good run only, bounded and counted; a
// failure is reported once and the script disabled after repeated failures,
// which a reopened store still shows.
import Timer from "timer";
import { drive, level, release } from "host/pins";
import { SCRIPT_FAILURES_DISABLE, SCRIPT_NOTIFIES_PER_MINUTE, SCRIPT_NOTIFIES_PER_RUN, SCRIPT_RUNS_PER_MINUTE } from "budgets";
import { Automations } from "caps/automations";
import { GpioBank } from "caps/gpio";
import { Registry } from "caps/registry";
import { lockedDown } from "caps/script";
import { ScriptStore, parseTrigger } from "caps/scripts";
import { scriptCommands, scriptTools } from "caps/script_tools";
import type { AgentRequest, OutEvent } from "core/types";
import { Aborter } from "net/abort";
import { Scheduler } from "sched/scheduler";
import { parseTimeZone } from "util/tz";
import { freshDirectory } from "./memory_fakes";
import type { Directory } from "embedded:storage/files";
import { assert, test } from "testing";

if (!lockedDown()) lockdown();

const UTC = parseTimeZone("UTC");
const OWNER = { channel: "telegram", chat_id: "42" };
const turn = () => new Promise<void>((resolve) => Timer.set(() => resolve(), 20));

class FakeTimer {
	pending: Array<{ callback: () => void; id: number }> = [];
	#next = 1;
	set = (callback: () => void) => {
		const id = this.#next++;
		this.pending.push({ callback, id });
		return id;
	};
	clear = (handle: unknown) => {
		this.pending = this.pending.filter((t) => t.id !== handle);
	};
	fire(): void {
		this.pending.shift()?.callback();
	}
}

function setup(directory: Directory, pins = "4,5,6") {
	const config = new Map<string, string>([["gpio.allow", pins]]);
	const settings = { get: (name: string) => config.get(name) };
	const clock = { wall: Date.UTC(2026, 11, 1, 10, 0, 0), mono: 1000 };
	const sent: OutEvent[] = [];
	const asked: AgentRequest[] = [];
	const logs: string[] = [];
	const gpio = new GpioBank(settings);
	const timer = new FakeTimer();
	let automations: Automations | undefined;
	const scheduler = new Scheduler({
		directory, wallClockMs: () => clock.wall, zone: () => UTC, log: (line) => logs.push(line), timer,
		fire: (entry) => automations!.runScheduled(entry),
	});
	const store = new ScriptStore(directory, () => clock.wall, (line) => logs.push(line));
	automations = new Automations({
		store, scheduler, gpio, deps: { settings, gpio, wallClockMs: () => clock.wall, zone: () => UTC },
		now: () => clock.mono, publish: (event) => void sent.push(event), sessionFor: () => "s1", log: (line) => logs.push(line),
	});
	automations.start(async (request) => { asked.push(request); return 1; });
	scheduler.start();
	const options = { store, automations, scheduler, now: () => clock.mono };
	const commands = scriptCommands(options);
	const command = async (line: string) => {
		const [name, args] = /^(script(?: \w+)?)(?: (.*))?$/.exec(line)!.slice(1);
		const lines: string[] = [];
		await commands.find((c) => c.name === name)!.run(args ?? "", { line: (text: string) => void lines.push(text) });
		return lines;
	};
	const stop = () => { automations!.stop(); scheduler.stop(); gpio.close(); };
	return { store, automations, scheduler, gpio, timer, clock, sent, asked, logs, command, stop, options };
}

const save = (s: ReturnType<typeof setup>, name: string, source: string, on: string[] = [], grants: Array<"time" | "gpio" | "math"> = ["gpio"]) =>
	s.store.save({ name, description: `the ${name} script`, source, grants, on: on.map(parseTrigger), chat: OWNER, state: "proposed" });

const texts = (events: OutEvent[]) => events.map((e) => (e.type === "out_message" ? `${e.channel}:${e.chat_id}: ${e.text}` : ""));

test("a proposed script waits for the owner; confirmed, a GPIO edge runs it: it drives a pin and notifies its chat, with no request to the agent", async () => {
	const s = setup(freshDirectory("auto-gpio"));
	try {
		save(s, "door", "gpio.write(4, trigger.level); notify('pin ' + trigger.pin + ' is ' + trigger.level); 'ok'", ["gpio 5 rising"]);
		drive(5, 1);
		await turn();
		assert.equal(level(4), 0, "a proposal does not run");
		assert.equal(s.automations.run("door", { kind: "manual" }, 0).text, "the script door is a proposal: the owner confirms it with: script confirm door");
		drive(5, 0);
		await s.command("script confirm door");
		drive(5, 1);
		await turn();
		assert.equal(level(4), 1);
		assert.deepEqual(texts(s.sent), ["telegram:42: pin 5 is 1"]);
		assert.equal(s.asked.length, 0);
		assert.match(s.automations.lines()[0], /^script door: enabled, on gpio 5 rising; runs 1 \(0 failed, 0 skipped\), notified 1, asked 0; last .* gpio 5 went 1: ok in [\d.]+ ms: ok$/);
	} finally {
		s.stop();
		release(5);
	}
});

test("a schedule naming a script runs it when it fires; a router rule runs it only with the router trigger", () => {
	const s = setup(freshDirectory("auto-cron"));
	try {
		save(s, "relay", "gpio.write(6, 1); notify('from ' + trigger.kind + ' ' + (trigger.schedule ?? trigger.text)); 'on'");
		s.store.setState("relay", "enabled");
		const lines = s.scheduler.add({ kind: "cron", cron: "*/5 * * * *", text: "", script: "relay", chat: OWNER });
		assert.equal(lines.script, "relay");
		assert.match(s.scheduler.describe(lines), /runs script relay$/);
		s.clock.wall = lines.next_ms;
		s.timer.fire();
		assert.equal(level(6), 1);
		assert.deepEqual(texts(s.sent), [`telegram:42: from cron ${lines.id}`]);
		assert.match(s.automations.runFromRouter("relay", { text: "hi", channel: "telegram", chat_id: "7" }).text, /is not to be run by router rules; the owner can allow it with: script on relay router/);
		s.store.save({ ...s.store.get("relay")!, on: [parseTrigger("router")], state: "enabled" });
		assert.deepEqual(s.automations.runFromRouter("relay", { text: "hi", channel: "telegram", chat_id: "7" }), { ok: true, text: "on" });
		assert.equal(texts(s.sent).at(-1), "telegram:42: from router hi", "told the script's own chat, not the sender's");
		assert.equal(s.asked.length, 0);
	} finally {
		s.stop();
	}
});

test("notify is bounded per run and per chat, ask is a counted request with role cron, and a failed run sends neither", () => {
	const s = setup(freshDirectory("auto-notify"));
	try {
		save(s, "chatty", "for (let i = 0; i < 5; i++) notify('n' + i); ask('should I water?'); ask('twice?')");
		s.store.setState("chatty", "enabled");
		const runs = Math.ceil(SCRIPT_NOTIFIES_PER_MINUTE / SCRIPT_NOTIFIES_PER_RUN) + 1;
		for (let i = 0; i < runs; i++) assert.equal(s.automations.run("chatty", { kind: "manual" }, 0).ok, true);
		assert.equal(s.sent.length, SCRIPT_NOTIFIES_PER_MINUTE, "at most this many a minute to one chat");
		assert.match(s.automations.lines()[0], new RegExp(`notified ${SCRIPT_NOTIFIES_PER_MINUTE} \\(${runs * SCRIPT_NOTIFIES_PER_RUN - SCRIPT_NOTIFIES_PER_MINUTE} dropped\\), asked ${runs}`));
		assert.equal(s.asked.length, runs, "one ask a run");
		const ask = s.asked[0];
		assert.equal(ask.role, "cron");
		assert.equal(ask.source.channel, "cron");
		assert.deepEqual(ask.target, OWNER);
		assert.equal(ask.user_text, "[script chatty asks] should I water?");
		s.clock.mono += 61_000;
		save(s, "broken", "notify('never sent'); ask('never asked'); null.x");
		s.store.setState("broken", "enabled");
		const before = { sent: s.sent.length, asked: s.asked.length };
		assert.equal(s.automations.run("broken", { kind: "manual" }, 0).ok, false);
		assert.equal(s.asked.length, before.asked);
		assert.equal(texts(s.sent).slice(before.sent).filter((t) => t.includes("never")).length, 0);
	} finally {
		s.stop();
	}
});

test("a failing script is reported once, disabled after repeated failures (kept across a reopen), and runs again once enabled", async () => {
	const directory = freshDirectory("auto-fail");
	const s = setup(directory);
	try {
		save(s, "spin", "for (;;) {}");
		s.store.setState("spin", "enabled");
		for (let i = 0; i < SCRIPT_FAILURES_DISABLE; i++) assert.match(s.automations.run("spin", { kind: "manual" }, 0).text, /^the script was stopped after \d+ steps/);
		const reports = texts(s.sent);
		assert.equal(reports.length, 2, reports.join("\n"));
		assert.match(reports[0], /^telegram:42: The script spin failed \(manual\): the script was stopped after/);
		assert.match(reports[1], new RegExp(`^telegram:42: The script spin failed ${SCRIPT_FAILURES_DISABLE} times in a row, so it is disabled\\..*script enable spin$`));
		assert.match(s.automations.run("spin", { kind: "manual" }, 0).text, /is disabled \(3 failures in a row, the last: the script was stopped/);
		const reopened = new ScriptStore(directory, () => 0, () => {});
		assert.equal(reopened.get("spin")?.state, "disabled");
		s.store.save({ ...s.store.get("spin")!, source: "'fixed'", state: "disabled" });
		assert.deepEqual(await s.command("script enable spin"), ["spin is enabled"]);
		assert.deepEqual(s.automations.run("spin", { kind: "manual" }, 0), { ok: true, text: "fixed" });
		save(s, "clock", "time.iso()", [], ["gpio"]);
		s.store.setState("clock", "enabled");
		assert.deepEqual(s.automations.run("clock", { kind: "manual" }, 0), { ok: false, text: "the script failed: time is not granted to this script; it was saved without that grant: save it again with grants gpio,time" });
	} finally {
		s.stop();
	}
});

test("a trigger past the runs a minute is skipped and counted; a trigger a pin cannot take is shown, not thrown", () => {
	const s = setup(freshDirectory("auto-rate"), "4,5");
	try {
		save(s, "busy", "1", ["gpio 9 rising"]);
		s.store.setState("busy", "enabled");
		for (let i = 0; i < SCRIPT_RUNS_PER_MINUTE; i++) assert.equal(s.automations.run("busy", { kind: "manual" }, 0).ok, true);
		assert.match(s.automations.run("busy", { kind: "manual" }, 0).text, /ran \d+ times in the last minute/);
		assert.match(s.automations.lines()[0], /skipped 1|1 skipped/);
		assert.match(s.automations.lines()[0], /gpio 9 rising is not armed: pin 9 is not on the allow-list/);
	} finally {
		s.stop();
	}
});

test("the tools: script_save proposes (even for the owner), the others list, show, run and delete, and the schedule goes with the script", async () => {
	const s = setup(freshDirectory("auto-tools"));
	try {
		const registry = new Registry(scriptTools(s.options), { visibleGroups: () => new Set(["script"]) });
		const request: AgentRequest = { request_id: 1, flags: 0, session_id: "s1", user_text: "", source: { channel: "telegram", chat_id: "42", sender_id: "o", message_id: "", cap: "" }, role: "owner" };
		const call = async (name: string, args: object, r = request) => (await registry.callCap({ id: "c", name, arguments: JSON.stringify(args) }, { request: r, signal: new Aborter().signal, progress() {} }));
		const saved = await call("script_save", { name: "lamp", description: "a lamp at seven", source: "gpio.write(4, 1); 'lit'", grants: ["gpio"], cron: "0 7 * * *" });
		assert.match(saved.content, /^saved lamp as a proposal: .*script confirm lamp\nschedule: s1: cron "0 7 \* \* \*" \(UTC\), next .*runs script lamp$/);
		assert.equal(s.store.get("lamp")?.state, "proposed");
		assert.deepEqual(s.store.get("lamp")?.chat, OWNER, "owned by the chat that asked");
		assert.match((await call("script_run", { name: "lamp" })).content, /is a proposal/);
		assert.match((await call("script_list", {})).content, /^script lamp: proposed, on cron "0 7 \* \* \*" \(s1\)/);
		assert.match((await call("script_show", { name: "lamp" })).content, /source:\n {2}gpio\.write\(4, 1\); 'lit'$/);
		assert.match((await call("script_save", { name: "bad", description: "x", source: "1", cron: "99 * * * *" })).content, /minute/);
		assert.equal(s.store.get("bad"), undefined, "a bad schedule saves nothing");
		const user = { ...request, role: "user" as const };
		assert.match((await call("script_list", {}, user)).content, /only for the owner/);
		await s.command("script confirm lamp");
		assert.deepEqual(await call("script_run", { name: "lamp" }), { content: "lit" });
		assert.equal((await call("script_delete", { name: "lamp" })).content, "deleted lamp and 1 schedule that ran it");
		assert.equal(s.scheduler.list().length, 0);
	} finally {
		s.stop();
	}
});
