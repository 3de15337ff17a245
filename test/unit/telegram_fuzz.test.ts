// Fuzz tests of the Telegram update reader and the router's rules parser, run in
// XS on the release and the ASan/UBSan host: seeded random bytes, truncations and
// mutations of valid input, oversized input and invalid UTF-8 must end in a
// result or the parser's own error (BotApiError, TypeError, RulesError) — never
// another exception, a crash or a hang. The formatter is fuzzed for its
// invariants: chunks within the limit that add up to the text, HTML that escapes
// every "<" it did not write.
import { test, assert } from "testing";
import { generator, mutate, randomBytes, seedFor } from "test/fuzz";
import { TELEGRAM_MESSAGE_MAX_CHARS } from "budgets";
import { BotApiError, readEnvelope } from "channels/telegram/api";
import { chunk, toHtml } from "channels/telegram/format";
import { parseUpdates } from "channels/telegram/updates";
import { RulesError, parseRules } from "router/rules";
import { decodeUtf8, encodeUtf8 } from "net/utf8";

/** The first seed of every loop here (--seed N replays another run). */
const SEED = seedFor(1);

const SEEDS = 400;


const VALID_UPDATES = JSON.stringify({
	ok: true,
	result: [
		{ update_id: 1, message: { message_id: 1, chat: { id: 42, type: "private" }, from: { id: 42, first_name: "Ann" }, text: "héllo 🌡 <b>", entities: [{ type: "bot_command", offset: 0, length: 3 }] } },
		{ update_id: 2, message: { message_id: 2, chat: { id: -100, type: "supergroup" }, from: { id: 7, username: "bo" }, text: "@bot hi", entities: [{ type: "mention", offset: 0, length: 4 }], reply_to_message: { from: { id: 9 } } } },
		{ update_id: 3, edited_message: { text: "x" } },
	],
});

const VALID_RULES = JSON.stringify({
	version: 1,
	rules: [
		{ name: "ping", match: { channel: "telegram", chat: "42", sender: "7", role: "owner", text: "^ping$", ignore_case: true }, action: { type: "send_message", text: "pong", chat: "1" } },
		{ match: { text: "^/t" }, action: { type: "call_cap", cap: "get_time", args: { a: 1 }, reply: false } },
		{ action: { type: "run_agent", flags: ["USER_INTERRUPT"], text: "{text}" } },
	],
	fallback: { type: "run_agent" },
});



// The channel's path for a getUpdates body: bytes -> text (as net/http decodes) -> envelope -> updates.
function readUpdatesBody(bytes: Uint8Array): void {
	try {
		const result = readEnvelope("getUpdates", decodeUtf8(bytes), (t) => t);
		const parsed = parseUpdates(result, 0);
		assert.ok(parsed.next_offset >= 0);
		for (const u of parsed.updates) assert.ok(u.message !== undefined || typeof u.skipped === "string");
	} catch (error) {
		if (!(error instanceof BotApiError) && !(error instanceof TypeError && /not a list/.test(error.message))) throw error;
	}
}

function readRules(text: string): void {
	try {
		const set = parseRules(text);
		assert.ok(Array.isArray(set.rules));
	} catch (error) {
		if (!(error instanceof RulesError)) throw error;
	}
}

test("fuzz: getUpdates bodies, mutated, truncated and random, end in updates or a BotApiError", () => {
	const valid = encodeUtf8(VALID_UPDATES);
	readUpdatesBody(valid);
	readUpdatesBody(new Uint8Array(0));
	for (let seed = SEED; seed < SEED + SEEDS; seed++) {
		const rand = generator(seed);
		readUpdatesBody(mutate(valid, rand));
		readUpdatesBody(valid.slice(0, rand(valid.length)));
		readUpdatesBody(randomBytes(rand, 300));
	}
});

test("fuzz: oversized and deeply nested update bodies are read or refused without a crash", () => {
	const many = JSON.stringify({ ok: true, result: Array.from({ length: 500 }, (_, i) => ({ update_id: i, message: { message_id: 1, chat: { id: 1, type: "private" }, from: { id: 1 }, text: "x".repeat(100) } })) });
	const parsed = parseUpdates(readEnvelope("getUpdates", many, (t) => t), 0);
	assert.ok(parsed.updates.length <= 100, "no more updates than asked for are read");
	const huge = `{"ok":true,"result":[{"update_id":1,"message":{"message_id":1,"chat":{"id":1,"type":"private"},"from":{"id":1},"text":"${"y".repeat(200_000)}"}}]}`;
	const one = parseUpdates(readEnvelope("getUpdates", huge, (t) => t), 0);
	assert.ok(one.updates[0].message!.text.length <= 8192, "a huge text is cut");
	readUpdatesBody(encodeUtf8(`{"ok":true,"result":${"[".repeat(200)}${"]".repeat(200)}}`));
	readUpdatesBody(new Uint8Array([0xff, 0xfe, 0xed, 0xa0, 0x80, 0xc0, 0xaf]));
});

test("fuzz: rules files, mutated, truncated and random, end in rules or a RulesError", () => {
	readRules(VALID_RULES);
	readRules("");
	const valid = encodeUtf8(VALID_RULES);
	for (let seed = SEED; seed < SEED + SEEDS; seed++) {
		const rand = generator(seed);
		readRules(decodeUtf8(mutate(valid, rand)));
		readRules(VALID_RULES.slice(0, rand(VALID_RULES.length)));
		readRules(decodeUtf8(randomBytes(rand, 200)));
	}
	readRules(JSON.stringify({ rules: Array.from({ length: 1000 }, () => ({ action: { type: "run_agent" } })) }));
	readRules(JSON.stringify({ rules: [{ match: { text: "(".repeat(500) }, action: { type: "run_agent" } }] }));
});

test("fuzz: random text chunks within the limit, adds up, and its HTML escapes every stray <", () => {
	const pieces = ["a", " ", "\n", "<", ">", "&", "**", "`", "```", "```js\n", "😀", "é", "[l](https://x.y)", "x".repeat(500), "\n".repeat(3)];
	for (let seed = SEED; seed < SEED + 100; seed++) {
		const rand = generator(seed);
		let text = "";
		const n = rand(2000);
		for (let i = 0; i < n; i++) text += pieces[rand(pieces.length)];
		const parts = chunk(text);
		for (const p of parts) {
			assert.ok(p.length <= TELEGRAM_MESSAGE_MAX_CHARS, `chunk of ${p.length}`);
			const html = toHtml(p);
			assert.ok(!/<(?!\/?(b|code|pre|a)\b)/.test(html), "only the tags the formatter writes");
		}
		// Without fences nothing is added; only chunks of white space alone are left out.
		if (!/```/.test(text)) assert.equal(parts.join("").replace(/\s/g, ""), text.replace(/\s/g, ""));
	}
});
