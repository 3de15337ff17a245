// Peer for test/e2e/store-powerloss.test.mjs: a scripted conversation persisted
// through store/sessions the way the core persists it, and the check that runs
// after a power loss.
//
//   --step run    persists the script. Storage goes through a wrapper that counts
//                 the same operations the host's fault injection counts (write,
//                 setSize, flush, move), and prints after each batch
//                 `MARK <user|final> <turn> <op>`: the op number of the first
//                 data flush at or after the batch's write, and `OP <n> <kind>` for every operation, then
//                 `OPS <total>`. With --crash-after N the host loses power
//                 after N operations.
//   --step check  reopens everything after a crash and checks it against the
//                 script: --intact T (turns whose final record's data flush
//                 happened) and --user-flushed U (turns whose user batch's data
//                 flush happened). Prints `CHECK ok` or `CHECK fail: <why>` lines;
//                 exits 0 or 1.
import files from "embedded:storage/files";
import type { Directory, File } from "embedded:storage/files";
import { exit, option } from "host/platform";
import type { AgentRequest, ContextRecord } from "core/types";
import type { Message } from "llm/types";
import { MESSAGE_MAX_BYTES } from "budgets";
import { Sessions } from "store/sessions";
import { capMessage } from "store/messages";

const TURNS = 20;
const RESULT_BYTES = 7000;

interface Batch { turn: number; records: ContextRecord[]; completed: boolean; mark?: "user" | "final" }

const WORDS = ["flash", "record", "index", "power", "torn", "crc", "turn", "tool", "ünï", "→"];
let base = "";
for (let i = 0; base.length < 2 * RESULT_BYTES; i++) base += WORDS[(i * 7) % WORDS.length] + " ";

/** Deterministic text of n characters that differs by seed. */
function filler(seed: number, n: number): string {
	const start = (seed * 131) % RESULT_BYTES;
	return `${seed}:` + base.slice(start, start + n);
}

/** The conversation: turns with 1-3 tool rounds of large results, one interrupt, one failure. */
export function script(): Batch[] {
	const batches: Batch[] = [];
	for (let t = 1; t <= TURNS; t++) {
		batches.push({ turn: t, records: [{ kind: "user", message: { role: "user", content: `question ${t}: ${filler(t, 150 + t * 37)}` } }], completed: false, mark: "user" });
		const rounds = (t % 3) + 1;
		for (let r = 1; r <= rounds; r++) {
			const ids = r % 2 ? [`t${t}r${r}a`, `t${t}r${r}b`] : [`t${t}r${r}a`];
			batches.push({
				turn: t,
				completed: false,
				records: [
					{ kind: "assistant_tool", message: { role: "assistant", content: r === 1 ? `checking ${t}` : null, tool_calls: ids.map((id) => ({ id, type: "function" as const, function: { name: "read_file", arguments: JSON.stringify({ path: `/log/${id}` }) } })) } },
					...ids.map((id, i): ContextRecord => ({ kind: "tool_result", message: { role: "tool", tool_call_id: id, content: filler(t + r + i, RESULT_BYTES), is_error: i === 1 && t % 4 === 0 } })),
				],
			});
			if (t === 5 && r === 1) batches.push({ turn: t, completed: false, records: [{ kind: "user", message: { role: "user", content: "interrupt: also check the pump" } }] });
		}
		const closing: ContextRecord = t === 9
			? { kind: "failure_note", message: { role: "assistant", content: "(no answer: request cancelled; tools run: read_file)" } }
			: { kind: "assistant_final", message: { role: "assistant", content: `answer ${t}: ${filler(t * 5, 300)}` } };
		batches.push({ turn: t, records: [closing], completed: true, mark: "final" });
	}
	return batches;
}

function request(session_id: string, request_id: number): AgentRequest {
	return { request_id, flags: 0, session_id, user_text: "", source: { channel: "console", chat_id: "local", sender_id: "", message_id: "", cap: "" } };
}

