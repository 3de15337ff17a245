// Session files (modules/agent/store/session.ts, format.ts): every record kind
// round-trips, and each kind of damage a power loss or a bad flash leaves is
// detected at open, repaired with one clear log line, and never throws.
import files from "embedded:storage/files";
import type { Directory, File, FileMode } from "embedded:storage/files";
import { test, assert } from "testing";
import type { ContextRecord } from "core/types";
import { SessionFile, type NewRecord } from "store/session";
import { ENTRY_BYTES, HEADER_BYTES, encodeFrame } from "store/format";
import { SESSION_INDEX_SYNC_APPENDS, SESSION_UNSYNCED_BATCHES_MAX, SESSION_WAITING_FRAMES_MAX_BYTES } from "budgets";
import { crc32 } from "util/crc32";
import { replacing, replacingFileMembers } from "./files_fakes";
import { generator, seedFor } from "test/fuzz";

/** Where this file's random input starts (--seed N replays another run). */
const SEED = seedFor(12345);

let sequence = 0;
function fresh(): string {
	const id = `t${++sequence}-file`;
	SessionFile.create(files, id);
	return id;
}
function logger() {
	const lines: string[] = [];
	return { lines, log: (line: string) => void lines.push(line) };
}
const dat = (id: string) => `sessions/${id}.dat`;
const idx = (id: string) => `sessions/${id}.idx`;
function exists(path: string): boolean {
	try { files.status(path); return true; } catch { return false; }
}
function bytesOf(path: string): Uint8Array {
	const f = files.openFile({ path, mode: "r" });
	try { return new Uint8Array(f.read(f.status().size, 0)); } finally { f.close(); }
}
function put(path: string, bytes: Uint8Array, position?: number): void {
	const f = files.openFile({ path, mode: exists(path) ? "r+" : "w" });
	try {
		if (position === undefined) { f.setSize(0); f.write(bytes, 0); } else f.write(bytes, position);
	} finally { f.close(); }
}
function sizeOf(path: string): number {
	return files.status(path).size;
}

const KINDS: ContextRecord[] = [
	{ kind: "user", message: { role: "user", content: "what is the temperature? — «ünïcödé» 🌡" } },
	{ kind: "user", message: { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "https://example.com/a.png" } }] } },
	{ kind: "assistant_tool", message: { role: "assistant", content: null, reasoning_content: "need the sensor", tool_calls: [{ id: "c1", type: "function", function: { name: "gpio_read", arguments: "{\"pin\":4}" } }], raw: { protocol: "anthropic", message: { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "gpio_read", input: { pin: 4 } }] } } } },
	{ kind: "tool_result", message: { role: "tool", tool_call_id: "c1", content: "{\"level\":1}", is_error: true } },
	{ kind: "assistant_final", message: { role: "assistant", content: "It is 21 °C." } },
	{ kind: "failure_note", message: { role: "assistant", content: "(no answer: request cancelled; tools run: gpio_read)" } },
];

function records(list: ContextRecord[], request_id = 1, completeLast = false): NewRecord[] {
	return list.map((r, i) => ({ ...r, turn_completed: completeLast && i === list.length - 1, time: 1_700_000_000_000 + i, request_id }));
}

function userRecords(n: number, start = 0): NewRecord[] {
	return records(Array.from({ length: n }, (_, i) => ({ kind: "user" as const, message: { role: "user" as const, content: `message ${start + i}` } })));
}

function openWith(id: string) {
	const { lines, log } = logger();
	const session = SessionFile.open(files, id, log);
	return { session, lines };
}

test("every record kind round-trips with its flags, time and request id, also after reopening", () => {
	const id = fresh();
	const { session, lines } = openWith(id);
	session.append(records(KINDS, 7, true));
	const check = (s: SessionFile) => {
		const back = s.read(0, s.count);
		assert.equal(back.length, KINDS.length);
		back.forEach((r, i) => {
			assert.deepEqual({ kind: r.kind, message: r.message }, KINDS[i], `record ${i}`);
			assert.equal(r.request_id, 7);
			assert.equal(r.time, 1_700_000_000_000 + i);
			assert.equal(r.turn_completed, i === KINDS.length - 1);
			assert.equal(r.index, i);
		});
	};
	check(session);
	session.close();
	const again = openWith(id);
	check(again.session);
	assert.deepEqual([...lines, ...again.lines], [], "a clean pair of files opens without a word");
	again.session.close();
});

