// The Telegram channel's parts (modules/main/channels/telegram): chunking at 4096 on
// line boundaries with code fences kept whole, HTML with escaping, the Bot API
// envelope and its errors (the token never in a message), the update reader, the
// pairing (codes expire and die after wrong guesses; first chat owner, later ones
// users; hints rate-limited), the state file (a damaged one is kept aside), and
// the channel itself on a fake Bot API: unpaired chats never reach the router,
// groups only when addressed, /stop cancels, a streamed preview is replaced by
// the answer, a refused markup is sent again as plain text.
import files from "embedded:storage/files";
import type { Directory } from "embedded:storage/files";
import { test, assert } from "testing";
import { PAIRING_GUESS_DELAY_MS, PAIRING_HINTS_PER_HOUR, TELEGRAM_CHAT_OUTBOX_MAX, TELEGRAM_MESSAGE_MAX_CHARS, PAIRING_ATTEMPTS_MAX, PAIRING_CODE_TTL_MS, TELEGRAM_SEND_RETRIES } from "budgets";
import type { AgentEvent } from "core/types";
import { BotApi, BotApiError, TOKEN_MASK, readEnvelope } from "channels/telegram/api";
import { PAIRING_HINT, TelegramChannel, type BotApiLike } from "channels/telegram/channel";
import { chunk, escapeHtml, fitUnits, toHtml, units } from "channels/telegram/format";
import { Pairing } from "channels/pairing";
import { STATE_FILE, StateFile } from "channels/telegram/store";
import { parseUpdates } from "channels/telegram/updates";
import type { InMessage } from "router/types";
import type { Watch } from "router/router";
import { HttpError, type HttpRequest, type HttpResponse, type HttpTransport } from "net/types";
import { utf8, writeAtomically } from "util/files";

let dirs = 0;
function freshDirectory(): Directory {
	const name = `tg-unit-${++dirs}`;
	files.createDirectory(name);
	return files.openDirectory({ path: name });
}

// ---- format ----

test("chunks are at most 4096 characters, split on line boundaries, and add up to the text", () => {
	const lines = Array.from({ length: 300 }, (_, i) => `line ${i} ${"y".repeat(40)}`);
	const text = lines.join("\n");
	const parts = chunk(text);
	assert.ok(parts.length >= 3);
	assert.ok(parts.every((p) => p.length <= TELEGRAM_MESSAGE_MAX_CHARS));
	assert.equal(parts.join(""), text);
	assert.ok(parts.slice(0, -1).every((p) => p.endsWith("\n")));
	assert.deepEqual(chunk("short"), ["short"]);
});

test("a line longer than a message is cut, never inside a surrogate pair", () => {
	const text = "😀".repeat(5000);
	const parts = chunk(text);
	assert.equal(parts.join(""), text);
	for (const p of parts) {
		assert.ok(units(p) <= TELEGRAM_MESSAGE_MAX_CHARS, `${units(p)} UTF-16 units`);
		assert.ok((p.charCodeAt(p.length - 1) & 0xfc00) !== 0xd800, "no lone high surrogate at a cut");
	}
});

test("chunks are at most 4096 UTF-16 units, as Telegram counts them: an emoji is two (XS's length counts it once)", () => {
	assert.equal(units("a😀你"), 4);
	assert.equal(fitUnits("😀".repeat(10), 5), "😀😀", "a start that fits, cut between characters");
	assert.equal(fitUnits("abc", 5), "abc");
	const text = Array.from({ length: 400 }, (_, i) => `line ${i}: 你好 😀😀 ${"z".repeat(20)}`).join("\n");
	const parts = chunk(text);
	assert.equal(parts.join(""), text);
	for (const p of parts) assert.ok(units(p) <= TELEGRAM_MESSAGE_MAX_CHARS, `${units(p)} UTF-16 units`);
});

