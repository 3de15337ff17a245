// Soak (issue 17): many requests, each with a tool round, against the mock LLM
// answering at once (time compressed), mostly from the console and every tenth
// from a Telegram or the QQ chat. Every SAMPLE_EVERY requests the test samples
// each machine's live heap (after garbage collection, `status gc`), the buffer
// pools (PSRAM, internal), open sockets and the process's open files
// (/proc/<pid>/fd); none may grow beyond the bounds below between the first
// sample (after the first SAMPLE_EVERY requests, when the caches have filled)
// and any later one. Between samples the console's history window fills (256
// records): a sample just before each one shows the agent holding a full window,
// whose live slots must keep a margin. Randomness is seeded (PROOF_SEED).
import { test } from "node:test";
import { OWNER_CHAT, QQ_CHAT, QQ_USER, USER_CHAT, Report, SIZE, seeded, startRig } from "./proof.mjs";

const REQUESTS = Number(process.env.PROOF_SOAK_REQUESTS) || SIZE(300, 10_000); // PROOF_SOAK_REQUESTS: another count, to look at a trend
const SAMPLE_EVERY = 100;
// Bounds on growth from the first sample, with why they are not zero (every
// sample follows a new session in every place, so the history windows are empty):
// - heap: what settles after the first samples (the request id block, the
//   tool-offer and chat caches, timers) and what fills slowly up to its bound: QQ's
//   seen message ids (QQ_SEEN_IDS_MAX, 256 ids, ~30 KB of the main machine's heap
//   on lin) fill with the long form's QQ messages (3% of the requests and a /new per
//   sample), so the main heap climbs ~+46 KB until about request 8,000, then stays
//   (measured 2026-12-02). 64 KiB per machine is less than a leak of 10 bytes a
//   request shows over the long form.
const HEAP_GROWTH_BYTES = 64 * 1024;
// - PSRAM pool: LLM bodies come and go; a kept keep-alive connection's buffers at most.
const PSRAM_GROWTH_BYTES = 48 * 1024;
// - PSRAM buffers alive: a kept prefix per protocol and a pooled connection's body buffer.
const PSRAM_BUFFERS_GROWTH = 8;
// - sockets and files: a keep-alive connection to the LLM, Telegram's poll and
//   QQ's gateway come and go; sessions open at most 4 (two files each).
const SOCKETS_GROWTH = 2;
const FILES_GROWTH = 2;
// With the console's history window full the agent's live slots (65,536 slots
// of 32 bytes on lin; the scarcer of its two heaps) stay under this share:
// measured ~45%, room for three more full windows (SESSIONS_OPEN_MAX) and a request.
const AGENT_SLOT_BYTES = 65_536 * 32;
const WINDOW_SLOT_SHARE = 0.6;

