// The one logger (util/log): lines below the level are dropped, every registered
// secret is masked wherever it appears (also inside a URL path), short values are
// not treated as secrets, and a bad level is refused with a sentence.
import { test, assert } from "testing";
import { log, logLevel, logLine, logRelayed, maskSecrets, maskSecretsDeep, maskSecretsGrowing, setLogLevel, setLogPrints, setLogSecrets, setLogSink } from "util/log";
import { findPrinted, secretForms, secretPrint, secretPrints } from "util/secrets";

const lines: string[] = [];
setLogSink((line) => void lines.push(line));

test("lines below the level in force are dropped", () => {
	lines.length = 0;
	setLogLevel("warn");
	logLine("error", "e");
	logLine("warn", "w");
	log("i");
	logLine("debug", "d");
	assert.deepEqual(lines, ["e", "w"]);
	setLogLevel("debug");
	logLine("debug", "d2");
	assert.equal(lines.at(-1), "d2");
	setLogLevel("info");
	assert.equal(logLevel(), "info");
	assert.throws(() => setLogLevel("loud"), /not a log level: use one of error, warn, info, debug/);
});

test("a line relayed from the agent machine (the board's console) is written whatever this machine's level, with this machine's secrets masked", () => {
	lines.length = 0;
	const token = "7000001:AAHsecretTelegramBotToken";
	setLogSecrets([token]);
	setLogLevel("error");
	logRelayed(`agent: llm: a line that mentions ${token}`);
	setLogLevel("info");
	setLogSecrets([]);
	assert.equal(lines.length, 1);
	assert.ok(!lines[0].includes(token), lines[0]);
	assert.match(lines[0], /^agent: llm: a line that mentions \*\*\*\*oken$/);
});

test("every registered secret is masked wherever it appears; short values are not secrets", () => {
	lines.length = 0;
	const token = "7000001:AAHsecretTelegramBotToken";
	const key = "sk-test-0123456789abcdef";
	setLogSecrets([token, key, "1", ""]);
	log(`GET https://api.telegram.org/bot${token}/getUpdates failed; key ${key}, again ${key}; 1 2 3`);
	assert.equal(lines.length, 1);
	assert.ok(!lines[0].includes(token) && !lines[0].includes(key), lines[0]);
	assert.match(lines[0], /bot\*\*\*\*oken\/getUpdates failed; key \*\*\*\*cdef, again \*\*\*\*cdef; 1 2 3/);
	setLogSecrets([]);
	assert.equal(maskSecrets(token), token, "forgotten secrets are shown again (an unset setting)");
});

test("a growing text (a streamed preview) shows no secret and no start of one; a finished secret is masked", () => {
	const key = "sk-test-0123456789abcdef";
	setLogSecrets([key]);
	assert.equal(maskSecretsGrowing("the key is sk-te"), "the key is ", "the start of a secret is held back");
	assert.equal(maskSecretsGrowing("the key is s"), "the key is ");
	assert.equal(maskSecretsGrowing(`the key is ${key}`), "the key is ****cdef");
	assert.equal(maskSecretsGrowing(`the key is ${key}. And sk`), "the key is ****cdef. And ");
	assert.equal(maskSecretsGrowing("nothing secret here"), "nothing secret here");
	setLogSecrets([]);
	assert.equal(maskSecretsGrowing("the key is sk-te"), "the key is sk-te");
});

test("a JSON-able value has the secrets in its strings masked, and is returned as is without any", () => {
	const key = "sk-test-0123456789abcdef";
	setLogSecrets([key]);
	const clean = { role: "assistant", content: "hello" };
	assert.equal(maskSecretsDeep(clean), clean, "the same object when nothing is secret");
	const message = { role: "assistant", content: `key ${key}`, tool_calls: [{ id: "1", type: "function", function: { name: "send_message", arguments: JSON.stringify({ text: key }) } }], raw: { blocks: [{ text: key }] } };
	const masked = maskSecretsDeep(message);
	assert.ok(!JSON.stringify(masked).includes(key), JSON.stringify(masked));
	assert.equal(masked.content, "key ****cdef");
	assert.equal(JSON.parse(masked.tool_calls[0].function.arguments).text, "****cdef", "arguments stay valid JSON");
	assert.equal(message.content, `key ${key}`, "the given value is not changed");
	setLogSecrets([]);
});

