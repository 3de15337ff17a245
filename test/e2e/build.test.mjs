// tools/build.mjs beside other builds and running tests (two `npm test` in one
// tree): a file is replaced whole and only when its bytes change, and one build
// of a tree runs at a time, the next waiting for it; a lock left by a build that
// died is taken over.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, readSync, closeSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT, withLock, writeIfChanged } from "../../tools/build.mjs";
import { withTempDir } from "./xs.mjs";
import { until } from "./firmware.mjs";

const BUILD_URL = pathToFileURL(join(ROOT, "tools", "build.mjs")).href;

test("writeIfChanged leaves a file with the same bytes alone and replaces a changed one whole (a reader keeps the old one)", withTempDir("xsclaw-build-")(async (dir) => {
	const path = join(dir, "m.js");
	assert.equal(writeIfChanged(path, "export default 1;\n"), true);
	const before = statSync(path);
	assert.equal(writeIfChanged(path, "export default 1;\n"), false, "same bytes: not written");
	const same = statSync(path);
	assert.equal(same.ino, before.ino);
	assert.equal(same.mtimeMs, before.mtimeMs);
	const reader = openSync(path, "r");
	try {
		assert.equal(writeIfChanged(path, "export default 2;\n"), true);
		assert.notEqual(statSync(path).ino, before.ino, "a new file renamed into place");
		const buffer = Buffer.alloc(64);
		const n = readSync(reader, buffer, 0, 64, 0);
		assert.equal(buffer.subarray(0, n).toString(), "export default 1;\n", "an open reader still reads the whole old file");
	} finally {
		closeSync(reader);
	}
	assert.equal(readFileSync(path, "utf8"), "export default 2;\n");
}));

// A process that takes the lock, logs, holds it until `release` exists, logs and lets go.
const holder = (lock, log, name, release) => `
import { appendFileSync, existsSync } from "node:fs";
const { withLock } = await import(${JSON.stringify(BUILD_URL)});
await withLock(${JSON.stringify(lock)}, async () => {
	appendFileSync(${JSON.stringify(log)}, "${name} in\\n");
	while (${release ? `!existsSync(${JSON.stringify(release)})` : "false"}) await new Promise((r) => setTimeout(r, 20));
	appendFileSync(${JSON.stringify(log)}, "${name} out\\n");
}, { log: (m) => process.stderr.write(m + "\\n"), pollMs: 20 });
`;

function run(code) {
	const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "ignore", "pipe"] });
	let stderr = "";
	child.stderr.on("data", (d) => (stderr += d));
	const exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
	const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
	exited.then(() => clearTimeout(timer));
	return { exited, stderr: () => stderr };
}

test("one build of a tree at a time: a second waits, says so, and runs after the first let go", withTempDir("xsclaw-build-")(async (dir) => {
	const lock = join(dir, ".lock"), log = join(dir, "log"), release = join(dir, "release");
	writeFileSync(log, "");
	const first = run(holder(lock, log, "first", release));
	await until(() => readFileSync(log, "utf8").includes("first in"), "the first to take the lock");
	const second = run(holder(lock, log, "second"));
	await until(() => /waiting for another build of this tree \(pid \d+\)/.test(second.stderr()), "the second to say it waits");
	assert.equal(readFileSync(log, "utf8"), "first in\n", "the second did not go in while the first held the lock");
	writeFileSync(release, "");
	assert.equal(await first.exited, 0, first.stderr());
	assert.equal(await second.exited, 0, second.stderr());
	assert.equal(readFileSync(log, "utf8"), "first in\nfirst out\nsecond in\nsecond out\n");
	assert.equal(existsSync(lock), false, "the lock is gone after the last");
}));

test("a lock left by a build that died, or by one killed before it wrote its pid, is taken over", withTempDir("xsclaw-build-")(async (dir) => {
	const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
	const lock = join(dir, ".lock");
	mkdirSync(lock);
	writeFileSync(join(lock, "pid"), `${dead.stdout}\n`);
	let ran = 0;
	await withLock(lock, () => { ran++; }, { waitMs: 60_000, pollMs: 20 });
	assert.equal(ran, 1);

	mkdirSync(lock);
	const old = new Date(Date.now() - 3600_000);
	utimesSync(lock, old, old);
	await withLock(lock, () => { ran++; }, { waitMs: 60_000, pollMs: 20 });
	assert.equal(ran, 2);
	assert.equal(existsSync(lock), false);
}));

test("a lock held by a live process past the wait gives a sentence naming the folder", withTempDir("xsclaw-build-")(async (dir) => {
	const lock = join(dir, ".lock");
	mkdirSync(lock);
	writeFileSync(join(lock, "pid"), `${process.pid}\n`);
	await assert.rejects(withLock(lock, () => assert.fail("ran under a held lock"), { waitMs: 100, pollMs: 20 }),
		/another build of this tree \(pid \d+\) has held .*\.lock for over 1 s; if no build is running, remove that folder/);
}));
