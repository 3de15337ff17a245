// Peer for test/e2e/scripts-powerloss.test.mjs: opens the stored scripts
// (caps/scripts.json) and the schedules (sched/schedules.json) as the agent
// machine does, prints what it found as one JSON line, then makes the first
// --ops N changes of a fixed series (saves, confirms, a schedule naming a
// script, a replacement, a disabling, a deletion with its schedule), printing
// a line after each one is done. Run with --crash-after N to lose power
// part-way through.
import files from "embedded:storage/files";
import { option } from "host/platform";
import { ScriptStore, parseTrigger, triggerText } from "caps/scripts";
import { Scheduler } from "sched/scheduler";
import { parseTimeZone } from "util/tz";

const folder = (path: string) => {
	files.createDirectory(path);
	return files.openDirectory({ path });
};
const log = (line: string) => trace(`scripts-powerloss: log ${line}\n`);
const UTC = parseTimeZone("UTC");
const wall = () => Date.UTC(2026, 11, 1, 10, 0, 0);
const store = new ScriptStore(folder("caps"), wall, log);
const scheduler = new Scheduler({ directory: folder("sched"), wallClockMs: wall, zone: () => UTC, fire() {}, log, timer: { set: () => 0, clear() {} } });
const chat = { channel: "telegram", chat_id: "42" };

const found = {
	scripts: store.list().map((s) => ({ name: s.name, state: s.state, note: s.note, on: s.on.map(triggerText), source: s.source })),
	schedules: scheduler.list().map((e) => ({ script: e.script ?? null, spec: e.spec })),
};
trace(`scripts-powerloss: found ${JSON.stringify(found)}\n`);

const save = (name: string, source: string, on: string[], state: "proposed" | "enabled" | "disabled") =>
	store.save({ name, description: `the ${name} script`, source, grants: ["gpio"], on: on.map(parseTrigger), chat, state });
const OPS: Array<() => unknown> = [
	() => save("door", "gpio.write(4, trigger.level)", ["gpio 5 rising"], "proposed"),
	() => store.setState("door", "enabled"),
	() => save("tick", "gpio.write(6, 1)", [], "proposed"),
	() => scheduler.add({ kind: "cron", cron: "*/5 * * * *", text: "", script: "tick", chat }),
	() => store.setState("tick", "enabled"),
	() => save("door", "gpio.write(4, 1 - trigger.level)", ["gpio 5 rising", "boot"], "enabled"),
	() => store.setState("door", "disabled", "3 failures in a row"),
	() => scheduler.removeScript("tick"),
	() => store.remove("tick"),
];
const ops = Math.min(OPS.length, Number(option("ops") ?? "0"));
for (let i = 0; i < ops; i++) {
	OPS[i]();
	trace(`scripts-powerloss: done ${i + 1}\n`);
}
