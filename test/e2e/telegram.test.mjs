// Telegram as a person meets it: the firmware on the lin host, the mock Bot API
// (tools/mock-telegram) and the mock LLM (tools/mock-llm), all on loopback. Each
// test configures the firmware on its console, pairs a chat through the code the
// console prints, talks as scripted users, and checks what the chats received,
// what the LLM received, and what the console printed. The last test scans every
// output of the file (console, log, files, replies, LLM request bodies) for the
// bot token and the API key.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { startMockTelegram } from "../../tools/mock-telegram/index.mjs";
import { APP_MAP } from "../../tools/build.mjs";
import { WAIT_MS, filesUnder, startFirmware, until } from "./firmware.mjs";
import { SANITIZER_ERROR } from "./xs.mjs";

const TOKEN = "7000001:AAHsecretTelegramBotTokenForTests0123";
const KEY = "sk-telegram-e2e-secret-0123456789";
const HINT = /answers paired chats only/;
const outputs = [];       // everything the suite's firmwares and mocks produced, for the secrets scan
const cleanups = [];
after(async () => {
	for (const fn of cleanups.reverse()) await fn();
});


/** A data directory, the two mocks, and a firmware that uses them; everything is kept for the scan and cleaned up. */
async function setup({ token = TOKEN } = {}) {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-telegram-"));
	const llm = await startMockLLM({ requireKey: KEY });
	const tg = await startMockTelegram({ token: TOKEN });
	const firmwares = [];
	const env = {
		dir, llm, tg, firmwares,
		async boot({ configure = true, connected = true, args = [] } = {}) {
			const fw = startFirmware(["--modules", APP_MAP, "--data", dir, ...args], "release");
			firmwares.push(fw);
			await fw.until(/type help for the commands/);
			if (configure) {
				for (const line of [
					"config set llm.provider custom", `config set llm.base_url ${llm.url}/v1`, "config set llm.model gpt-mock",
					`config set llm.api_key ${KEY}`, `config set telegram.base_url ${tg.url}`, "config set telegram.poll_timeout_s 2",
					`config set telegram.token ${token}`,
				]) {
					const from = fw.stdout.length;
					fw.send(line);
					await fw.until(/^ok: /m, { from });
				}
			}
			if (connected) await fw.until(/telegram: connected as @xsclaw_test_bot/);
			return fw;
		},
		async pair(fw, chat, extra = {}) {
			const from = fw.stdout.length;
			fw.send("telegram pair");
			await fw.until(/pairing code ([A-Z0-9]+)/, { from });
			const code = /pairing code ([A-Z0-9]+)/.exec(fw.printed(from))[1];
			const before = tg.chat(chat).length;
			tg.say({ chat, text: `/pair ${code}`, ...extra });
			await tg.waitFor(() => tg.chat(chat).slice(before).some((m) => /^Paired as/.test(m.text)), WAIT_MS, "the pairing reply");
		},
	};
	cleanups.push(async () => {
		for (const fw of firmwares) await fw.kill();
		for (const fw of firmwares) outputs.push(fw.stdout, fw.stderr);
		for (const file of filesUnder(dir)) outputs.push(readFileSync(file, "latin1"));
		for (const call of tg.calls) outputs.push(JSON.stringify(call.params));
		for (const r of llm.requests) outputs.push(r.body);
		await tg.close();
		await llm.close();
		rmSync(dir, { recursive: true, force: true });
	});
	return env;
}