test("a code block split across chunks is closed and reopened", () => {
	const text = "intro\n```js\n" + Array.from({ length: 400 }, (_, i) => `const v${i} = ${i};`).join("\n") + "\n```\nafter";
	const parts = chunk(text);
	assert.ok(parts.length >= 2);
	for (const p of parts) assert.equal((p.match(/```/g) ?? []).length % 2, 0, "every chunk's fences are balanced");
	assert.match(parts[1], /^```js\n/);
	for (const p of parts) assert.ok(!/<(?!\/?(pre|code)\b)/.test(toHtml(p).replace(/<code class="language-js">/g, "")), "only pre/code tags");
});

test("HTML escapes everything but the markdown it converts", () => {
	assert.equal(escapeHtml(`a<b>&"c"`), "a&lt;b&gt;&amp;&quot;c&quot;");
	assert.equal(toHtml("**bold** and `x<y` and [site](https://e.org/?a=1&b=2) <script>"),
		`<b>bold</b> and <code>x&lt;y</code> and <a href="https://e.org/?a=1&amp;b=2">site</a> &lt;script&gt;`);
	assert.equal(toHtml("```py\nif a < b: pass\n```"), `<pre><code class="language-py">if a &lt; b: pass</code></pre>`);
	assert.equal(toHtml("```\nunclosed <"), "<pre>unclosed &lt;</pre>");
	assert.equal(toHtml("[x](javascript:alert(1))"), "[x](javascript:alert(1))", "only http(s) links");
});

// ---- the Bot API envelope ----

const hide = (t: string) => t;

test("the envelope gives the result, or a BotApiError with Telegram's code and retry_after", () => {
	assert.deepEqual(readEnvelope("getMe", `{"ok":true,"result":{"id":1}}`, hide), { id: 1 });
	const e429 = (() => { try { readEnvelope("sendMessage", `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`, hide, 429); } catch (e) { return e; } })();
	assert.ok(e429 instanceof BotApiError);
	assert.equal((e429 as BotApiError).code, 429);
	assert.equal((e429 as BotApiError).retryAfterMs, 7000);
	assert.throws(() => readEnvelope("getMe", "<html>", hide), /not JSON/);
	assert.throws(() => readEnvelope("getMe", `{"result":1}`, hide), /no "ok"/);
	assert.throws(() => readEnvelope("getMe", `{"ok":true}`, hide), /no "result"/);
});

function fakeHttp(answer: (request: HttpRequest) => Promise<HttpResponse>): HttpTransport & { urls: string[] } {
	const urls: string[] = [];
	return { urls, request: (r) => { urls.push(r.url); return answer(r); }, close() {} };
}
const response = (body: string): HttpResponse => ({ status: 200, headers: {}, body, bytesSent: 0, bytesReceived: 0, reusedConnection: false, firstByteMs: 0, durationMs: 0 });

test("the client puts the token in the path only, and no error message carries it", async () => {
	const token = "123:SECRET-token-abcdefghijk";
	const http = fakeHttp(async (r) => {
		if (r.url.endsWith("/getMe")) return response(`{"ok":true,"result":{"id":5,"username":"b"}}`);
		if (r.url.endsWith("/sendMessage")) throw new HttpError("status", "HTTP 401: Unauthorized", { status: 401, body: `{"ok":false,"error_code":401,"description":"Unauthorized ${token}"}` });
		throw new HttpError("connect", `cannot connect to api.telegram.org:443 for /bot${token}/x`);
	});
	const api = new BotApi(http, token, "https://api.telegram.org/");
	assert.deepEqual(await api.call("getMe", {}), { id: 5, username: "b" });
	assert.equal(http.urls[0], `https://api.telegram.org/bot${token}/getMe`);
	for (const method of ["sendMessage", "other"]) {
		try {
			await api.call(method, { chat_id: 1 });
			assert.fail("rejected");
		} catch (error) {
			assert.ok(error instanceof BotApiError);
			assert.ok(!(error as Error).message.includes(token), (error as Error).message);
			assert.ok(!(error as Error).message.includes("SECRET"));
			if (method === "sendMessage") assert.equal((error as BotApiError).code, 401);
			else assert.ok((error as Error).message.includes(TOKEN_MASK));
		}
	}
});

// ---- updates ----

const textUpdate = (id: number, text: string, chat = 42, type = "private", extra: Record<string, unknown> = {}) =>
	({ update_id: id, message: { message_id: id, chat: { id: chat, type }, from: { id: chat, first_name: "Ann", username: "ann" }, text, ...extra } });

test("updates are read into messages; malformed ones are skipped with a reason and still move the offset", () => {
	const parsed = parseUpdates([
		textUpdate(10, "hi"),
		{ update_id: 11, edited_message: {} },
		{ update_id: 12, message: { message_id: 1, chat: { id: 1, type: "private" }, from: { id: 1 } } },
		{ update_id: 13, message: { message_id: 1, chat: { id: "x", type: "private" }, from: { id: 1 }, text: "t" } },
		"junk",
		{ update_id: -1 },
		textUpdate(14, "@bot hey", -100, "supergroup", { entities: [{ type: "mention", offset: 0, length: 4 }, { type: "mention", offset: 50, length: 2 }], reply_to_message: { from: { id: 99 } } }),
	], 10);
	assert.equal(parsed.next_offset, 15);
	assert.equal(parsed.unreadable, 2);
	assert.equal(parsed.updates.length, 5);
	assert.deepEqual(parsed.updates[0].message, { message_id: 10, chat_id: "42", chat_type: "private", sender_id: "42", sender_name: "ann", text: "hi", mentions: [] });
	assert.match(parsed.updates[1].skipped ?? "", /not a message/);
	assert.match(parsed.updates[2].skipped ?? "", /no text/);
	assert.match(parsed.updates[3].skipped ?? "", /no chat id/);
	const group = parsed.updates[4].message!;
	assert.deepEqual(group.mentions, [{ type: "mention", offset: 0, length: 4 }], "an entity outside the text is dropped");
	assert.equal(group.reply_to_sender_id, "99");
	assert.equal(parseUpdates([textUpdate(5, "old")], 10).updates.length, 0, "an update below the offset is never acted on again");
	assert.throws(() => parseUpdates({}, 0), /not a list/);
});

// ---- pairing and the state file ----

test("a pairing code pairs the first chat as owner and later ones as users; it expires; wrong guesses slow their chat down without voiding it", () => {
	let now = 1000;
	const pairing = new Pairing(new StateFile(freshDirectory(), () => {}), () => now, () => 1_700_000_000_000);
	assert.match(pairing.pair("1", "a", "ANYTHING").ok ? "" : (pairing.pair("1", "a", "X") as { reason: string }).reason, /no valid pairing code/);
	let code = pairing.newCode();
	assert.match(code, /^[A-HJ-NP-Z2-9]{8}$/);
	assert.equal(pairing.roleOf("1"), undefined);
	assert.deepEqual(pairing.pair("1", "ann", code.toLowerCase()), { ok: true, role: "owner" });
	assert.equal(pairing.pair("2", "bob", code).ok, false, "one-time");
	code = pairing.newCode();
	assert.deepEqual(pairing.pair("2", "bob", code), { ok: true, role: "user" });
	assert.deepEqual(pairing.pair("2", "bob", "whatever"), { ok: true, role: "user", already: true });
	code = pairing.newCode();
	now += PAIRING_CODE_TTL_MS;
	assert.equal(pairing.pair("3", "cy", code).ok, false, "expired");
	code = pairing.newCode();
	for (let i = 0; i < PAIRING_ATTEMPTS_MAX; i++) assert.deepEqual(pairing.pair("3", "cy", "WRONGWRONG"), { ok: false, checked: true, reason: "that code is wrong: check it on the board's console (`telegram pair` prints a new one)" });
	const waiting = pairing.pair("3", "cy", code);
	assert.deepEqual(waiting, { ok: false, checked: false, reason: "too many wrong codes from this chat: the next one is read in 1 min" }, "a chat past its wrong guesses waits, even with the right code");
	// Strangers guessing from many chats never void the code: the owner-to-be still pairs with it.
	for (let chat = 100; chat < 400; chat++) for (let i = 0; i < PAIRING_ATTEMPTS_MAX + 2; i++) pairing.pair(String(chat), "x", "WRONGWRONG");
	assert.deepEqual(pairing.pair("4", "dee", code), { ok: true, role: "user" }, "the code outlived 2,100 wrong guesses from 300 chats");
	code = pairing.newCode();
	now += PAIRING_GUESS_DELAY_MS;
	assert.equal(pairing.pair("3", "cy", "WRONGWRONG").ok, false, "after the wait one more guess is read...");
	assert.match((pairing.pair("3", "cy", code) as { reason: string }).reason, /read in 2 min/, "...and the wait doubles");
	now += 2 * PAIRING_GUESS_DELAY_MS;
	assert.deepEqual(pairing.pair("3", "cy", code), { ok: true, role: "user" }, "then the right code pairs");
	assert.ok(pairing.revoke("1"));
	assert.ok(!pairing.revoke("1"));
	code = pairing.newCode();
	assert.deepEqual(pairing.pair("5", "eve", code), { ok: true, role: "owner" }, "with the owner revoked, the next pairing is the owner");
});

test("the pairing hint is sent at most once per chat per interval and a few times an hour overall", () => {
	const pairing = new Pairing(new StateFile(freshDirectory(), () => {}), () => 5);
	assert.ok(pairing.mayHint("a"));
	assert.ok(!pairing.mayHint("a"));
	let sent = 1;
	for (let i = 0; i < PAIRING_HINTS_PER_HOUR + 5; i++) if (pairing.mayHint(`c${i}`)) sent++;
	assert.equal(sent, PAIRING_HINTS_PER_HOUR);
});

test("the state file keeps pairings and the offset across opens; a damaged one is kept aside and the state starts empty", () => {
	const dir = freshDirectory();
	const state = new StateFile(dir, () => {});
	state.update({ bot_id: 7, offset: 120 });
	const pairing = new Pairing(state, () => 0);
	assert.ok(pairing.pair("42", "ann", pairing.newCode()).ok);
	const again = new StateFile(dir, () => {});
	assert.equal(again.state.offset, 120);
	assert.equal(again.state.bot_id, 7);
	assert.deepEqual(again.state.chats.map((c) => [c.chat_id, c.role]), [["42", "owner"]]);
	writeAtomically(dir, STATE_FILE, utf8(`{"version":1,"bot_id":7,"offset":"x","chats":[]}`));
	const warnings: string[] = [];
	const damaged = new StateFile(dir, (l) => warnings.push(l));
	assert.equal(damaged.state.chats.length, 0);
	assert.match(warnings[0], /damaged \(bot_id or offset is not a whole number\); it is kept as telegram\/state\.json\.bad/);
	assert.ok(dir.status("state.json.bad"));
});

// ---- the channel on a fake Bot API ----

interface Call { method: string; params: Record<string, unknown> }

function fakeChannel(options: { failHtml?: boolean; refuse?: string; holdSends?: boolean; failEdits?: number; onCancel?: (id: number) => void } = {}) {
	let editFailures = options.failEdits ?? 0;
	const calls: Call[] = [];
	// holdSends: sendMessage answers only once release() is called (a slow Telegram).
	let held: Array<() => void> | undefined = options.holdSends ? [] : undefined;
	const release = () => {
		const waiting = held ?? [];
		held = undefined;
		for (const go of waiting) go();
	};
	const batches: unknown[][] = [];
	let wake: (() => void) | undefined;
	let nextMessage = 500;
	const api: BotApiLike = {
		head: () => Promise.resolve(""),
		call(method, params, callOptions) {
			calls.push({ method, params });
			if (method === "getMe") return Promise.resolve({ id: 900, username: "the_bot" });
			if (method === "getUpdates") {
				if (batches.length) return Promise.resolve(batches.shift());
				return new Promise((resolve, reject) => {
					wake = () => resolve(batches.shift() ?? []);
					callOptions?.signal?.addListener(() => reject(new BotApiError("aborted", "aborted")));
				});
			}
			if (options.failHtml && params.parse_mode === "HTML") return Promise.reject(new BotApiError("api", "Telegram refused sendMessage (400: can't parse entities)", 400));
			if (method === "editMessageText" && editFailures > 0) {
				editFailures--;
				return Promise.reject(new BotApiError("api", "Telegram refused editMessageText (500: Internal Server Error)", 500));
			}
			if (method === "sendMessage") {
				const answer = { message_id: ++nextMessage };
				if (held) return new Promise((resolve) => held!.push(() => resolve(answer)));
				return Promise.resolve(answer);
			}
			return Promise.resolve(true);
		},
	};
	const published: InMessage[] = [];
	const watches: Watch[] = [];
	const cancelled: number[] = [];
	const timers: Array<() => void> = [];
	const pairing = new Pairing(new StateFile(freshDirectory(), () => {}), () => 0);
	let now = 0;
	const channel = new TelegramChannel({
		api,
		router: {
			async publish(message, watch) {
				published.push(message);
				watches.push(watch ?? {});
				if (options.refuse) return { kind: "failed", error: options.refuse };
				return { kind: "agent", request_id: published.length };
			},
		},
		port: { cancel: async (id) => { cancelled.push(id); options.onCancel?.(id); return id; }, command: async (name) => ({ lines: [`ran ${name}`] }) },
		pairing, state: new StateFile(freshDirectory(), () => {}),
		timers: { set: (cb) => timers.push(cb), clear: () => {} },
		now: () => (now += 2000),
		log: () => {}, notify: () => {},
	});
	const settle = async () => {
		for (let round = 0; round < 20; round++) {
			await new Promise<void>((r) => r());
			const due = timers.splice(0);
			for (const cb of due) cb();
			for (let i = 0; i < 5; i++) await Promise.resolve();
		}
	};
	const deliverBatch = async (updates: unknown[]) => {
		batches.push(updates);
		wake?.();
		await settle();
	};
	return { channel, calls, published, watches, cancelled, pairing, settle, deliverBatch, release, sent: (chat: string) => calls.filter((c) => (c.method === "sendMessage" || c.method === "editMessageText") && c.params.chat_id === chat) };
}

test("2,500 stranger chats sending a message and a wrong /pair each get at most PAIRING_HINTS_PER_HOUR replies in all, and the owner still pairs", async () => {
	const t = fakeChannel();
	t.channel.start();
	await t.settle();
	const code = t.pairing.newCode();
	let id = 1;
	for (let batch = 0; batch < 25; batch++) {
		const updates = [];
		for (let i = 0; i < 100; i++) {
			const chat = 10_000 + batch * 100 + i;
			updates.push(textUpdate(id++, "hello?", chat), textUpdate(id++, "/pair WRONG234", chat), textUpdate(id++, "/pair WRONG235", chat));
		}
		await t.deliverBatch(updates);
	}
	const toStrangers = t.calls.filter((c) => c.method === "sendMessage" && Number(c.params.chat_id) >= 10_000);
	assert.ok(toStrangers.length <= PAIRING_HINTS_PER_HOUR, `${toStrangers.length} replies to strangers (7,500 messages)`);
	assert.ok(!toStrangers.some((c, i) => toStrangers.findIndex((d) => d.params.chat_id === c.params.chat_id && d.params.text === c.params.text) !== i), "no chat got the same reply twice");
	await t.deliverBatch([textUpdate(id++, `/pair ${code}`, 42)]);
	assert.match(String(t.sent("42").at(-1)?.params.text), /Paired as owner/, "the owner's code was not voided, and its answer is never rate-limited");
	assert.equal(t.published.length, 0);
	await t.channel.stop();
});

test("an unpaired chat gets the hint and never reaches the router; a paired one does, with its role", async () => {
	const t = fakeChannel();
	t.channel.start();
	await t.settle();
	await t.deliverBatch([textUpdate(1, "hello", 42)]);
	assert.equal(t.published.length, 0);
	assert.equal(t.sent("42")[0].params.text, PAIRING_HINT);
	const code = t.pairing.newCode();
	await t.deliverBatch([textUpdate(2, `/pair ${code}`, 42)]);
	assert.match(String(t.sent("42").at(-1)?.params.text), /Paired as owner/);
	await t.deliverBatch([textUpdate(3, "what time is it", 42)]);
	assert.equal(t.published.length, 1);
	assert.equal(t.published[0].role, "owner");
	assert.equal(t.published[0].text, "what time is it");
	assert.ok(t.calls.some((c) => c.method === "sendChatAction"), "typing while the request runs");
	assert.ok(t.calls.some((c) => c.method === "setMyCommands"));
	await t.channel.stop();
});

test("a group chat is answered only when addressed, and the mention is taken out of the text", async () => {
	const t = fakeChannel();
	t.channel.start();
	await t.settle();
	t.pairing.pair("-5", "group", t.pairing.newCode());
	await t.deliverBatch([
		textUpdate(1, "just chatting", -5, "group"),
		textUpdate(2, "/help@other_bot", -5, "group", { entities: [{ type: "bot_command", offset: 0, length: 15 }] }),
		textUpdate(3, "@the_bot what is up", -5, "group", { entities: [{ type: "mention", offset: 0, length: 8 }] }),
		textUpdate(4, "and you?", -5, "group", { reply_to_message: { from: { id: 900 } } }),
	]);
	assert.deepEqual(t.published.map((m) => m.text), ["what is up", "and you?"]);
	assert.equal(t.sent("-5").length, 0, "no reply to messages for others");
	await t.channel.stop();
});

test("a group paired first: the member who paired it is the owner, the others users unless the owner says otherwise", async () => {
	const t = fakeChannel();
	t.channel.start();
	await t.settle();
	const code = t.pairing.newCode();
	const member = (id: number) => ({ from: { id, first_name: `m${id}` } });
	await t.deliverBatch([textUpdate(1, `/pair@the_bot ${code}`, -7, "supergroup", { ...member(11), entities: [{ type: "bot_command", offset: 0, length: 13 }] })]);
	assert.match(String(t.sent("-7").at(-1)?.params.text), /Paired as owner\. You are this group's owner; its other members are users/);
	const ask = (id: number, sender: number) => textUpdate(id, "switch the pump on", -7, "supergroup", { ...member(sender), reply_to_message: { from: { id: 900 } } });
	await t.deliverBatch([ask(2, 11), ask(3, 12)]);
	assert.deepEqual(t.published.map((m) => [m.sender_id, m.role]), [["11", "owner"], ["12", "user"]], "a never-paired member is a user");
	assert.equal(t.pairing.setMembers("-7", "owner"), undefined);
	await t.deliverBatch([ask(4, 12)]);
	assert.equal(t.published.at(-1)?.role, "owner", "the owner said members are owners");
	assert.equal(t.pairing.setMembers("-7", "user"), undefined);
	await t.deliverBatch([ask(5, 12)]);
	assert.equal(t.published.at(-1)?.role, "user");
	// A group saved before this rule (no sender_id): its members are users until the owner says otherwise.
	t.pairing.revoke("-7");
	t.pairing.pair("-8", "old group", t.pairing.newCode());
	assert.equal(t.pairing.roleOf("-8", "12"), "user");
	assert.equal(t.pairing.roleOf("-8"), "owner", "the chat's own role is kept");
	t.pairing.pair("42", "ann", t.pairing.newCode());
	assert.match(t.pairing.setMembers("42", "user") ?? "", /private chat/);
	assert.match(t.pairing.setMembers("99", "user") ?? "", /not paired/);
	await t.channel.stop();
});

/** A paired chat 42 whose request 1 started and streamed `text` as a preview. */
async function streamingIn42(options: Parameters<typeof fakeChannel>[0], text: string) {
	const t = fakeChannel(options);
	t.channel.start();
	await t.settle();
	t.pairing.pair("42", "ann", t.pairing.newCode());
	await t.deliverBatch([textUpdate(1, "tell me", 42)]);
	const watch = t.watches[0];
	const event = (e: Record<string, unknown>) => watch.onEvent?.({ agent_id: "root", request_id: 1, session_id: "s", ...e } as AgentEvent);
	event({ type: "agent_start", request: {} });
	event({ type: "message_start", attempt: 1 });
	event({ type: "message_update", delta: { type: "text", text } });
	await t.settle();
	return t;
}

test("a streamed preview is replaced by the answer; refused HTML goes again as plain text", async () => {
	const t = await streamingIn42({ failHtml: true }, "Hello <wor");
	const preview = t.sent("42").at(-1)!;
	assert.equal(preview.method, "sendMessage");
	assert.equal(preview.params.text, "Hello <wor");
	assert.equal(preview.params.parse_mode, undefined, "previews are plain text");
	t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text: "Hello <world> **done**", request_id: 1, correlation_id: "1" });
	await t.settle();
	const edits = t.sent("42").filter((c) => c.method === "editMessageText");
	assert.equal(edits.length, 2, "an HTML edit refused, then the plain one");
	assert.equal(edits[0].params.parse_mode, "HTML");
	assert.equal(edits[1].params.text, "Hello <world> **done**");
	assert.equal(edits[1].params.message_id, 501);
	await t.deliverBatch([textUpdate(3, "/stop", 42)]);
	assert.match(String(t.sent("42").at(-1)?.params.text), /Nothing is running/);
	await t.channel.stop();
});

test("/stop during a runaway: what waits is dropped, the confirmation goes first, and nothing more of the stopped request reaches the chat", async () => {
	// While the agent takes the cancel, more of the runaway arrives (a send_message carries no request id).
	const late = () => {
		t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text: "late spam", request_id: 0, correlation_id: "" });
		t.channel.deliver({ type: "agent_stage", channel: "telegram", chat_id: "42", text: "running tools: send_message (late)", request_id: 1 });
		event({ type: "message_update", delta: { type: "text", text: " more" } });
	};
	const t = fakeChannel({ holdSends: true, onCancel: late });
	t.channel.start();
	await t.settle();
	t.pairing.pair("42", "ann", t.pairing.newCode());
	await t.deliverBatch([textUpdate(1, "loop forever", 42)]);
	const watch = t.watches[0];
	const event = (e: Record<string, unknown>) => watch.onEvent?.({ agent_id: "root", request_id: 1, session_id: "s", ...e } as AgentEvent);
	event({ type: "agent_start", request: {} });
	// Every round: a progress line and a send_message (request id 0), faster than one a second.
	for (let i = 0; i < 20; i++) {
		t.channel.deliver({ type: "agent_stage", channel: "telegram", chat_id: "42", text: `running tools: send_message (${i})`, request_id: 1 });
		t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text: `spam ${i}`, request_id: 0, correlation_id: "" });
	}
	event({ type: "message_update", delta: { type: "text", text: "thinking" } });
	await t.settle();
	const before = t.sent("42").length;
	assert.equal(before, 1, "one call is on its way (held), the rest wait");
	await t.deliverBatch([textUpdate(2, "/stop", 42)]);
	assert.deepEqual(t.cancelled, [1]);
	event({ type: "message_update", delta: { type: "text", text: " and more" } });
	t.channel.deliver({ type: "agent_stage", channel: "telegram", chat_id: "42", text: "running tools: send_message (later)", request_id: 1 });
	event({ type: "agent_end", response: {} });
	t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text: "request cancelled", request_id: 1, correlation_id: "1" });
	t.release();
	for (let i = 0; i < 5; i++) await t.settle();
	const after = t.sent("42").slice(before).map((c) => String(c.params.text));
	assert.equal(after.length, 1, `only the confirmation followed the call on its way: ${JSON.stringify(after)}`);
	assert.match(after[0], /^Stopped \(request cancelled\)\. \d+ waiting messages were dropped\.$/);
	assert.ok(t.channel.status().some((l) => /dropped after \/stop: \d+ waiting messages, [1-9]\d* late ones/.test(l)), t.channel.status().join("; "));
	// The chat goes on: a new message is answered.
	await t.deliverBatch([textUpdate(3, "hello again", 42)]);
	t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text: "hi", request_id: 2, correlation_id: "3" });
	for (let i = 0; i < 3; i++) await t.settle();
	assert.equal(String(t.sent("42").at(-1)?.params.text), "hi");
	await t.channel.stop();
});