test("a torn record at the end is cut at open with one log line, and the records before it stay", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(3));
	const size = session.size;
	session.close();
	const frame = encodeFrame(1, 0, 9, 0, new Uint8Array(ArrayBuffer.fromString(JSON.stringify({ role: "user", content: "x".repeat(300) }))));
	put(dat(id), frame.subarray(0, 150), size);
	const { session: reopened, lines } = openWith(id);
	assert.equal(lines.length, 1, lines.join("\n"));
	assert.match(lines[0], /cut a record torn by a power loss \(150 bytes/);
	assert.equal(reopened.count, 3);
	assert.equal(sizeOf(dat(id)), size, "the torn bytes are gone");
	assert.equal((reopened.read(2, 3)[0].message as { content: string }).content, "message 2");
	reopened.close();
});

test("a flipped byte inside a record is found when it is read: left out, the session marked damaged; open with verify keeps the original as .bad and the rest", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(5));
	session.close();   // the index entries are written with the index flush (here: at close)
	const index = bytesOf(idx(id));
	const third = new DataView(index.buffer).getUint32(HEADER_BYTES + 2 * ENTRY_BYTES, true);
	const data = bytesOf(dat(id));
	data[third + 30] ^= 0x01;
	put(dat(id), data);
	const { session: trusting, lines: quiet } = openWith(id);
	assert.deepEqual(quiet, [], "the index proves the layout: open reads no record");
	assert.equal(trusting.damaged, false);
	assert.deepEqual(trusting.read(0, trusting.count).map((r) => (r.message as { content: string }).content), ["message 0", "message 1", "message 3", "message 4"]);
	assert.equal(trusting.damaged, true, "the failed CRC marks the session for a whole-file check");
	trusting.close();
	const { lines, log } = logger();
	const reopened = SessionFile.open(files, id, log, { verify: true });
	assert.equal(lines.length, 1, lines.join("\n"));
	assert.match(lines[0], /1 damaged stretch\(es\) \(\d+ bytes\) left out; 4 intact records kept; the original is kept as sessions\/.*\.dat\.bad/);
	assert.ok(exists(`${dat(id)}.bad`), "the damaged original is kept");
	assert.deepEqual(reopened.read(0, reopened.count).map((r) => (r.message as { content: string }).content), ["message 0", "message 1", "message 3", "message 4"]);
	assert.equal(reopened.damaged, false);
	reopened.close();
});

test("open() of a clean session reads its index and two frame headers, not the data file; a batch whose index write was lost is added from the data", () => {
	const id = fresh();
	const { session } = openWith(id);
	for (let i = 0; i < 40; i += 10) session.append(userRecords(10, i));
	session.close();
	const indexBefore = bytesOf(idx(id));
	const { session: more } = openWith(id);
	more.append(userRecords(3, 40));
	more.close();
	const watched = readWatched();
	const { lines, log } = logger();
	const clean = SessionFile.open(watched.root, id, log);
	assert.deepEqual(lines, []);
	assert.ok(watched.largest() <= HEADER_BYTES + 43 * ENTRY_BYTES, `largest read ${watched.largest()} bytes`);
	assert.equal(clean.count, 43);
	clean.close();
	put(idx(id), indexBefore);   // as if the power failed between the last batch's data and index writes
	const { session: reopened, lines: repaired } = openWith(id);
	assert.equal(repaired.length, 1, repaired.join("\n"));
	assert.match(repaired[0], /the index lacked the last 3 record\(s\).*added them/);
	assert.equal(reopened.count, 43);
	assert.deepEqual(bytesOf(idx(id)).length, HEADER_BYTES + 43 * ENTRY_BYTES);
	assert.equal((reopened.readLast(1)[0].message as { content: string }).content, "message 42");
	reopened.close();
	const again = openWith(id);
	assert.deepEqual(again.lines, [], "the repair holds");
	again.session.close();
});

