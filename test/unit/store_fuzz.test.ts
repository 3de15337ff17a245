// Fuzz and failure tests for the session files (modules/agent/store/session.ts,
// format.ts): open() meets hundreds of seeded garbled, truncated, swapped and
// random data + index pairs and must never throw and always end with a session
// that reads (after the whole-file check a damaged read asks for), appends and
// reopens quietly; a failed write is sticky; a record
// with a valid checksum but no valid message is left out, not handed on.
import files from "embedded:storage/files";
import type { Directory } from "embedded:storage/files";
import { test, assert } from "testing";
import type { ContextRecord } from "core/types";
import { SessionFile, type NewRecord } from "store/session";
import { HEADER_BYTES, encodeFrame } from "store/format";
import { replacingFileMembers } from "./files_fakes";
import { generator, seedFor, type Random } from "test/fuzz";

/** Where this file's random input starts (--seed N replays another run). */
const SEED = seedFor(1);

const SEEDS = 300;
let sequence = 0;
const dat = (id: string) => `sessions/${id}.dat`;
const idx = (id: string) => `sessions/${id}.idx`;

function exists(path: string): boolean {
	try { files.status(path); return true; } catch { return false; }
}
function bytesOf(path: string): Uint8Array {
	if (!exists(path)) return new Uint8Array(0);
	const f = files.openFile({ path, mode: "r" });
	try { return new Uint8Array(f.read(f.status().size, 0)); } finally { f.close(); }
}
function put(path: string, bytes: Uint8Array): void {
	const f = files.openFile({ path, mode: "w" });
	try { if (bytes.length) f.write(bytes, 0); } finally { f.close(); }
}

const SCRIPT: ContextRecord[] = [
	{ kind: "user", message: { role: "user", content: "is the pump on? «ü» 🌡" } },
	{ kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "gpio_read", arguments: "{\"pin\":4}" } }] } },
	{ kind: "tool_result", message: { role: "tool", tool_call_id: "c1", content: "{\"level\":1}" } },
	{ kind: "assistant_final", message: { role: "assistant", content: "Yes, it is on." } },
	{ kind: "failure_note", message: { role: "assistant", content: "(no answer: request cancelled)" } },
];

function batch(list: ContextRecord[], request_id: number): NewRecord[] {
	return list.map((r, i) => ({ ...r, turn_completed: i === list.length - 1, time: 1_700_000_000_000 + i, request_id }));
}

/** One of several kinds of damage to bytes, chosen by random. */
function garble(bytes: Uint8Array, random: Random, other: Uint8Array): Uint8Array {
	const copy = bytes.slice();
	switch (random(9)) {
		case 0: if (copy.length) copy[random(copy.length)] ^= 1 << random(8); return copy;                 // one flipped bit
		case 1: return copy.subarray(0, random(copy.length + 1));                                           // truncated anywhere
		case 2: for (let i = 0; i < 1 + random(16) && copy.length; i++) copy[random(copy.length)] = random(256); return copy;
		case 3: return Uint8Array.from({ length: random(600) }, () => random(256));                         // random bytes
		case 4: return new Uint8Array(0);                                                                   // empty
		case 5: { const grown = new Uint8Array(copy.length + 1 + random(200)); grown.set(copy); for (let i = copy.length; i < grown.length; i++) grown[i] = random(2) ? 0xFE : random(256); return grown; }
		case 6: return other.slice();                                                                       // the other file's bytes
		case 7: { const cut = random(copy.length + 1); const grown = new Uint8Array(copy.length + cut); grown.set(copy); grown.set(copy.subarray(0, cut), copy.length); return grown; } // a repeated stretch
		default: { if (copy.length > HEADER_BYTES) copy.fill(0, HEADER_BYTES + random(copy.length - HEADER_BYTES)); return copy; } // zeroed tail
	}
}

test(`open never throws for ${SEEDS} seeds of garbled, truncated and random data and index files, and always ends with a working session`, () => {
	for (let seed = SEED; seed < SEED + SEEDS; seed++) {
		const random = generator(seed);
		const id = `fz${seed}-${++sequence}`;
		const first = SessionFile.open(files, id, () => {});
		for (let turn = 0; turn < 1 + random(4); turn++) first.append(batch(SCRIPT.slice(0, 1 + random(SCRIPT.length)), turn + 1));
		first.close();
		const data = bytesOf(dat(id)), index = bytesOf(idx(id));
		const which = random(4);   // 0: data, 1: index, 2: both, 3: both, and one of them deleted
		if (which !== 1) put(dat(id), garble(data, random, index));
		if (which >= 1) put(idx(id), garble(index, random, data));
		if (which === 3) files.delete(random(2) ? dat(id) : idx(id));
		let session: SessionFile | undefined;
		const lines: string[] = [];
		try {
			session = SessionFile.open(files, id, (l) => void lines.push(l));
			let all = session.read(0, session.count);
			if (session.damaged) {
				// Damage the index could not show is found when read; the manager then checks the whole file.
				session.close();
				session = SessionFile.open(files, id, (l) => void lines.push(l), { verify: true });
				all = session.read(0, session.count);
			}
			assert.equal(all.length, session.count, `seed ${seed}: every record the index lists reads back`);
			for (const r of all) assert.ok(SCRIPT.some((s) => s.kind === r.kind && JSON.stringify(s.message) === JSON.stringify(r.message)), `seed ${seed}: record ${r.index} is a record that was written`);
			session.append(batch([SCRIPT[0]], 99));
			assert.equal(session.readLast(1)[0].request_id, 99, `seed ${seed}: appends after the repair`);
		} catch (error) {
			assert.fail(`seed ${seed} (damage to ${["data", "index", "both", "both, one deleted"][which]}): ${error instanceof Error ? error.message : String(error)}`);
		} finally {
			session?.close();
		}
		const quiet: string[] = [];
		const again = SessionFile.open(files, id, (l) => void quiet.push(l));
		assert.deepEqual(quiet, [], `seed ${seed}: the repair holds on the next open (first open said: ${lines.join(" | ")})`);
		again.close();
		for (const name of files.scan("sessions")) if (name.startsWith(`${id}.`)) files.delete(`sessions/${name}`);
	}
});

