// The "history" provider (modules/agent/store/history.ts, sessions.ts): newest records
// within the byte budget, oldest first, a tool round whole or not at all, each
// message capped at MESSAGE_MAX_BYTES, the request in flight left out.
import { test, assert } from "testing";
import type { AgentRequest, ContextRecord, PersistBatch } from "core/types";
import type { AssistantMessage, Message } from "llm/types";
import { MESSAGE_MAX_BYTES, SESSION_HISTORY_MAX_BYTES } from "budgets";
import { ProviderFlag } from "core/types";
import { Sessions } from "store/sessions";
import { selectHistory, selectPromptHistory, selectWindow, type PromptRecord } from "store/history";
import { KeyedRun } from "util/run";
import files from "embedded:storage/files";
import { replacingFileMembers } from "./files_fakes";
import { capMessage, byteLength } from "store/messages";
import type { StoredRecord } from "store/session";
import { generator, seedFor } from "test/fuzz";

/** Where this file's random input starts (--seed N replays another run). */
const SEED = seedFor(99);

let clock = 1_800_000_000_000;
const sessions = new Sessions({ log: () => {}, clock: () => clock++ });

function request(session_id: string, request_id: number): AgentRequest {
	return { request_id, flags: 0, session_id, user_text: "", source: { channel: "console", chat_id: "local", sender_id: "", message_id: "", cap: "" } };
}
const user = (text: string): ContextRecord => ({ kind: "user", message: { role: "user", content: text } });
const final = (text: string): ContextRecord => ({ kind: "assistant_final", message: { role: "assistant", content: text } });
const call = (...ids: string[]): ContextRecord => ({ kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "probe", arguments: "{}" } })) } });
const result = (id: string, text = "ok"): ContextRecord => ({ kind: "tool_result", message: { role: "tool", tool_call_id: id, content: text } });

function persist(id: string, request_id: number, records: ContextRecord[], turn_completed = false): void {
	const batch: PersistBatch = { session_id: id, request: request(id, request_id), records, turn_completed };
	sessions.persist(batch);
}
function turn(id: string, request_id: number, question: string, answer: string): void {
	persist(id, request_id, [user(question)]);
	persist(id, request_id, [final(answer)], true);
}
const texts = (messages: Message[]) => messages.map((m) => (m.role === "tool" ? `tool:${m.content}` : String(m.content)));
function history(id: string, request_id: number): Message[] {
	return sessions.history(request(id, request_id));
}

test("the provider is named history, collected once per request, and gives nothing for an empty session", () => {
	const id = sessions.newSession("test", "empty");
	assert.equal(sessions.historyProvider.name, "history");
	assert.equal(sessions.historyProvider.flags, ProviderFlag.REQUEST_START_ONLY);
	assert.equal(sessions.historyProvider.collect(request(id, 1)), undefined);
	assert.equal(sessions.historyProvider.collect(request("", 1)), undefined, "no session: no history");
});

test("history is the newest turns within the byte budget, oldest first", () => {
	const id = sessions.newSession("test", "budget");
	const answer = "a".repeat(1500);
	for (let i = 0; i < 40; i++) turn(id, i + 1, `question ${i}`, answer);
	const messages = history(id, 100);
	const bytes = messages.reduce((n, m) => n + byteLength(JSON.stringify(m)), 0);
	assert.ok(bytes <= SESSION_HISTORY_MAX_BYTES, `${bytes} bytes`);
	assert.ok(bytes > SESSION_HISTORY_MAX_BYTES - 2000, `the budget is used: ${bytes} bytes`);
	assert.equal(messages.at(-1)!.content, answer, "the newest record is last");
	assert.equal(messages.at(-2)!.content, "question 39");
	assert.ok(messages.length < 80, "older turns fell out");
	const first = Number(String(messages.find((m) => m.role === "user")!.content).split(" ")[1]);
	assert.deepEqual(texts(messages).filter((t) => t.startsWith("question")), Array.from({ length: 40 - first }, (_, i) => `question ${first + i}`), "oldest first, none skipped");
});

