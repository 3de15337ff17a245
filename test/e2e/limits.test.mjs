// Limits that fit the heap they land in (issue 25): a reply longer than one
// text field of the agent port (AGENT_PORT_TEXT_MAX_CHARS, 32 Ki characters)
// crosses it in parts and reaches every chat whole, split where the channel
// needs: the console prints it, Telegram gets messages of at most 4096
// characters, QQ its replies of at most QQ_MESSAGE_MAX_CHARS (5 to a message:
// the rest is cut with a note, QQ's own limit). The rig: ./proof.mjs.
import { test } from "node:test";
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
