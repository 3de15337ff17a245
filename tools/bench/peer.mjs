// Peer comparison (SPEC §11, issue 17): the same scripted conversation through the
// firmware on the lin host and through @mariozechner/pi-agent-core on Node.
//
// The conversation (tools/bench/peer/check.mjs): 20 turns, each a question, one
// streamed tool round (the model calls get_time with a time zone, then answers
// with a few hundred bytes of text), against the mock LLM on 127.0.0.1 over
// plain HTTP, once with the OpenAI protocol and once with Anthropic's. Each side
// runs in a process of its own, fresh for each run:
//   xsclaw          the release lin host with the whole firmware (both machines,
//                   console, router, sessions on files), asked over its console
//                   on a pipe (`ask ...`), settings typed before the first turn
//   pi-agent-core   Node running tools/bench/peer/pi-agent.mjs: an Agent with a
//                   custom model whose base URL is the mock, given the firmware's
//                   own system prompt and tool definitions (from its first
//                   request of the run) so both send the model the same work;
//                   its get_time answers as the firmware's does
// Each side gets its own mock, scripted with the same turns and a fixed clock,
// so both are served the same bytes: the reply digests are compared request by
// request, and every turn is checked (check.mjs): two requests, the question
// sent, the tool called with the scripted arguments and its result sent back,
// the final text equal to what the mock streamed. A mismatch fails the bench.
//
// Measured from outside, the same way for both: CPU time is the sum over the
// process's threads of /proc/PID/task/TID/schedstat's time on CPU (user + system,
// in ns), sampled before the first question and after each answer (+ SETTLE_MS,
// so work done after the answer counts too); peak memory is VmHWM of
// /proc/PID/status after the last turn (the whole life of the process).
//   peer.cpu_per_turn_ms.xsclaw / .pi-agent-core   CPU per turn, every turn of every run
//   peer.startup_cpu_ms.xsclaw / .pi-agent-core    CPU from spawn to ready (boot, settings / imports), per run
//   peer.peak_rss_bytes.xsclaw / .pi-agent-core    VmHWM per run
//   peer.cpu_per_turn_ratio   xsclaw / peer: median CPU per turn, per pair of runs
//   peer.peak_rss_ratio       xsclaw / peer: VmHWM, per pair of runs
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { APP_MAP } from "../build.mjs";
import { startMockLLM } from "../mock-llm/index.mjs";
import { startFirmware } from "../../test/e2e/firmware.mjs";
import { CREATED, checkSameReplies, checkTurn, consoleTurn, conversation } from "./peer/check.mjs";

export const title = "peer: 20 tool turns through xsclaw (lin host) and pi-agent-core (Node), CPU per turn and peak RSS";

const HERE = dirname(fileURLToPath(import.meta.url));
const PEER_DRIVER = join(HERE, "peer", "pi-agent.mjs");
const PROTOCOLS = ["openai", "anthropic"];
const RUNS_PER_PROTOCOL = 3;
const SETTLE_MS = 50;
const TURN_TIMEOUT_MS = 30_000;
const MODEL = "bench-model";
const KEY = "sk-bench-not-a-secret-0000";
const SIDES = ["xsclaw", "pi-agent-core"];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Nanoseconds the process's live threads have spent on a CPU (user + system). */
function cpuNs(pid) {
	let total = 0;
	for (const tid of readdirSync(`/proc/${pid}/task`)) {
		try {
			total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
		} catch {
			// the thread ended between the listing and the read
		}
	}
	return total;
}

/** utime + stime of the whole process (ended threads included), in ms; clock-tick resolution. */
function cpuTicksMs(pid) {
	const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
	return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ is 100 on Linux
}

/**
 * Where a process's resident memory is, from /proc/PID/smaps, in KiB per kind of
 * mapping: the XS machines' heaps (anonymous mappings of 2.5 MiB and more: each
 * machine's chunks, slots and stack, malloc'd at its creation), malloc's heap, the
 * executable, each shared library, the rest (thread stacks, libraries' data).
 */
function rssByMapping(pid) {
	const kib = {};
	let kind = null;
	for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
		const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
		if (head) {
			const size = (parseInt(head[2], 16) - parseInt(head[1], 16)) / 1024;
			const name = head[3];
			kind = name === "[heap]" ? "malloc" : !name && size >= 2560 ? "XS heaps" : name.startsWith("/") ? name.slice(name.lastIndexOf("/") + 1).replace(/\.so.*$/, "") : "other";
			continue;
		}
		const rss = /^Rss:\s+(\d+) kB/.exec(line);
		if (rss && kind) kib[kind] = (kib[kind] ?? 0) + Number(rss[1]);
	}
	return Object.entries(kib).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ");
}