/** A root whose file writes throw while `failing.on` is true. */
function failingRoot(failing: { on: boolean }): Directory {
	return replacingFileMembers(files, (key, real) => key !== "write" && key !== "flush" ? real : (...args: unknown[]) => {
		if (failing.on) throw new Error("no space left on the device");
		return (real as Function)(...args);
	});
}

test("a failed write is sticky: the session refuses every later operation until it is reopened, which repairs it", () => {
	const id = `sticky-${++sequence}`;
	const failing = { on: false };
	const session = SessionFile.open(failingRoot(failing), id, () => {});
	session.append(batch(SCRIPT.slice(0, 1), 1));
	failing.on = true;
	assert.throws(() => session.append(batch(SCRIPT.slice(3, 4), 2)), /no space left/);
	failing.on = false;
	assert.throws(() => session.append(batch(SCRIPT.slice(3, 4), 3)), /had a failed write \(no space left on the device\); it must be closed and opened again/);
	assert.throws(() => session.read(0, 1), /had a failed write/);
	assert.equal(session.failed, "no space left on the device");
	session.close();
	const lines: string[] = [];
	const reopened = SessionFile.open(files, id, (l) => void lines.push(l));
	assert.equal(reopened.count, 1, "only the record written before the failure");
	reopened.append(batch(SCRIPT.slice(3, 4), 4));
	assert.deepEqual(reopened.read(0, 2).map((r) => r.request_id), [1, 4]);
	reopened.close();
});

test("a failed compaction is sticky too, and the session reopens as it was before it", () => {
	const id = `sticky-compact-${++sequence}`;
	const failing = { on: false };
	const session = SessionFile.open(failingRoot(failing), id, () => {});
	session.append(batch(SCRIPT, 1));
	failing.on = true;
	assert.throws(() => session.compact([0, 3]), /no space left/);
	failing.on = false;
	assert.throws(() => session.append(batch([SCRIPT[0]], 2)), /had a failed write/);
	session.close();
	const reopened = SessionFile.open(files, id, () => {});
	assert.equal(reopened.count, SCRIPT.length, "old session stands");
	reopened.close();
});

test("compact() refuses a keep list that is not ascending indexes of the session, before touching a file", () => {
	const id = `keep-${++sequence}`;
	const session = SessionFile.open(files, id, () => {});
	session.append(batch(SCRIPT, 1));
	assert.throws(() => session.compact([3, 1]), /ascending record indexes/);
	assert.throws(() => session.compact([0, 9]), /ascending record indexes/);
	assert.equal(session.read(0, session.count).length, SCRIPT.length);
	session.close();
});

test("a record with a valid checksum whose JSON is not the message its kind stores is left out with a log line", () => {
	const id = `shape-${++sequence}`;
	const session = SessionFile.open(files, id, () => {});
	session.append(batch([SCRIPT[0]], 1));
	session.close();
	const data = bytesOf(dat(id));
	const payloads = ["5", "null", "{\"role\":\"assistant\",\"content\":\"a user record holding an assistant message\"}", "[1,2]"];
	let grown = data;
	for (const text of payloads) {
		const frame = encodeFrame(1, 0, 2, 0, new Uint8Array(ArrayBuffer.fromString(text)));
		const next = new Uint8Array(grown.length + frame.length);
		next.set(grown);
		next.set(frame, grown.length);
		grown = next;
	}
	put(dat(id), grown);
	const lines: string[] = [];
	const reopened = SessionFile.open(files, id, (l) => void lines.push(l));
	assert.equal(reopened.count, 1 + payloads.length, "the frames are intact, so the index lists them");
	const read = reopened.read(0, reopened.count);
	assert.deepEqual(read.map((r) => r.index), [0], "only the real message is handed on");
	assert.equal(lines.filter((l) => /record \d was left out: its text is not a stored message/.test(l)).length, payloads.length, lines.join("\n"));
	reopened.close();
});
