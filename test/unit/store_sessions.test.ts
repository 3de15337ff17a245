// The session manager (modules/agent/store/sessions.ts, console.ts): compaction, the
// blocked marker and the request gate, ids per channel and chat, and the
// console's `session` commands.
import files from "embedded:storage/files";
import { test, assert } from "testing";
import type { AgentRequest, ContextRecord } from "core/types";
import type { Command } from "console/types";
import { UsageError } from "console/types";
import { SESSION_COMPACT_KEEP_BYTES, SESSION_FILE_MAX_BYTES, SESSIONS_MAX, SESSIONS_PER_CHAT_MAX } from "budgets";
import { Sessions, blockedGuidance } from "store/sessions";
import { sessionCommands } from "store/console";
import { beforeOpenFile } from "./files_fakes";

let clock = 1_900_000_000_000;
const logged: string[] = [];
const open = () => new Sessions({ log: (l) => void logged.push(l), clock: () => clock++ });
const sessions = open();

function request(session_id: string, request_id: number): AgentRequest {
	return { request_id, flags: 0, session_id, user_text: "", source: { channel: "console", chat_id: "local", sender_id: "", message_id: "", cap: "" } };
}
function persist(id: string, request_id: number, records: ContextRecord[], turn_completed = false): void {
	sessions.persist({ session_id: id, request: request(id, request_id), records, turn_completed });
}
const user = (text: string): ContextRecord => ({ kind: "user", message: { role: "user", content: text } });
const final = (text: string): ContextRecord => ({ kind: "assistant_final", message: { role: "assistant", content: text } });
const call = (id: string): ContextRecord => ({ kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: "{}" } }] } });
const result = (id: string, text: string): ContextRecord => ({ kind: "tool_result", message: { role: "tool", tool_call_id: id, content: text } });

function toolTurn(id: string, n: number, resultBytes: number): void {
	persist(id, n, [user(`question ${n}`)]);
	persist(id, n, [call(`a${n}`), result(`a${n}`, "x".repeat(resultBytes))]);
	persist(id, n, [call(`b${n}`), result(`b${n}`, "y".repeat(resultBytes))]);
	persist(id, n, [final(`answer ${n}`)], true);
}

test("a completed turn over the size limit compacts: every question and answer stays, only the latest tool round's details", () => {
	const id = sessions.newSession("test", "compact");
	logged.length = 0;
	let n = 0;
	while (!logged.some((l) => l.includes("compacted")) && n < 40) toolTurn(id, ++n, 8000);
	assert.ok(n < 40, "compaction ran");
	assert.match(logged.find((l) => l.includes("compacted"))!, new RegExp(`store: session ${id}: compacted from \\d+ to \\d+ bytes \\(${n * 6} -> ${n * 2 + 2} records\\)`));
	const summary = sessions.list().find((s) => s.id === id)!;
	assert.ok(summary.bytes < SESSION_FILE_MAX_BYTES / 4, `${summary.bytes} bytes after compaction`);
	const records = sessions.show(id, 1000);
	const kinds = records.map((r) => r.kind);
	assert.equal(kinds.filter((k) => k === "user").length, n);
	assert.equal(kinds.filter((k) => k === "assistant_final").length, n);
	const round = records.filter((r) => r.kind === "assistant_tool" || r.kind === "tool_result");
	assert.deepEqual(round.map((r) => (r.message.role === "tool" ? r.message.tool_call_id : r.message.role === "assistant" ? r.message.tool_calls?.[0].id : "")), [`b${n}`, `b${n}`], "only the latest round");
	assert.deepEqual(records.map((r) => r.index), records.map((_, i) => i), "indexes are renumbered");
	assert.ok(!sessions.isBlocked(id));
	toolTurn(id, ++n, 100);
	assert.equal(sessions.show(id, 1)[0].message.content, `answer ${n}`, "appends go on after compaction");
});

