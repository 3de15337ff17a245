// The proof rig (issue 17): the firmware on the lin host with its console on a
// pipe (./firmware.mjs), the mock LLM and the mock Telegram on loopback, two
// paired Telegram chats (the owner's and a user's), and what the load, soak,
// fault and hostile-input tests need around it:
//
//   seeded(fallback)    the run's random numbers: PROOF_SEED overrides the seed, which is printed
//   SIZE(short, long)   the short form in `npm test`, the long one under `npm run soak` (PROOF_LONG=1)
//   new Report(title)   what a test tried and its checks; finish() prints `N passed, M failed` and fails the test on any failure
//   startRig(options)   the firmware and its mocks, configured and paired; rig.close() ends them and
//                       scans every output (console, log, files, chats, LLM requests) for the secrets
//   rig.command(line, done)   a console line and its output up to `done`
//   rig.sample()        both machines' heap after collecting garbage (`status gc`), the buffer pools,
//                       open sockets (host count) and open files (/proc/<pid>/fd)
//
// Every wait is bounded; nothing leaves loopback.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startMockLLM } from "../../tools/mock-llm/index.mjs";
import { startMockTelegram } from "../../tools/mock-telegram/index.mjs";
import { startMockQQ } from "../../tools/mock-qq/index.mjs";
import { APP_MAP, BUILD } from "../../tools/build.mjs";
import { filesUnder, startFirmware, until } from "./firmware.mjs";
import { SANITIZER_ERROR, VARIANTS } from "./xs.mjs";

export { filesUnder, until };
export const LONG = process.env.PROOF_LONG === "1";
/** The short form's size in `npm test`, the long form's under `npm run soak`. */
export const SIZE = (short, long) => (LONG ? long : short);
/** The fastest host built: the ASan one only when the release one is missing. */
export const VARIANT = VARIANTS[0] ?? "release";
/** One firmware run of a proof test is killed after this (a hang fails the test instead of stalling it). */
const FIRMWARE_LIMIT_MS = LONG ? 3 * 3600_000 : 600_000;

export const SECRETS = Object.freeze({
	apiKey: "sk-proof-SECRET-api-key-9f3a7c21d04b",
	botToken: "7000001:AAHproofSECRETbotToken5e8d1b7c9a",
	appSecret: "qqproofSECRETappSecret3c6e0a8f2b",
});
// A secret's tell-tale pieces: a leak of part of one is a leak too.
const SECRET_PIECES = ["SECRET-api-key", "proofSECRETbot", "proofSECRETapp", "9f3a7c21d04b", "5e8d1b7c9a", "3c6e0a8f2b"];
const QQ_APP_ID = "102017017";

export const OWNER_CHAT = 501;
export const USER_CHAT = 502;
/** The QQ user of the rig's QQ chat (C2C), and the chat's name in the mock's record. */
export const QQ_USER = "PROOFQQ1";
export const QQ_CHAT = `c2c:${QQ_USER}`;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The one seeded generator of the tests (test/lib/random.ts, compiled by the build).
const { parseSeed, random } = await import(pathToFileURL(join(BUILD, "js", "test", "lib", "random.js")).href);
/** The seeds this run drew from: a failing Report names them with how to replay. */
const seedsDrawn = new Set();

/** The run's generator (test/random): rng(n) in [0, n), next(), pick(list), seed; PROOF_SEED overrides the fallback. */
export function seeded(fallback) {
	const rng = random(parseSeed(process.env.PROOF_SEED, "PROOF_SEED") ?? fallback);
	seedsDrawn.add(rng.seed);
	return rng;
}

/**
 * What a test tried and what it checked. check() records and never throws, so
 * one run reports every failure; finish() prints the tally as its own line
 * (`<title>: N passed, M failed`) and fails the node test when M > 0.
 */
export class Report {
	constructor(title, t) {
		this.title = title;
		this.t = t;
		this.passed = 0;
		this.failures = [];
		this.lines = [];
	}

	/** A line about what was tried (printed with the tally). */
	tried(text) {
		this.lines.push(`tried: ${text}`);
	}

