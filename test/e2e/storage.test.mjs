// Storage across host runs: persistence over a restart, corrupt key-value
// files, and power loss from the fault injection (--crash-after, --crash-seed,
// --count-writes; hosts/lin/src/files.c). The XS side is test/peer/storage-*.ts;
// this file checks the bytes left in the --data directory from node.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { APP_MAP, TEST_MAP } from "../../tools/build.mjs";
import { SANITIZER_ERROR, VARIANTS, assertClean, runHost, withTempDir } from "./xs.mjs";

const KV_LOG_BYTES = 4096;   // modules/budgets.ts
const POWER_LOSS_EXIT = 86;

const withData = withTempDir("xsclaw-storage-");

function peer(variant, data, name, options = {}, env = {}) {
	const args = ["--modules", TEST_MAP, "--main", `test/peer/storage-${name}`, "--data", data];
	for (const [key, value] of Object.entries(options)) args.push(`--${key}`, String(value));
	return runHost(args, { variant, env });
}

function cleanExit(r) {
	assert.equal(r.code, 0, r.stderr);
	assert.doesNotMatch(r.stderr, SANITIZER_ERROR);
}

// The JSON line a storage-kv read step prints, or the error message it caught.
function kvRead(r) {
	cleanExit(r);
	const line = r.stderr.split("\n").find((l) => l.startsWith("storage-kv: "));
	assert.ok(line, r.stderr);
	const rest = line.slice("storage-kv: ".length);
	return rest.startsWith("error: ") ? { error: rest.slice(7) } : JSON.parse(rest);
}

// Checks log.bin after a storage-writes run crashed at write n + 1 of chunk-byte writes.
function assertTornLog(data, n, chunk) {
	const bytes = readFileSync(join(data, "files", "log.bin"));
	const torn = bytes.length - n * chunk;
	assert.ok(torn >= 0 && torn < chunk, `file holds ${bytes.length} bytes: the first ${n} writes and less than one more`);
	for (let i = 0; i < bytes.length; i++) assert.equal(bytes[i], Math.floor(i / chunk) + 1, `byte ${i}`);
	return torn;
}