test("one session takes any number of turns: compaction keeps the newest turns up to SESSION_COMPACT_KEEP_BYTES and lets the older ones go, never blocked", () => {
	const id = sessions.newSession("test", "long");
	logged.length = 0;
	// Questions and answers of ~1 KB each: ~72 such turns filled a session with them alone, and it was blocked.
	const TURNS = 300;
	for (let n = 1; n <= TURNS; n++) {
		persist(id, n, [user(`r${n} ${"q".repeat(1000)}`)]);
		persist(id, n, [call(`t${n}`), result(`t${n}`, `{"time":"2026-12-04T17:${n % 60}:00Z"}`)]);
		persist(id, n, [final(`done r${n}. ${"a".repeat(1000)}`)], true);
		assert.ok(!sessions.isBlocked(id), `not blocked at turn ${n}`);
	}
	const summary = sessions.list().find((s) => s.id === id)!;
	assert.ok(summary.bytes <= SESSION_FILE_MAX_BYTES, `${summary.bytes} bytes`);
	const compactions = logged.filter((l) => l.includes("compacted"));
	assert.ok(compactions.length >= 2, `compacted ${compactions.length} times`);
	assert.match(compactions.at(-1)!, /turns kept, the \d+ older ones gone\)$/);
	const records = sessions.show(id, 100_000);
	assert.match(records.at(-1)!.message.content as string, new RegExp(`^done r${TURNS}\\. a+$`));
	const questions = records.filter((r) => r.kind === "user").map((r) => Number(/^r(\d+) /.exec(r.message.content as string)![1]));
	assert.ok(questions[0] > 1, "the oldest turns are gone");
	assert.deepEqual(questions, questions.map((_, i) => questions[0] + i), "the kept turns are the newest, in order, none missing");
	const kept = records.filter((r) => r.kind === "user" || r.kind === "assistant_final").reduce((n, r) => n + JSON.stringify(r.message).length, 0);
	assert.ok(kept > SESSION_COMPACT_KEEP_BYTES / 2, `the kept turns' messages (${kept} bytes) are more than half of SESSION_COMPACT_KEEP_BYTES`);
	sessions.deleteSession(id);
});

test("a session still over the limit after compaction is blocked, and the gate answers with guidance, also after a restart", () => {
	const id = sessions.newSession("test", "blocked");
	logged.length = 0;
	let n = 0;
	// A turn whose latest tool round alone is over the limit (six results of ~30 KB): compaction keeps it whole.
	while (!sessions.isBlocked(id) && n < 40) {
		n++;
		const ids = [1, 2, 3, 4, 5, 6].map((k) => `c${n}-${k}`);
		persist(id, n, [user(`question ${n}`)]);
		persist(id, n, [
			{ kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: ids.map((c) => ({ id: c, type: "function" as const, function: { name: "read_file", arguments: "{}" } })) } },
			...ids.map((c) => result(c, "r".repeat(30_000))),
		]);
		persist(id, n, [final(`answer ${n}`)], true);
	}
	assert.ok(sessions.isBlocked(id), "blocked");
	assert.match(logged.join("\n"), /still \d+ bytes after compaction, over 153600: blocked/);
	assert.equal(sessions.gate(request(id, 99)), blockedGuidance(id));
	assert.match(blockedGuidance(id), /Start a new session with `session new` on the console or \/session new in a chat, or delete this one with `session delete (\S+)` on the console or \/session delete \1 in a chat\./);
	assert.equal(sessions.gate(request("", 99)), undefined, "no session: let through");
	const other = sessions.newSession("test", "not-blocked");
	assert.equal(sessions.gate(request(other, 99)), undefined);
	const restarted = open();
	assert.equal(restarted.gate(request(id, 1)), blockedGuidance(id), "the marker is on flash");
	restarted.close();
	sessions.deleteSession(id);
	assert.equal(sessions.gate(request(id, 99)), undefined, "deleting a blocked session removes its marker");
});

