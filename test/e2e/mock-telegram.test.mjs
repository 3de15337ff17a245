// The mock Telegram Bot API (tools/mock-telegram) checked against grammY, an
// independent Bot API client from npm, so a mock bug cannot hide a firmware bug:
// the calls the firmware makes succeed and return what grammY expects, Telegram's
// errors reach grammY with their codes and retry_after, and grammY's own long
// polling receives a scripted user's message and answers it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Bot, GrammyError, HttpError } from "grammy";
import { parseHtml, startMockTelegram } from "../../tools/mock-telegram/index.mjs";
import { until } from "./firmware.mjs";

const TOKEN = "123456:mock-telegram-token-AAAAAAAAAAAAAAAA";
const LONG_POLL_S = 50;

async function withMock(fn) {
	const tg = await startMockTelegram({ token: TOKEN });
	try {
		await fn(tg, new Bot(TOKEN, { client: { apiRoot: tg.url } }));
	} finally {
		await tg.close();
	}
}

test("grammY reads getMe, setMyCommands, sendMessage, editMessageText and sendChatAction from the mock", () => withMock(async (tg, bot) => {
	const me = await bot.api.getMe();
	assert.equal(me.username, tg.username);
	assert.equal(me.is_bot, true);
	assert.equal(await bot.api.setMyCommands([{ command: "stop", description: "stop it" }]), true);
	const sent = await bot.api.sendMessage(42, "<b>hi</b> &amp; bye", { parse_mode: "HTML" });
	assert.equal(sent.text, "hi & bye");
	const edited = await bot.api.editMessageText(42, sent.message_id, "hello again");
	assert.equal(typeof edited === "object" && edited.text, "hello again");
	assert.equal(await bot.api.sendChatAction(42, "typing"), true);
	assert.deepEqual(tg.chat(42).map((m) => m.text), ["hello again"]);
	assert.deepEqual(tg.chat(42)[0].edits, ["hi & bye"]);
}));

test("the mock refuses what Telegram refuses, and grammY sees Telegram's error codes", () => withMock(async (tg, bot) => {
	await assert.rejects(bot.api.sendMessage(1, "<b>open", { parse_mode: "HTML" }), (e) => e instanceof GrammyError && e.error_code === 400 && /can't parse entities/.test(e.description));
	await assert.rejects(bot.api.sendMessage(1, "x".repeat(4097)), (e) => e instanceof GrammyError && /too long/.test(e.description));
	const m = await bot.api.sendMessage(1, "same");
	await assert.rejects(bot.api.editMessageText(1, m.message_id, "same"), (e) => e instanceof GrammyError && /not modified/.test(e.description));
	tg.fault("sendMessage", { status: 429, retryAfter: 3 });
	await assert.rejects(bot.api.sendMessage(1, "flood"), (e) => e instanceof GrammyError && e.error_code === 429 && e.parameters.retry_after === 3);
	tg.fault("getMe", { status: 500 });
	await assert.rejects(bot.api.getMe(), (e) => e instanceof GrammyError && e.error_code === 500);
	tg.fault("getMe", { drop: true });
	await assert.rejects(bot.api.getMe(), (e) => e instanceof HttpError);
	const wrong = new Bot("999:wrong", { client: { apiRoot: tg.url } });
	await assert.rejects(wrong.api.getMe(), (e) => e instanceof GrammyError && e.error_code === 401);
}));

test("getUpdates confirms updates below the offset and long-polls until a user speaks", () => withMock(async (tg, bot) => {
	const first = tg.say({ chat: 5, text: "one" });
	tg.say({ chat: 5, text: "two" });
	const all = await bot.api.getUpdates({ timeout: 0 });
	assert.deepEqual(all.map((u) => u.message.text), ["one", "two"]);
	const rest = await bot.api.getUpdates({ offset: first + 1, timeout: 0 });
	assert.deepEqual(rest.map((u) => u.message.text), ["two"]);
	const again = await bot.api.getUpdates({ timeout: 0 });
	assert.deepEqual(again.map((u) => u.message.text), ["two"], "update one was confirmed by the offset");
	// The poll may wait 50 s (Telegram's longest); the update comes once it waits.
	// Had the poll ended only at its timeout, it would have taken the 50 s.
	const started = Date.now();
	const waiting = bot.api.getUpdates({ offset: first + 2, timeout: LONG_POLL_S });
	await until(() => tg.polling, "the long poll to wait");
	tg.say({ chat: 5, text: "three" });
	const later = await waiting;
	assert.deepEqual(later.map((u) => u.message.text), ["three"]);
	assert.ok(Date.now() - started < LONG_POLL_S * 1000 * 0.8, "the long poll ended when the update came, not at its timeout");
}));

test("grammY's own long polling gets a scripted message and its reply lands in the chat", () => withMock(async (tg, bot) => {
	bot.on("message:text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`));
	const running = bot.start({ timeout: 1, drop_pending_updates: false });
	tg.say({ chat: 77, text: "ping" });
	await tg.waitFor(() => tg.chat(77).length, 60_000, "the echo");
	assert.equal(tg.chat(77)[0].text, "echo: ping");
	await bot.stop();
	await running;
}));

test("the mock's HTML reading matches Telegram's entities", () => {
	assert.equal(parseHtml("a &lt;b&gt; &amp; &quot;c&quot; &#65;"), 'a <b> & "c" A');
	assert.equal(parseHtml('<pre><code class="language-js">x</code></pre> <a href="http://e">l</a>'), "x l");
	assert.throws(() => parseHtml("<b>x</i>"), /can't parse entities/);
	assert.throws(() => parseHtml("<script>"), /Unsupported/);
	assert.throws(() => parseHtml("a & b"), /entity/);
});