for (const variant of VARIANTS) {
	test(`symbolic links planted below the files root are never followed: not to read, write, list, make or move through [${variant}]`, withData(async (data) => {
		mkdirSync(join(data, "nvs"), { recursive: true });
		mkdirSync(join(data, "files", "workspace"), { recursive: true });
		writeFileSync(join(data, "nvs", "config.kv"), "telegram.token=SECRET-behind-a-link");
		writeFileSync(join(data, "files", "workspace", "plain.txt"), "plain");
		symlinkSync("../../nvs/config.kv", join(data, "files", "workspace", "config.kv"));
		symlinkSync("../../nvs", join(data, "files", "workspace", "nvs"));
		const r = await peer(variant, data, "links");
		cleanExit(r);
		const line = r.stderr.split("\n").find((l) => l.startsWith("storage-links: "));
		assert.ok(line, r.stderr);
		const out = JSON.parse(line.slice("storage-links: ".length));
		assert.doesNotMatch(line, /SECRET-behind-a-link/, "nothing behind a link was read");
		const LINK = /files: is a symbolic link \(not followed\): workspace\/(config\.kv|nvs)/;
		for (const name of ["readFileLink", "writeFileLink", "truncateFileLink", "readThroughDirectoryLink", "createThroughDirectoryLink", "scanDirectoryLink", "openDirectoryLink", "statusThroughDirectoryLink", "moveIntoDirectoryLink", "mkdirThroughDirectoryLink"])
			assert.match(out[name], LINK, `${name}: ${out[name]}`);
		assert.equal(out.linkStatus, "ok [true,false]", "a link's status is its own");
		assert.equal(out.scanWorkspace, `ok ${JSON.stringify(["config.kv", "nvs", "plain.txt"])}`, "a listing names links without following them");
		assert.equal(out.plainRead, `ok "plain"`);
		assert.equal(out.deleteFileLink, "ok true");
		assert.equal(readFileSync(join(data, "nvs", "config.kv"), "utf8"), "telegram.token=SECRET-behind-a-link", "the target is untouched: deleting the link removed the link");
		assert.ok(!existsSync(join(data, "files", "workspace", "config.kv")) && lstatSync(join(data, "files", "workspace", "nvs")).isSymbolicLink());
		assert.ok(!existsSync(join(data, "nvs", "new.txt")) && !existsSync(join(data, "nvs", "moved.txt")) && !existsSync(join(data, "nvs", "made")), "nothing was made behind a link");
	}));

	test(`files and key-value survive a host restart with the same --data, created when missing [${variant}]`, withData(async (parent) => {
		const data = join(parent, "not", "there", "yet");
		cleanExit(await peer(variant, data, "kv", { step: "write" }));
		assert.ok(existsSync(join(data, "nvs", "persist.kv")), "one file per namespace in <data>/nvs");
		assert.ok(existsSync(join(data, "files", "keep.txt")), "files live in <data>/files");
		const read = kvRead(await peer(variant, data, "kv", { step: "read" }));
		assert.deepEqual(read, { keys: ["blob", "greeting"], strings: { greeting: "héllo" }, blob: [1, 2, 3], file: "kept" });
	}));

	test(`files and key-value work again after reboot() recreates the machine [${variant}]`, withData(async (data) => {
		const r = await peer(variant, data, "reboot", { "count-writes": 1 });
		cleanExit(r);
		assert.match(r.stderr, /storage-reboot: boot 2 read "first boot" scan before-reboot.txt status true\n/);
		assert.match(r.stderr, /xsclaw: storage operations: 3\n$/, "one count for the whole process");
	}));

	test(`a corrupt key-value file is a clear error at open, and the host carries on [${variant}]`, withData(async (data) => {
		cleanExit(await peer(variant, data, "kv", { step: "write" }));
		const path = join(data, "nvs", "persist.kv");
		const good = readFileSync(path);
		const cases = [
			["bad magic", Buffer.concat([Buffer.from("JUNK"), good.subarray(4)])],
			["bad checksum", Buffer.concat([good.subarray(0, 12), Buffer.from([good[12] ^ 0xFF]), good.subarray(13)])],
			["impossible size", good.subarray(0, good.length - 3)],
			["impossible size", good.subarray(0, 5)],
			["impossible size", Buffer.alloc(30_000)],
		];
		for (const [reason, bytes] of cases) {
			writeFileSync(path, bytes);
			const read = kvRead(await peer(variant, data, "kv", { step: "read" }));
			assert.equal(read.error, `key-value: ${path} is corrupt (${reason}); delete that file to start the namespace afresh`);
		}
		rmSync(path);
		cleanExit(await peer(variant, data, "kv", { step: "write" }));
		assert.equal(kvRead(await peer(variant, data, "kv", { step: "read" })).strings.greeting, "héllo", "after deleting it the namespace starts afresh");
	}));

	test(`a key-value write goes in place into the file's log; a full log or a cut record makes a fresh file [${variant}]`, withData(async (data) => {
		cleanExit(await peer(variant, data, "kv", { step: "write" }));
		const path = join(data, "nvs", "persist.kv");
		const first = statSync(path);
		// "greeting" made the file (image, zeroed log); "blob" is a record in the log.
		const image = 8 + 4 + 8 + "héllo".length + 1 + 4;
		assert.equal(first.size, image + KV_LOG_BYTES);
		cleanExit(await peer(variant, data, "kv", { step: "update" }));
		const updated = statSync(path);
		assert.equal(updated.ino, first.ino, "appended in place: the same file");
		assert.equal(updated.size, first.size, "the file keeps its size");
		assert.deepEqual(kvRead(await peer(variant, data, "kv", { step: "read" })).strings, { greeting: "héllo", v: "new-value" });
		// A record that fails its check (a cut write) ends the log: what follows is not read.
		const bytes = readFileSync(path);
		const blob = bytes.indexOf(Buffer.from("blob"), image);
		const cut = Buffer.from(bytes);
		cut[blob + 4] ^= 0xFF;
		writeFileSync(path, cut);
		const read = kvRead(await peer(variant, data, "kv", { step: "read" }));
		assert.deepEqual(read.keys, ["greeting"], "the cut record and the records after it are not applied");
		assert.equal(read.blob, null);
		cleanExit(await peer(variant, data, "kv", { step: "update" }));
		assert.notEqual(statSync(path).ino, first.ino, "after a cut record the next write makes a fresh file");
		assert.deepEqual(kvRead(await peer(variant, data, "kv", { step: "read" })).strings, { greeting: "héllo", v: "new-value" });
		assert.equal(readFileSync(path).readUInt32LE(4), 2, "the fresh file's image holds greeting and v");
		cleanExit(await peer(variant, data, "kv", { step: "many", count: 30 }));
		assert.equal(readFileSync(path).readUInt32LE(4), 3, "a full log made a fresh file: its image holds keep too");
		const many = kvRead(await peer(variant, data, "kv", { step: "read" }));
		assert.equal(many.strings.v, `value-30-${"x".repeat(300)}`);
		assert.equal(many.strings.keep, "kept");
	}));

	test(`key-value writes cut by power loss at every point, across log appends and rewrites, leave the old or the new value [${variant}]`, withData(async (data) => {
		const count = 30;   // ~13 records fill the log: two rewrites among the commits
		const value = (i) => (i ? `value-${i}-${"x".repeat(300)}` : undefined);
		const outcomes = new Set();
		for (let done = 0; done <= count; done++) {
			const run = mkdtempSync(join(data, "run-"));
			const crashed = await peer(variant, run, "kv", { step: "many", count, "crash-after": done, "crash-seed": done + 1 });
			assert.equal(crashed.code, POWER_LOSS_EXIT, crashed.stderr);
			const read = kvRead(await peer(variant, run, "kv", { step: "read" }));
			assert.ok(!read.error, `the namespace opens after a crash after ${done}: ${read.error}`);
			if (done === 0) {
				assert.ok(["kept", undefined].includes(read.strings.keep));
				continue;
			}
			assert.equal(read.strings.keep, "kept", `an earlier key survives a crash after ${done}`);
			const v = read.strings.v;
			assert.ok(v === value(done - 1) || v === value(done), `after ${done} commits: the old or the new value, got ${String(v).slice(0, 12)}`);
			outcomes.add(v === value(done) ? "new" : "old");
			cleanExit(await peer(variant, run, "kv", { step: "many", count: 2 }));
			assert.equal(kvRead(await peer(variant, run, "kv", { step: "read" })).strings.v, value(2), "the namespace takes writes after the crash");
		}
		assert.deepEqual([...outcomes].sort(), ["new", "old"], "both crash outcomes are exercised across seeds");
	}));

	test(`--crash-after N exits 86 leaving the first N writes and a torn prefix of the next [${variant}]`, withData(async (data) => {
		const chunk = 100;
		for (const [n, seed] of [[0, 1], [3, 7], [9, 2]]) {
			const r = await peer(variant, data, "writes", { writes: 10, chunk, "crash-after": n, "crash-seed": seed });
			assert.equal(r.code, POWER_LOSS_EXIT, r.stderr);
			assert.equal(r.stderr, `xsclaw: power lost after ${n} writes\n`, "one line, and no JS ran after the crash");
			assertTornLog(data, n, chunk);
		}
		const whole = await peer(variant, data, "writes", { writes: 10, chunk, "crash-after": 10, "count-writes": 1 });
		cleanExit(whole);
		assert.match(whole.stderr, /storage-writes: done\nxsclaw: storage operations: 10\n$/);
		assert.equal(statSync(join(data, "files", "log.bin")).size, 10 * chunk, "N at or past the last write: no crash");
	}));

	test(`the torn length is fixed by the seed and varies between seeds [${variant}]`, withData(async (data) => {
		const chunk = 1000;
		const tornFor = async (seed) => {
			const r = await peer(variant, data, "writes", { writes: 5, chunk, "crash-after": 4, "crash-seed": seed });
			assert.equal(r.code, POWER_LOSS_EXIT, r.stderr);
			return assertTornLog(data, 4, chunk);
		};
		const first = await tornFor(11);
		assert.equal(await tornFor(11), first, "same seed, same tear");
		const lengths = new Set([first, await tornFor(12), await tornFor(13), await tornFor(14)]);
		assert.ok(lengths.size >= 2, `different seeds tear differently (got ${[...lengths]})`);
	}));

	test(`XSCLAW_CRASH_AFTER and XSCLAW_CRASH_SEED work like the flags [${variant}]`, withData(async (data) => {
		const flags = await peer(variant, data, "writes", { writes: 4, chunk: 500, "crash-after": 2, "crash-seed": 5 });
		const flagged = readFileSync(join(data, "files", "log.bin"));
		const env = await peer(variant, data, "writes", { writes: 4, chunk: 500 }, { XSCLAW_CRASH_AFTER: "2", XSCLAW_CRASH_SEED: "5" });
		assert.equal(env.code, POWER_LOSS_EXIT, env.stderr);
		assert.equal(env.stderr, flags.stderr);
		assert.deepEqual(readFileSync(join(data, "files", "log.bin")), flagged);
	}));

	test(`every kind of storage operation counts, and a crash at each leaves exactly those before it done [${variant}]`, withData(async (data) => {
		const counted = await peer(variant, data, "ops", { "count-writes": 1 });
		cleanExit(counted);
		assert.match(counted.stderr, /xsclaw: storage operations: 6\n$/);
		// After N operations: the size of ops.bin and of ops-moved.bin (null: absent),
		// and the values key "a" may have. A key-value commit that loses power may
		// or may not have landed (see keyvalue.c), so both are allowed there.
		const expected = [
			[null, null, [undefined]],     // the first write is torn
			[8, null, [undefined]],        // write done, flush lost
			[8, null, [undefined]],        // flushed, setSize lost
			[4, null, [undefined]],        // setSize done, move lost
			[null, 4, [undefined, "1"]],   // moved, key-value write cut
			[null, 4, ["1", undefined]],   // written, key-value delete cut
		];
		for (let n = 0; n < expected.length; n++) {
			const run = mkdtempSync(join(data, "run-"));
			const r = await peer(variant, run, "ops", { "crash-after": n, "crash-seed": 3 });
			assert.equal(r.code, POWER_LOSS_EXIT, `crash after ${n}: ${r.stderr}`);
			const size = (name) => (existsSync(join(run, "files", name)) ? statSync(join(run, "files", name)).size : null);
			const [source, moved, values] = expected[n];
			if (n === 0) assert.ok(size("ops.bin") < 8, "the first write is torn");
			else assert.equal(size("ops.bin"), source, `ops.bin after ${n}`);
			assert.equal(size("ops-moved.bin"), moved, `ops-moved.bin after ${n}`);
			const kv = join(run, "nvs", "ops.kv");
			const hasA = existsSync(kv) && readFileSync(kv).includes(Buffer.from([1, 1, 1, 0, 0x61, 0x31]));
			assert.ok(values.includes(hasA ? "1" : undefined), `key "a" after ${n}: ${hasA}`);
		}
	}));

	test(`a key-value commit cut by power loss leaves the old or the new value, never garbage [${variant}]`, withData(async (data) => {
		const outcomes = new Set();
		for (let seed = 1; seed <= 6; seed++) {
			const run = mkdtempSync(join(data, "run-"));
			const crashed = await peer(variant, run, "kv", { step: "update", "crash-after": 1, "crash-seed": seed });
			assert.equal(crashed.code, POWER_LOSS_EXIT, crashed.stderr);
			assert.equal(crashed.stderr, "xsclaw: power lost after 1 writes\n");
			const read = kvRead(await peer(variant, run, "kv", { step: "read" }));
			assert.ok(!read.error, `the namespace opens after the crash: ${read.error}`);
			assert.deepEqual(read.keys, ["v"]);
			assert.ok(["old", "new-value"].includes(read.strings.v), `old or new, got ${JSON.stringify(read.strings.v)}`);
			outcomes.add(read.strings.v);
			cleanExit(await peer(variant, run, "kv", { step: "update" }));
			assert.equal(kvRead(await peer(variant, run, "kv", { step: "read" })).strings.v, "new-value", "a later commit replaces any torn temp file");
		}
		assert.deepEqual([...outcomes].sort(), ["new-value", "old"], "both crash outcomes are exercised across seeds");
	}));
}

