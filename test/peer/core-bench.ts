// The XS side of tools/bench/core.mjs, run as the host's main: a root Core as
// core/setup builds it (framework prompt, the default persona, built-in tools) over the real Llm, HTTP client
// and TLS socket, against the mock LLM on 127.0.0.1 (test CA via --ca), with the
// real session store (modules/agent/store): the bench session is first filled to
// --session-kib of plain exchanges, so every request reads a full history window
// and appends to a big file. It stays under the compaction threshold for the whole
// run (the figures are the loop's, not compaction's).
// Traces one `BENCH {json}` line per sample; the Node side adds what only the
// mock saw (request bodies, when a connection closed). Options:
//   --mock-url https://localhost:PORT   --control-url http://127.0.0.1:PORT
//   --ca PATH   --conversations N   --interrupt-runs N   --session-kib N
//   --headroom 1: instead, one 2-round request over the (kept) session in --data,
//     filled first when smaller than --session-kib; traces the chunk heap in use
//     at the prompt (after a collection) and the collections during the request.
//     tools/bench/headroom.mjs runs it with --chunk-bytes to find the smallest
//     chunk heap it completes in (the host exits 2 when the heap runs out).
import Timer from "timer";
import { collectGarbage, exit, heap, now, option, resetPeak } from "host/platform";
import { SESSION_FILE_MAX_BYTES } from "budgets";
import { boardTools } from "caps/board";
import { parseTimeZone } from "util/tz";
import { Core } from "core/core";
import { CORE_PROMPT } from "core/setup";
import { DEFAULT_PERSONA } from "memory/profile";
import { Registry } from "caps/registry";
import { ProviderFlag, RequestFlag, type AgentRequest, type ChatModel } from "core/types";
import { Llm } from "llm/runtime";
import { openSessions } from "store/sessions";
import { boardHttp } from "net/board";
import { MemoryStore, config } from "../unit/llm_fakes";
import { openMemory } from "memory/setup";

const MOCK = option("mock-url") ?? "";
const CONTROL = option("control-url") ?? "";
const count = (name: string) => Number(option(name) ?? 1);
const SESSION = "bench";

const { http, buffers } = boardHttp(); // as main.ts wires it
const llm = new Llm({
	config: config({
		"llm.provider": "custom", "llm.base_url": `${MOCK}/v1`, "llm.api_key": "sk-bench-0123456789", "llm.model": "gpt-mock",
		// The bench makes more calls than a person would in an hour.
		"llm.calls_per_hour": "1000000", "llm.calls_per_day": "1000000", "llm.tokens_per_day": "0",
	}),
	transport: http,
	usageStore: new MemoryStore(),
	buffers,
});

// The Llm itself is the model, as in the firmware (agent/machine): the LLM's own
// time and the calls are the core's figures (lastMetrics: llm_ms, the time
// inside model.chat; rounds), so no wrapper adds an async call per round.
const model: ChatModel = llm;

// The session is the console's current one, as a console session is (store/sessions
// lets go of the window of a session no chat talks in when its turn ends).
function mapSession(): void {
	if (sessions.has(SESSION)) sessions.switchSession("console", "console", SESSION);
}

// The session, filled with exchanges of ordinary length up to --session-kib.
const sessions = openSessions({ log: (line) => trace(`${line}\n`) });
function fillSession(targetBytes: number): void {
	const summary = () => sessions.list().find((s) => s.id === SESSION);
	for (let i = 0; i < 10_000 && (summary()?.bytes ?? 0) < targetBytes; i++) {
		const request = { ...benchRequest(`filler ${i}`), request_id: 1_000_000 + i };
		sessions.persist({ session_id: SESSION, request, records: [{ kind: "user", message: { role: "user", content: `Question ${i}: what did the sensor on pin ${i % 40} read this morning, and is that within the range we agreed on last week? Please also remind me what we said about the watering schedule.` } }], turn_completed: false });
		sessions.persist({ session_id: SESSION, request, records: [{ kind: "assistant_final", message: { role: "assistant", content: `Answer ${i}: pin ${i % 40} read ${(20 + (i % 9) * 0.7).toFixed(1)} °C at 07:00, inside the 15–28 °C range. The trend over the last three days is flat. Watering stays at 06:30 and 19:00 for ten minutes each, as agreed; I will tell you if the soil sensor disagrees.` } }], turn_completed: true });
	}
	mapSession();
	const filled = summary();
	report({ figure: "session", at: "start", limit: SESSION_FILE_MAX_BYTES, bytes: filled?.bytes ?? 0, records: filled?.records ?? 0, blocked: filled?.blocked ?? false });
}