test("a tool round is given whole: the call with all of its results, or neither", () => {
	const id = sessions.newSession("test", "round");
	persist(id, 1, [user("measure")]);
	persist(id, 1, [call("c1", "c2"), result("c1", "r".repeat(3000)), result("c2", "s".repeat(3000))]);
	persist(id, 1, [final("done")], true);
	const all = history(id, 2);
	assert.deepEqual(all.map((m) => m.role), ["user", "assistant", "tool", "tool", "assistant"]);
	const records: StoredRecord[] = sessions.show(id, 10);
	const tight = selectHistory(records, 3000, MESSAGE_MAX_BYTES);
	assert.deepEqual(texts(tight), [], "the round did not fit, so none of it is there, nor its answer without its question");
});

test("the history window opens with a user message: an answer whose question fell out of the budget is left out", () => {
	const id = sessions.newSession("test", "opens-with-user");
	turn(id, 1, "q".repeat(2000), "first answer");
	turn(id, 2, "second question", "second answer");
	const records: StoredRecord[] = sessions.show(id, 10);
	const window = selectHistory(records, 1000, MESSAGE_MAX_BYTES);
	assert.deepEqual(texts(window), ["second question", "second answer"], "the first answer fit but its question did not");
	assert.equal(selectHistory(records, 100_000, MESSAGE_MAX_BYTES)[0].role, "user");
});

test("a half round cut by a crash (call without all results) and an orphan result are dropped; the user message stays", () => {
	const id = sessions.newSession("test", "half");
	turn(id, 1, "before", "answer before");
	persist(id, 2, [result("zz", "orphan")]);
	persist(id, 2, [user("interrupted question")]);
	persist(id, 2, [call("c1", "c2"), result("c1")]);
	// the power was lost here: no c2 result, no final answer
	persist(id, 3, [user("next question")]);
	const messages = history(id, 3);
	assert.deepEqual(texts(messages), ["before", "answer before", "interrupted question"], "the interrupted turn's question stays; its half round and the orphan go");
});

test("each message is capped at MESSAGE_MAX_BYTES, valid, with a note of what was left out", () => {
	const id = sessions.newSession("test", "cap");
	const long = "é".repeat(6000);
	const raw = { protocol: "openai" as const, message: { role: "assistant", content: long } };
	persist(id, 1, [user(long)]);
	persist(id, 1, [{ kind: "assistant_final", message: { role: "assistant", content: long, raw } }], true);
	const messages = history(id, 2);
	for (const m of messages) {
		const json = JSON.stringify(m);
		assert.ok(byteLength(json) <= MESSAGE_MAX_BYTES, `${byteLength(json)} bytes`);
		assert.match(String(m.content), /bytes left out\]$/);
		assert.ok(!("raw" in m), "a raw message that does not fit is dropped, not cut");
	}
	const stored = sessions.show(id, 2);
	assert.equal(stored[0].message.content, long, "the file keeps the whole message: the cap is on read");
});

test("a raw assistant message that fits the cap is given verbatim", () => {
	const message: AssistantMessage = { role: "assistant", content: "hi", reasoning_content: "think", raw: { protocol: "anthropic", message: { content: [{ type: "text", text: "hi" }] } } };
	assert.equal(capMessage(message, MESSAGE_MAX_BYTES), message);
});

test("capping tool arguments keeps them valid JSON", () => {
	const message: AssistantMessage = { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "write_file", arguments: JSON.stringify({ text: "x".repeat(9000) }) } }] };
	const capped = capMessage(message, MESSAGE_MAX_BYTES) as AssistantMessage;
	assert.ok(byteLength(JSON.stringify(capped)) <= MESSAGE_MAX_BYTES);
	assert.deepEqual(JSON.parse(capped.tool_calls![0].function.arguments), { left_out: "9011 bytes of arguments" });
});

test("the request in flight is left out of its own history, but seen by the next request", () => {
	const id = sessions.newSession("test", "inflight");
	turn(id, 1, "first", "first answer");
	persist(id, 2, [user("second")]);
	persist(id, 2, [call("c1"), result("c1")]);
	assert.deepEqual(texts(history(id, 2)), ["first", "first answer"], "request 2 sees the history from before it");
	persist(id, 2, [user("inserted while running")]);
	assert.deepEqual(texts(history(id, 2)), ["first", "first answer"], "an interrupt of the same request does not move its start");
	persist(id, 2, [final("second answer")], true);
	assert.deepEqual(texts(history(id, 3)), ["first", "first answer", "second", "probe", "tool:ok", "inserted while running", "second answer"].map((t) => (t === "probe" ? "null" : t)));
});