/** Counts storage operations as hosts/lin/src/files.c does, and prints each. */
function countingRoot(counter: { ops: number; dataFlushes: number[] }): Directory {
	const count = (kind: string, path: string) => {
		counter.ops++;
		trace(`OP ${counter.ops} ${kind} ${path}\n`);
	};
	const wrapFile = (f: File, path: string): File => ({
		read: ((a: never, b: number) => f.read(a, b)) as File["read"],
		write(buffer, position) { count("write", path); f.write(buffer, position); },
		setSize(size) { count("setSize", path); f.setSize(size); },
		flush() {
			count("flush", path);
			if (path.endsWith(".dat")) counter.dataFlushes.push(counter.ops);
			f.flush();
		},
		status: () => f.status(),
		close: () => f.close(),
	});
	return {
		openFile: (o) => wrapFile(files.openFile(o), o.path),
		openDirectory: (o) => files.openDirectory(o),
		delete: (p) => files.delete(p),
		move(from, to) { count("move", to); files.move(from, to); },
		status: (p) => files.status(p),
		createDirectory: (p) => files.createDirectory(p),
		scan: (p) => files.scan(p),
		close: () => {},
		[Symbol.iterator]: () => files[Symbol.iterator](),
	};
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function runScript(): void {
	const counter = { ops: 0, dataFlushes: [] as number[] };
	let clock = 1_700_000_000_000;
	const sessions = new Sessions({ root: countingRoot(counter), clock: () => clock++ });
	const id = sessions.currentSession("console", "local");
	trace(`SESSION ${id}\n`);
	// A batch's mark is the op of the first data flush at or after its write: a turn's
	// batches are flushed together with its last one (or when too many wait).
	const pending: Batch[] = [];
	for (const batch of script()) {
		counter.dataFlushes.length = 0;
		sessions.persist({ session_id: id, request: request(id, batch.turn), records: batch.records, turn_completed: batch.completed });
		if (batch.mark) pending.push(batch);
		// The contract the core relies on: a turn is durable when the persist of its last batch returns.
		if (batch.completed && !counter.dataFlushes.length) throw new Error(`turn ${batch.turn}: its last batch returned without a data flush`);
		if (!counter.dataFlushes.length) continue;
		for (const marked of pending.splice(0)) trace(`MARK ${marked.mark} ${marked.turn} ${counter.dataFlushes[0]}\n`);
	}
	if (pending.length) throw new Error(`${pending.length} marked batch(es) were never flushed: the last batch of a turn must flush`);
	// As the firmware at end of input (main.ts): the index entries waiting since its last flush are written.
	sessions.close();
	trace(`OPS ${counter.ops}\n`);
}

function check(): number {
	const intact = Number(option("intact") ?? "0");
	const userFlushed = Number(option("user-flushed") ?? "0");
	const failures: string[] = [];
	const fail = (why: string) => failures.push(why);
	const recoveries: string[] = [];
	let clock = 2_000_000_000_000;
	const sessions = new Sessions({ clock: () => clock++, log: (l) => void recoveries.push(l) });
	const expectedId = (1_700_000_000_000).toString(36);
	const all = script();
	// Fingerprints, not the messages: the script is ~400 KB of text, more than the check
	// should hold. Length, start and end of the JSON tell every script message apart
	// (ids and seeds are at the start); the store's CRC already rejects torn bytes.
	const hash = (value: unknown) => {
		const json = JSON.stringify(value);
		return `${json.length}:${json.slice(0, 64)}:${json.slice(-64)}`;
	};
	const expected = all.flatMap((b) => b.records.map((r) => ({ turn: b.turn, kind: r.kind, hash: hash(r.message), capped: hash(capMessage(r.message, MESSAGE_MAX_BYTES)) })));
	const finals = new Map(all.filter((b) => b.mark === "final").map((b) => [b.turn, hash(b.records[0].message)]));
	const users = new Map(all.filter((b) => b.mark === "user").map((b) => [b.turn, hash(b.records[0].message)]));
	let id = expectedId;
	if (!sessions.has(expectedId)) {
		if (intact || userFlushed) fail(`session ${expectedId} is gone although turn data was flushed`);
		id = sessions.currentSession("console", "local");
	} else if (sessions.currentSession("console", "local") !== expectedId && (intact || userFlushed)) {
		fail("the console's chat no longer maps to its session");
	}
	const records = sessions.show(id, 10_000).map((r) => ({ index: r.index, kind: r.kind, request_id: r.request_id, hash: hash(r.message) }));
	// Every stored record is one of the script's, in script order (compaction drops, never reorders or alters).
	let at = 0;
	for (const r of records) {
		while (at < expected.length && !(expected[at].kind === r.kind && expected[at].turn === r.request_id && expected[at].hash === r.hash)) at++;
		if (at === expected.length) {
			fail(`record ${r.index} (${r.kind}, request ${r.request_id}) is not the script's next record: torn or out of order`);
			break;
		}
		at++;
	}
	const has = (turn: number, kinds: string[]) => records.some((r) => r.request_id === turn && kinds.includes(r.kind));
	for (let t = 1; t <= intact; t++) {
		if (!records.some((r) => r.request_id === t && r.hash === finals.get(t))) fail(`turn ${t} was flushed but its final record is missing`);
		if (!records.some((r) => r.request_id === t && r.hash === users.get(t))) fail(`turn ${t} was flushed but its user message is missing`);
	}
	if (userFlushed > intact && !has(userFlushed, ["user"])) fail(`the user message of the interrupted turn ${userFlushed} is missing`);
	if (has(intact + 2, ["user"])) fail(`turn ${intact + 2} is there although its user batch was never flushed`);
	// The history a next request gets: script messages only (capped), tool rounds whole.
	const history = sessions.history(request(id, 999));
	const allowed = new Set(expected.map((e) => e.capped));
	history.forEach((m: Message, i) => {
		if (!allowed.has(hash(m))) fail(`history message ${i} is not a script message`);
		if (m.role === "assistant" && m.tool_calls?.length) {
			const ids = m.tool_calls.map((c) => c.id);
			const results = history.slice(i + 1, i + 1 + ids.length).map((x) => (x.role === "tool" ? x.tool_call_id : ""));
			if (!same(results, ids)) fail(`history message ${i}: a tool call without all of its results`);
		}
		if (m.role === "tool") {
			let j = i - 1;
			while (j >= 0 && history[j].role === "tool") j--;
			const owner = history[j];
			if (!owner || owner.role !== "assistant" || !owner.tool_calls?.some((c) => c.id === m.tool_call_id)) fail(`history message ${i}: a tool result without its call`);
		}
	});
	if (userFlushed > intact && !history.some((m) => hash(m) === users.get(userFlushed))) fail(`the interrupted turn ${userFlushed}'s user message is not in the history`);
	// The session takes new turns, and the next open finds nothing to repair.
	sessions.persist({ session_id: id, request: request(id, 500), records: [{ kind: "user", message: { role: "user", content: "after the crash" } }], turn_completed: false });
	sessions.persist({ session_id: id, request: request(id, 500), records: [{ kind: "assistant_final", message: { role: "assistant", content: "still here" } }], turn_completed: true });
	sessions.close();
	const before = recoveries.length;
	const again = new Sessions({ clock: () => clock++, log: (l) => void recoveries.push(l) });
	const last = again.show(id, 2).map((r) => r.message.content);
	if (!same(last, ["after the crash", "still here"])) fail(`a turn appended after recovery reads back as ${JSON.stringify(last)}`);
	if (recoveries.length > before) fail(`the second open still repaired: ${recoveries.slice(before).join(" | ")}`);
	again.close();
	for (const line of recoveries) trace(`RECOVERY ${line}\n`);
	if (failures.length) {
		for (const f of failures) trace(`CHECK fail: ${f}\n`);
		return 1;
	}
	trace(`CHECK ok records=${records.length} history=${history.length}\n`);
	return 0;
}

const step = option("step");
if (step === "run") {
	runScript();
	exit(0);
} else if (step === "check") {
	exit(check());
} else {
	trace("store_powerloss: --step run|check\n");
	exit(64);
}