test("the data is flushed with every batch, the index every SESSION_INDEX_SYNC_APPENDS batches and at close; an index cut back to its last flush is completed at open", () => {
	const id = fresh();
	const flushes: string[] = [];
	let indexAtFlush: Uint8Array = new Uint8Array(0);   // what a power loss would leave of the index on littlefs
	const root = replacingFileMembers(files, (key, real) => key !== "flush" ? real : () => {
		(real as () => void)();
		flushes.push("flush");
	});
	const { log, lines } = logger();
	const session = SessionFile.open(root, id, log);
	const batches = SESSION_INDEX_SYNC_APPENDS + 3;
	const perBatch: number[] = [];
	for (let i = 0; i < batches; i++) {
		const before = flushes.length;
		session.append(userRecords(2, 2 * i));
		perBatch.push(flushes.length - before);
		if (perBatch[i] === 2) indexAtFlush = bytesOf(idx(id));
	}
	const expected = Array.from({ length: batches }, (_, i) => ((i + 1) % SESSION_INDEX_SYNC_APPENDS === 0 ? 2 : 1));
	assert.deepEqual(perBatch, expected, "one data flush per batch, one index flush per SESSION_INDEX_SYNC_APPENDS");
	const beforeClose = flushes.length;
	session.close();
	assert.equal(flushes.length, beforeClose + 1, "close flushes the index written since");
	assert.equal(indexAtFlush.length, HEADER_BYTES + 2 * SESSION_INDEX_SYNC_APPENDS * ENTRY_BYTES);
	put(idx(id), indexAtFlush);   // the power failed: the index as it was at its last flush
	const { session: reopened, lines: repaired } = openWith(id);
	assert.equal(repaired.length, 1, repaired.join("\n"));
	assert.match(repaired[0], /the index lacked the last 6 record\(s\).*added them/);
	assert.equal(reopened.count, 2 * batches);
	assert.equal((reopened.readLast(1)[0].message as { content: string }).content, `message ${2 * batches - 1}`);
	reopened.close();
	assert.deepEqual(lines, []);
});

/** The files root with every write and flush of a file opened through it noted in `ops` ("write dat", "flush idx", ...), in order. */
function writesWatched(): { ops: string[]; root: Directory } {
	const ops: string[] = [];
	const watch = (file: File, path: string) => replacing(file, (k, r) => k !== "write" && k !== "flush" ? r : (...args: unknown[]) => {
		ops.push(`${String(k)} ${path.slice(-3)}`);
		return (r as (...a: unknown[]) => unknown)(...args);
	});
	const root = replacing(files, (key, real) => key !== "openFile" ? real
		: (options: { path: string; mode?: FileMode }) => watch((real as Directory["openFile"])(options), options.path));
	return { ops, root };
}

test("a turn's batches wait for its committing batch: one data flush per commit (or per SESSION_UNSYNCED_BATCHES_MAX batches), data before index, the rest at close", () => {
	const id = fresh();
	const { ops, root } = writesWatched();
	const { log, lines } = logger();
	const session = SessionFile.open(root, id, log);
	const flushes = (kind: string) => ops.filter((o) => o === `flush ${kind}`).length;
	// A turn: question, tool round, answer; only the answer commits.
	session.append(userRecords(1, 0), false);
	session.append(records([KINDS[2], KINDS[3]], 1), false);
	assert.deepEqual(ops, [], "nothing written before the turn's last batch: its frames and index entries wait in memory");
	assert.equal(session.unsynced, 2);
	const waiting = session.readLast(3);
	assert.deepEqual(waiting.map((r) => r.kind), ["user", KINDS[2].kind, KINDS[3].kind], "waiting appends read back");
	assert.deepEqual(waiting.slice(1).map((r) => r.message), [KINDS[2].message, KINDS[3].message], "their messages from the frames in memory");
	session.append(records([KINDS[4]], 1, true), true);
	assert.deepEqual(ops, ["write dat", "flush dat", "write idx"], "one data write and one flush for the turn, then one index write");
	assert.equal(session.unsynced, 0);
	// A turn of many rounds: flushed every SESSION_UNSYNCED_BATCHES_MAX batches.
	for (let i = 0; i < 2 * SESSION_UNSYNCED_BATCHES_MAX; i++) session.append(userRecords(1, 10 + i), false);
	assert.equal(flushes("dat"), 3, `${2 * SESSION_UNSYNCED_BATCHES_MAX} waiting batches, two flushes`);
	// Committed turns until the index has waited SESSION_INDEX_SYNC_APPENDS appends (bounded by that count).
	let committed = 0;
	while (flushes("idx") === 0 && committed < SESSION_INDEX_SYNC_APPENDS) session.append(userRecords(1, 30 + committed++), true);
	session.append(userRecords(1, 50), false);
	// The index is flushed only right after a data flush, never ahead of the data.
	ops.forEach((op, i) => {
		if (op !== "flush idx") return;
		const lastData = ops.slice(0, i).filter((o) => o.endsWith("dat")).at(-1);
		assert.equal(lastData, "flush dat", `op ${i}: the index flushed while data written before it waits`);
	});
	assert.ok(flushes("idx") >= 1, "the index was flushed once enough appends waited");
	ops.forEach((op, i) => assert.ok(op !== "write idx" || ops[i - 1] === "flush dat", `op ${i}: the index entries are written right after the data flush that commits their records`));
	assert.equal(ops.filter((o) => o === "write idx").length, flushes("dat"), "one index write (every waiting entry) per data flush");
	assert.equal(ops.filter((o) => o === "write dat").length, flushes("dat"), "one data write (every waiting frame) per data flush");
	const beforeClose = ops.length;
	session.close();
	assert.deepEqual(ops.slice(beforeClose), ["write dat", "flush dat", "write idx", "flush idx"], "close commits the waiting batch, data first, then its index entries");
	const { session: reopened, lines: repaired } = openWith(id);
	assert.deepEqual(repaired, []);
	assert.equal(reopened.count, 4 + 2 * SESSION_UNSYNCED_BATCHES_MAX + committed + 1);
	reopened.close();
	assert.deepEqual(lines, []);
});

