// The Telegram channel's poll loop on a fake Bot API and a virtual clock
// (issue 25): updates that together pass TELEGRAM_UPDATE_BODY_MAX_BYTES are
// read fewer at a time, an update over the cap by itself is skipped past with a
// log line naming its update_id (learnt from the start of the answer), and a
// server that answers at once with nothing is asked at most once per
// TELEGRAM_POLL_MIN_INTERVAL_MS. The BotApi's head() reads only the start of an
// answer.
import files from "embedded:storage/files";
import type { Directory } from "embedded:storage/files";
import { test, assert } from "testing";
import { TELEGRAM_POLL_MIN_INTERVAL_MS, TELEGRAM_UPDATE_BODY_MAX_BYTES, TELEGRAM_UPDATE_HEAD_BYTES, TELEGRAM_UPDATES_LIMIT } from "budgets";
import { BotApi, BotApiError } from "channels/telegram/api";
import { TelegramChannel, type BotApiLike } from "channels/telegram/channel";
import { Pairing } from "channels/pairing";
import { StateFile } from "channels/telegram/store";
import { firstUpdateId } from "channels/telegram/updates";
import type { InMessage } from "router/types";
import type { HttpRequest, HttpResponse, HttpTransport } from "net/types";

let dirs = 0;
function freshDirectory(): Directory {
	const name = `tg-poll-${++dirs}`;
	files.createDirectory(name);
	return files.openDirectory({ path: name });
}

/** Timers on a virtual clock: run(ms) fires what falls due, in order, with the promise jobs between. */
function virtualTime() {
	let now = 0, nextId = 1;
	const timers = new Map<number, { at: number; cb: () => void }>();
	const flush = async () => {
		for (let i = 0; i < 40; i++) await Promise.resolve();
	};
	return {
		now: () => now,
		timers: {
			set: (cb: () => void, ms: number) => {
				const id = nextId++;
				timers.set(id, { at: now + Math.max(0, ms), cb });
				return id;
			},
			clear: (id: unknown) => { timers.delete(id as number); },
		},
		async run(ms: number) {
			const end = now + ms;
			for (let fired = 0; fired < 100_000; fired++) {
				await flush();
				let due: [number, { at: number; cb: () => void }] | undefined;
				for (const entry of timers) if (entry[1].at <= end && (!due || entry[1].at < due[1].at)) due = entry;
				if (!due) break;
				timers.delete(due[0]);
				now = Math.max(now, due[1].at);
				due[1].cb();
			}
			now = end;
			await flush();
		},
	};
}

interface FakeUpdate { update_id: number; bytes: number; message: Record<string, unknown> }

/**
 * A Bot API whose waiting updates each weigh `bytes`: an answer whose updates
 * weigh more than the cap together is refused as the HTTP client refuses it
 * ("too_large"); head() gives the start of the JSON answer. Answers come 5 ms
 * after the call (a server that answers at once).
 */
function fakeServer(time: ReturnType<typeof virtualTime>) {
	const waiting: FakeUpdate[] = [];
	/** Updates whose answer is not JSON. */
	const broken = new Set<number>();
	const polls: Array<{ offset: number; limit: number }> = [];
	const sent: string[] = [];
	let heads = 0;
	const later = <T>(fn: () => T) => new Promise<T>((resolve, reject) => time.timers.set(() => {
		try {
			resolve(fn());
		} catch (error) {
			reject(error);
		}
	}, 5));
	const take = (params: Record<string, unknown>) => {
		const offset = Number(params.offset);
		while (waiting.length && waiting[0].update_id < offset) waiting.shift();
		return waiting.slice(0, Number(params.limit));
	};
	const api: BotApiLike = {
		call(method, params) {
			if (method === "getMe") return later(() => ({ id: 900, username: "the_bot" }));
			if (method === "getUpdates") {
				polls.push({ offset: Number(params.offset), limit: Number(params.limit) });
				return later(() => {
					const batch = take(params);
					if (batch.reduce((n, u) => n + u.bytes, 0) > TELEGRAM_UPDATE_BODY_MAX_BYTES) throw new BotApiError("too_large", "Telegram's answer to getUpdates is too large");
					if (batch.some((u) => broken.has(u.update_id))) throw new BotApiError("malformed", "Telegram's answer to getUpdates is not JSON");
					return batch.map((u) => ({ update_id: u.update_id, message: u.message }));
				});
			}
			if (method === "sendMessage") sent.push(String(params.text));
			return later(() => ({ message_id: 1 }));
		},
		head(method, params, maxBytes) {
			heads++;
			return later(() => JSON.stringify({ ok: true, result: take(params).map((u) => ({ update_id: u.update_id, message: u.message })) }).slice(0, maxBytes));
		},
	};
	return {
		api, waiting, polls, sent, broken,
		get heads() { return heads; },
		say(update_id: number, chat: number, text: string, bytes: number) {
			waiting.push({ update_id, bytes, message: { message_id: update_id, chat: { id: chat, type: "private" }, from: { id: chat, first_name: "x" }, text } });
		},
	};
}

