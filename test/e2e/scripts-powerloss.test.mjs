// Stored scripts and their triggers under power loss (issue 28), with the host's
// fault injection (--crash-after, --crash-seed, --crash-model; hosts/lin/src/
// files.c), in both models (the page cache's: the lost write torn; littlefs's:
// what a file had since its last flush gone): power is cut at every storage operation of a series of changes (test/peer/
// scripts_powerloss.ts: saves, confirms, a schedule naming a script, a
// replacement, a disabling, a deletion with its schedule); the next start must
// find the scripts and the schedules "old or new, never torn": exactly the state
// after the changes acknowledged before the cut, or after the one in flight too,
// with no damaged file and no temp file left behind. The reboot side (the
// firmware finds them and its triggers fire) is in automations.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { TEST_MAP } from "../../tools/build.mjs";
import { SANITIZER_ERROR, VARIANTS, runHost } from "./xs.mjs";

const POWER_LOSS_EXIT = 86;
const OPS = 9;
const MODELS = ["page-cache", "lfs"];

function peer(variant, data, options) {
	const args = ["--modules", TEST_MAP, "--main", "test/peer/scripts_powerloss", "--data", data];
	for (const [key, value] of Object.entries(options)) args.push(`--${key}`, String(value));
	return runHost(args, { variant });
}

function found(r) {
	assert.equal(r.code, 0, r.stderr);
	assert.doesNotMatch(r.stderr, SANITIZER_ERROR);
	const line = r.stderr.split("\n").find((l) => l.startsWith("scripts-powerloss: found "));
	assert.ok(line, r.stderr);
	return JSON.parse(line.slice("scripts-powerloss: found ".length));
}

/** The state after the first n changes of the peer's series. */
function expected(n) {
	const scripts = new Map();
	const schedules = [];
	const steps = [
		() => scripts.set("door", { name: "door", state: "proposed", note: "", on: ["gpio 5 rising"], source: "gpio.write(4, trigger.level)" }),
		() => { scripts.get("door").state = "enabled"; },
		() => scripts.set("tick", { name: "tick", state: "proposed", note: "", on: [], source: "gpio.write(6, 1)" }),
		() => schedules.push({ script: "tick", spec: "*/5 * * * *" }),
		() => { scripts.get("tick").state = "enabled"; },
		() => scripts.set("door", { name: "door", state: "enabled", note: "", on: ["gpio 5 rising", "boot"], source: "gpio.write(4, 1 - trigger.level)" }),
		() => Object.assign(scripts.get("door"), { state: "disabled", note: "3 failures in a row" }),
		() => schedules.splice(0),
		() => scripts.delete("tick"),
	];
	for (const step of steps.slice(0, n)) step();
	return { scripts: [...scripts.values()].map((s) => ({ ...s })), schedules: schedules.map((e) => ({ ...e })) };
}

for (const variant of VARIANTS) {
	test(`a power cut at any storage operation of script and schedule changes leaves them old or new, never torn [${variant}]`, async () => {
		const root = mkdtempSync(join(tmpdir(), "xsclaw-scripts-"));
		try {
			const counted = await peer(variant, join(root, "count"), { ops: OPS, "count-writes": 1 });
			assert.equal(counted.code, 0, counted.stderr);
			assert.deepEqual(found(await peer(variant, join(root, "count"), { ops: 0 })), expected(OPS), "the series' end state, after a clean run");
			const operations = Number(/storage operations: (\d+)/.exec(counted.stderr)?.[1]);
			assert.ok(operations >= OPS * 3, `each change is several operations (${operations})`);
			for (let point = 0; point < operations * MODELS.length; point++) {
				const n = point % operations, model = MODELS[Math.floor(point / operations)];
				const data = join(root, `cut-${n}-${model}`);
				const cut = await peer(variant, data, { ops: OPS, "crash-after": n, "crash-seed": n + 1, "crash-model": model });
				assert.equal(cut.code, POWER_LOSS_EXIT, `cut after ${n} (${model}): ${cut.stderr}`);
				const done = cut.stderr.split("\n").filter((l) => l.startsWith("scripts-powerloss: done ")).length;
				const after = await peer(variant, data, { ops: 0 });
				const state = found(after);
				const old = expected(done), next = expected(Math.min(OPS, done + 1));
				assert.ok(JSON.stringify(state) === JSON.stringify(old) || JSON.stringify(state) === JSON.stringify(next),
					`cut after ${n}, ${model} model (${done} changes done): found ${JSON.stringify(state)}`);
				assert.doesNotMatch(after.stderr, /is damaged/, `cut after ${n}: no file was damaged`);
				for (const folder of ["caps", "sched"]) {
					const dir = join(data, "files", folder);
					const left = existsSync(dir) ? readdirSync(dir) : [];
					assert.ok(!left.some((name) => name.endsWith(".tmp") || name.includes(".bad")), `cut after ${n}: ${folder}: ${left}`);
				}
			}
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});
}