test("soak: requests with tool rounds; heap, pools, sockets and files stay flat", async (t) => {
	const rng = seeded(999);
	const report = new Report("proof-soak", t);
	report.note(`seed ${rng.seed} (PROOF_SEED overrides); ${REQUESTS} requests (the long form: 10000), each a get_time round and an answer; samples every ${SAMPLE_EVERY}`);
	const rig = await startRig({ report });
	const { llm, tg, qq } = rig;
	let answered = 0;
	let fullSessions = 0;
	const FULL = /is full/;
	rig.hooks.onRequest = (record) => {
		if (llm.pending) return;
		const tag = [...record.body.matchAll(/\br\d+\b/g)].map((m) => m[0]).at(-1) ?? "r?";
		const toolRound = record.body.includes('"role":"tool"') && record.body.lastIndexOf(tag) < record.body.lastIndexOf('"role":"tool"');
		if (toolRound) llm.script({ type: "text", text: `done ${tag}.` });
		else llm.script({ type: "tool_calls", calls: [{ name: "get_time", arguments: {} }] });
	};
	// The console's new sessions: at most SESSIONS_MAX sessions exist, and only a
	// chat's new session takes the place of an old one; at the console a person
	// deletes the one they left (as `session new` asks when there are 32).
	let consoleSession;
	async function newConsoleSession() {
		const out = await rig.command("session new", /^new session (\S+):/m);
		const id = /^new session (\S+):/m.exec(out)[1];
		if (consoleSession) await rig.command(`session delete ${consoleSession}`, new RegExp(`^session ${consoleSession} deleted$`, "m"));
		consoleSession = id;
	}
	// A chat's new session is the current one from its reply; the one it left is
	// deleted on the console, so that the sessions on flash stay few (at most 32:
	// chats that fill them leave the console none to start).
	const chatSessions = new Map();
	async function leave(chat, reply) {
		const id = /^new session (\S+?)[:.\s]/.exec(reply)?.[1];
		const old = chatSessions.get(chat);
		if (id) chatSessions.set(chat, id);
		if (old && id && old !== id) await rig.command(`session delete ${old}`, new RegExp(`^(session ${old} deleted|error: .*)$`, "m"));
	}
	const samples = [];
	const full = [];   // samples with the console's window full, just before each sample
	try {
		report.tried(`${REQUESTS} requests with a tool round each: 90% console, 10% Telegram (chats ${OWNER_CHAT}, ${USER_CHAT}) and QQ`);
		for (let i = 1; i <= REQUESTS; i++) {
			const tag = `r${i}`;
			const roll = rng.next();
			const done = `done ${tag}.`;
			// A session that compaction cannot bring under 150 KiB is full: the
			// firmware says so, and the person starts a new one and asks again.
			for (let attempt = 1; attempt <= 2; attempt++) {
				let reply;
				if (roll < 0.9) {
					const out = await rig.command(`ask ${tag} what time is it?`, new RegExp(`^(${done.replace(".", "\\.")}|error: .*|.*is full.*)$`, "m"), { timeoutMs: 60_000 });
					reply = out.includes(done) ? done : out;
					if (FULL.test(reply)) await newConsoleSession();
				} else if (roll < 0.97) {
					const chat = rng.pick([OWNER_CHAT, USER_CHAT]);
					const from = tg.chat(chat).length;
					tg.say({ chat, text: `${tag} what time is it?` });
					reply = (await tg.waitFor(() => tg.chat(chat).slice(from).find((m) => m.text === done || FULL.test(m.text)), 60_000, `the answer to ${tag}`)).text;
					if (FULL.test(reply)) tg.say({ chat, text: "/new" });
				} else {
					const id = qq.say({ user: QQ_USER, text: `${tag} what time is it?` });
					reply = (await qq.waitFor(() => qq.replies(QQ_CHAT).find((r) => r.msg_id === id && (r.content === done || FULL.test(r.content))), 60_000, `the QQ answer to ${tag}`)).content;
					if (FULL.test(reply)) qq.say({ user: QQ_USER, text: "/new" });
				}
				if (reply === done) break;
				if (attempt === 2) throw new Error(`${tag}: ${reply}`);
				fullSessions++;
			}
			answered++;
			// The console's ~90 requests between samples (4 records each) fill its
			// history window (256 records): every request from the 64th on is sent
			// with a full window, and a sample with one held (`full` below).
			if (i % SAMPLE_EVERY === SAMPLE_EVERY - 1) full.push({ at: i, ...(await rig.sample()) });
			if (i % SAMPLE_EVERY === 0) {
				// Every place starts a new session before a sample, as people do now
				// and then: a session's history window (up to 256 records, a few
				// hundred KiB when full) is then let go, and every sample sees the
				// same state. Anything that still grows is kept per request: a leak.
				await newConsoleSession();
				for (const chat of [OWNER_CHAT, USER_CHAT]) {
					const from = tg.chat(chat).length;
					tg.say({ chat, text: "/new" });
					const reply = await tg.waitFor(() => tg.chat(chat).slice(from).find((m) => /^new session /.test(m.text)), 60_000, "the new session");
					await leave(chat, reply.text);
				}
				const id = qq.say({ user: QQ_USER, text: "/new" });
				const qqReply = await qq.waitFor(() => qq.replies(QQ_CHAT).find((r) => r.msg_id === id && /^new session /.test(r.content)), 60_000, "the QQ new session");
				await leave("qq", qqReply.content);
				const s = await rig.sample();
				samples.push({ at: i, ...s });
				report.note(`after ${i}: main ${s.mainChunk + s.mainSlot} B, agent ${s.agentChunk + s.agentSlot} B, psram ${s.psram} B (${s.psramLive} live), internal ${s.internal} B, sockets ${s.sockets}, files ${s.files}`);
			}
		}
	} catch (error) {
		report.check(`request ${answered + 1} was answered`, false, error.message.slice(0, 1500));
	} finally {
		await rig.close();
	}
	report.check(`all ${REQUESTS} requests answered`, answered === REQUESTS, `${answered}`);
	report.note(`sessions found full and started anew: ${fullSessions}`);
	const first = samples[0];
	if (report.check("samples were taken", samples.length >= 2, `${samples.length}`)) {
		const worst = (f) => Math.max(...samples.map((s) => f(s) - f(first)));
		const checks = [
			["the main machine's live heap", (s) => s.mainChunk + s.mainSlot, HEAP_GROWTH_BYTES, "B"],
			["the agent machine's live heap", (s) => s.agentChunk + s.agentSlot, HEAP_GROWTH_BYTES, "B"],
			["the PSRAM pool in use", (s) => s.psram, PSRAM_GROWTH_BYTES, "B"],
			["PSRAM buffers alive", (s) => s.psramLive, PSRAM_BUFFERS_GROWTH, ""],
			["the internal pool in use", (s) => s.internal, PSRAM_GROWTH_BYTES, "B"],
			["open sockets", (s) => s.sockets, SOCKETS_GROWTH, ""],
			["open files", (s) => s.files, FILES_GROWTH, ""],
		];
		for (const [what, f, bound, unit] of checks) {
			const growth = worst(f);
			report.check(`${what} grew at most ${bound}${unit} over ${samples.length} samples (worst ${growth >= 0 ? "+" : ""}${growth}${unit})`, growth <= bound);
		}
		const range = (list, f) => `start ${f(list[0])}, peak ${Math.max(...list.map(f))}, end ${f(list.at(-1))}`;
		report.note(`sampled (after a new session everywhere): main heap ${range(samples, (s) => s.mainChunk + s.mainSlot)} B; agent heap ${range(samples, (s) => s.agentChunk + s.agentSlot)} B (slots ${range(samples, (s) => s.agentSlot)} B); psram ${range(samples, (s) => s.psram)} B; psram buffers ${range(samples, (s) => s.psramLive)}; sockets ${range(samples, (s) => s.sockets)}; files ${range(samples, (s) => s.files)}`);
	}
	if (full.length) {
		// With the console's window full: one window is what the agent holds more, and its slots (the scarcer heap) keep a margin.
		const agent = (s) => s.agentChunk + s.agentSlot;
		const window = Math.max(...full.map((s, i) => agent(s) - agent(samples[Math.min(i, samples.length - 1)] ?? samples[0])));
		report.note(`with the console's window full: agent heap ${Math.min(...full.map(agent))}-${Math.max(...full.map(agent))} B, slots at most ${Math.max(...full.map((s) => s.agentSlot))} B of ${AGENT_SLOT_BYTES} B; a window is ~${Math.round(window / 1024)} KiB more than the sample after it`);
		report.check(`a full window fits with a margin: the agent's live slots stay under ${WINDOW_SLOT_SHARE * 100}% of its slot heap`, full.every((s) => s.agentSlot <= WINDOW_SLOT_SHARE * AGENT_SLOT_BYTES));
	}
	report.finish();
});