test("an answer whose edit into its preview Telegram keeps refusing (5xx) goes as a new message, once", async () => {
	const t = await streamingIn42({ failEdits: TELEGRAM_SEND_RETRIES }, "The ans");
	t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text: "The answer.", request_id: 1, correlation_id: "1" });
	await t.settle();
	const sent = t.sent("42");
	assert.equal(sent.filter((c) => c.method === "editMessageText").length, TELEGRAM_SEND_RETRIES, "the edit was tried as often as any call");
	const finals = sent.filter((c) => c.method === "sendMessage" && c.params.text === "The answer.");
	assert.equal(finals.length, 1, "then the answer went as a new message, once");
	await t.channel.stop();
});

test("an answer its preview already shows whole is not sent again when Telegram refuses the final edit", async () => {
	const t = await streamingIn42({ failEdits: TELEGRAM_SEND_RETRIES }, "The answer.");
	t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text: "The answer.", request_id: 1, correlation_id: "1" });
	await t.settle();
	const sent = t.sent("42");
	assert.equal(sent.filter((c) => c.method === "editMessageText").length, TELEGRAM_SEND_RETRIES, "the edit (HTML) was tried");
	assert.equal(sent.filter((c) => c.method === "sendMessage" && c.params.text === "The answer.").length, 1, "the preview only: the person has the answer once");
	await t.channel.stop();
});