test("each channel and chat gets its own session on first use, kept across a restart", () => {
	const a = sessions.currentSession("telegram", "100");
	const b = sessions.currentSession("telegram", "200");
	assert.notEqual(a, b);
	assert.equal(sessions.currentSession("telegram", "100"), a, "stable");
	const restarted = open();
	assert.equal(restarted.currentSession("telegram", "100"), a, "persisted map");
	assert.equal(restarted.currentSession("telegram", "200"), b);
	restarted.close();
});

test("new, switch and delete change a chat's current session; unknown ids are refused with a sentence", () => {
	const first = sessions.currentSession("qq", "g1");
	const second = sessions.newSession("qq", "g1");
	assert.notEqual(first, second);
	assert.equal(sessions.currentSession("qq", "g1"), second);
	sessions.switchSession("qq", "g1", first);
	assert.equal(sessions.currentSession("qq", "g1"), first);
	assert.throws(() => sessions.switchSession("qq", "g1", "nope"), "there is no session nope: see `session list`");
	assert.throws(() => sessions.deleteSession("../x"), "there is no session ../x");
	sessions.deleteSession(first);
	assert.ok(!sessions.has(first));
	assert.ok(!sessions.ids().includes(first));
	const third = sessions.currentSession("qq", "g1");
	assert.ok(third !== first && sessions.has(third), "a chat whose session was deleted gets a new one");
});

test("list gives id, size, records and last activity, also for sessions not open", () => {
	const id = sessions.newSession("test", "list");
	const before = clock;
	persist(id, 1, [user("hello")]);
	persist(id, 1, [final("hi")], true);
	const restarted = open();
	const summary = restarted.list().find((s) => s.id === id)!;
	assert.equal(summary.records, 2);
	assert.equal(summary.bytes, files.status(`sessions/${id}.dat`).size);
	assert.ok(summary.last_activity >= before && summary.last_activity < clock, String(summary.last_activity));
	assert.equal(summary.blocked, false);
	restarted.close();
});

test("list counts the records on flash for a session not open whose index is behind its data (a loss between the data and index writes)", () => {
	const id = sessions.newSession("test", "list-stale");
	persist(id, 1, [user("hello")]);
	persist(id, 1, [final("hi")], true);
	persist(id, 2, [user("again")]);
	const newest = clock - 1;
	persist(id, 2, [call("c1"), result("c1", "ok")]);
	sessions.close();   // every record and index entry in the files (they wait in memory for a commit, an index flush or close)
	assert.equal(files.status(`sessions/${id}.idx`).size, 16 + 16 * 5);
	const index = files.openFile({ path: `sessions/${id}.idx`, mode: "r+" });
	index.setSize(16 + 16 * 2);   // the index lost the entries of the last two batches
	index.close();
	const restarted = open();
	const summary = restarted.list().find((s) => s.id === id)!;
	assert.equal(summary.records, 5, "the records in the data file, not the index's 2");
	assert.equal(summary.last_activity, newest + 1, "the newest record's time");
	assert.equal(files.status(`sessions/${id}.idx`).size, 16 + 16 * 2, "listing repairs nothing");
	assert.equal(restarted.show(id, 10).length, 5, "open() agrees");
	restarted.close();
});

test("persist without a session id writes nothing, and a failing persist is logged, never thrown", () => {
	const count = sessions.ids().length;
	sessions.persist({ session_id: "", request: request("", 1), records: [user("x")], turn_completed: true });
	assert.equal(sessions.ids().length, count);
	logged.length = 0;
	sessions.persist({ session_id: "Bad/Id", request: request("Bad/Id", 4), records: [user("x")], turn_completed: false });
	assert.equal(logged.length, 1);
	assert.match(logged[0], /store: session Bad\/Id: 1 record\(s\) of request 4 were not saved: the session id is not a valid session name/);
});

