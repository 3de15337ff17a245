// Adding a chat channel (issue 27): a folder and one line. test/channel is a
// channel made for this test (channels/types' ChannelDefinition, its chats typed
// on the console); test/channel/all is the firmware's channels/all with one
// line added, and the firmware built with it (build/lin/channel-test.map) runs
// the test channel end to end: a message in, through the router and the agent
// (the mock LLM), the answer out; /stop cancels a stalled answer; send_message
// reaches the channel's chat; the firmware stops it at the end. main.ts names
// no channel.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { CHANNEL_TEST_MAP, ROOT } from "../../tools/build.mjs";
import { SANITIZER_ERROR } from "./xs.mjs";
import { setSettings, startFirmware, until } from "./firmware.mjs";

const KEY = "sk-channel-e2e-0123456789";
const cleanups = [];
after(async () => {
	for (const fn of cleanups.reverse()) await fn();
});

const read = (path) => readFileSync(join(ROOT, path), "utf8");
/** The export lines of a channels/all. */
const exportLines = (text) => text.split("\n").filter((line) => line.startsWith("export "));

test("the test channel is registered with one line: the firmware's channels/all plus its own, and main.ts names no channel", () => {
	const firmware = exportLines(read("modules/main/channels/all.ts"));
	const withTest = exportLines(read("test/channel/all.ts"));
	assert.ok(firmware.length >= 3, "the firmware lists its channels");
	assert.deepEqual(withTest.slice(0, -1), firmware, "test/channel/all.ts repeats the firmware's lines as they are");
	assert.equal(withTest.length, firmware.length + 1, "and adds one");
	assert.match(withTest.at(-1), /from "test\/channel\/setup"/);
	const map = readFileSync(CHANNEL_TEST_MAP, "utf8");
	assert.match(map, /^channels\/all\t.*test\/channel\/all\.js$/m, "the test firmware's channels/all is the test's");
	const main = read("main.ts");
	assert.doesNotMatch(main, /testchat|telegram\/|qq\//, "main.ts names no channel");
});

test("a message in, the answer out, /stop, and send_message: the test channel end to end on the firmware", async () => {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-channel-"));
	const llm = await startMockLLM({ requireKey: KEY });
	const fw = startFirmware(["--modules", CHANNEL_TEST_MAP, "--data", dir], "release");
	cleanups.push(async () => {
		await fw.kill();
		await llm.close();
		rmSync(dir, { recursive: true, force: true });
	});
	await fw.until(/type help for the commands/);
	await fw.until(/testchat: started/);
	await setSettings(fw, ["config set llm.provider custom", `config set llm.base_url ${llm.url}/v1`, "config set llm.model gpt-mock", `config set llm.api_key ${KEY}`]);
	const help = await fw.run("help", /testchat say/);
	assert.match(help, /testchat say CHAT TEXT/, "its console command is in help");

	// In and out.
	llm.script({ type: "text", text: "hello from the agent" });
	await fw.run("testchat say c1 hi there, channel", /testchat c1: hello from the agent/);
	assert.equal(llm.requests.length, 1);
	assert.match(llm.requests[0].body, /hi there, channel/);
	assert.match(llm.requests[0].body, /source: channel testchat, chat c1/, "the request carries the channel and the chat");

	// /stop cancels a stalled answer; the cancellation comes back as the chat's answer.
	llm.script({ type: "text", text: "never", fault: "stall" });
	fw.send("testchat say c1 a slow question");
	await until(() => llm.requests.length === 2, "the stalled LLM request");
	await fw.run("testchat say c1 /stop", /testchat c1: .*request cancelled/);
	await until(() => llm.requests[1].response.closedAt !== null, "the LLM connection closed");
	await fw.run("testchat say c1 /stop", /testchat c1: Nothing is running in this chat\./);

	// The agent knows the channel runs and its chat: send_message reaches it.
	llm.script(
		{ type: "tool_calls", calls: [{ name: "send_message", arguments: { channel: "testchat", chat_id: "c1", text: "a note from the console's request" } }] },
		{ type: "text", text: "sent it" },
	);
	const asked = await fw.run("ask tell c1 something", /sent it/);
	assert.match(fw.printed(0), /testchat c1: a note from the console's request/, asked);

	const result = await fw.end();
	assert.equal(result.code, 0, `exit ${result.code} ${result.signal ?? ""}\n${result.stderr.slice(-3000)}`);
	assert.doesNotMatch(result.stderr, SANITIZER_ERROR);
	assert.ok(!result.stderr.includes(KEY), "the key is never logged");
});
