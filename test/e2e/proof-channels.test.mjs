// Hostile chats against the channels (issue 25), on the proof rig (./proof.mjs:
// the firmware with the mock LLM and the mock Telegram, the owner's and a
// user's chat paired). What a stranger, a paired user or a runaway request
// could do to a chat channel before: stop Telegram for good with updates that
// are over the getUpdates cap together (or one alone), make the board poll
// hundreds of times a second, flood a chat after /stop, spend the board's
// replies with /pair, void the owner's code with wrong guesses, become the
// owner through a group, and poison a chat with a lone UTF-16 surrogate.
import { test } from "node:test";
import { OWNER_CHAT, Report, sleep, startRig } from "./proof.mjs";

/** A stranger's message of 4,096 CJK characters replying to another such one: Telegram embeds the reply whole (~25 KB an update). */
function bigUpdate(tg, chat, i) {
	const text = (n) => String.fromCodePoint(0x4e00 + ((i * 7 + n) % 2000)).repeat(4096);
	const replyTo = { message_id: 90_000 + i, from: { id: chat + 1, is_bot: false, first_name: "other" }, chat: { id: chat, type: "private" }, date: 1, text: text(1) };
	return tg.say({ chat, text: text(0), replyTo });
}

test("hostile chats: the getUpdates cap, poll pacing, /stop during a runaway, strangers guessing pairing codes", async (t) => {
	const report = new Report("proof-channels", t);
	const rig = await startRig({ report, qq: false });
	const { llm, tg, fw } = rig;
	try {
		report.tried("12 unpaired updates of ~25 KB (4,096 CJK characters replying to another such message) waiting at once, over the 256 KiB getUpdates cap together, then the owner's message");
		await report.step("the owner's message behind 12 big updates is answered within 10 s, and the log names the updates read", async () => {
			// Held: the updates pile up as they do while the board is off or busy.
			let release;
			tg.fault("getUpdates", { hold: new Promise((r) => { release = r; }) });
			await sleep(2500); // the poll in flight ends (poll_timeout_s 2); the next one is held
			const first = bigUpdate(tg, 7001, 0);
			for (let i = 1; i < 12; i++) bigUpdate(tg, 7001 + i, i);
			llm.script({ type: "text", text: "answered past the big ones" });
			const from = tg.chat(OWNER_CHAT).length;
			const logFrom = fw.stderr.length;
			tg.say({ chat: OWNER_CHAT, text: "are you there behind them?" });
			const started = Date.now();
			release();
			const answer = await tg.waitFor(() => tg.chat(OWNER_CHAT).slice(from).find((m) => m.text === "answered past the big ones"), 10_000, "the owner's answer");
			report.note(`answered ${Date.now() - started} ms after the updates were released`);
			const log = fw.stderr.slice(logFrom);
			report.check("answered within 10 s", Boolean(answer));
			report.check("a log line names the updates read", new RegExp(`telegram: read update ${first} `).test(log), log.slice(0, 2000));
			report.check("every big update was confirmed", tg.pending === 0, `${tg.pending} waiting`);
		});

		report.tried("one stranger's update of 300 KB, over the cap by itself, then the owner's message");
		await report.step("an update over the cap by itself is skipped with a log line naming it, and the owner is answered", async () => {
			const logFrom = fw.stderr.length;
			const big = tg.say({ chat: 7100, text: "字".repeat(100_000) });
			llm.script({ type: "text", text: "answered past the huge one" });
			const from = tg.chat(OWNER_CHAT).length;
			tg.say({ chat: OWNER_CHAT, text: "and now?" });
			await tg.waitFor(() => tg.chat(OWNER_CHAT).slice(from).some((m) => m.text === "answered past the huge one"), 10_000, "the owner's answer");
			const log = fw.stderr.slice(logFrom);
			report.check("the log names the skipped update", new RegExp(`telegram: update ${big} skipped: it alone is over the 262144-byte cap`).test(log), log.slice(0, 2000));
		});

		report.tried("telegram.poll_timeout_s 0 against the mock, which answers an empty poll at once");
		await report.step("polls that bring nothing come at most about once a second", async () => {
			await rig.command("config set telegram.poll_timeout_s 0", /^ok: /m);
			await fw.until(/telegram: connected as @xsclaw_test_bot/, { from: fw.stdout.length });
			await sleep(500);
			const before = tg.calls.filter((c) => c.method === "getUpdates").length;
			await sleep(3000);
			const polls = tg.calls.filter((c) => c.method === "getUpdates").length - before;
			report.check("at most 4 polls in 3 s", polls <= 4, `${polls} polls`);
			report.check("and it still polls", polls >= 2, `${polls} polls`);
			await rig.command("config set telegram.poll_timeout_s 2", /^ok: /m);
		});

		report.tried("a runaway request in the owner's chat: nine rounds of three send_message calls to that chat, then a stalled round; /stop");
		await report.step("after /stop the confirmation is the last thing the chat receives, within 2 s", async () => {
			const spam = (round) => ({ type: "tool_calls", calls: [0, 1, 2].map((i) => ({ name: "send_message", arguments: { channel: "telegram", chat_id: String(OWNER_CHAT), text: `spam ${round}.${i}` } })) });
			const llmFrom = llm.requests.length;
			llm.script(...Array.from({ length: 9 }, (_, round) => spam(round)), { type: "text", text: "never", fault: "stall" });
			const from = tg.chat(OWNER_CHAT).length;
			tg.say({ chat: OWNER_CHAT, text: "spam me" });
			await tg.waitFor(() => llm.requests.length >= llmFrom + 10 && tg.chat(OWNER_CHAT).slice(from).some((m) => /^spam /.test(m.text)), 30_000, "the runaway's stalled round and its first message");
			const sends = () => tg.calls.filter((c) => (c.method === "sendMessage" || c.method === "editMessageText") && String(c.params.chat_id) === String(OWNER_CHAT));
			const before = sends().length;
			const stopAt = Date.now();
			tg.say({ chat: OWNER_CHAT, text: "/stop" });
			const confirmation = await tg.waitFor(() => tg.chat(OWNER_CHAT).slice(from).find((m) => /^Stopped \(request cancelled\)\./.test(m.text)), 10_000, "the confirmation");
			await sleep(3000);
			const after = sends().slice(before).map((c) => String(c.params.text));
			report.note(`the confirmation came ${confirmation.sent_at - stopAt} ms after /stop: "${confirmation.text}"; ${tg.chat(OWNER_CHAT).slice(from).filter((m) => /^spam /.test(m.text)).length} of 27 spam messages had gone out`);
			report.check("the confirmation within 2 s of /stop", confirmation.sent_at - stopAt <= 2000, `${confirmation.sent_at - stopAt} ms`);
			report.check("the confirmation is the last thing the chat received", after.at(-1) === confirmation.text, JSON.stringify(after));
			report.check("at most the message on its way came between /stop and the confirmation", after.length <= 2, JSON.stringify(after));
		});

		report.tried("300 stranger chats each send a message and two wrong /pair codes while the owner's code is valid");
		await report.step("strangers get at most 30 answers in all, and the code still pairs", async () => {
			const out = await rig.command("telegram pair", /pairing code ([A-Z0-9]+)/);
			const code = /pairing code ([A-Z0-9]+)/.exec(out)[1];
			const callsFrom = tg.calls.length;
			for (let chat = 8000; chat < 8300; chat++) {
				tg.say({ chat, text: "hello?" });
				tg.say({ chat, text: "/pair WRONG234" });
				tg.say({ chat, text: "/pair WRONG235" });
			}
			await tg.waitFor(() => tg.pending === 0, 30_000, "the strangers' 900 updates read");
			await sleep(1500);
			const answers = tg.calls.slice(callsFrom).filter((c) => c.method === "sendMessage" && Number(c.params.chat_id) >= 8000 && Number(c.params.chat_id) < 8300).length;
			report.note(`${answers} answers to 300 stranger chats (900 messages: one each, then two wrong /pair)`);
			report.check("at most 30 answers to 300 strangers (900 messages)", answers <= 30, `${answers} answers`);
			tg.say({ chat: 8400, text: `/pair ${code}` });
			const paired = await tg.waitFor(() => tg.chat(8400).find((m) => /^Paired as /.test(m.text)), 10_000, "the pairing answer");
			report.check("the code outlived 600 wrong guesses from 300 chats", /^Paired as user/.test(paired.text), paired.text);
			await rig.command("telegram revoke 8400", /no longer paired/);
		});
	} finally {
		await rig.close();
	}
	report.finish();
});