test("a secret this machine knows only by its fingerprint is found and masked wherever it appears, and nothing else is", () => {
	const token = "7000001:AAHsecretTelegramBotToken";
	const print = secretPrint(token);
	assert.ok(!JSON.stringify(print).includes("AAH"), "the fingerprint does not hold the secret");
	const text = `a ${token} b ${token}${token} c 7000001:AAHsecretTelegramBotTokeX`;
	const ranges = findPrinted(text, [print]);
	const n = token.length;
	assert.deepEqual(ranges, [[2, 2 + n], [5 + n, 5 + 2 * n], [5 + 2 * n, 5 + 3 * n]], "each match, in order; a near miss is not one");
	assert.deepEqual(findPrinted("aaaaaaa", [secretPrint("aaaaaa")]), [[0, 7]], "overlapping matches merge");
	assert.deepEqual(findPrinted("short", [print]), []);
	assert.deepEqual(findPrinted("", [print]), []);
	// Offsets are characters as XS counts them, across text that is not ASCII (CJK, a surrogate pair, a lone surrogate) and secrets that are not either.
	const wide = "密钥😀token";
	const mixed = `你好 😀 ${token} \ud800 ${wide}!`;
	const at = mixed.indexOf(token), wideAt = mixed.indexOf(wide);
	assert.deepEqual(findPrinted(mixed, [print, secretPrint(wide)]), [[at, at + n], [wideAt, wideAt + wide.length]]);
	setLogPrints([print, { length: 2, h1: 1, h2: 1 }]);
	lines.length = 0;
	log(`token ${token}.`);
	assert.equal(lines[0], "token ****oken.");
	assert.equal(maskSecrets("nothing here, not even 7000001:AAH"), "nothing here, not even 7000001:AAH");
	assert.equal(maskSecretsDeep({ content: `x${token}` }).content, "x****oken");
	setLogPrints([]);
	assert.equal(maskSecrets(token), token);
});

// A secret with a quote, a backslash and a control character (a Wi-Fi password may have them).
const AWKWARD = "Pa\"ss\\word\t-1234";
// Any form of it, escaped or not.
const LEAK = /Pa\W{1,8}ss/;

test("a secret with a quote, a backslash or a control character is masked in every form it takes: as it is and JSON-escaped", () => {
	const forms = secretForms(AWKWARD);
	const escaped = (text: string) => JSON.stringify(text).slice(1, -1);
	assert.deepEqual(forms.map((f) => f.text).sort((a, b) => a.length - b.length), [AWKWARD, escaped(AWKWARD), escaped(escaped(AWKWARD)), escaped(escaped(escaped(AWKWARD)))]);
	assert.equal(secretForms("sk-test-0123456789abcdef").length, 1, "a plain secret has one form");
	setLogSecrets([AWKWARD]);
	lines.length = 0;
	log(`raw ${AWKWARD} json ${JSON.stringify({ p: AWKWARD })} twice ${JSON.stringify({ a: JSON.stringify({ p: AWKWARD }) })}`);
	assert.ok(!LEAK.test(lines[0]), lines[0]);
	const json = lines[0].slice(lines[0].indexOf(" json ") + 6, lines[0].indexOf(" twice "));
	assert.deepEqual(JSON.parse(json), { p: "****1234" }, "masked JSON stays JSON");
	const twice = JSON.parse(lines[0].slice(lines[0].indexOf(" twice ") + 7));
	assert.deepEqual(JSON.parse(twice.a), { p: "****1234" });
	// A model's message: the content as it is, the arguments (JSON text) escaped.
	const message = { role: "assistant", content: `the password is ${AWKWARD}`, tool_calls: [{ id: "1", type: "function", function: { name: "memory_write", arguments: JSON.stringify({ text: `wifi: ${AWKWARD}` }) } }] };
	const masked = maskSecretsDeep(message);
	assert.equal(masked.content, "the password is ****1234");
	assert.deepEqual(JSON.parse(masked.tool_calls[0].function.arguments), { text: "wifi: ****1234" });
	assert.ok(!LEAK.test(JSON.stringify(masked)), JSON.stringify(masked));
	assert.equal(maskSecretsGrowing(`the password is ${AWKWARD.slice(0, 5)}`), "the password is ", "the start held back");
	assert.equal(maskSecretsDeep(new Uint8Array([1, 2])).length, 2, "a byte array is left as it is");
	setLogSecrets([]);
});

test("a machine that knows such a secret only by its fingerprints masks every form too, keeping JSON valid", () => {
	setLogPrints(secretPrints(AWKWARD));
	const message = { content: `it is ${AWKWARD}!`, tool_calls: [{ function: { name: "memory_write", arguments: JSON.stringify({ text: AWKWARD }) } }] };
	const masked = maskSecretsDeep(message);
	assert.equal(masked.content, "it is ****1234!");
	assert.deepEqual(JSON.parse(masked.tool_calls[0].function.arguments), { text: "****1234" });
	lines.length = 0;
	log(`stored ${JSON.stringify(JSON.stringify(message))}`);
	assert.ok(!LEAK.test(lines[0]), lines[0]);
	const stored = JSON.parse(JSON.parse(lines[0].slice(7)));
	assert.equal(stored.content, "it is ****1234!");
	assert.deepEqual(JSON.parse(stored.tool_calls[0].function.arguments), { text: "****1234" });
	setLogPrints([]);
});

test("finding fingerprinted secrets is linear in the text, also when it is not ASCII (a long reply in Chinese)", () => {
	const prints = secretPrints("7000001:AAHsecretTelegramBotToken").concat(secretPrints("qqSecretAppSecret3c6e0a8f2b"));
	let text = "";
	while (text.length < 40_000) text += "你好，世界 😀 the quick brown fox. ";
	const started = Date.now();
	const ranges = findPrinted(text + "7000001:AAHsecretTelegramBotToken", prints);
	const ms = Date.now() - started;
	assert.deepEqual(ranges, [[text.length, text.length + 33]]);
	// Quadratic (charCodeAt walks a non-ASCII string from its start) this took ~10 s on lin; linear, well under one.
	assert.ok(ms < 5000, `${ms} ms`);
});