	note(text) {
		this.lines.push(text);
	}

	check(name, ok, detail = "") {
		if (ok) this.passed++;
		else this.failures.push(`${name}${detail ? `: ${detail}` : ""}`);
		return ok;
	}

	/** Runs fn; an exception (a timed-out wait, an assertion) is a failed check named `name`. */
	async step(name, fn) {
		try {
			await fn();
			this.passed++;
			return true;
		} catch (error) {
			const context = this.context?.() ?? "";
			this.failures.push(`${name}: ${`${error?.message ?? error}`.slice(0, 3000)}${context ? `\n${context}` : ""}`);
			return false;
		}
	}

	finish() {
		const summary = `${this.title}: ${this.passed} passed, ${this.failures.length} failed`;
		const text = [`-- ${this.title}`, ...this.lines, ...this.failures.map((f) => `FAILED ${f}`), summary].join("\n");
		console.log(text);
		for (const line of text.split("\n")) this.t?.diagnostic(line);
		const replay = [...seedsDrawn].map((seed) => `seed ${seed}: replay with PROOF_SEED=${seed}`).join("; ");
		assert.equal(this.failures.length, 0, `${summary}${replay ? ` (${replay})` : ""}\n${this.failures.join("\n")}`);
	}
}

/** Every file under dir except the settings store (config.kv keeps the secrets it is given, by design). */
/** Where a secret (or a tell-tale piece of one) occurs in text, else undefined. */
export function secretIn(text) {
	for (const piece of [...Object.values(SECRETS), ...SECRET_PIECES]) {
		const at = text.indexOf(piece);
		if (at >= 0) return `${piece} in …${text.slice(Math.max(0, at - 160), at + piece.length + 40)}…`;
	}
	return undefined;
}

const HEAP_LINE = /chunks ([\d.]+) KiB of ([\d.]+) KiB \(peak ([\d.]+) KiB\), slots ([\d.]+) KiB of ([\d.]+) KiB \(peak ([\d.]+) KiB\)/;

/**
 * The firmware with the mock LLM (requires the API key), the mock Telegram and
 * (qq) the mock QQ platform, configured on its console, with Telegram chats
 * OWNER_CHAT (owner) and USER_CHAT (user) and the QQ chat QQ_CHAT paired unless
 * `pair` is false. hooks.onRequest(record) sees each LLM request
 * before the mock takes its scenario (it may script one). prepare(dataDir) runs
 * before the first boot.
 */