function peakRssBytes(pid) {
	const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	if (!kb) throw new Error(`bench peer: no VmHWM for process ${pid}`);
	return Number(kb[1]) * 1024;
}

/** Runs the turns through ask(turn) in process pid; CPU per turn from schedstat, checked against the ticks. */
async function measure(side, pid, turns, ask) {
	await sleep(SETTLE_MS);
	let before = cpuNs(pid);
	const startTicks = cpuTicksMs(pid);
	const startup = before / 1e6;
	const cpu = [];
	const answers = [];
	for (const turn of turns) {
		answers.push(await ask(turn));
		await sleep(SETTLE_MS);
		const now = cpuNs(pid);
		cpu.push((now - before) / 1e6);
		before = now;
	}
	const ticks = cpuTicksMs(pid) - startTicks;
	const summed = cpu.reduce((a, b) => a + b, 0);
	// Threads that ended take their schedstat time with them; the ticks keep it.
	if (ticks > summed * 1.1 + 50) console.error(`bench peer: ${side}: ${ticks} ms of CPU by the ticks, ${summed.toFixed(0)} ms summed over live threads (a thread ended?)`);
	return { cpu, startup, peakRss: peakRssBytes(pid), where: rssByMapping(pid), answers };
}

async function withMock(turns, fn) {
	const mock = await startMockLLM({ created: CREATED });
	mock.script(turns.flatMap((t) => t.scenarios));
	try {
		return await fn(mock);
	} finally {
		await mock.close();
	}
}

/** The prompt and tools the firmware sent in its first request, for the peer to send the same. */
function firmwarePrompt(protocol, record) {
	const body = JSON.parse(record.body);
	if (protocol === "openai") {
		const system = body.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
		return { systemPrompt: system, tools: (body.tools ?? []).map((t) => t.function) };
	}
	const system = typeof body.system === "string" ? body.system : (body.system ?? []).map((b) => b.text).join("\n\n");
	return { systemPrompt: system, tools: (body.tools ?? []).map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema })) };
}

function failOn(side, protocol, problems) {
	if (problems.length) throw new Error(`bench peer: ${side} (${protocol}) did not hear the conversation whole:\n  ${problems.slice(0, 8).join("\n  ")}`);
}

async function runFirmware(protocol, variant, turns) {
	return withMock(turns, async (mock) => {
		const data = mkdtempSync(join(tmpdir(), "xsclaw-bench-peer-"));
		const fw = startFirmware(["--modules", APP_MAP, "--data", data], variant);
		try {
			await fw.until(/type help for the commands\n/);
			const settings = [
				`config set llm.provider ${protocol === "openai" ? "custom" : "anthropic"}`,
				`config set llm.base_url ${mock.url}/v1`,
				`config set llm.model ${MODEL}`,
				`config set llm.api_key ${KEY}`,
			];
			for (const line of settings) {
				const said = await fw.run(line, /^(ok|error): .*\n/m);
				if (!/^ok: /m.test(said)) throw new Error(`bench peer: the firmware refused ${line.replace(KEY, "…")}: ${said}`);
			}
			const pid = fw.pid;
			const result = await measure("xsclaw", pid, turns, async (turn) => {
				return consoleTurn(await fw.run(`ask ${turn.question}`, /(?:^|\n)(?!… )[^\n]+\n/, { timeoutMs: TURN_TIMEOUT_MS }));
			});
			const problems = turns.flatMap((turn, i) => checkTurn(protocol, turn, {
				requests: mock.requests.slice(2 * i, 2 * i + 2),
				answer: result.answers[i].answer,
				ran: result.answers[i].tools.map((name) => ({ name })),
			}));
			if (mock.requests.length !== 2 * turns.length) problems.push(`the mock saw ${mock.requests.length} requests, not ${2 * turns.length}`);
			failOn("xsclaw", protocol, problems);
			const exit = await fw.end();
			if (exit.code !== 0) throw new Error(`bench peer: the firmware exited ${exit.code ?? exit.signal}: ${exit.stderr.slice(-2000)}`);
			if (exit.stderr.includes(KEY)) throw new Error("bench peer: the firmware logged the API key");
			return { ...result, requests: mock.requests, prompt: firmwarePrompt(protocol, mock.requests[0]) };
		} finally {
			await fw.end();
			rmSync(data, { recursive: true, force: true });
		}
	});
}

