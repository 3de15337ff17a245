// QQ as a person meets it: the firmware on the lin host, the mock QQ platform
// (tools/mock-qq: token endpoint, /gateway, the WebSocket gateway, the reply
// endpoints) and the mock LLM (tools/mock-llm), all on loopback. Each test
// configures the firmware on its console, pairs chats through the code the
// console prints, talks as QQ users, and checks the passive replies (msg_id,
// msg_seq), the gateway's record (Identify, Resume, heartbeats, tokens) and the
// LLM's record. No test waits on a fixed time for an outcome: each waits for
// the thing it checks, with generous limits (the machine is shared).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { startMockQQ } from "../../tools/mock-qq/index.mjs";
import { APP_MAP } from "../../tools/build.mjs";
import { filesUnder, setSettings, startFirmware, until } from "./firmware.mjs";

const APP_ID = "102030405";
const SECRET = "qqAppSecretForTests0123456789abcdef";
const KEY = "sk-qq-e2e-secret-0123456789";
const HINT = /answers paired chats only/;
const outputs = [];
const cleanups = [];
after(async () => {
	for (const fn of cleanups.reverse()) await fn();
});


async function setup(mockOptions = {}) {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-qq-"));
	const llm = await startMockLLM({ requireKey: KEY });
	const qq = await startMockQQ({ appId: APP_ID, secret: SECRET, heartbeatMs: 2000, ...mockOptions });
	const firmwares = [];
	const env = {
		dir, llm, qq,
		async boot({ secret = SECRET, connected = true } = {}) {
			const fw = startFirmware(["--modules", APP_MAP, "--data", dir], "release");
			firmwares.push(fw);
			await fw.until(/type help for the commands/);
			await setSettings(fw, [
				"config set llm.provider custom", `config set llm.base_url ${llm.url}/v1`, "config set llm.model gpt-mock", `config set llm.api_key ${KEY}`,
				`config set qq.api_url ${qq.url}`, `config set qq.token_url ${qq.tokenUrl}`, `config set qq.app_id ${APP_ID}`, `config set qq.app_secret ${secret}`,
			]);
			if (connected) await fw.until(/qq: connected as xsclaw-mock-bot/);
			return fw;
		},
		/** Pairs a chat: prints a code on the console, sends /pair from the chat, waits for the answer. */
		async pair(fw, who) {
			const from = fw.stdout.length;
			fw.send("qq pair");
			await fw.until(/qq: pairing code ([A-Z0-9]+)/, { from });
			const code = /qq: pairing code ([A-Z0-9]+)/.exec(fw.printed(from))[1];
			const chat = who.group ? `group:${who.group}` : `c2c:${who.user}`;
			const before = qq.replies(chat).length;
			qq.say({ ...who, text: `/pair ${code}` });
			await qq.waitFor(() => qq.replies(chat).slice(before).some((r) => /^Paired as/.test(r.content)), 20_000, "the pairing reply");
		},
	};
	cleanups.push(async () => {
		for (const fw of firmwares) await fw.kill();
		for (const fw of firmwares) outputs.push(fw.stdout, fw.stderr);
		for (const file of filesUnder(dir)) outputs.push(readFileSync(file, "latin1"));
		outputs.push(JSON.stringify(qq.record));
		for (const r of llm.requests) outputs.push(r.body);
		await qq.stop();
		await llm.close();
		rmSync(dir, { recursive: true, force: true });
	});
	return env;
}

/** The replies accepted in a chat that answer message id. */
const repliesTo = (qq, chat, id) => qq.replies(chat).filter((r) => r.msg_id === id);