/** The bot's messages in a chat after index `from`. */
const since = (tg, chat, from) => tg.chat(chat).slice(from);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("an unpaired chat gets one pairing hint and nothing reaches the LLM; after /pair the answer arrives streamed as edits", async () => {
	const { tg, llm, boot, pair } = await setup();
	const fw = await boot();
	tg.say({ chat: 42, text: "hello, who are you?" });
	await tg.waitFor(() => tg.chat(42).length === 1, WAIT_MS, "the hint");
	assert.match(tg.chat(42)[0].text, HINT);
	tg.say({ chat: 42, text: "please answer" });
	tg.say({ chat: 43, text: "/start" });
	await tg.waitFor(() => tg.chat(43).length === 1, WAIT_MS, "the second chat's hint");
	await sleep(1500);
	assert.equal(tg.chat(42).length, 1, "the hint is rate-limited per chat");
	assert.equal(llm.requests.length, 0, "nothing from an unpaired chat reaches the LLM");

	await pair(fw, 42);
	assert.match(tg.chat(42).at(-1).text, /Paired as owner/);
	assert.match(fw.stdout, /chat 42 \(user42\) paired as owner/);

	const answer = "The answer streams in slowly, piece by piece, until it is whole at last. **Done** & <ok>.";
	llm.script({ type: "text", text: answer, chunk: 4, fault: "trickle", chunkBytes: 48, intervalMs: 60 });
	const from = tg.chat(42).length;
	tg.say({ chat: 42, text: "tell me something" });
	const final = await tg.waitFor(() => since(tg, 42, from).find((m) => m.text === answer.replace("**Done**", "Done")), WAIT_MS, "the final answer");
	assert.ok(final.edits.length >= 2, `the reply was streamed by editing one message (edits: ${JSON.stringify(final.edits)})`);
	assert.ok(final.edits.every((text) => answer.startsWith(text.replace(/…$/, ""))), "every preview is a prefix of the answer");
	assert.equal(final.parse_mode, "HTML");
	assert.match(final.raw, /<b>Done<\/b> &amp; &lt;ok&gt;/);
	assert.ok(tg.calls.some((c) => c.method === "sendChatAction" && c.params.chat_id === "42" && c.params.action === "typing"), "typing while working");
	assert.equal(llm.requests.length, 1);
	assert.match(llm.requests[0].body, /tell me something/);
	// Edits of one chat are at least a second apart.
	const edits = tg.calls.filter((c) => c.method === "editMessageText" && c.params.chat_id === "42").map((c) => c.at);
	for (let i = 1; i < edits.length; i++) assert.ok(edits[i] - edits[i - 1] >= 900, `edits ${edits[i] - edits[i - 1]} ms apart`);

	// Malformed updates are skipped with a log line; the channel goes on.
	tg.raw({ message: { message_id: 9, chat: "no id", text: 5 } });
	tg.raw({ edited_message: { message_id: 9, chat: { id: 42, type: "private" }, text: "edited" } });
	tg.raw({ message: { message_id: 10, chat: { id: 42, type: "private" }, from: { id: 42 }, sticker: {} } });
	llm.script({ type: "text", text: "still here" });
	tg.say({ chat: 42, text: "are you still there?" });
	await tg.waitFor(() => tg.chat(42).some((m) => m.text === "still here"), WAIT_MS, "an answer after malformed updates");
	assert.match(fw.stderr, /telegram: update \d+ skipped: the message has no chat id/);
	assert.match(fw.stderr, /skipped: not a message/);
	assert.match(fw.stderr, /skipped: the message has no text/);
	const result = await fw.end();
	assert.equal(result.code, 0);
});

test("a 9,000-character answer arrives in chunks of at most 4096 characters that add up to it", async () => {
	const { tg, llm, boot, pair } = await setup();
	const fw = await boot();
	await pair(fw, 50);
	const lines = [];
	for (let i = 0; lines.join("\n").length < 9000; i++) lines.push(`line ${i}: a < b & c > d "quoted" ${"x".repeat(60)}`);
	const text = lines.join("\n").slice(0, 9000);
	llm.script({ type: "text", text, chunk: 400 });
	const from = tg.chat(50).length;
	tg.say({ chat: 50, text: "a long answer please" });
	await tg.waitFor(() => since(tg, 50, from).map((m) => m.text).join("").length >= text.length, WAIT_MS, "the whole answer");
	await sleep(1500); // no stray edit may follow
	const parts = since(tg, 50, from).map((m) => m.text);
	assert.equal(parts.length, 3, `three chunks (${parts.map((p) => p.length).join(", ")})`);
	assert.ok(parts.every((p) => p.length <= 4096));
	assert.equal(parts.join(""), text);
	assert.ok(parts.slice(0, -1).every((p) => p.endsWith("\n")), "split on line boundaries");
	await fw.end();
});