test("a burst of messages the agent refuses gets the busy sentence once while one waits, and an answer still goes out", async () => {
	const busy = "the agent is busy: 4 requests are waiting; try again shortly";
	const t = fakeChannel({ refuse: busy, holdSends: true });
	t.channel.start();
	await t.settle();
	t.pairing.pair("42", "me", t.pairing.newCode());
	await t.deliverBatch(Array.from({ length: 20 }, (_, i) => textUpdate(i + 1, `message ${i}`, 42)));
	assert.equal(t.published.length, 20, "every message was tried");
	t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text: "an answer", request_id: 7, correlation_id: "" });
	t.release();
	await t.settle();
	const texts = t.sent("42").map((c) => String(c.params.text));
	assert.ok(texts.filter((x) => x === busy).length <= 2, `one busy sentence in flight and one waiting at most, not 20 (${texts.length} sent)`);
	assert.ok(texts.includes("an answer"), `the answer was not crowded out: ${JSON.stringify(texts)}`);
	// Once sent, a later refusal is told again.
	await t.deliverBatch([textUpdate(40, "again", 42)]);
	assert.equal(t.sent("42").map((c) => String(c.params.text)).at(-1), busy);
	await t.channel.stop();
});

test("progress never crowds out answers: stage messages beyond TELEGRAM_CHAT_OUTBOX_MAX waiting are skipped, every answer still goes out", async () => {
	const t = fakeChannel({ holdSends: true });
	t.channel.start();
	await t.settle();
	t.pairing.pair("42", "me", t.pairing.newCode());
	for (let i = 0; i < TELEGRAM_CHAT_OUTBOX_MAX + 8; i++) t.channel.deliver({ type: "agent_stage", channel: "telegram", chat_id: "42", text: `running tool ${i}`, request_id: 1 });
	const answers = Array.from({ length: 20 }, (_, i) => `answer ${i}`);
	for (const [i, text] of answers.entries()) t.channel.deliver({ type: "out_message", channel: "telegram", chat_id: "42", text, request_id: 100 + i, correlation_id: "" });
	t.release();
	for (let i = 0; i < 10; i++) await t.settle(); // 36 sends, a few turns each
	const texts = t.sent("42").map((c) => String(c.params.text));
	assert.deepEqual(answers.filter((a) => !texts.includes(a)), [], "every answer was sent");
	assert.equal(texts.filter((x) => x.startsWith("… running tool")).length, TELEGRAM_CHAT_OUTBOX_MAX, "progress stopped queueing once the outbox held that many");
	await t.channel.stop();
});
