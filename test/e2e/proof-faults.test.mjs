// Faults (issue 17): conversations run from the console, two Telegram chats
// and a QQ chat while the mock LLM, the mock Telegram and the mock QQ cycle
// through every fault mode they have, and the agent machine is killed
// (SIGUSR2) at random points. Every question gets its answer or a sentence
// saying what went wrong, within a bound; no answer comes twice; after each
// firmware run every session opens clean (tools/session-inspect) and the
// firmware exits cleanly. Randomness is seeded (PROOF_SEED); the short form
// runs in `npm test`, the long one under `npm run soak`.
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../../tools/build.mjs";
import { LONG, OWNER_CHAT, QQ_CHAT, QQ_USER, USER_CHAT, Report, SIZE, seeded, sleep, startRig } from "./proof.mjs";

const ROUNDS = SIZE(9, 90); // the short form meets each QQ fault once, and each LLM fault about four times
// Kills per firmware run: the supervisor restarts a dead agent machine 3 times
// within AGENT_RESTART_WINDOW_MS (10 min), then keeps it down; the test stays
// below that and starts the firmware again after this many.
const KILLS_PER_RUN = 2;
const KILL_CHANCE = 0.35; // per round in the long form; the short form kills in two rounds the seed picks
// The LLM's faults (tools/mock-llm): each ends in an answer (a retry) or an error.
const LLM_FAULTS = [null, "stall", "drop", "malformed", "huge", "trickle", 429, 500, 503, 400];
// Telegram's (tools/mock-telegram), on the methods the firmware calls.
const TG_FAULTS = [{ status: 429, retryAfter: 1 }, { status: 500 }, { status: 502 }, { drop: true }, { malformed: true }, { delayMs: 1500 }];
const TG_METHODS = ["getUpdates", "sendMessage", "editMessageText", "sendChatAction"];
// QQ's (tools/mock-qq): HTTP faults on the token, gateway and send endpoints, and gateway events.
const QQ_FAULTS = [
	["send", { status: 500 }], ["send", { drop: true }], ["send", { delayMs: 1500 }], ["token", { status: 500 }], ["gateway", { status: 502 }],
	["drop"], ["reconnect"], ["invalidSession"], ["expireTokens"],
];
// The faults the firmware retries: a question hit by one of these (and no kill) must get its answer.
const RETRIED = new Set([null, 429, 500, 503]);
// The LLM's answer to a question tagged q<round>-<sender>.
const answerFor = (tag) => `answer ${tag} done.`;
const ANSWER_WAIT_MS = 90_000; // an LLM timeout (llm.timeout_ms below) and its retries (2+4+8 s), restarts, Telegram retries