test("/stop during a slow reply cancels it, and a second message during a request steers it", async () => {
	const { tg, llm, boot, pair } = await setup();
	const fw = await boot();
	await pair(fw, 60);
	llm.script({ type: "text", text: "never", fault: "stall" });
	let from = tg.chat(60).length;
	tg.say({ chat: 60, text: "a slow question" });
	await until(() => llm.requests.length === 1, "the LLM request");
	tg.say({ chat: 60, text: "/stop" });
	await tg.waitFor(() => since(tg, 60, from).some((m) => /request cancelled/.test(m.text)), WAIT_MS, "the cancellation");
	await until(() => llm.requests[0].response.closedAt !== null, "the LLM connection closed");

	// Steering: the first answer trickles; a second message aborts it and the loop goes on with both.
	llm.script(
		{ type: "text", text: "a first answer that takes its time to arrive here", chunk: 2, fault: "trickle", chunkBytes: 16, intervalMs: 100 },
		{ type: "text", text: "one answer to both of your messages" },
	);
	from = tg.chat(60).length;
	tg.say({ chat: 60, text: "what is the weather" });
	await until(() => llm.requests.length === 2, "the first LLM request");
	tg.say({ chat: 60, text: "and in Paris, please" });
	await tg.waitFor(() => since(tg, 60, from).some((m) => m.text === "one answer to both of your messages"), WAIT_MS, "the steered answer");
	assert.equal(llm.requests.length, 3);
	assert.match(llm.requests[2].body, /what is the weather/);
	assert.match(llm.requests[2].body, /and in Paris, please/);
	assert.ok(llm.requests[1].response.aborted, "the first call was aborted by the interrupt");
	await sleep(1200);
	assert.equal(since(tg, 60, from).filter((m) => !m.text.startsWith("…")).length, 1, "one answer, not two");
	await fw.end();
});

test("lone UTF-16 surrogates in a message reach neither the LLM nor the session: U+FFFD, once, where the text enters", async () => {
	const { tg, llm, boot, pair, dir } = await setup();
	const fw = await boot();
	await pair(fw, 65);
	// JSON carries them as \\udXXX escapes; a provider may refuse them (400 "no low surrogate in string") in every later request.
	const lone = `broken \ud83d here and \ude00 there, a pair 😀 kept`;
	llm.script({ type: "text", text: "first" }, { type: "text", text: "second" });
	tg.say({ chat: 65, text: lone });
	await tg.waitFor(() => tg.chat(65).some((m) => m.text === "first"), WAIT_MS, "the first answer");
	tg.say({ chat: 65, text: "and again" });
	await tg.waitFor(() => tg.chat(65).some((m) => m.text === "second"), WAIT_MS, "the second answer");
	// The firmware's JSON escapes only lone surrogates (a pair goes as UTF-8).
	const escaped = /\\ud[89a-f][0-9a-f]{2}/i;
	for (const [i, r] of llm.requests.entries()) {
		assert.ok(!escaped.test(r.body), `request ${i} holds no lone surrogate escape: ${r.body.slice(0, 300)}`);
		assert.ok(r.body.includes("broken \ufffd here and \ufffd there, a pair 😀 kept"), `request ${i} carries the repaired text`);
	}
	await fw.end();
	for (const file of filesUnder(dir)) {
		const text = readFileSync(file, "utf8");
		assert.ok(!escaped.test(text), `${file} holds no lone surrogate`);
	}
});

