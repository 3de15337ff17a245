// The XS side of tools/bench/scripts.mjs (issue 28); traces one
// `BENCH {"name", "value"}` line per sample.
//   --pairs N   script.meter_overhead_ratio: a fixed workload (arithmetic, an
//               object and an array per step, a built-in's loop, string
//               building) run plainly and inside host/sandbox's run(), in turn,
//               timed in the thread's CPU time; the ratio of each pair. The lin
//               engine is always built with mxMetering, so plainly it still
//               counts steps (no check): the ratio is what the sandbox's checks,
//               callbacks and collections add, not the counting itself.
//   --edges N   automation.trigger_to_run_ms: a stored script with a gpio
//               trigger (caps/automations over caps/gpio's watch of the
//               simulated bank); the pin is driven from outside (host/pins), and
//               the time from the drive to the script's first step is one sample.
import Timer from "timer";
import { drive } from "host/pins";
import { exit, now, option } from "host/platform";
import { run } from "host/sandbox";
import { Automations } from "caps/automations";
import { GpioBank } from "caps/gpio";
import { ScriptStore, parseTrigger } from "caps/scripts";
import { Scheduler } from "sched/scheduler";
import { parseTimeZone } from "util/tz";
import files from "embedded:storage/files";

lockdown();
const report = (name: string, value: number) => trace(`BENCH ${JSON.stringify({ name, value })}\n`);
const cpuMs = (): number => __xsclaw.threadCpuMs();

function workload(): number {
	let sum = 0;
	const items: number[] = [];
	for (let i = 0; i < 20_000; i++) {
		const point = { x: i, y: i * 2 };
		sum += point.x + point.y;
		items.push(i & 255);
		if (items.length === 64) {
			sum += items.indexOf(200) + items.join(",").length;
			items.length = 0;
		}
	}
	return sum;
}

const pairs = Number(option("pairs") ?? "10");
for (let i = 0; i < pairs; i++) {
	const a = cpuMs();
	workload();
	const plain = cpuMs() - a;
	const b = cpuMs();
	run(workload, 4_000_000_000, 512 * 1024, 30_000);
	const metered = cpuMs() - b;
	report("script.meter_overhead_ratio", metered / plain);
}

const UTC = parseTimeZone("UTC");
const settings = { get: (name: string) => (name === "gpio.allow" ? "5,6" : undefined) };
const gpio = new GpioBank(settings);
files.createDirectory("bench");
const directory = files.openDirectory({ path: "bench" });
const scheduler = new Scheduler({ directory, wallClockMs: () => Date.now(), zone: () => UTC, fire() {}, log() {}, timer: { set: () => 0, clear() {} } });
const store = new ScriptStore(directory, () => Date.now(), () => {});
let drivenAt = 0;
const automations = new Automations({
	store, scheduler, gpio, deps: { settings, gpio, wallClockMs: () => Date.now(), zone: () => UTC },
	now, publish() {}, sessionFor: () => "", log: (line) => trace(`scripts bench: ${line}\n`),
	onRun: (record) => report("automation.trigger_to_run_ms", record.started_ms - drivenAt),
});
store.save({ name: "edge", description: "bench", source: "gpio.write(6, trigger.level); trigger.level", grants: ["gpio"], on: [parseTrigger("gpio 5 rising")], chat: { channel: "console", chat_id: "local" }, state: "enabled" });
automations.start(async () => 0);
const edges = Number(option("edges") ?? "30");
let edge = 0;
const next = () => {
	if (edge++ >= edges) {
		automations.stop();
		gpio.close();
		exit(0);
		return;
	}
	drive(5, 0);
	Timer.set(() => {
		drivenAt = now();
		drive(5, 1);
		Timer.set(next, 5);
	}, 5);
};
next();