// The mount guard (issue 26; host/storage, util/io): a storage that cannot be
// mounted (here <data>/files holding a file, as a board's partition holding
// what littlefs cannot mount) is not formatted: the firmware boots without it,
// the console says why and how to recover, a reboot changes nothing, and only
// factory-reset confirm erases it; then the firmware formats and works.
for (const variant of VARIANTS) {
	test(`a storage that cannot be mounted is refused, kept byte for byte, and erased only by factory-reset confirm [${variant}]`, withData(async (data) => {
		mkdirSync(data, { recursive: true });
		const image = Buffer.alloc(8192);
		for (let i = 0; i < image.length; i++) image[i] = (i * 131 + 7) & 255;
		writeFileSync(join(data, "files"), image);
		const refused = await runHost(["--modules", APP_MAP, "--data", data], { variant, input: "memory add likes tea\nreboot\nmemory list\n" });
		assertClean(refused);
		const REFUSED = /warning: the storage was not mounted, so sessions, memory, files, schedules and chat pairing are not available: \S+\/files is not a directory \(8192 bytes of something else\)\. Nothing on it was changed; factory-reset confirm erases it/g;
		assert.equal(refused.stdout.match(REFUSED)?.length, 2, `said at both boots:\n${refused.stdout}`);
		assert.doesNotMatch(refused.stdout, /saved as m\d/, "nothing is stored");
		assert.ok(readFileSync(join(data, "files")).equals(image), "the storage is kept byte for byte");
		const reset = await runHost(["--modules", APP_MAP, "--data", data], { variant, input: "factory-reset confirm\nmemory add likes tea\nmemory list\n" });
		assertClean(reset);
		assert.match(reset.stdout, /factory reset: erased the storage \(it could not be mounted\), wiped 0 settings; restarting…\n/);
		const after = reset.stdout.split("restarting…\n")[1] ?? "";
		assert.doesNotMatch(after, /the storage was not mounted/, reset.stdout);
		assert.match(after, /saved as m1\n[\s\S]*m1 +\S+ +likes tea/, reset.stdout);
		assert.ok(statSync(join(data, "files")).isDirectory(), "formatted: the storage is a directory again");
		const kept = await runHost(["--modules", APP_MAP, "--data", data], { variant, input: "memory list\n" });
		assertClean(kept);
		assert.match(kept.stdout, /m1 +\S+ +likes tea/, "what is written after the reset stays");
	}));
}

test("a bad --crash-after or --count-writes is a usage error (64)", withData(async (data) => {
	for (const [option, value] of [["crash-after", "soon"], ["crash-after", "-1"], ["crash-seed", "1x"], ["count-writes", "2"]]) {
		const r = await peer("release", data, "writes", { [option]: value });
		assert.equal(r.code, 64, `${option} ${value}: ${r.stderr}`);
		assert.match(r.stderr, new RegExp(`^xsclaw: --${option} (must be a whole number >= 0|takes 0 or 1)`));
	}
}));