test("paired C2C and group chats get the agent's answer as passive replies; an unpaired user reaches nothing", async () => {
	const { qq, llm, boot, pair } = await setup();
	const fw = await boot();
	const identify = qq.record.identify[0];
	assert.match(identify.token, /^QQBot mocktok-/, "Identify carries QQBot <token>");
	assert.ok(identify.intents & (1 << 25), "Identify asks for GROUP_AND_C2C_EVENT");
	assert.deepEqual(identify.shard, [0, 1]);

	// A stranger: one hint, nothing reaches the LLM.
	const stranger = qq.say({ user: "STRANGER1", text: "hello, who are you?" });
	await qq.waitFor(() => repliesTo(qq, "c2c:STRANGER1", stranger).length === 1, 20_000, "the hint");
	assert.match(qq.replies("c2c:STRANGER1")[0].content, HINT);
	qq.say({ user: "STRANGER1", text: "please answer" });
	const groupStranger = qq.say({ group: "GROUPX", user: "M9", text: "hi bot" });
	await qq.waitFor(() => repliesTo(qq, "group:GROUPX", groupStranger).length === 1, 20_000, "the group's hint");
	assert.equal(qq.replies("c2c:STRANGER1").length, 1, "the hint is rate-limited per chat");
	assert.equal(llm.requests.length, 0, "nothing from an unpaired chat reaches the LLM");

	await pair(fw, { user: "OWNER1" });
	assert.match(fw.stdout, /qq: chat c2c:OWNER1 paired as owner/);
	llm.script({ type: "text", text: "Hello from the agent." });
	const asked = qq.say({ user: "OWNER1", text: "tell me something" });
	const reply = await qq.waitFor(() => repliesTo(qq, "c2c:OWNER1", asked)[0], 30_000, "the C2C answer");
	assert.equal(reply.content, "Hello from the agent.");
	assert.equal(reply.msg_seq, 1);
	assert.equal(reply.msg_type, 0);
	assert.equal(reply.path, "/v2/users/OWNER1/messages");
	assert.match(llm.requests.at(-1).body, /tell me something/);

	await pair(fw, { group: "GROUP1", user: "MEMBER1" });
	llm.script({ type: "text", text: "Hello, group." });
	const groupAsk = qq.say({ group: "GROUP1", user: "MEMBER2", text: "what time is it?" });
	const groupReply = await qq.waitFor(() => repliesTo(qq, "group:GROUP1", groupAsk)[0], 30_000, "the group answer");
	assert.equal(groupReply.content, "Hello, group.");
	assert.equal(groupReply.msg_seq, 1);
	assert.equal(groupReply.path, "/v2/groups/GROUP1/messages");
	assert.match(llm.requests.at(-1).body, /what time is it\?/);
	// The stranger still reaches nothing.
	const before = llm.requests.length;
	qq.say({ user: "STRANGER1", text: "now?" });
	llm.script({ type: "text", text: "owner again" });
	const again = qq.say({ user: "OWNER1", text: "one more" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER1", again).length, 30_000, "the owner's second answer");
	assert.equal(llm.requests.length, before + 1, "only the owner's message reached the LLM");
	// Heartbeats (every 2 s here) carry the last sequence number received.
	const beat = await qq.waitFor(() => qq.record.heartbeats.find((h) => typeof h.d === "number"), 20_000, "a heartbeat with a seq");
	assert.ok(beat.d >= 1 && beat.d <= qq.seq);
	assert.ok(qq.record.replies.every((r) => r.token_ok), "every reply carried a valid token");
	await fw.end();
});

test("a long answer is split into replies to one message with msg_seq 1, 2, 3 within QQ's limit", async () => {
	const { qq, llm, boot, pair } = await setup({ maxChars: 2000 });
	const fw = await boot();
	await pair(fw, { user: "OWNER2" });
	const answer = Array.from({ length: 90 }, (_, i) => `Line ${i}: ${"x".repeat(50)}`).join("\n");
	llm.script({ type: "text", text: answer });
	const asked = qq.say({ user: "OWNER2", text: "write a lot" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER2", asked).length >= 3, 30_000, "three replies");
	const parts = repliesTo(qq, "c2c:OWNER2", asked);
	assert.deepEqual(parts.map((r) => r.msg_seq), parts.map((_, i) => i + 1));
	assert.ok(parts.every((r) => r.content.length <= 2000));
	assert.equal(parts.map((r) => r.content).join(""), answer);
	await fw.end();
});

test("the gateway drops mid-conversation: the session resumes and no message is lost or answered twice", async () => {
	const { qq, llm, boot, pair } = await setup();
	const fw = await boot();
	await pair(fw, { user: "OWNER3" });
	llm.script({ type: "text", text: "first answer" });
	const first = qq.say({ user: "OWNER3", text: "first" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER3", first).length, 30_000, "the first answer");

	const session = qq.sessionId;
	qq.drop();
	// Said while the link is down: delivered by the Resume's replay. The mock also
	// replays two events the board had already handled (QQ may repeat).
	qq.replayExtra = 2;
	llm.script({ type: "text", text: "second answer" });
	const second = qq.say({ user: "OWNER3", text: "second" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER3", second).length, 60_000, "the answer to the message sent during the drop");
	assert.equal(qq.record.resume.length, 1, "one Resume");
	assert.equal(qq.record.resume[0].session_id, session);
	assert.equal(qq.record.identify.length, 1, "no second Identify");
	assert.match(fw.stdout, /qq: gateway session resumed/);
	// Nothing more comes: each message was answered once.
	llm.script({ type: "text", text: "third answer" });
	const third = qq.say({ user: "OWNER3", text: "third" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER3", third).length, 30_000, "the third answer");
	assert.equal(repliesTo(qq, "c2c:OWNER3", first).length, 1, "the first message was answered once");
	assert.equal(repliesTo(qq, "c2c:OWNER3", second).length, 1, "the second message was answered once");
	assert.equal(llm.requests.filter((r) => /"second"/.test(r.body) || /second/.test(r.body)).length >= 1, true);
	const asks = llm.requests.map((r) => r.body).filter((b) => /\bsecond\b/.test(b) && !/second answer/.test(b));
	assert.equal(asks.length, 1, "the second message reached the LLM once");
	await fw.end();
});

test("a drop while the agent answers: the answer still arrives, and a group message sent during the drop is answered once", async () => {
	const { qq, llm, boot, pair } = await setup();
	const fw = await boot();
	await pair(fw, { user: "OWNER6" });
	await pair(fw, { group: "GROUP6", user: "M6" });
	llm.script({ type: "text", text: "a slow answer that trickles in while the link is down", chunk: 2, fault: "trickle", chunkBytes: 128, intervalMs: 100 });
	const slow = qq.say({ user: "OWNER6", text: "a slow question" });
	await until(() => llm.requests.length === 1, "the LLM request");
	qq.drop();
	llm.script({ type: "text", text: "the group's answer" });
	const during = qq.say({ group: "GROUP6", user: "M7", text: "sent while the link is down" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER6", slow).length, 60_000, "the slow answer");
	await qq.waitFor(() => repliesTo(qq, "group:GROUP6", during).length, 60_000, "the group's answer");
	assert.equal(repliesTo(qq, "c2c:OWNER6", slow)[0].content, "a slow answer that trickles in while the link is down");
	assert.equal(repliesTo(qq, "group:GROUP6", during)[0].content, "the group's answer");
	assert.equal(qq.record.resume.length, 1);
	assert.equal(llm.requests.length, 2, "each message reached the LLM once");
	await fw.end();
});

test("/stop cancels a slow answer, a second message steers the answer in progress, /new starts a new conversation", async () => {
	const { qq, llm, boot, pair } = await setup();
	const fw = await boot();
	await pair(fw, { user: "OWNER7" });
	llm.script({ type: "text", text: "never", fault: "stall" });
	qq.say({ user: "OWNER7", text: "a slow question" });
	await until(() => llm.requests.length === 1, "the LLM request");
	const stop = qq.say({ user: "OWNER7", text: "/stop" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER7", stop).some((r) => /request cancelled/.test(r.content)), 30_000, "the cancellation");
	await until(() => llm.requests[0].response.closedAt !== null, "the LLM connection closed");

	llm.script(
		{ type: "text", text: "a first answer that takes its time to arrive here", chunk: 2, fault: "trickle", chunkBytes: 16, intervalMs: 100 },
		{ type: "text", text: "one answer to both of your messages" },
	);
	qq.say({ user: "OWNER7", text: "what is the weather" });
	await until(() => llm.requests.length === 2, "the first LLM request");
	const steer = qq.say({ user: "OWNER7", text: "and in Paris, please" });
	const steered = await qq.waitFor(() => repliesTo(qq, "c2c:OWNER7", steer)[0], 30_000, "the steered answer");
	assert.equal(steered.content, "one answer to both of your messages", "the answer replies to the newest message");
	assert.equal(llm.requests.length, 3);
	assert.match(llm.requests[2].body, /what is the weather/);
	assert.match(llm.requests[2].body, /and in Paris, please/);
	assert.ok(llm.requests[1].response.aborted, "the first call was aborted by the interrupt");

	const fresh = qq.say({ user: "OWNER7", text: "/new" });
	const answer = await qq.waitFor(() => repliesTo(qq, "c2c:OWNER7", fresh)[0], 30_000, "the /new answer");
	assert.match(answer.content, /session|conversation/i);
	llm.script({ type: "text", text: "a clean slate" });
	const after = qq.say({ user: "OWNER7", text: "do you remember Paris?" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER7", after).length, 30_000, "the answer in the new conversation");
	assert.doesNotMatch(llm.requests.at(-1).body, /and in Paris, please/, "the new conversation starts empty");
	await fw.end();
});

test("Reconnect (op 7) resumes; Invalid Session (op 9) leads to a fresh Identify", async () => {
	const { qq, llm, boot, pair } = await setup();
	const fw = await boot();
	await pair(fw, { user: "OWNER4" });
	qq.reconnect();
	await qq.waitFor(() => qq.record.resume.length === 1 && qq.live, 30_000, "a Resume after op 7");
	qq.invalidSession();
	await qq.waitFor(() => qq.record.identify.length === 2 && qq.live, 30_000, "a second Identify after op 9");
	llm.script({ type: "text", text: "after the new session" });
	const asked = qq.say({ user: "OWNER4", text: "still there?" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER4", asked).length, 30_000, "an answer on the new session");
	await fw.end();
});

test("the access token is refreshed before it expires (expires_in compressed to 3 s)", async () => {
	const { qq, llm, boot, pair } = await setup({ expiresIn: 3 });
	const fw = await boot();
	await pair(fw, { user: "OWNER5" });
	await qq.waitFor(() => qq.record.tokens.filter((t) => t.ok).length >= 3, 30_000, "two refreshes");
	llm.script({ type: "text", text: "fresh token" });
	const asked = qq.say({ user: "OWNER5", text: "token?" });
	await qq.waitFor(() => repliesTo(qq, "c2c:OWNER5", asked).length, 30_000, "the answer");
	assert.ok(qq.record.replies.every((r) => r.token_ok), "no reply was sent with an expired token");
	await fw.end();
});

test("bad credentials stop the channel with a sentence that says what to do; the secret is never printed", async () => {
	const { fw } = await (async () => {
		const env = await setup();
		return { fw: await env.boot({ secret: "wrong-secret-0123456789", connected: false }) };
	})();
	await fw.until(/qq: QQ refused the app id or secret \(HTTP 401\).*config set qq\.app_secret/);
	await fw.end();
});

test("no secret appears in any output", async () => {
	for (const fn of cleanups.splice(0).reverse()) await fn();
	assert.ok(outputs.length > 10, "the other tests produced output to scan");
	for (const text of outputs) {
		for (const secret of [SECRET, KEY, "wrong-secret-0123456789"]) assert.ok(!text.includes(secret), `a secret leaked: ${text.slice(0, 200)}`);
	}
	// Tokens: every one the mock issued stays out of the firmware's output and files.
	const issued = new Set();
	for (const text of outputs) for (const m of text.matchAll(/mocktok-[0-9a-f]+/g)) issued.add(m[0]);
	const firmwareOutputs = outputs.filter((t) => !t.startsWith("{\"tokens\""));
	for (const token of issued) for (const text of firmwareOutputs) assert.ok(!text.includes(token), "a token leaked into the firmware's output");
});