function pollRig() {
	const time = virtualTime();
	const server = fakeServer(time);
	const state = new StateFile(freshDirectory(), () => {});
	const pairing = new Pairing(state, time.now);
	const published: InMessage[] = [];
	const logs: string[] = [];
	const channel = new TelegramChannel({
		api: server.api,
		router: { async publish(message) { published.push(message); return { kind: "agent", request_id: published.length }; } },
		port: { cancel: async () => 0, command: async () => ({ lines: [] }) },
		pairing, state, timers: time.timers, now: time.now,
		log: (line) => logs.push(line), notify: () => {},
		pollTimeoutS: 0,
	});
	return { time, server, state, pairing, published, logs, channel };
}

test("updates over the cap together are read one at a time, then more at a time; the owner's message behind them is answered", async () => {
	const r = pollRig();
	assert.ok(r.pairing.pair("501", "owner", r.pairing.newCode()).ok);
	const each = Math.ceil(TELEGRAM_UPDATE_BODY_MAX_BYTES / 11); // twelve of these are over the cap together
	for (let i = 0; i < 12; i++) r.server.say(100 + i, 9000 + i, `stranger ${i}`, each);
	r.server.say(112, 501, "hello from the owner", 100);
	r.channel.start();
	await r.time.run(3_000);
	assert.deepEqual(r.published.map((m) => m.text), ["hello from the owner"], "the owner's message reached the router");
	assert.equal(r.state.state.offset, 113, "every update was confirmed");
	assert.equal(r.server.polls[0].limit, TELEGRAM_UPDATES_LIMIT);
	assert.equal(r.server.polls[1].limit, 1, "after the refused answer, one update at a time");
	assert.ok(r.server.polls.length < 12, `then more at a time again (${r.server.polls.map((p) => p.limit).join(",")})`);
	assert.ok(r.logs.some((l) => /reading the waiting updates from offset 0 one at a time/.test(l)), r.logs.join("\n"));
	assert.ok(r.logs.some((l) => /read update 100 \(1 at a time/.test(l)), r.logs.join("\n"));
	assert.equal(r.server.heads, 0, "nothing was skipped");
	await r.channel.stop();
});

test("an update over the cap by itself is skipped past with a log line naming its update_id; the next is read", async () => {
	const r = pollRig();
	assert.ok(r.pairing.pair("501", "owner", r.pairing.newCode()).ok);
	r.server.say(700, 9000, "x", TELEGRAM_UPDATE_BODY_MAX_BYTES + 1);
	r.server.say(701, 501, "still there?", 100);
	r.channel.start();
	await r.time.run(5_000);
	assert.equal(r.server.heads, 1, "its start was read once");
	assert.ok(r.logs.some((l) => /^telegram: update 700 skipped: it alone is over the 262144-byte cap/.test(l)), r.logs.join("\n"));
	assert.deepEqual(r.published.map((m) => m.text), ["still there?"]);
	assert.equal(r.state.state.offset, 702);
	await r.channel.stop();
});

test("an update whose answer is not JSON is asked for alone twice, then skipped past with a log line; the next is read", async () => {
	const r = pollRig();
	assert.ok(r.pairing.pair("501", "owner", r.pairing.newCode()).ok);
	r.server.say(300, 9000, "broken", 100);
	r.server.broken.add(300);
	r.server.say(301, 501, "after the broken one", 100);
	r.channel.start();
	await r.time.run(5_000);
	assert.deepEqual(r.server.polls.slice(0, 3).map((p) => [p.offset, p.limit]), [[0, TELEGRAM_UPDATES_LIMIT], [0, 1], [0, 1]], "narrowed, then asked once more");
	assert.ok(r.logs.some((l) => /^telegram: update 300 skipped: Telegram's answer with it is not readable/.test(l)), r.logs.join("\n"));
	assert.deepEqual(r.published.map((m) => m.text), ["after the broken one"]);
	await r.channel.stop();
});

test("an update over the cap whose update_id cannot be read is not skipped blindly, and is asked for at a bounded rate", async () => {
	const r = pollRig();
	r.server.say(700, 9000, "x", TELEGRAM_UPDATE_BODY_MAX_BYTES + 1);
	r.server.api.head = async () => "<html>a proxy's error page</html>";
	r.channel.start();
	await r.time.run(20_000);
	assert.equal(r.state.state.offset, 0, "no offset was guessed");
	assert.ok(r.server.polls.length <= 12, `${r.server.polls.length} polls in 20 s: backing off`);
	await r.channel.stop();
});

test("a server that answers every poll at once with nothing is asked at most once per TELEGRAM_POLL_MIN_INTERVAL_MS", async () => {
	const r = pollRig();
	r.channel.start();
	await r.time.run(10_000);
	const most = Math.ceil(10_000 / TELEGRAM_POLL_MIN_INTERVAL_MS) + 1;
	assert.ok(r.server.polls.length >= most - 2 && r.server.polls.length <= most, `${r.server.polls.length} polls in 10 s (at most ${most})`);
	// Updates still come at once: a poll that brings some is followed by the next without waiting.
	r.pairing.pair("501", "owner", r.pairing.newCode());
	for (let i = 0; i < 3; i++) r.server.say(10 + i, 501, `m${i}`, 10);
	const before = r.server.polls.length;
	await r.time.run(100);
	assert.deepEqual(r.published.map((m) => m.text).slice(-3), ["m0", "m1", "m2"]);
	assert.ok(r.server.polls.length - before >= 1);
	await r.channel.stop();
});

test("firstUpdateId reads the first update_id of an answer's start, and nothing from what has none", () => {
	assert.equal(firstUpdateId(`{"ok":true,"result":[{"update_id":123456789,"message":{"message_id":5,"text":"`), 123456789);
	assert.equal(firstUpdateId(`{"ok":true,"result":[{ "update_id" : 7 , "message":`), 7);
	for (const none of ["", "{", `{"ok":true,"result":[{"update_id":`, `{"update_id":"12"}`, `{"update_id":-3}`, `{"update_id":99999999999999999}`]) {
		assert.equal(firstUpdateId(none), undefined, JSON.stringify(none));
	}
});

function fakeHttp(body: string): HttpTransport & { requests: HttpRequest[] } {
	const requests: HttpRequest[] = [];
	return {
		requests,
		close() {},
		async request(r) {
			requests.push(r);
			const bytes = new Uint8Array(ArrayBuffer.fromString(body));
			for (let at = 0; at < bytes.length; at += 100) r.onChunk?.call(r, bytes.subarray(at, at + 100));
			return { status: 200, headers: {}, body: "", bytesSent: 0, bytesReceived: 0, reusedConnection: false, firstByteMs: 0, durationMs: 0 } as HttpResponse;
		},
	};
}

test("BotApi.head reads only the start of an answer, and a shorter answer whole", async () => {
	const long = `{"ok":true,"result":[{"update_id":42,"message":{"text":"${"字".repeat(100_000)}"}}]}`;
	const http = fakeHttp(long);
	const head = await new BotApi(http, "1:T").head("getUpdates", { offset: 0, limit: 1 }, TELEGRAM_UPDATE_HEAD_BYTES);
	assert.ok(head.length <= TELEGRAM_UPDATE_HEAD_BYTES && head.startsWith(`{"ok":true,"result":[{"update_id":42,`), head.slice(0, 80));
	assert.equal(http.requests[0].maxBodyBytes, undefined);
	assert.equal(await new BotApi(fakeHttp(`{"ok":true,"result":[]}`), "1:T").head("getUpdates", {}, 512), `{"ok":true,"result":[]}`);
});