test("a compaction that fails after a saved turn is logged as a failed compaction, the turn stays, and the next turn retries it", () => {
	let failTemp = false;
	const root = beforeOpenFile(files, (path) => {
		if (failTemp && path.endsWith(".dat.tmp")) throw new Error("no space left on the device");
	});
	const lines: string[] = [];
	const failing = new Sessions({ root, log: (l) => void lines.push(l), clock: () => clock++ });
	const id = failing.newSession("test", "compact-fails");
	failTemp = true;   // from now on only a compaction opens a .dat.tmp
	let n = 0;
	while (!lines.length && n < 40) {
		n++;
		failing.persist({ session_id: id, request: request(id, n), records: [user(`q${n} ` + "q".repeat(20_000))], turn_completed: false });
		failing.persist({ session_id: id, request: request(id, n), records: [final(`a${n}`)], turn_completed: true });
	}
	assert.equal(lines.length, 1, lines.join("\n"));
	assert.match(lines[0], new RegExp(`store: session ${id}: the turn was saved, but compacting the session failed \\(no space left on the device\\); it is tried again after the next turn`));
	assert.equal(failing.show(id, 1)[0].message.content, `a${n}`, "the turn is there");
	failTemp = false;
	failing.persist({ session_id: id, request: request(id, n + 1), records: [user("again")], turn_completed: false });
	failing.persist({ session_id: id, request: request(id, n + 1), records: [final("done")], turn_completed: true });
	assert.match(lines.slice(1).join("\n"), /compacted from/);
	failing.close();
	sessions.deleteSession(id);
});

test("a chat map that cannot be read is kept as .bad and chats start new sessions", () => {
	sessions.currentSession("console", "local");
	const file = files.openFile({ path: "sessions/chats.json", mode: "w" });
	file.write(ArrayBuffer.fromString("{\"chats\": [tor"), 0);
	file.close();
	logged.length = 0;
	const restarted = open();
	assert.equal(logged.length, 1);
	assert.match(logged[0], /the chat-to-session map cannot be read \(.*\); it was kept as sessions\/chats\.json\.bad/);
	assert.ok(restarted.currentSession("console", "local"));
	restarted.close();
});

async function run(commands: Command[], line: string): Promise<string[]> {
	const [name, ...rest] = line.split(" ");
	const two = commands.find((c) => c.name === `${name} ${rest[0]}`);
	const command = two ?? commands.find((c) => c.name === name)!;
	const lines: string[] = [];
	await command.run((two ? rest.slice(1) : rest).join(" "), { line: (t) => void lines.push(t) });
	return lines;
}