test("tool rounds wait in memory up to SESSION_WAITING_FRAMES_MAX_BYTES: more are written at once (with those waiting), unflushed; reads find each where it is", () => {
	const id = fresh();
	const { ops, root } = writesWatched();
	const { log, lines } = logger();
	const session = SessionFile.open(root, id, log);
	const round = (n: number, bytes: number): NewRecord[] => records([
		{ kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: [{ id: `c${n}`, type: "function", function: { name: "probe", arguments: "{}" } }] } },
		{ kind: "tool_result", message: { role: "tool", tool_call_id: `c${n}`, content: `${n}:${"r".repeat(bytes)}` } },
	]);
	session.append(userRecords(1, 0), true);
	const committed = session.size;
	ops.length = 0;
	session.append(round(1, 100), false);
	assert.deepEqual(ops, [], "a small round waits");
	assert.equal(sizeOf(dat(id)), committed, "the file does not hold it");
	assert.ok(session.size > committed);
	session.append(round(2, SESSION_WAITING_FRAMES_MAX_BYTES), false);
	assert.deepEqual(ops, ["write dat"], "a round over the bound goes out at once with the waiting one, in one write, unflushed");
	assert.equal(sizeOf(dat(id)), session.size);
	session.append(round(3, 50), false);
	assert.deepEqual(ops, ["write dat"], "the next small round waits again");
	assert.equal(session.unsynced, 3);
	const contents = session.readLast(6).map((r) => r.message.role === "assistant" ? r.message.tool_calls![0].id : String(r.message.content).split(":")[0]);
	assert.deepEqual(contents, ["c1", "1", "c2", "2", "c3", "3"], "read back from the file and from memory");
	session.append(records([KINDS[4]], 1, true), true);
	assert.deepEqual(ops, ["write dat", "write dat", "flush dat", "write idx"]);
	session.close();
	const { session: reopened, lines: repaired } = openWith(id);
	assert.deepEqual(repaired, []);
	assert.equal(reopened.count, 8);
	assert.deepEqual(reopened.read(0, 8).map((r) => r.kind), ["user", ...Array.from({ length: 3 }, () => ["assistant_tool", "tool_result"]).flat(), "assistant_final"]);
	// Close commits two waiting rounds in one write.
	reopened.append(round(5, 10), false);
	reopened.append(round(6, 20), false);
	reopened.close();
	const { session: last, lines: none } = openWith(id);
	assert.deepEqual(none, []);
	assert.deepEqual(last.readLast(4).map((r) => r.message.role === "assistant" ? r.message.tool_calls![0].id : String(r.message.content).split(":")[0]), ["c5", "5", "c6", "6"]);
	last.close();
	reopened.close();
	assert.deepEqual(lines, []);
});