test("an interrupt persisted under its own request id does not move the running request's start", () => {
	const id = sessions.newSession("test", "inflight-insert");
	turn(id, 11, "first", "first answer");
	persist(id, 12, [user("second")]);
	persist(id, 12, [call("c1"), result("c1")]);
	persist(id, 13, [user("inserted by another request")]);   // the core persists an insert under the insert's request
	assert.deepEqual(texts(history(id, 12)), ["first", "first answer"], "request 12 still sees only what came before it");
	persist(id, 12, [final("second answer")], true);
	assert.deepEqual(texts(history(id, 14)), ["first", "first answer", "second", "null", "tool:ok", "inserted by another request", "second answer"]);
});

test("a compaction while a request is in flight keeps its own records out of its history", () => {
	const id = sessions.newSession("test", "inflight-compact");
	persist(id, 21, [user("q1")]);
	persist(id, 21, [call("old"), result("old")]);
	persist(id, 21, [final("a1")], true);
	persist(id, 22, [user("q2")]);
	persist(id, 22, [call("new"), result("new")]);
	sessions.compact(id);   // drops the round of request 21: the start of request 22 moves from 4 to 2
	assert.deepEqual(texts(history(id, 22)), ["q1", "a1"]);
});

test("a failure note is given as an assistant message", () => {
	const id = sessions.newSession("test", "failure");
	persist(id, 1, [user("do it")]);
	persist(id, 1, [{ kind: "failure_note", message: { role: "assistant", content: "(no answer: request cancelled)" } }], true);
	const messages = history(id, 2);
	assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"]);
	assert.equal(messages[1].content, "(no answer: request cancelled)");
});

/** The reference: group forward into units (a call takes every result right after it, whole or dropped; stray results dropped), take the newest that fit, open at a user unit. */
function referenceWindow(records: PromptRecord[], budget: number): Message[] {
	const units: { messages: Message[]; bytes: number }[] = [];
	for (let i = 0; i < records.length;) {
		const r = records[i];
		if (r.kind === "tool_result") { i++; continue; }
		if (r.kind !== "assistant_tool") { units.push({ messages: [r.message], bytes: r.bytes }); i++; continue; }
		const wanted = new Set((r.message as AssistantMessage).tool_calls?.map((c) => c.id) ?? []);
		let j = i + 1;
		const results: PromptRecord[] = [];
		for (; j < records.length && records[j].kind === "tool_result"; j++) results.push(records[j]);
		const answered = new Set(results.map((x) => (x.message.role === "tool" ? x.message.tool_call_id : "")));
		if (wanted.size > 0 && [...wanted].every((w) => answered.has(w)) && results.every((x) => x.message.role === "tool" && wanted.has(x.message.tool_call_id)))
			units.push({ messages: [r, ...results].map((x) => x.message), bytes: [r, ...results].reduce((n, x) => n + x.bytes, 0) });
		i = j;
	}
	let used = 0, first = units.length;
	while (first > 0 && used + units[first - 1].bytes <= budget) used += units[--first].bytes;
	while (first < units.length && units[first].messages[0].role !== "user") first++;
	return units.slice(first).flatMap((u) => u.messages);
}