test("/stop during a runaway that sends a message every round: the confirmation is the last thing the chat receives, within 2 s", async () => {
	const { tg, llm, boot, pair } = await setup();
	const fw = await boot();
	await pair(fw, 66);
	// Nine rounds of three send_message calls each (queued far faster than one a second), then a stalled round.
	const spam = (round) => ({ type: "tool_calls", calls: [0, 1, 2].map((i) => ({ name: "send_message", arguments: { channel: "telegram", chat_id: "66", text: `spam ${round}.${i}` } })) });
	llm.script(...Array.from({ length: 9 }, (_, round) => spam(round)), { type: "text", text: "never", fault: "stall" });
	tg.say({ chat: 66, text: "spam me" });
	await until(() => llm.requests.length === 10, "the stalled tenth round");
	await tg.waitFor(() => tg.chat(66).some((m) => /^spam /.test(m.text)), WAIT_MS, "the first spam");
	const sends = () => tg.calls.filter((c) => (c.method === "sendMessage" || c.method === "editMessageText") && String(c.params.chat_id) === "66");
	const stopAt = Date.now();
	const before = sends().length;
	tg.say({ chat: 66, text: "/stop" });
	const confirmation = await tg.waitFor(() => tg.chat(66).find((m) => /^Stopped \(request cancelled\)\./.test(m.text)), WAIT_MS, "the confirmation");
	assert.ok(confirmation.sent_at - stopAt <= 2000, `the confirmation came ${confirmation.sent_at - stopAt} ms after /stop`);
	assert.match(confirmation.text, /\d+ waiting messages were dropped\./, "what waited was dropped, and said so");
	await until(() => llm.requests[9].response.closedAt !== null, "the LLM connection closed");
	await sleep(3000);
	const after = sends().slice(before);
	assert.equal(after.at(-1).params.text, confirmation.raw ?? confirmation.text, `the confirmation is the last thing the chat received: ${JSON.stringify(after.map((c) => c.params.text))}`);
	assert.ok(after.length <= 2, `at most the message already on its way, then the confirmation: ${JSON.stringify(after.map((c) => c.params.text))}`);
	const spams = tg.chat(66).filter((m) => /^spam /.test(m.text)).length;
	assert.ok(spams < 27, `${spams} of 27 spam messages went out`);
	const status = await fw.run("telegram status", /dropped after \/stop: \d+ waiting messages, \d+ late ones/);
	assert.match(status, /dropped after \/stop/);
	await fw.end();
});

test("cancel on the console during a runaway that sends the console a message every round: nothing of the request is printed after it but the ask's own error", async () => {
	const { llm, boot } = await setup();
	const fw = await boot();
	const spam = (round) => ({ type: "tool_calls", calls: [0, 1, 2].map((i) => ({ name: "send_message", arguments: { channel: "console", text: `spam ${round}.${i}` } })) });
	llm.script(...Array.from({ length: 9 }, (_, round) => spam(round)), { type: "text", text: "never", fault: "stall" });
	const from = fw.stdout.length;
	fw.send("ask spam the console");
	await until(() => llm.requests.length === 10, "the stalled tenth round");
	fw.send("cancel");
	await fw.until(/^request \d+ cancelled$/m, { from });
	await fw.until(/^error: request cancelled$/m, { from });
	await sleep(1500);
	const printed = fw.printed(from);
	const cancelAt = printed.search(/^request \d+ cancelled$/m);
	const after = printed.slice(cancelAt).split("\n").filter((l) => /spam|agent \(request/.test(l));
	assert.deepEqual(after, [], "no message of the cancelled request after cancel");
	assert.ok((printed.match(/^spam \d\.\d$/gm) ?? []).length === 27, "the rounds before cancel were printed at once (the console has no outbox)");
	await fw.end();
});

test("a group paired first: a never-paired member replying to the bot cannot run gpio_write; the member who paired it can", async () => {
	const { tg, llm, boot } = await setup();
	const fw = await boot();
	const from = fw.stdout.length;
	fw.send("telegram pair");
	await fw.until(/pairing code ([A-Z0-9]+)/, { from });
	const code = /pairing code ([A-Z0-9]+)/.exec(fw.printed(from))[1];
	const member = (id) => ({ id, is_bot: false, first_name: `member${id}`, username: `member${id}` });
	const command = `/pair@xsclaw_test_bot ${code}`;
	tg.say({ chat: -300, type: "supergroup", from: member(11), text: command, entities: [{ type: "bot_command", offset: 0, length: command.indexOf(" ") }] });
	const paired = await tg.waitFor(() => tg.chat(-300).find((m) => /^Paired as owner/.test(m.text)), WAIT_MS, "the pairing reply");
	assert.match(paired.text, /its other members are users/);
	const botMessage = { message_id: paired.message_id, from: { id: tg.botId, is_bot: true, first_name: "bot" }, chat: { id: -300, type: "supergroup" }, date: 1, text: paired.text };
	const gpioFrom = async (sender) => {
		llm.script({ type: "tool_calls", calls: [{ name: "gpio_write", arguments: { pin: 2, value: 1 } }] }, { type: "text", text: `done for ${sender}` });
		tg.say({ chat: -300, type: "supergroup", from: member(sender), text: "switch pin 2 on", replyTo: botMessage });
		await tg.waitFor(() => tg.chat(-300).some((m) => m.text === `done for ${sender}`), WAIT_MS, `the answer to member ${sender}`);
		return String(llm.requests.at(-1).json.messages.filter((m) => m.role === "tool").at(-1).content);
	};
	assert.match(await gpioFrom(12), /the tool gpio_write is only for the owner/, "a never-paired member is a user");
	assert.doesNotMatch(await gpioFrom(11), /only for the owner/, "the member who paired the group is the owner");
	const list = await fw.run("telegram list", /-300 owner .*\)$/m);
	assert.match(list, /group: member 11 is owner, the others user/);
	await fw.run("telegram members -300 owner", /its members are the owner/);
	assert.doesNotMatch(await gpioFrom(12), /only for the owner/, "the owner said otherwise");
	await fw.end();
});