const bootMs = now();
const UTC = parseTimeZone("UTC"); // caps/setup parses the configured zone once, not per call
const tools = new Registry(boardTools({
	wallClockMs: () => Date.now(), now, bootMs, heap, zone: () => UTC,
	firmware: { name: "xsclaw", version: "bench", platform: "lin" },
}));
const core = new Core({
	agentId: "root",
	model,
	systemPrompt: CORE_PROMPT,
	// The persona as memory's profile provider gives it when none was saved.
	providers: [
		{ name: "profile", flags: ProviderFlag.REQUEST_START_ONLY, collect: () => ({ kind: "system_prompt", content: DEFAULT_PERSONA }) },
		sessions.historyProvider,
		tools.provider,
	],
	callCap: tools.callCap,
	runsAlone: tools.runsAlone,
	persist: sessions.persist,
	gate: sessions.gate,
	log: () => {}, // METRIC lines would drown the BENCH lines
});
core.start();

const report = (sample: object) => trace(`BENCH ${JSON.stringify(sample)}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => Timer.set(() => resolve(), ms));
async function control(method: "GET" | "POST", path: string, body?: unknown): Promise<any> {
	const response = await http.request({ method, url: CONTROL + path, body: body === undefined ? undefined : JSON.stringify(body), headers: { "content-type": "application/json" } });
	return JSON.parse(response.body);
}
const mockCount = async () => (await control("GET", "/count")).count as number;

function benchRequest(text: string, flags = 0): AgentRequest {
	return {
		request_id: 0, flags, session_id: SESSION, user_text: text,
		source: { channel: "console", chat_id: "console", sender_id: "bench", message_id: "", cap: "" },
	};
}

const heapUse = () => {
	const h = heap();
	return h.chunkUsed + h.slotUsed;
};

// Two rounds per request (get_time, then the answer): the loop's own time per
// iteration, the requests' byte ranges for the prefix figure, the heap peak.
async function conversations(): Promise<void> {
	for (let run = 0; run < count("conversations"); run++) {
		await control("POST", "/script", [
			{ type: "tool_calls", calls: [{ id: `call_${run}`, name: "get_time", arguments: {} }] },
			{ type: "text", text: "It is morning; the sensors are all inside their ranges." },
		]);
		const first = (await mockCount()) + 1;
		collectGarbage();
		const startUse = heapUse();
		resetPeak();
		const start = now();
		const id = await core.submit(benchRequest(`Run ${run}: what time is it, and are the sensors fine?`), 1000);
		const response = await core.receiveFor(id, 30_000);
		const total = now() - start;
		const h = heap();
		if (!response.ok) throw new Error(`bench request failed: ${response.error}`);
		const metrics = core.lastMetrics;
		if (!metrics || metrics.rounds !== 2) throw new Error(`bench request was not 2 rounds: ${JSON.stringify(metrics)}`);
		report({ figure: "conversation", first, last: first + metrics.rounds - 1, iterations: metrics.rounds, overheadMs: (total - metrics.llm_ms) / metrics.rounds, peakGrowth: h.chunkPeak + h.slotPeak - startUse });
	}
}

// Requests of one conversation with long-term memory over its 4 KiB prompt
// budget, each question about another memory: the prefix a request repeats from
// the one before it (memory's stable section must not follow the question).
async function acrossRequests(): Promise<void> {
	const memory = openMemory({ config: config({}), log: () => {} });
	for (let i = 0; i < 80; i++) memory.memory.write(`Fact ${i}: the plant on shelf ${i} is watered every ${2 + (i % 5)} days and likes ${i % 2 ? "shade" : "sun"}.`, [`shelf${i}`]);
	const conversation = new Core({
		agentId: "root", model, systemPrompt: CORE_PROMPT,
		providers: [...memory.providers, sessions.historyProvider, tools.provider],
		callCap: tools.callCap, runsAlone: tools.runsAlone, persist: sessions.persist, gate: sessions.gate, log: () => {},
	});
	conversation.start();
	const across = sessions.currentSession("console", "across"); // a chat's session, as for any chat
	const requests = count("across-requests");
	await control("POST", "/script", Array.from({ length: requests }, (_, i) => ({ type: "text", text: `Shelf ${i * 7} is watered as noted.` })));
	const first = (await mockCount()) + 1;
	for (let i = 0; i < requests; i++) {
		const request = { ...benchRequest(`How often is the plant on shelf ${i * 7} watered?`), session_id: across };
		const response = await conversation.receiveFor(await conversation.submit(request, 1000), 30_000);
		if (!response.ok) throw new Error(`bench request failed: ${response.error}`);
	}
	conversation.stop();
	report({ figure: "across", first, last: first + requests - 1 });
}

// USER_INTERRUPT during a stalled LLM call: the time it is submitted (XS now(),
// CLOCK_MONOTONIC) and which mock request it should close; the Node side knows when it closed.
async function interrupts(): Promise<void> {
	for (let run = 0; run < count("interrupt-runs"); run++) {
		await control("POST", "/script", [{ type: "text", fault: "stall" }, { type: "text", text: "Understood, stopping." }]);
		const seq = (await mockCount()) + 1;
		const id = await core.submit(benchRequest(`Run ${run}: write me a very long story.`), 1000);
		for (let i = 0; i < 500 && ((await mockCount()) < seq || core.phase !== "IN_LLM_HTTP"); i++) await sleep(2);
		await sleep(20); // the mock has sent its headers: the call is truly in flight
		const interruptAt = now();
		await core.submit(benchRequest("Stop, never mind.", RequestFlag.USER_INTERRUPT), 1000);
		const response = await core.receiveFor(id, 30_000);
		if (!response.ok) throw new Error(`interrupted request failed: ${response.error}`);
		report({ figure: "interrupt", seq, interruptAt });
	}
}

// One request at the prompt, for the headroom figure.
async function headroom(): Promise<void> {
	await control("POST", "/script", [
		{ type: "tool_calls", calls: [{ id: "call_headroom", name: "get_time", arguments: {} }] },
		{ type: "text", text: "It is morning; the sensors are all inside their ranges." },
	]);
	collectGarbage();
	const before = heap();
	report({ figure: "prompt", chunkUsed: before.chunkUsed, chunkSize: before.chunkSize, collections: before.collections ?? 0 });
	const id = await core.submit(benchRequest("What time is it, and are the sensors fine?"), 1000);
	const response = await core.receiveFor(id, 30_000);
	if (!response.ok) throw new Error(`headroom request failed: ${response.error}`);
	const after = heap();
	report({ figure: "request", collections: (after.collections ?? 0) - (before.collections ?? 0), chunkPeak: after.chunkPeak });
}

try {
	if (option("headroom")) {
		const target = Number(option("session-kib") ?? 0) * 1024;
		if ((sessions.list().find((s) => s.id === SESSION)?.bytes ?? 0) < target) fillSession(target);
		mapSession();
		await headroom();
		core.stop();
		sessions.close();
		http.close();
		exit(0);
	}
	fillSession(Number(option("session-kib") ?? 0) * 1024);
	await conversations();
	await interrupts();
	await acrossRequests();
	core.stop();
	const end = sessions.list().find((x) => x.id === SESSION);
	report({ figure: "session", at: "end", limit: SESSION_FILE_MAX_BYTES, bytes: end?.bytes ?? 0, records: end?.records ?? 0, blocked: end?.blocked ?? false });
	sessions.close();
	http.close();
	exit(0);
} catch (error) {
	trace(`core-bench: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
	exit(1);
}