test("faults: every question gets its answer or a clear error while the mocks fail and the agent machine is killed", async (t) => {
	const rng = seeded(1717);
	const report = new Report("proof-faults", t);
	report.note(`seed ${rng.seed} (PROOF_SEED overrides); ${ROUNDS} rounds of 4 questions (console, two Telegram chats, a QQ chat)`);
	const rig = await startRig({ report, settings: ["config set llm.timeout_ms 3000"] });
	const { llm, tg, qq } = rig;
	const plan = new Map(); // tag -> the LLM fault of its first attempt
	const attempts = new Map();
	rig.hooks.onRequest = (record) => {
		const tags = [...record.body.matchAll(/\bq\d+-[a-z]+\b/g)].map((m) => m[0]);
		const tag = tags.at(-1);
		if (!tag || llm.pending) return;
		const n = (attempts.get(tag) ?? 0) + 1;
		attempts.set(tag, n);
		const fault = n === 1 ? plan.get(tag) : null;
		const text = answerFor(tag);
		if (fault === null || fault === undefined) llm.script({ type: "text", text, chunk: 6 });
		else if (fault === "huge") llm.script({ type: "text", fault, bytes: 300 * 1024 });
		else llm.script({ type: "text", text, fault });
	};
	const counts = { answered: 0, failed: 0, kills: 0, runs: 1, llmFaults: new Set(), tgFaults: new Set(), qqFaults: new Set() };
	let killsThisRun = 0;

	/** Sends one question from a sender; resolves "answer" or "error" (throws when neither comes in time). */
	async function ask(sender, tag) {
		const question = `please answer ${tag}`;
		// The answer, else a streamed preview of it (undefined: not final yet), else a sentence about what failed.
		const final = (text) => text === answerFor(tag) ? "answer" : answerFor(tag).startsWith(text.replace(/…$/, "")) ? undefined : "error";
		if (sender === "console") {
			const out = await rig.command(`ask ${question}`, new RegExp(`^(${answerFor(tag)}|error: .*)$`, "m"), { timeoutMs: ANSWER_WAIT_MS });
			return out.includes(answerFor(tag)) ? "answer" : "error";
		}
		if (sender === "qq") {
			const id = qq.say({ user: QQ_USER, text: question });
			const reply = await qq.waitFor(() => qq.replies(QQ_CHAT).find((r) => r.msg_id === id && final(r.content)), ANSWER_WAIT_MS, `the QQ answer to ${tag}`);
			return final(reply.content);
		}
		const chat = sender === "owner" ? OWNER_CHAT : USER_CHAT;
		const from = tg.chat(chat).length;
		tg.say({ chat, text: question });
		const reply = await tg.waitFor(() => tg.chat(chat).slice(from).find((m) => final(m.text)), ANSWER_WAIT_MS, `the Telegram answer to ${tag} in chat ${chat}`);
		return final(reply.text);
	}

	function inspectSessions(when) {
		const result = spawnSync(process.execPath, [join(ROOT, "tools", "session-inspect.mjs"), rig.data], { encoding: "utf8" });
		report.check(`every session opens clean ${when} (session-inspect exit ${result.status})`, result.status === 0, `${result.stdout.slice(-1500)}${result.stderr.slice(-500)}`);
	}

	try {
		const describe = (spec) => JSON.stringify(spec).replace(/[{}"]/g, "");
		report.tried(`LLM faults ${LLM_FAULTS.filter(Boolean).join(", ")}; Telegram faults ${TG_FAULTS.map(describe).join(", ")} on ${TG_METHODS.join(", ")}; QQ faults ${QQ_FAULTS.map(([what, spec]) => (spec ? `${what} ${describe(spec)}` : what)).join(", ")}; SIGUSR2 kills of the agent machine`);
		// The LLM's faults are dealt from a shuffled deck, so every one comes in every ten questions.
		let deck = [];
		const deal = () => {
			if (!deck.length) {
				deck = [...LLM_FAULTS];
				for (let i = deck.length - 1; i > 0; i--) {
					const j = rng(i + 1);
					[deck[i], deck[j]] = [deck[j], deck[i]];
				}
			}
			return deck.pop();
		};
		const shortKills = new Set();
		while (shortKills.size < KILLS_PER_RUN) shortKills.add(2 + rng(ROUNDS - 2));
		for (let round = 1; round <= ROUNDS; round++) {
			// After a kill the round's questions end at once with the restart sentence;
			// the next round waits for the restart the supervisor promised, so that a
			// kill has a machine to kill (else the host says "no worker to kill") and a
			// retried LLM fault is judged on a running agent, not on the restart.
			if (killsThisRun) await rig.fw.until(new RegExp(`agent: restarted \\(restart ${killsThisRun}\\)`), { timeoutMs: 30_000 });
			const senders = ["console", "owner", "user", "qq"];
			for (const sender of senders) {
				const fault = deal();
				plan.set(`q${round}-${sender}`, fault);
				if (fault) counts.llmFaults.add(String(fault));
			}
			// A Telegram fault and a QQ fault for this round (every mode comes round: in order, then at random).
			const tgFault = round <= TG_FAULTS.length ? TG_FAULTS[round - 1] : rng.pick(TG_FAULTS);
			const tgMethod = rng.pick(TG_METHODS);
			tg.fault(tgMethod, tgFault, 1);
			counts.tgFaults.add(`${tgMethod} ${JSON.stringify(tgFault)}`);
			const [what, spec] = round <= QQ_FAULTS.length ? QQ_FAULTS[round - 1] : rng.pick(QQ_FAULTS);
			const identified = qq.record.identify.length;
			if (spec) qq.fault(what, spec, 1);
			else qq[what]();
			// After Invalid Session QQ starts a new session: what was sent before the
			// bot identified again is never delivered (the platform's rule, the mock's
			// too), so the question waits for the new session.
			if (what === "invalidSession") await qq.waitFor(() => qq.record.identify.length > identified, 30_000, "a new Identify");
			counts.qqFaults.add(spec ? `${what} ${JSON.stringify(spec)}` : what);

			const killsBefore = counts.kills;
			const asked = senders.map((sender) => ask(sender, `q${round}-${sender}`).then(
				(outcome) => {
					counts[outcome === "answer" ? "answered" : "failed"]++;
					const tag = `q${round}-${sender}`;
					if (RETRIED.has(plan.get(tag)) && counts.kills === killsBefore) report.check(`${tag} (LLM fault ${plan.get(tag)}, retried) got its answer`, outcome === "answer");
					return outcome;
				},
				(error) => { report.check(`q${round}-${sender} got an answer or an error`, false, error.message.slice(0, 600)); return "none"; },
			));
			if (killsThisRun < KILLS_PER_RUN && (LONG ? rng.next() < KILL_CHANCE : shortKills.has(round))) {
				await sleep(rng(600));
				rig.fw.signal("SIGUSR2");
				killsThisRun++;
				counts.kills++;
			}
			const outcomes = await Promise.all(asked);
			report.check(`round ${round}: all 4 questions settled`, outcomes.every((o) => o !== "none"));
			if (killsThisRun >= KILLS_PER_RUN) {
				// Wait for the restart the supervisor promised, then start the firmware afresh (a new restart window).
				await rig.fw.until(new RegExp(`agent: restarted \\(restart ${KILLS_PER_RUN}\\)`), { timeoutMs: 30_000 });
				await rig.fw.end();
				inspectSessions(`after run ${counts.runs}`);
				await rig.boot({ configure: false });
				counts.runs++;
				killsThisRun = 0;
			}
		}
		report.note(`answers ${counts.answered}, errors ${counts.failed}, kills ${counts.kills}, firmware runs ${counts.runs}`);
		report.note(`LLM faults used: ${[...counts.llmFaults].join(", ")}`);
		report.note(`Telegram faults used: ${[...counts.tgFaults].length}; QQ faults used: ${[...counts.qqFaults].join(", ")}`);

		// Nothing answered twice: each tag's answer appears at most once per chat.
		const twice = [];
		for (const chat of [OWNER_CHAT, USER_CHAT]) {
			const seen = new Map();
			for (const m of tg.chat(chat)) if (/^answer q/.test(m.text)) seen.set(m.text, (seen.get(m.text) ?? 0) + 1);
			for (const [text, n] of seen) if (n > 1) twice.push(`${chat}: ${text} x${n}`);
		}
		const qqSeen = new Map();
		for (const r of qq.replies(QQ_CHAT)) if (/^answer q/.test(r.content)) qqSeen.set(r.content, (qqSeen.get(r.content) ?? 0) + 1);
		for (const [text, n] of qqSeen) if (n > 1) twice.push(`qq: ${text} x${n}`);
		report.check("no answer came twice to a chat", twice.length === 0, twice.join(", "));

		// After all of it: every chat is answered again, and every session opens.
		await report.step("after the faults every chat and the console answer at once", async () => {
			tg.clearFaults();
			for (const sender of ["console", "owner", "user", "qq"]) {
				plan.set(`q0-${sender}`, null);
				report.check(`${sender} answered after the faults`, (await ask(sender, `q0-${sender}`)) === "answer");
			}
		});
		await report.step("every session the board keeps opens (session list, then session show of each)", async () => {
			// `log level` after a command marks where its output ends (commands answer in order).
			const list = await rig.command("session list\nlog level", /^log level: \w+$/m);
			const ids = [...list.matchAll(/^[* ] (\S+) {2}.* records/gm)].map((m) => m[1]);
			report.check("session list names the sessions of the four chats", ids.length >= 4, list);
			for (const id of ids) {
				const shown = await rig.command(`session show ${id}\nlog level`, /^log level: \w+$/m);
				report.check(`session ${id} opens`, !/^error: /m.test(shown) && /\S/.test(shown.replace(/^log level: .*$/m, "")), shown.slice(0, 400));
			}
		});
	} finally {
		await rig.close({ scan: true, after: () => inspectSessions("at the end") });
	}
	report.finish();
});
