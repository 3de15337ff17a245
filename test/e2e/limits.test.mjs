// Limits that fit the heap they land in (issue 25): a reply longer than one
// text field of the agent port (AGENT_PORT_TEXT_MAX_CHARS, 32 Ki characters)
// crosses it in parts and reaches every chat whole, split where the channel
// needs: the console prints it, Telegram gets messages of at most 4096
// characters, QQ its replies of at most QQ_MESSAGE_MAX_CHARS (5 to a message:
// the rest is cut with a note, QQ's own limit). The rig: ./proof.mjs.
// And the caps fit the heap: a reply at LLM_REPLY_MAX_BYTES, and three tool
// calls whose arguments fill it, complete at the manifest's creation sizes on
// the release host and on the 32-bit one (the board's word size) when it is
// built; on the old main a 150 KiB reply and three 40 KiB tool calls ran the
// agent (and a 256 KiB reply the main machine) out of memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BUILD, hostBinary } from "../../tools/build.mjs";
import { PROTOCOLS, configureLlm, withMockAndFirmware } from "./firmware.mjs";
import { OWNER_CHAT, QQ_CHAT, QQ_USER, Report, startRig } from "./proof.mjs";

const TELEGRAM_MESSAGE_MAX_CHARS = 4096;
const QQ_MESSAGE_MAX_CHARS = 2000;
const AGENT_PORT_TEXT_MAX_CHARS = 32 * 1024;

/** A reply of at least `chars` characters over lines of ASCII, CJK and an emoji (a surrogate pair). */
function longReply(chars, tag) {
	const lines = [];
	let length = 0;
	for (let i = 0; length < chars; i++) {
		const line = `${tag} line ${i}: 你好，世界 😀 the quick brown fox jumps over the lazy dog ${i * 7}.`;
		lines.push(line);
		length += line.length + 1;
	}
	return lines.join("\n") + `\n${tag} END`;
}
const squeeze = (text) => text.replace(/\s+/g, "");

test("a reply over the agent port's 32 Ki-character field reaches the console, Telegram and QQ, split where each needs", async (t) => {
	const report = new Report("limits-reply", t);
	const rig = await startRig({ report });
	const { llm, tg, qq } = rig;
	try {
		const console = longReply(AGENT_PORT_TEXT_MAX_CHARS + 8000, "c");
		report.tried(`a ${console.length}-character reply (${Buffer.byteLength(console)} bytes) to the console's ask, to a Telegram chat and to QQ`);
		llm.script({ type: "text", text: console, chunk: 512 });
		const out = await rig.command("ask tell me a long story", /^c END$/m, { timeoutMs: 60_000 });
		report.check("the console printed the whole reply", out.includes(console), `${out.length} characters printed`);

		const telegram = longReply(AGENT_PORT_TEXT_MAX_CHARS + 2000, "t");
		llm.script({ type: "text", text: telegram, chunk: 512 });
		const from = tg.chat(OWNER_CHAT).length;
		tg.say({ chat: OWNER_CHAT, text: "tell me a long story" });
		await tg.waitFor(() => tg.chat(OWNER_CHAT).slice(from).some((m) => /t END$/.test(m.text)), 60_000, "the reply's last message");
		const messages = tg.chat(OWNER_CHAT).slice(from).filter((m) => / line \d+:/.test(m.text)).map((m) => m.text);
		report.check(`Telegram: every message at most ${TELEGRAM_MESSAGE_MAX_CHARS} characters (${messages.length} messages)`, messages.every((m) => m.length <= TELEGRAM_MESSAGE_MAX_CHARS), messages.map((m) => m.length).join(" "));
		report.check("Telegram: the messages are the whole reply", squeeze(messages.join("")) === squeeze(telegram), `${squeeze(messages.join("")).length} of ${squeeze(telegram).length} characters`);

		const viaQQ = longReply(AGENT_PORT_TEXT_MAX_CHARS + 1000, "q");
		llm.script({ type: "text", text: viaQQ, chunk: 512 });
		const id = qq.say({ user: QQ_USER, text: "tell me a long story" });
		await qq.waitFor(() => qq.replies(QQ_CHAT).filter((r) => r.msg_id === id).length >= 5, 60_000, "QQ's five replies");
		const replies = qq.replies(QQ_CHAT).filter((r) => r.msg_id === id).map((r) => r.content);
		report.check(`QQ: every reply at most ${QQ_MESSAGE_MAX_CHARS} characters`, replies.every((r) => r.length <= QQ_MESSAGE_MAX_CHARS), replies.map((r) => r.length).join(" "));
		const shown = squeeze(replies.join("")).replace(/…\(cut:[^)]*\)$/, "");
		report.check("QQ: the replies are the reply's start, the last saying the rest was cut (QQ takes 5 replies to a message)", shown.length > 4 * QQ_MESSAGE_MAX_CHARS / 2 && squeeze(viaQQ).startsWith(shown.slice(0, -40)) && /… \(cut: QQ allows 5 replies/.test(replies.at(-1)), `${shown.length} characters; last ends ${JSON.stringify(replies.at(-1)?.slice(-80))}`);
		report.check("no channel refused a message as too long (Telegram counts UTF-16 units: an emoji is two)", !/too long/.test(rig.fw.stderr), rig.fw.stderr.match(/.*too long.*/)?.[0] ?? "");
		report.check("the agent port refused nothing", !/agent port: .*refused/.test(rig.fw.stderr), rig.fw.stderr.match(/agent port: .*/)?.[0] ?? "");
	} finally {
		await rig.close();
	}
	report.finish();
});