test("the window (two passes, no units built) is the reference's for 400 seeded random sequences of records", () => {
	const random = generator(SEED);
	for (let c = 0; c < 400; c++) {
		const records: PromptRecord[] = [];
		for (let i = 0, n = random(30); i < n; i++) {
			const bytes = 10 + random(200);
			const id = `c${random(4)}`;
			switch (random(5)) {
				case 0: records.push({ kind: "user", message: { role: "user", content: `u${i}` }, bytes }); break;
				case 1: records.push({ kind: "assistant_final", message: { role: "assistant", content: `a${i}` }, bytes }); break;
				case 2: records.push({ kind: "assistant_tool", message: { role: "assistant", content: null, tool_calls: Array.from({ length: random(3) }, (_, k) => ({ id: `c${(random(4) + k) % 4}`, type: "function" as const, function: { name: "probe", arguments: "{}" } })) }, bytes }); break;
				case 3: records.push({ kind: "tool_result", message: { role: "tool", tool_call_id: id, content: `r${i}` }, bytes }); break;
				default: records.push({ kind: "failure_note", message: { role: "assistant", content: `f${i}` }, bytes }); break;
			}
		}
		const budget = 50 + random(2000);
		const reference = referenceWindow(records, budget);
		assert.deepEqual(selectPromptHistory(records, budget), reference, `case ${c} (seed ${random.seed})`);
		// The same records in a ring (as the session's prompt cache holds them), its head moved
		// by records dropped before them, some left out (null): the same window.
		const run = new KeyedRun<PromptRecord | null>();
		const base = 1000 + random(50), dropped = random(40);
		for (let i = 0; i < dropped; i++) run.set(base + i, null);
		run.dropBelow(base + dropped);
		const first = base + dropped;
		for (let i = 0; i < records.length; i++) run.set(first + i, records[i]);
		assert.ok(run.covers(first, first + records.length));
		assert.deepEqual(selectWindow(run.view(), first, first + records.length, budget), reference, `case ${c}, in a ring`);
		const holes = new KeyedRun<PromptRecord | null>();
		const kept: PromptRecord[] = [];
		for (let i = 0; i < records.length; i++) {
			const gone = random(6) === 0;
			holes.set(first + i, gone ? null : records[i]);
			if (!gone) kept.push(records[i]);
		}
		assert.deepEqual(selectWindow(holes.view(), first, first + records.length, budget), referenceWindow(kept, budget), `case ${c}, with records left out`);
	}
});

test("a session no chat talks in any more lets go of its history window; a chat switching back reads it again", () => {
	const a = sessions.currentSession("telegram", "w1");
	turn(a, 1, "first question", "first answer");
	assert.deepEqual(texts(history(a, 2)), ["first question", "first answer"]);
	const held = sessions.windowsHeld;
	const b = sessions.newSession("telegram", "w1");
	assert.equal(sessions.windowsHeld, held - 1, "the old session's window is dropped when its chat moves on");
	turn(b, 3, "second question", "second answer");
	assert.deepEqual(texts(history(b, 4)), ["second question", "second answer"]);
	sessions.switchSession("telegram", "w1", a);
	assert.deepEqual(texts(history(a, 5)), ["first question", "first answer"], "read again from the file");
});

test("a late request in a session its chat has left reads the window for its turn, then lets it go", () => {
	const a = sessions.currentSession("telegram", "w2");
	turn(a, 1, "first question", "first answer");
	history(a, 2);
	const b = sessions.newSession("telegram", "w2");
	const held = sessions.windowsHeld;
	// Request 2 was bound to a before the chat moved on (queued at /new): it runs there.
	persist(a, 2, [user("late question")]);
	assert.deepEqual(texts(history(a, 2)), ["first question", "first answer"]);
	assert.equal(sessions.windowsHeld, held + 1, "the late request holds a's window while it runs");
	persist(a, 2, [final("late answer")], true);
	assert.equal(sessions.windowsHeld, held, "its completed turn lets the window go");
	turn(b, 3, "second question", "second answer");
	assert.deepEqual(texts(history(b, 4)), ["second question", "second answer"]);
	sessions.switchSession("telegram", "w2", a);
	assert.deepEqual(texts(history(a, 5)), ["first question", "first answer", "late question", "late answer"], "read again from the file");
});

test("a record appended after the window was taken is loaded once from the message in hand, then from the file", () => {
	let reads = 0;
	const root = replacingFileMembers(files, (key, real) => key !== "read" ? real : (...args: unknown[]) => {
		reads++;
		return (real as (...a: unknown[]) => unknown)(...args);
	});
	const watched = new Sessions({ root, log: () => {}, clock: () => clock++ });
	const id = watched.newSession("test", "loads");
	const batch = (request_id: number, records: ContextRecord[], turn_completed = false) =>
		watched.persist({ session_id: id, request: request(id, request_id), records, turn_completed });
	batch(1, [user("first question")]);
	batch(1, [final("first answer")], true);
	const window = () => watched.historyProvider.collect(request(id, 3)) as { content: Message[] };
	assert.deepEqual(window().content.map((m) => m.stored!.load().content), ["first question", "first answer"], "a window read from the file");
	batch(2, [user("second question")]);
	batch(2, [call("c1"), result("c1", "probed")]);
	batch(2, [final("second answer")], true);
	const next = window().content;
	reads = 0;
	const loaded = next.map((m) => m.stored!.load());
	assert.deepEqual(texts(loaded), ["first question", "first answer", "second question", "null", "tool:probed", "second answer"]);
	assert.equal(reads, 4, "only the two records read before were read again (an index entry and a frame each)");
	assert.deepEqual(loaded[3], { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "probe", arguments: "{}" } }] }, "the tool call as stored");
	reads = 0;
	assert.deepEqual(texts(next.slice(2).map((m) => m.stored!.load())), ["second question", "null", "tool:probed", "second answer"], "a second load is the same");
	assert.equal(reads, 8, "and comes from the file");
	watched.close();
});