test("the console's session commands: new, list, show, switch, delete and the current session", async () => {
	const commands = sessionCommands(sessions, { channel: "console", chat_id: "cmd" });
	const [created] = await run(commands, "session new");
	const id = /new session (\S+):/.exec(created)![1];
	assert.match((await run(commands, "session"))[0], new RegExp(`^current session: ${id} \\(0 records, 0\\.0 KiB\\)$`));
	persist(id, 5, [user("what time is it?")]);
	persist(id, 5, [call("t1"), result("t1", "12:00")]);
	persist(id, 5, [final("noon")], true);
	const shown = await run(commands, "session show");
	assert.equal(shown.length, 4);
	assert.match(shown[0], /^#0 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d r5 user: what time is it\?$/);
	assert.match(shown[1], /^#1 .* r5 assistant_tool: read_file\(\{\}\)$/);
	assert.match(shown[2], /^#2 .* r5 tool_result t1: 12:00$/);
	assert.match(shown[3], /^#3 .* r5 assistant_final \(turn done\): noon$/);
	const listed = await run(commands, "session list");
	assert.ok(listed.some((l) => l.startsWith(`* ${id}  `) && l.includes("4 records")), listed.join("\n"));
	const other = sessions.newSession("test", "other");
	assert.match((await run(commands, `session switch ${other}`))[0], new RegExp(`now talks in session ${other}`));
	assert.match((await run(commands, `session delete ${id}`))[0], new RegExp(`session ${id} deleted`));
	await assert.rejects(() => run(commands, `session show ${id}`), "there is no session");
	assert.throws(() => commands.find((c) => c.name === "session switch")!.run("", { line() {} }), undefined, UsageError);
	assert.throws(() => commands.find((c) => c.name === "session")!.run("extra", { line() {} }), undefined, UsageError);
});

test("a chat's session new and switch say that the chat, not the console, talks in the session", async () => {
	const chat = sessionCommands(sessions, { channel: "telegram", chat_id: "says" });
	const [created] = await run(chat, "session new");
	assert.match(created, /^new session \S+: this chat talks in it from now on$/);
	const other = sessions.newSession("test", "says-other");
	assert.equal((await run(chat, `session switch ${other}`))[0], `this chat now talks in session ${other}`);
	const [own] = await run(sessionCommands(sessions, { channel: "console", chat_id: "says" }), "session new");
	assert.match(own, /^new session \S+: the console talks in it from now on$/);
});

test("session show masks secret-looking tool arguments as stage messages do", async () => {
	const commands = sessionCommands(sessions, { channel: "console", chat_id: "secret-args" });
	const [created] = await run(commands, "session new");
	const id = /new session (\S+):/.exec(created)![1];
	persist(id, 9, [user("join my wifi")]);
	const wifi: ContextRecord = { kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: [{ id: "w1", type: "function", function: { name: "wifi_set", arguments: '{"ssid":"home","password":"hunter2-hunter2"}' } }] } };
	persist(id, 9, [wifi, result("w1", "joined")]);
	const shown = (await run(commands, "session show")).join("\n");
	assert.ok(!shown.includes("hunter2-hunter2"), shown);
	assert.match(shown, /wifi_set\(\{"ssid":"home","password":"\*\*\*\*ter2"\}\)/);
});

test("a record found damaged when read makes the next use of its session check the whole file and keep the original aside", () => {
	const id = sessions.newSession("test", "damaged");
	for (let n = 1; n <= 3; n++) persist(id, n, [user(`question ${n}`), final(`answer ${n}`)], true);
	const fresh = open();   // a restart: the session is opened again, through its index
	assert.equal(fresh.show(id, 10).length, 6);
	const path = `sessions/${id}.dat`;
	const f = files.openFile({ path, mode: "r+" });
	const size = f.status().size;
	const bytes = new Uint8Array(f.read(size, 0));
	const needle = Array.from("answer 2", (c) => c.charCodeAt(0));
	let at = -1;
	for (let i = 0; at < 0 && i + needle.length <= bytes.length; i++) if (needle.every((b, j) => bytes[i + j] === b)) at = i + 7;
	assert.ok(at > 0, "the record's text is in the file");
	bytes[at] ^= 0x04;
	f.write(bytes.subarray(at, at + 1), at);
	f.close();
	logged.length = 0;
	assert.equal(fresh.show(id, 10).length, 5, "the damaged record is left out at once");
	assert.ok(logged.some((l) => /was left out: its bytes do not match their checksum/.test(l)), logged.join("\n"));
	const shown = fresh.show(id, 10);
	assert.equal(shown.length, 5, "the next use reads the repaired session");
	assert.deepEqual(shown.map((r) => r.index), [0, 1, 2, 3, 4]);
	assert.ok(logged.some((l) => /damaged stretch\(es\).*the original is kept as sessions\/.*\.dat\.bad/.test(l)), logged.join("\n"));
	fresh.close();
});

test("a user chat's 34 /new never evict the owner chat's or the console's session: each chat keeps its quota, its own abandoned sessions go first, and the console's session new still works (issue 25)", () => {
	files.createDirectory("many-chats");
	let now = 1_950_000_000_000;
	const lines: string[] = [];
	const root = files.openDirectory({ path: "many-chats" });
	let many = new Sessions({ root, log: (l) => void lines.push(l), clock: () => now++ });
	const say = (id: string, n: number) => many.persist({ session_id: id, request: request(id, n), records: [user(`q${n}`), final(`a${n}`)], turn_completed: true });
	const userSessions = () => many.ids().length - base;
	const console = many.currentSession("console", "local");
	say(console, 1);
	const owner = many.currentSession("telegram", "501");
	say(owner, 2);
	const base = many.ids().length;
	// The quota: a chat's /new beyond SESSIONS_PER_CHAT_MAX removes its own oldest abandoned session.
	for (let i = 0; i < 10; i++) say(many.newSession("telegram", "502"), 10 + i);
	assert.equal(userSessions(), SESSIONS_PER_CHAT_MAX, `the user's chat keeps ${SESSIONS_PER_CHAT_MAX} sessions`);
	assert.match(lines.join("\n"), /telegram:502 keeps at most 4 sessions: removed \S+, its oldest one left/);
	// Other chats take every other slot, each talking in its one session (the owner's talked longest ago).
	const others: string[] = [];
	while (many.ids().length < SESSIONS_MAX) {
		others.push(many.currentSession("telegram", String(600 + others.length)));
		say(others.at(-1)!, 3);
	}
	// The user's chat: /new 34 times, talking in each; every slot is taken.
	let current = "";
	for (let i = 0; i < 34; i++) {
		current = many.newSession("telegram", "502");
		say(current, 30 + i);
	}
	assert.equal(many.ids().length, SESSIONS_MAX);
	assert.ok(many.has(owner) && many.currentSession("telegram", "501") === owner, "the owner chat's session stays its current one");
	assert.ok(many.has(console), "the console's session stays");
	assert.ok(others.every((id) => many.has(id)), "every other chat's session stays");
	assert.equal(many.currentSession("telegram", "502"), current, "the user talks in its newest session");
	// The console's session new still works: an abandoned chat session makes room.
	lines.length = 0;
	const fresh = many.newSession("console", "local");
	assert.ok(many.has(fresh) && many.has(console) && many.has(owner) && many.has(current));
	assert.match(lines.join("\n"), /32 sessions exist: removed \S+ \(left by telegram:502\), the oldest abandoned chat session, to make room/, lines.join("\n"));
	// The asking chat's own abandoned session goes before another's.
	const left = many.newSession("telegram", "600");
	lines.length = 0;
	many.newSession("telegram", "600");
	assert.match(lines.join("\n"), new RegExp(`removed ${others[0]} \\(left by telegram:600\\)`), lines.join("\n"));
	assert.ok(many.has(left));
	// Who made what is kept in chats.json: after a restart the rule still holds.
	many.close();
	many = new Sessions({ root, log: (l) => void lines.push(l), clock: () => now++ });
	lines.length = 0;
	many.newSession("telegram", "502");
	assert.match(lines.join("\n"), /removed \S+ \(left by telegram:(502|600)\)/, lines.join("\n"));
	// New chats take the abandoned sessions' places; once every session is some chat's current one, or the console's, a new chat is refused and nothing is removed.
	let refused = "";
	for (let i = 0; i < SESSIONS_MAX && !refused; i++) {
		const kept = many.ids();
		try {
			many.newSession("telegram", String(900 + i));
		} catch (error) {
			refused = String(error);
			assert.deepEqual(many.ids(), kept, "no session was removed");
		}
	}
	assert.match(refused, /at most 32 conversations and every one is in use: ask the owner to delete one/);
	assert.ok(many.has(owner) && many.has(console) && many.has(fresh) && others.slice(1).every((id) => many.has(id)), "no chat's current session and no console session was removed");
	assert.equal(many.currentSession("telegram", "501"), owner);
	assert.throws(() => many.newSession("console", "local"), /already 32 sessions/); // the console is asked to delete one instead
	many.close();
});