const KEY = "sk-limits-e2e-secret-0123456789";
// What a streamed reply's frames add besides its text or arguments, at most (the mock's frames of 16 KiB pieces).
const FRAMING_BYTES = 8 * 1024;
const TOOL_FRAMING_BYTES = 16 * 1024;

for (const variant of ["release", "m32"].filter((v) => existsSync(hostBinary(v)))) {
	test(`a reply at LLM_REPLY_MAX_BYTES and three tool calls filling it complete at the board's creation sizes, the agent never restarted [${variant}]`, async (t) => {
		const { LLM_REPLY_MAX_BYTES } = await import(pathToFileURL(join(BUILD, "js", "modules", "budgets.js")).href);
		await withMockAndFirmware(variant, async ({ fw, mock }) => {
			await configureLlm(fw, mock, PROTOCOLS[0], KEY);
			// A reply whose streamed body is the cap exactly: one line of text, printed whole (in lines of 4096).
			mock.script({ type: "text", fault: "huge", bytes: LLM_REPLY_MAX_BYTES });
			let from = fw.stdout.length;
			fw.send("ask tell me everything");
			const least = LLM_REPLY_MAX_BYTES - FRAMING_BYTES;
			const count = (text) => text.split("x").length - 1;
			await fw.until({ test: (text) => count(text) > least || /^error: /m.test(text) }, { from, timeoutMs: 120_000 });
			await new Promise((r) => setTimeout(r, 200)); // the rest of the last line
			fw.send("status");
			await fw.until(/^agent machine: /m, { from });
			const printed = fw.printed(from);
			const xs = count(printed);
			t.diagnostic(`reply: ${xs} characters printed`);
			assert.ok(xs > LLM_REPLY_MAX_BYTES - FRAMING_BYTES, `the whole reply was printed (${xs} characters)`);
			assert.ok(!/^error: |out of memory/m.test(printed), printed.match(/^error: .*|.*out of memory.*/m)?.[0]);
			assert.match(printed, /^agent machine: running \(0 restarts\)/m);

			// Three tool calls whose arguments fill the cap; then an answer.
			const each = Math.floor((LLM_REPLY_MAX_BYTES - TOOL_FRAMING_BYTES) / 3) - 32;
			mock.script({ type: "tool_calls", chunk: 16 * 1024, calls: [1, 2, 3].map((i) => ({ name: "get_time", arguments: { pad: String(i).repeat(each) } })) });
			mock.script({ type: "text", text: "three calls done" });
			from = fw.stdout.length;
			fw.send("ask call three tools");
			await fw.until(/^(three calls done|error: .*)$/m, { from, timeoutMs: 120_000 });
			assert.match(fw.printed(from), /^three calls done$/m, `three calls of ${each} bytes of arguments each: ${fw.printed(from).slice(-500)}`);
			fw.send("status");
			await fw.until(/^agent machine: running \(0 restarts\)/m, { from });
		}, { key: KEY, prefix: "xsclaw-limits-" });
	});
}