test("a truncated index is rebuilt from the data with one log line", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(4));
	session.close();
	const f = files.openFile({ path: idx(id), mode: "r+" });
	f.setSize(HEADER_BYTES + ENTRY_BYTES + 5);
	f.close();
	const { session: reopened, lines } = openWith(id);
	assert.deepEqual(lines.length, 1);
	assert.match(lines[0], /the index ends in a partial entry \(5 bytes\): rebuilt it from the data file \(4 records\)/);
	assert.equal(reopened.count, 4);
	assert.equal(sizeOf(idx(id)), HEADER_BYTES + 4 * ENTRY_BYTES);
	reopened.close();
});

test("an index longer than the data is rebuilt from the data", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(3));
	session.close();
	const index = bytesOf(idx(id));
	put(idx(id), index.subarray(HEADER_BYTES, HEADER_BYTES + 2 * ENTRY_BYTES), index.length);
	const { session: reopened, lines } = openWith(id);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /the index lists 5 records, the data file holds 3: rebuilt/);
	assert.equal(reopened.count, 3);
	reopened.close();
});

// files with every File's read(count) recorded: the largest count asked for.
function readWatched(): { root: Directory; largest: () => number } {
	let largest = 0;
	const root = replacingFileMembers(files, (key, real) => key !== "read" ? real : (what: number | ArrayBuffer, position: number) => {
		if (typeof what === "number") largest = Math.max(largest, what);
		return (real as File["read"])(what as number, position);
	});
	return { root, largest: () => largest };
}

test("open() reads no more of a huge index file than the data calls for", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(3));
	session.close();
	const f = files.openFile({ path: idx(id), mode: "r+" });
	f.setSize(1 << 20);
	f.close();
	const watched = readWatched();
	const { lines, log } = logger();
	const reopened = SessionFile.open(watched.root, id, log);
	assert.ok(watched.largest() <= HEADER_BYTES + 3 * ENTRY_BYTES, `largest read ${watched.largest()} bytes`);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /the index ends in a partial entry|the index lists \d+ records, the data file holds 3: rebuilt/);
	assert.equal(reopened.count, 3);
	assert.equal(sizeOf(idx(id)), HEADER_BYTES + 3 * ENTRY_BYTES);
	reopened.close();
});

test("a missing index is rebuilt from the data", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(3));
	session.close();
	files.delete(idx(id));
	const { session: reopened, lines } = openWith(id);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /the index file is missing: rebuilt it from the data file \(3 records\)/);
	assert.equal(reopened.readLast(1)[0].index, 2);
	reopened.close();
});

test("an index entry pointing at garbage is found and the index rebuilt", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(3));
	session.close();
	const offset = new Uint8Array(4);
	new DataView(offset.buffer).setUint32(0, 40, true);
	put(idx(id), offset, HEADER_BYTES + ENTRY_BYTES);
	const { session: reopened, lines } = openWith(id);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /index entry 1 does not point at its record/);
	assert.equal((reopened.read(1, 2)[0].message as { content: string }).content, "message 1");
	reopened.close();
});

test("a data file of random bytes is kept as .bad and the session opens empty and usable", () => {
	const id = fresh();
	const noise = new Uint8Array(700);
	for (let i = 0; i < noise.length; i++) noise[i] = (i * 73 + 11) & 0xFF;
	put(dat(id), noise);
	const { session, lines } = openWith(id);
	assert.equal(lines.length, 1, lines.join("\n"));
	assert.match(lines[0], /the data file cannot be read \(it does not start with the session file magic\); it was kept as sessions\/.*\.dat\.bad/);
	assert.equal(session.count, 0);
	assert.deepEqual(bytesOf(`${dat(id)}.bad`), noise, "kept byte for byte");
	session.append(userRecords(1));
	assert.equal(session.read(0, 1).length, 1);
	session.close();
});

test("random bytes after the last record are damage, not a power loss: cut and kept aside", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(2));
	const size = session.size;
	session.close();
	put(dat(id), new Uint8Array(64).fill(0x41), size);
	const { session: reopened, lines } = openWith(id);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /damaged bytes at the end \(64 bytes\) left out; 2 intact records kept/);
	assert.equal(reopened.count, 2);
	assert.equal(sizeOf(`${dat(id)}.bad`), size + 64);
	reopened.close();
});