export async function startRig({ variant = VARIANT, pair = true, qq: withQQ = true, args = [], env = {}, settings = [], prepare, report } = {}) {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-proof-"));
	const data = join(dir, "data");
	mkdirSync(data, { recursive: true });
	prepare?.(data);
	const hooks = {};
	const llm = await startMockLLM({ requireKey: SECRETS.apiKey, onRequest: (record) => hooks.onRequest?.(record) });
	const tg = await startMockTelegram({ token: SECRETS.botToken });
	const qq = withQQ ? await startMockQQ({ appId: QQ_APP_ID, secret: SECRETS.appSecret, heartbeatMs: 2000 }) : undefined;
	const firmwares = [];
	if (report) report.context = () => (rig.fw ? `log tail:\n${rig.fw.stderr.slice(-1500)}` : "");
	const rig = {
		dir, data, llm, tg, qq, hooks, variant,
		fw: undefined,
		/** Starts the firmware (again) on the same data; configure types the settings. */
		async boot({ configure = true } = {}) {
			const fw = startFirmware(["--modules", APP_MAP, "--data", data, ...args], variant, { env, limitMs: FIRMWARE_LIMIT_MS });
			firmwares.push(fw);
			rig.fw = fw;
			await fw.until(/type help for the commands/);
			if (configure) {
				for (const line of [
					"config set llm.provider custom", `config set llm.base_url ${llm.url}/v1`, "config set llm.model gpt-mock",
					`config set llm.api_key ${SECRETS.apiKey}`, `config set telegram.base_url ${tg.url}`, "config set telegram.poll_timeout_s 2",
					`config set telegram.token ${SECRETS.botToken}`,
					...(qq ? [`config set qq.api_url ${qq.url}`, `config set qq.token_url ${qq.tokenUrl}`, `config set qq.app_id ${QQ_APP_ID}`, `config set qq.app_secret ${SECRETS.appSecret}`] : []),
					// The LLM limits are a user's safety net; a soak makes thousands of calls in minutes.
					"config set llm.calls_per_hour 1000000", "config set llm.calls_per_day 1000000", "config set llm.tokens_per_day 0",
					...settings,
				]) await rig.command(line, /^ok: /m);
			}
			await fw.until(/telegram: connected as @xsclaw_test_bot/);
			if (qq) await fw.until(/qq: connected as/);
			return fw;
		},
		/** Types a console line; resolves its output once it matches `done`. */
		async command(line, done, { timeoutMs = 30_000 } = {}) {
			const from = rig.fw.stdout.length;
			rig.fw.send(line);
			await rig.fw.until(done, { from, timeoutMs });
			return rig.fw.printed(from);
		},
		async pair(chat) {
			const out = await rig.command("telegram pair", /pairing code ([A-Z0-9]+)/);
			const code = /pairing code ([A-Z0-9]+)/.exec(out)[1];
			const before = tg.chat(chat).length;
			tg.say({ chat, text: `/pair ${code}` });
			const reply = await tg.waitFor(() => tg.chat(chat).slice(before).find((m) => /^Paired as/.test(m.text)), 10_000, "the pairing reply");
			return /Paired as (\w+)/.exec(reply.text)[1];
		},
		/** Pairs the QQ chat; resolves the role it got. */
		async pairQQ() {
			const out = await rig.command("qq pair", /qq: pairing code ([A-Z0-9]+)/);
			const code = /qq: pairing code ([A-Z0-9]+)/.exec(out)[1];
			const before = qq.replies(QQ_CHAT).length;
			qq.say({ user: QQ_USER, text: `/pair ${code}` });
			const reply = await qq.waitFor(() => qq.replies(QQ_CHAT).slice(before).find((r) => /^Paired as/.test(r.content)), 20_000, "the QQ pairing reply");
			return /Paired as (\w+)/.exec(reply.content)[1];
		},
		/** Heap of both machines after garbage collection (and the agent's heap sizes), buffer pools, sockets, open files. */
		async sample() {
			const out = await rig.command("status gc", /^buffers: .*open sockets: \d+$/m);
			const main = HEAP_LINE.exec(/^heap: (.*)$/m.exec(out)?.[1] ?? "");
			const agent = HEAP_LINE.exec(/^agent heap: (.*)$/m.exec(out)?.[1] ?? "");
			const pools = /^buffers: psram ([\d.]+) KiB of [\d.]+ KiB \(peak [\d.]+ KiB, (\d+) live\), internal ([\d.]+) KiB of [\d.]+ KiB \(peak [\d.]+ KiB, (\d+) live\); open sockets: (\d+)$/m.exec(out);
			assert.ok(main && agent && pools, `status gc gives both heaps and the pools:\n${out}`);
			const kib = (s) => Math.round(Number(s) * 1024);
			return {
				mainChunk: kib(main[1]), mainSlot: kib(main[4]), agentChunk: kib(agent[1]), agentSlot: kib(agent[4]),
				agentChunkSize: kib(agent[2]), agentChunkPeak: kib(agent[3]), agentSlotSize: kib(agent[5]), agentSlotPeak: kib(agent[6]),
				psram: kib(pools[1]), psramLive: Number(pools[2]), internal: kib(pools[3]), internalLive: Number(pools[4]),
				sockets: Number(pools[5]), files: rig.openFiles(),
			};
		},
		/** Regular files the firmware's process holds open (/proc/<pid>/fd), besides pipes and sockets. */
		openFiles() {
			const fd = `/proc/${rig.fw.pid}/fd`;
			let count = 0;
			for (const name of readdirSync(fd)) {
				try {
					if (readlinkSync(join(fd, name)).startsWith("/")) count++;
				} catch {
					// closed meanwhile
				}
			}
			return count;
		},
		/** Ends the firmware, runs after(), checks its exit, scans everything for secrets, removes the data. */
		async close({ scan = true, after } = {}) {
			const results = [];
			for (const fw of firmwares) results.push(await fw.end());
			// After the firmware ended, before the data goes (session-inspect).
			after?.();
			const outputs = [];
			for (const r of results) outputs.push(["console", r.stdout], ["log", r.stderr]);
			// PROOF_DUMP=dir keeps the console and log of each run there, to read after a failure.
			if (process.env.PROOF_DUMP) {
				mkdirSync(process.env.PROOF_DUMP, { recursive: true });
				results.forEach((r, i) => writeFileSync(join(process.env.PROOF_DUMP, `${report?.title ?? "proof"}-${i}.txt`), `${r.stdout}\n---- log ----\n${r.stderr}`));
				const t0 = llm.requests[0]?.response.receivedAt ?? 0;
				const mocks = [
					"---- Telegram calls ----",
					...tg.calls.map((c) => `${c.at} ${c.method} ${c.params.chat_id ?? ""} ${JSON.stringify(c.params.text ?? "").slice(0, 100)}${c.fault ? ` FAULT ${JSON.stringify(c.fault)}` : ""}`),
					"---- QQ replies ----",
					...(qq?.record.replies ?? []).map((r) => `${r.at} ${r.chat} ${r.msg_id} seq ${r.msg_seq} ${r.status} ${JSON.stringify(r.content).slice(0, 100)}`),
					"---- LLM requests ----",
					...llm.requests.map((r) => `${Math.round(r.response.receivedAt - t0)} #${r.seq} ${[...r.body.matchAll(/q\d+-[a-z]+/g)].map((m) => m[0]).at(-1) ?? ""} ${JSON.stringify(r.scenario?.fault ?? null)} -> ${r.response.status}${r.response.aborted ? " aborted" : ""}`),
				];
				writeFileSync(join(process.env.PROOF_DUMP, `${report?.title ?? "proof"}-mocks.txt`), mocks.join("\n"));
			}
			for (const file of filesUnder(data)) outputs.push([file, readFileSync(file, "latin1")]);
			for (const call of tg.calls) outputs.push([`telegram ${call.method}`, JSON.stringify(call.params)]);
			for (const r of llm.requests) outputs.push(["LLM request", r.body]);
			if (qq) outputs.push(["QQ record", JSON.stringify(qq.record)]);
			await tg.close();
			await qq?.stop();
			await llm.close();
			try {
				if (scan && report) {
					const leaks = outputs.map(([where, text]) => [where, secretIn(text)]).filter(([, leak]) => leak);
					report.check(`no secret in any console line, log line, file, chat message or LLM request (${outputs.length} scanned)`, leaks.length === 0, leaks.slice(0, 3).map(([w, l]) => `${w}: ${l}`).join("\n"));
					const last = results.at(-1);
					report.check("the firmware exits cleanly at end of input", last.code === 0, `exit ${last.code} ${last.signal ?? ""}\n${last.stderr.slice(-2000)}`);
					report.check("no sanitizer report", !results.some((r) => SANITIZER_ERROR.test(r.stderr)));
				}
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
			return results;
		},
	};
	try {
		await rig.boot();
		if (pair) {
			const owner = await rig.pair(OWNER_CHAT);
			const user = await rig.pair(USER_CHAT);
			assert.equal(owner, "owner");
			assert.equal(user, "user");
			if (qq) rig.qqRole = await rig.pairQQ();
		}
	} catch (error) {
		for (const fw of firmwares) await fw.kill();
		await qq?.stop();
		await tg.close();
		await llm.close();
		rmSync(dir, { recursive: true, force: true });
		throw error;
	}
	return rig;
}

/** Writes bytes to a file under the data directory (for files planted before boot). */
export function plant(data, path, bytes) {
	const full = join(data, path);
	mkdirSync(join(full, ".."), { recursive: true });
	writeFileSync(full, bytes);
}
