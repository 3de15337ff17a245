// The one logger (util/log): lines below the level are dropped, every registered
// secret is masked wherever it appears (also inside a URL path), short values are
// not treated as secrets, and a bad level is refused with a sentence.
import { test, assert } from "testing";
import { log, logLevel, logLine, maskSecrets, setLogLevel, setLogSecrets, setLogSink } from "util/log";

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
