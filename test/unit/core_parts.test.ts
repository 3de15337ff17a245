// The agent core's parts on their own: the mailbox (queue, waiters, parked
// responses, ids), the prompt layout's volatile time, and the text formatting
// (stage messages, failure note, METRIC line).
import { assert, test } from "testing";
import { REQUEST_ID_BLOCK, REQUEST_QUEUE_DEPTH, RESPONSE_QUEUE_DEPTH } from "budgets";
import { requestIds } from "core/ids";
import { Mailbox } from "core/mailbox";
import { minuteOf } from "core/context";
import { failureNote, metricLine, metricsOf, stageText } from "core/format";
import { newRun } from "core/request";
import type { AgentResponse } from "core/types";
import { clip, oneLine } from "util/text";
import { FakeTimers, request } from "./core_fakes";

function mailbox(log: string[] = [], first = 0) {
	const timers = new FakeTimers();
	let last = first;
	return { timers, box: new Mailbox("root", timers, (line) => log.push(line), () => ++last) };
}

const answer = (id: number): AgentResponse => ({ request_id: id, session_id: "s", ok: true, text: `answer ${id}` });

test("the mailbox gives ids from its id source, keeps FIFO order and admits a waiting submitter when the head is taken", async () => {
	const { box } = mailbox([], 41);
	const ids: number[] = [];
	for (let i = 0; i < REQUEST_QUEUE_DEPTH; i++) ids.push(await box.enqueue(request(`q${i}`), 0));
	assert.deepEqual(ids, [42, 43, 44, 45].slice(0, REQUEST_QUEUE_DEPTH));
	const waiting = box.enqueue(request("late"), 1000);
	assert.equal(box.queued, REQUEST_QUEUE_DEPTH);
	assert.equal(box.take()?.user_text, "q0");
	assert.equal(await waiting, 42 + REQUEST_QUEUE_DEPTH);
	assert.equal(box.queued, REQUEST_QUEUE_DEPTH);
});

test("a full mailbox refuses at once without a timeout, and after the timeout with one", async () => {
	const { box, timers } = mailbox();
	for (let i = 0; i < REQUEST_QUEUE_DEPTH; i++) await box.enqueue(request(`q${i}`), 0);
	await assert.rejects(box.enqueue(request("now"), 0), "the agent is busy");
	const waiting = box.enqueue(request("later"), 500);
	timers.advance(499);
	assert.equal(box.queued, REQUEST_QUEUE_DEPTH);
	timers.advance(1);
	await assert.rejects(waiting, "the agent is busy");
});

test("parked responses wait for their reader, and a full parking drops the oldest with a log line", async () => {
	const log: string[] = [];
	const { box } = mailbox(log);
	for (let id = 1; id <= RESPONSE_QUEUE_DEPTH + 1; id++) box.offer(answer(id));
	assert.equal(box.parked, RESPONSE_QUEUE_DEPTH);
	assert.match(log.join("\n"), /nobody collected the answer to request 1;/);
	assert.equal((await box.receiveFor(RESPONSE_QUEUE_DEPTH + 1, 10)).text, `answer ${RESPONSE_QUEUE_DEPTH + 1}`);
	assert.equal(box.parked, RESPONSE_QUEUE_DEPTH - 1);
});

test("a reader waiting for a response gets it when it arrives, and a timeout otherwise", async () => {
	const { box, timers } = mailbox();
	const waiting = box.receiveFor(7, 1000);
	box.offer(answer(7));
	assert.equal((await waiting).text, "answer 7");
	const late = box.receiveFor(8, 1000);
	timers.advance(1000);
	await assert.rejects(late, "no answer to request 8 within 1 s");
});

test("closing the mailbox refuses waiting submitters and hands back what was queued", async () => {
	const { box } = mailbox();
	for (let i = 0; i < REQUEST_QUEUE_DEPTH; i++) await box.enqueue(request(`q${i}`), 0);
	const waiting = box.enqueue(request("late"), 1000);
	const queued = box.close("stopped");
	assert.equal(queued.length, REQUEST_QUEUE_DEPTH);
	await assert.rejects(waiting, "stopped");
	assert.equal(box.queued, 0);
});

test("the volatile time is at minute resolution in UTC", () => {
	assert.equal(minuteOf(Date.UTC(2026, 10, 30, 5, 31, 59)), "2026-11-30 05:31 UTC");
});

test("stage messages: tool names when simple, round, one-line summary and masked arguments when verbose", () => {
	const calls = [{ id: "c1", type: "function" as const, function: { name: "wifi_set", arguments: '{"ssid":"home",\n"password":"hunter22"}' } }];
	const message = { role: "assistant" as const, content: "Setting\nthe  Wi-Fi", tool_calls: calls };
	assert.equal(stageText("simple", 2, message, calls), "running tools: wifi_set");
	const verbose = stageText("verbose", 2, message, calls).split("\n");
	assert.equal(verbose[0], "round 2: Setting the Wi-Fi");
	assert.ok(!verbose[1].includes("hunter22"), verbose[1]);
});

test("the failure note names the error and the tools that ran; the METRIC line carries every figure", () => {
	const run = newRun(request("x"), 100, "");
	run.toolNames.push("get_time");
	run.toolSummary.push("- get_time: ok");
	run.rounds = 2;
	assert.equal(failureNote(run, "boom").content, "(no answer to this request: boom)\ntools run:\n- get_time: ok");
	const line = metricLine("root", 9, metricsOf(run, "error", 350));
	assert.match(line, /^METRIC agent=root request=9 outcome=error total_ms=250 llm_ms=0 tool_ms=0 rounds=2 tool_calls=1 tokens_in=0 tokens_out=0 bytes_sent=0 bytes_received=0 peak_heap_bytes=0$/);
});

test("clip cuts to the limit with an ellipsis; oneLine folds white space", () => {
	assert.equal(clip("abcdef", 4), "abc…");
	assert.equal(clip("abcd", 4), "abcd");
	assert.equal(oneLine("  a\n\tb   c "), "a b c");
});

// ---- request ids across reboots ----

class IdMemory {
	values = new Map<string, ArrayBuffer>();
	writes = 0;
	read(key: string) { return this.values.get(key); }
	write(key: string, value: ArrayBuffer) { this.writes++; this.values.set(key, value); }
}

test("request ids stay unique across reboots: each boot takes a fresh block, one write per block", () => {
	const store = new IdMemory();
	const log: string[] = [];
	const first = requestIds(store, (l) => log.push(l));
	const boot1 = [first(), first(), first()];
	assert.deepEqual(boot1, [1, 2, 3]);
	assert.equal(store.writes, 1);
	const second = requestIds(store, (l) => log.push(l)); // a reboot
	const boot2 = [second(), second()];
	assert.deepEqual(boot2, [REQUEST_ID_BLOCK, REQUEST_ID_BLOCK + 1]);
	for (let i = 2; i < REQUEST_ID_BLOCK; i++) second();
	assert.equal(second(), 2 * REQUEST_ID_BLOCK, "a used-up block reserves the next");
	assert.equal(store.writes, 3);
	assert.deepEqual(log, []);
});

test("without a working store ids start at 1 and a warning says they restart after each restart", () => {
	const log: string[] = [];
	const broken = { read: () => undefined, write: () => { throw new Error("flash is read-only"); } };
	const ids = requestIds(broken, (l) => log.push(l));
	assert.deepEqual([ids(), ids()], [1, 2]);
	assert.equal(log.length, 1);
	assert.match(log[0], /request ids cannot be kept across restarts \(flash is read-only\)/);
});