test("a window extended from the last request's is the one a fresh read gives: appends, the budget and record limits crossed, compaction, a session switch, a torn tail", () => {
	const random = generator(SEED + 1);
	let live = new Sessions({ log: () => {}, clock: () => clock++ });
	const a = live.newSession("test", "extend-a"), b = live.newSession("test", "extend-b");
	// What a manager holding no window gives for the session's records up to now (request 9999 is in flight nowhere).
	const fresh = (id: string) => {
		live.sync();   // a turn's frames that wait in memory for its commit, into the files the reader opens
		const reader = new Sessions({ log: () => {}, clock: () => clock++ });
		try {
			return reader.history(request(id, 9999));
		} finally {
			reader.close();
		}
	};
	const text = (bytes: number) => "t".repeat(bytes);
	let rid = 100, checks = 0;
	const turnIn = (id: string, size: number) => {
		const expected = fresh(id);
		rid++;
		live.persist({ session_id: id, request: request(id, rid), records: [user(`q${rid} ${text(size)}`)], turn_completed: false });
		assert.deepEqual(live.history(request(id, rid)), expected, `request ${rid}: the window before its question`);
		checks++;
		const batch = (records: ContextRecord[], done = false) => live.persist({ session_id: id, request: request(id, rid), records, turn_completed: done });
		for (let round = random(3); round > 0; round--) {
			switch (random(6)) {
				case 0: batch([call(`x${rid}`)]); break;                                                // a call whose results never came
				case 1: batch([result(`y${rid}`, text(size))]); break;                                  // results with no call
				case 2: batch([call(`c${rid}`, `d${rid}`), result(`c${rid}`, text(size)), result(`d${rid}`)]); break;
				default: batch([call(`c${rid}`), result(`c${rid}`, text(size))]); break;
			}
			if (random(4) === 0) {
				// A window taken in the middle of a turn (end = the count) extends across an open round too.
				assert.deepEqual(live.history(request(id, 9999)), fresh(id), `request ${rid}: a window in the middle of its turn`);
				checks++;
			}
		}
		if (random(5) === 0) batch([{ kind: "failure_note", message: { role: "assistant", content: `failed ${rid}` } }], true);
		else batch([final(`a${rid} ${text(random(3) ? 20 : size)}`)], true);
	};
	// Small turns up to and past the record limit, larger ones past the byte budget, and back.
	for (let n = 0; n < 70; n++) turnIn(a, 10 + random(40));
	for (let n = 0; n < 20; n++) turnIn(b, 500 + random(6000));
	live.compact(a);
	for (let n = 0; n < 6; n++) {
		turnIn(a, 10 + random(40));
		turnIn(b, 10 + random(400));
	}
	live.compact(b);
	turnIn(b, 100);
	turnIn(b, 100);
	// A power loss tore a frame at the end of a's data file: the next open cuts it, the window goes on.
	live.close();
	const data = files.openFile({ path: `sessions/${a}.dat`, mode: "r+" });
	const size = data.status().size;
	data.write(Uint8Array.of(0xFE, 0x53, 1, 0, 200, 0, 0, 0, 1, 2, 3).buffer, size);
	data.close();
	live = new Sessions({ log: () => {}, clock: () => clock++ });
	for (let n = 0; n < 4; n++) turnIn(a, 10 + random(40));
	assert.ok(checks > 100, `${checks} windows compared`);
	live.close();
});