async function runPeer(protocol, turns, prompt) {
	return withMock(turns, async (mock) => {
		const config = { protocol, baseUrl: protocol === "openai" ? `${mock.url}/v1` : mock.url, model: MODEL, apiKey: KEY, ...prompt };
		const child = spawn(process.execPath, [PEER_DRIVER, JSON.stringify(config)], { stdio: ["pipe", "pipe", "pipe"] });
		let stderr = "";
		child.stderr.on("data", (d) => (stderr += d));
		const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve(code ?? signal)));
		const killer = setTimeout(() => child.kill("SIGKILL"), 120_000 + turns.length * TURN_TIMEOUT_MS);
		const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
		const next = async (what) => {
			let timer;
			const timeout = new Promise((_, reject) => {
				timer = setTimeout(() => reject(new Error(`bench peer: pi-agent-core gave no ${what} within ${TURN_TIMEOUT_MS} ms: ${stderr.slice(-2000)}`)), TURN_TIMEOUT_MS);
			});
			try {
				const { value, done } = await Promise.race([lines.next(), timeout]);
				if (done) throw new Error(`bench peer: pi-agent-core ended before its ${what}: ${stderr.slice(-2000)}`);
				return value;
			} finally {
				clearTimeout(timer);
			}
		};
		try {
			if ((await next("ready line")) !== "ready") throw new Error(`bench peer: pi-agent-core did not start: ${stderr.slice(-2000)}`);
			const result = await measure("pi-agent-core", child.pid, turns, async (turn) => {
				child.stdin.write(`${turn.question}\n`);
				return JSON.parse(await next("answer"));
			});
			const problems = turns.flatMap((turn, i) => {
				const { text, toolCalls, error } = result.answers[i];
				return [
					...(error ? [`turn ${i + 1}: pi-agent-core reported ${error}`] : []),
					...checkTurn(protocol, turn, { requests: mock.requests.slice(2 * i, 2 * i + 2), answer: text, ran: toolCalls }),
				];
			});
			if (mock.requests.length !== 2 * turns.length) problems.push(`the mock saw ${mock.requests.length} requests, not ${2 * turns.length}`);
			failOn("pi-agent-core", protocol, problems);
			child.stdin.end();
			const code = await exited;
			if (code !== 0) throw new Error(`bench peer: pi-agent-core exited ${code}: ${stderr.slice(-2000)}`);
			return { ...result, requests: mock.requests };
		} finally {
			clearTimeout(killer);
			child.kill("SIGKILL");
		}
	});
}

const median = (values) => {
	const s = [...values].sort((a, b) => a - b);
	const mid = s.length >> 1;
	return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

export async function run({ variant }) {
	const cpu = { xsclaw: [], "pi-agent-core": [] };
	const startup = { xsclaw: [], "pi-agent-core": [] };
	const rss = { xsclaw: [], "pi-agent-core": [] };
	const cpuRatios = [];
	const rssRatios = [];
	for (let r = 0; r < RUNS_PER_PROTOCOL; r++) {
		for (const protocol of PROTOCOLS) {
			const turns = conversation(protocol);
			const fw = await runFirmware(protocol, variant, turns);
			const peer = await runPeer(protocol, turns, fw.prompt);
			failOn("both", protocol, checkSameReplies(fw.requests, peer.requests));
			const sides = { xsclaw: fw, "pi-agent-core": peer };
			for (const side of SIDES) {
				cpu[side].push(...sides[side].cpu);
				startup[side].push(sides[side].startup);
				rss[side].push(sides[side].peakRss);
			}
			cpuRatios.push(median(fw.cpu) / median(peer.cpu));
			rssRatios.push(fw.peakRss / peer.peakRss);
			const kib = (n) => `${Math.round(n / 1024)} KiB`;
			console.error(`bench peer: ${protocol} run ${r + 1}: CPU per turn ${median(fw.cpu).toFixed(2)} / ${median(peer.cpu).toFixed(2)} ms, peak RSS ${kib(fw.peakRss)} / ${kib(peer.peakRss)} (xsclaw / pi-agent-core); request bytes ${fw.requests.at(-1).body.length} / ${peer.requests.at(-1).body.length} at the last call; xsclaw's resident KiB by mapping: ${fw.where}`);
		}
	}
	return [
		...SIDES.map((side) => ({ name: `peer.cpu_per_turn_ms.${side}`, unit: "ms CPU (user + sys) per turn", values: cpu[side] })),
		...SIDES.map((side) => ({ name: `peer.startup_cpu_ms.${side}`, unit: "ms CPU to ready", values: startup[side], p99: false })),
		...SIDES.map((side) => ({ name: `peer.peak_rss_bytes.${side}`, unit: "bytes (VmHWM)", values: rss[side], p99: false })),
		{ name: "peer.cpu_per_turn_ratio", unit: "xsclaw / pi-agent-core", values: cpuRatios, p99: false },
		{ name: "peer.peak_rss_ratio", unit: "xsclaw / pi-agent-core", values: rssRatios, p99: false },
	];
}