test("web login sends its code to the owner's private chat, never to a user's chat or a group; the code sent logs in", async () => {
	const { tg, boot, pair } = await setup();
	const fw = await boot({ args: ["--http", "0"] });
	await fw.until(/web: serving http:\/\/127\.0\.0\.1:(\d+)\//);
	const base = `http://127.0.0.1:${/web: serving http:\/\/127\.0\.0\.1:(\d+)\//.exec(fw.printed())[1]}`;
	const member = (id) => ({ id, is_bot: false, first_name: `member${id}`, username: `member${id}` });
	// A group paired first has the owner's role (for the member who paired it), but users read along: no code there.
	let from = fw.stdout.length;
	fw.send("telegram pair");
	await fw.until(/pairing code ([A-Z0-9]+)/, { from });
	const command = `/pair@xsclaw_test_bot ${/pairing code ([A-Z0-9]+)/.exec(fw.printed(from))[1]}`;
	tg.say({ chat: -310, type: "supergroup", from: member(21), text: command, entities: [{ type: "bot_command", offset: 0, length: command.indexOf(" ") }] });
	await tg.waitFor(() => tg.chat(-310).some((m) => /^Paired as owner/.test(m.text)), WAIT_MS, "the group's pairing reply");
	await pair(fw, 70);
	assert.match(tg.chat(70).at(-1).text, /Paired as user/);
	const codeLine = /web: login code (\w+) \(valid 10 min, once\)(.*)$/m;
	from = fw.stdout.length;
	fw.send("web login");
	await fw.until(codeLine, { from });
	assert.equal(codeLine.exec(fw.printed(from))[2], "", "no owner's private chat: printed only");
	// The group revoked, the next private chat paired is the owner's.
	await fw.run("telegram revoke -310", /-310/);
	await pair(fw, 72);
	assert.match(tg.chat(72).at(-1).text, /Paired as owner/);
	const counts = { 70: tg.chat(70).length, [-310]: tg.chat(-310).length };
	from = fw.stdout.length;
	fw.send("web login");
	await fw.until(codeLine, { from });
	const [, code, sent] = codeLine.exec(fw.printed(from));
	assert.equal(sent, "; sent to the owner's telegram chat 72");
	const message = await tg.waitFor(() => tg.chat(72).find((m) => m.text.includes(code)), WAIT_MS, "the code in the owner's chat");
	assert.match(message.text, /^Web console login code: \w+ \(valid 10 min, once\)/);
	await sleep(1200); // a send to another chat would have gone by now
	assert.equal(tg.chat(70).length, counts[70], "the user's chat got nothing");
	assert.equal(tg.chat(-310).length, counts[-310], "the group got nothing");
	assert.ok(!fw.stderr.includes(code), "the code is in no log line");
	const login = await fetch(`${base}/api/login`, { method: "POST", headers: { "Content-Type": "application/json", Origin: base }, body: JSON.stringify({ code: /code: (\w+)/.exec(message.text)[1] }) });
	assert.equal(login.status, 200, await login.clone().text());
	assert.match(login.headers.get("set-cookie"), /^xsclaw_session=\w+; HttpOnly/);
	await fw.end();
});

test("after a restart, and after a kill right after answering, no update is answered twice", async () => {
	const { tg, llm, boot, pair } = await setup();
	let fw = await boot();
	await pair(fw, 70);
	llm.script({ type: "text", text: "first answer" });
	tg.say({ chat: 70, text: "question one" });
	await tg.waitFor(() => tg.chat(70).some((m) => m.text === "first answer"), WAIT_MS, "the first answer");
	await fw.end();
	fw = await boot({ configure: false });
	await sleep(2500);
	assert.equal(llm.requests.length, 1, "a restart answers nothing again");

	// The polls after question two, which would confirm it at Telegram, are dropped;
	// the firmware answers and is killed: Telegram would hand the update out again.
	llm.script({ type: "text", text: "second answer" });
	await until(() => tg.polling, "a long poll waiting");
	tg.say({ chat: 70, text: "question two" }); // answers the waiting poll at once
	tg.fault("getUpdates", { drop: true }, 1000);
	await tg.waitFor(() => tg.chat(70).some((m) => m.text === "second answer"), WAIT_MS, "the second answer");
	await fw.kill();
	assert.ok(tg.pending > 0, "the update is still unconfirmed at Telegram");
	tg.clearFaults();
	fw = await boot({ configure: false });
	await until(() => tg.pending === 0, "the saved offset confirming the update");
	await sleep(1500);
	assert.equal(llm.requests.length, 2, "question two was not sent to the LLM again");
	assert.equal(tg.chat(70).filter((m) => m.text === "second answer").length, 1);
	await fw.end();
});

test("a 429 from Telegram is waited out for its retry_after", async () => {
	const { tg, boot } = await setup();
	await boot();
	tg.fault("sendMessage", { status: 429, retryAfter: 2 });
	tg.say({ chat: 80, text: "hi" });
	await tg.waitFor(() => tg.chat(80).length === 1, WAIT_MS, "the hint after the 429");
	const sends = tg.calls.filter((c) => c.method === "sendMessage" && c.params.chat_id === "80");
	assert.equal(sends.length, 2);
	assert.equal(sends[0].fault.status, 429);
	assert.ok(sends[1].at - sends[0].at >= 1900, `waited ${sends[1].at - sends[0].at} ms`);
});

test("network loss backs off and resumes; a group chat is answered only when addressed", async () => {
	const { tg, boot } = await setup();
	const fw = await boot();
	tg.fault("getUpdates", { drop: true }, 2);
	tg.fault("getUpdates", { status: 502 }, 1);
	await fw.until(/cannot reach Telegram/);
	await fw.until(/reachable again/);
	tg.say({ chat: -100, type: "supergroup", text: "people talking among themselves" });
	tg.say({ chat: -100, type: "supergroup", text: "@xsclaw_test_bot hello", entities: [{ type: "mention", offset: 0, length: 16 }] });
	await tg.waitFor(() => tg.chat(-100).length === 1, WAIT_MS, "the group's hint");
	await sleep(1000);
	assert.equal(tg.chat(-100).length, 1);
	assert.match(tg.chat(-100)[0].text, HINT);
	await fw.end();
});

test("a bad token gives a clear console message and no crash loop", async () => {
	const { tg, boot } = await setup({ token: "7000001:wrong-token-for-the-test-000000000" });
	const fw = await boot({ connected: false });
	await fw.until(/Telegram refused the bot token \(401 Unauthorized\): polling stopped/);
	await sleep(2500);
	assert.equal(tg.calls.filter((c) => c.method === "getMe").length, 1, "no retry loop on a refused token");
	const from = fw.stdout.length;
	fw.send("telegram status");
	await fw.until(/paired chats: 0/, { from });
	assert.match(fw.printed(from), /telegram: stopped/);
	// Below the level in force, log lines are dropped: at warn, no METRIC line.
	const levelFrom = fw.stdout.length;
	fw.send("log level warn");
	await fw.until(/log level: warn/, { from: levelFrom });
	const result = await fw.end();
	assert.equal(result.code, 0);
	assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
});

test("no console line, log line, file, reply or request body of these tests holds the bot token or the API key", async () => {
	for (const fn of cleanups.splice(0).reverse()) await fn();
	assert.ok(outputs.length > 20, "the other tests produced output to scan");
	for (const text of outputs) {
		assert.ok(!text.includes(TOKEN), `the bot token leaked: ${text.slice(Math.max(0, text.indexOf(TOKEN) - 200), text.indexOf(TOKEN) + 60)}`);
		assert.ok(!text.includes(KEY), `the API key leaked: ${text.slice(Math.max(0, text.indexOf(KEY) - 200), text.indexOf(KEY) + 60)}`);
		assert.ok(!text.includes("AAHsecretTelegram"), "a part of the token leaked");
	}
});