test("open never throws on seeded random damage to either file, and the session works afterwards", () => {
	const random = generator(SEED);
	for (let round = 0; round < 40; round++) {
		const id = fresh();
		const { session } = openWith(id);
		session.append(records(KINDS, round));
		session.close();
		const path = random(2) ? dat(id) : idx(id);
		const bytes = bytesOf(path);
		const action = random(3);
		if (action === 0) bytes[random(bytes.length)] ^= 1 << random(8);
		if (action === 1) put(path, bytes.subarray(0, random(bytes.length)));
		else {
			for (let i = 0; i < 8; i++) bytes[random(bytes.length)] = random(256);
			put(path, bytes);
		}
		let { session: reopened } = openWith(id);
		let all = reopened.read(0, reopened.count);
		if (reopened.damaged) {
			// What the manager does when a read finds damage the index could not show: check the whole file.
			reopened.close();
			reopened = SessionFile.open(files, id, () => {}, { verify: true });
			all = reopened.read(0, reopened.count);
		}
		assert.equal(all.length, reopened.count, `round ${round}: every listed record reads back after the repair`);
		assert.ok(all.length <= KINDS.length, `round ${round}`);
		reopened.append(userRecords(1));
		assert.equal(reopened.readLast(1)[0].message.content, "message 0", `round ${round}: appends after the repair`);
		reopened.close();
		const { session: third, lines } = openWith(id);
		assert.deepEqual(lines, [], `round ${round}: the repair holds on the next open`);
		third.close();
	}
});

function countingRoot(counter: { reads: number }): Directory {
	return replacingFileMembers(files, (key, real) => key !== "read" ? real : (...args: unknown[]) => {
		counter.reads++;
		return (real as Function)(...args);
	});
}

test("readLast(24) reads through the index: the same number of file reads for 30 and 600 records", () => {
	const readsFor = (n: number) => {
		const id = fresh();
		const counter = { reads: 0 };
		const session = SessionFile.open(countingRoot(counter), id, () => {});
		for (let i = 0; i < n; i += 30) session.append(userRecords(30, i));
		counter.reads = 0;
		const last = session.readLast(24);
		assert.equal(last.length, 24);
		assert.equal(last[23].message.content, `message ${n - 1}`);
		assert.equal(last[0].index, n - 24);
		session.close();
		return counter.reads;
	};
	const small = readsFor(30), large = readsFor(600);
	assert.equal(small, 25, "one index read and one read per record");
	assert.equal(large, small);
});

test("a temporary data file left by a cut compaction is removed and the old session stands", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(2));
	session.close();
	put(`${dat(id)}.tmp`, new Uint8Array(10));
	const { session: reopened, lines } = openWith(id);
	assert.match(lines.join("\n"), /removed the temporary file of a rewrite/);
	assert.equal(reopened.count, 2);
	assert.ok(!exists(`${dat(id)}.tmp`));
	reopened.close();
});

test("new data with the old index (a rewrite cut between its two renames) rebuilds the index from the new data", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(6));
	const oldIndex = bytesOf(idx(id));
	session.compact([1, 3, 5]);
	session.close();
	put(idx(id), oldIndex);
	const { session: reopened, lines } = openWith(id);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /the index belongs to an older copy of the data file/);
	assert.deepEqual(reopened.read(0, reopened.count).map((r) => r.message.content), ["message 1", "message 3", "message 5"]);
	reopened.close();
});

test("a data file gone with its finished temporary file present (cut before the last rename) is completed from it", () => {
	const id = fresh();
	const { session } = openWith(id);
	session.append(userRecords(2));
	session.close();
	files.move(dat(id), `${dat(id)}.tmp`);
	const { session: reopened, lines } = openWith(id);
	assert.match(lines[0], /finished a rewrite that a power loss cut between its renames/);
	assert.equal(reopened.count, 2);
	reopened.close();
});

test("crc32 is the IEEE CRC-32 of FORMAT.md (check value of \"123456789\"), and continues across pieces", () => {
	const bytes = new Uint8Array(ArrayBuffer.fromString("123456789"));
	assert.equal(crc32(bytes), 0xCBF43926);
	assert.equal(crc32(bytes, 4, 9, crc32(bytes, 0, 4)), 0xCBF43926);
	assert.equal(crc32(new Uint8Array(0)), 0);
});

test("an empty data file is kept aside and the session opens empty", () => {
	const id = fresh();
	put(dat(id), new Uint8Array(0));
	const { session, lines } = openWith(id);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /the data file cannot be read \(its header is cut short \(0 of 16 bytes\)\)/);
	assert.equal(session.count, 0);
	session.close();
});
