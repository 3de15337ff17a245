// The XS side of tools/bench/round.mjs, run as the host's main: LLM rounds
// through the firmware's own path (llm/runtime, retries, the protocol backend,
// llm/wire, net/http, net/response, net/sse, the stream assembler) against the
// mock LLM on 127.0.0.1 over plain HTTP, each protocol in turn. Per round it
// traces the XS heap the call allocated (chunk + slot peak over the use at its
// start, after a collection: the peak counts garbage not yet collected) and the
// XS thread's CPU time (lin's __xsclaw.threadCpuMs: other processes on a loaded
// machine do not count). Options: --mock-url http://127.0.0.1:PORT
// --control-url http://127.0.0.1:PORT --turns N (the scripted turns, each a
// tool-call round and an answer round: tools/bench/peer/check.mjs).
import { collectGarbage, exit, heap, option, resetPeak } from "host/platform";
import { Aborter } from "net/abort";
import { boardHttp } from "net/board";
import { Llm } from "llm/runtime";
import type { ChatRequest, Message, ToolDefinition } from "llm/types";
import { MemoryStore, config } from "../unit/llm_fakes";

const MOCK = option("mock-url") ?? "";
const CONTROL = option("control-url") ?? "";
const TURNS = Number(option("turns") ?? 1);

const { http, buffers } = boardHttp(); // as main.ts wires it
const report = (sample: object) => trace(`BENCH ${JSON.stringify(sample)}\n`);
const used = () => {
	const h = heap();
	return h.chunkUsed + h.slotUsed;
};
const peak = () => {
	const h = heap();
	return h.chunkPeak + h.slotPeak;
};

const TOOLS: ToolDefinition[] = [{
	type: "function",
	function: {
		name: "get_time",
		description: "The current date and time in a time zone.",
		parameters: { type: "object", properties: { timezone: { type: "string", description: "IANA name or an offset such as +08:00" } }, required: [] },
	},
}];

const hearsNoDeltas = (type: string) => type !== "message_update";

const markNames: string[] = new Array(4096).fill("");
const markValues = new Float64Array(4096);
let markCount = 0;
(globalThis as any).__mark = (name: string) => {
	if (markCount >= 4096) return;
	const h = heap();
	markNames[markCount] = name;
	markValues[markCount++] = h.chunkUsed + h.slotUsed;
};
// Each protocol twice: as the console's `ask` calls it (the core hears no
// streamed delta: ChatOptions.hears says no to message_update), and with every
// event heard (as a chat that streams the answer).
for (const [protocol, heard] of [["openai", false], ["anthropic", false], ["openai", true], ["anthropic", true]] as const) {
	const llm = new Llm({
		config: config({
			"llm.provider": "custom", "llm.backend": protocol === "openai" ? "openai_compatible" : "anthropic_compatible",
			"llm.base_url": `${MOCK}/v1`, "llm.api_key": "sk-bench-0123456789", "llm.model": "bench-model",
			"llm.calls_per_hour": "1000000", "llm.calls_per_day": "1000000", "llm.tokens_per_day": "0",
		}),
		transport: http,
		usageStore: new MemoryStore(),
		buffers,
	});
	const scripts = JSON.parse(option(`${protocol}-script`) ?? "[]") as { question: string; scenarios: unknown[] }[];
	for (let turn = 0; turn < Math.min(TURNS, scripts.length); turn++) {
		const script = scripts[turn];
		const posted = await http.request({ method: "POST", url: `${CONTROL}/script`, headers: { "content-type": "application/json" }, body: JSON.stringify(script.scenarios) });
		if (posted.status !== 200) throw new Error(`round-bench: the mock refused the script: ${posted.body}`);
		const messages: Message[] = [
			{ role: "system", content: "You are a bench assistant. Answer briefly." },
			{ role: "user", content: script.question },
		];
		for (let round = 0; round < script.scenarios.length; round++) {
			const request: ChatRequest = { messages: messages.slice(), tools: TOOLS };
			const aborter = new Aborter();
			let events = 0;
			collectGarbage();
			const start = used();
			resetPeak();
			markCount = 0;
			(globalThis as any).__mark("bench.start");
(globalThis as any).__mark?.("bench.start2");
			const cpu = __xsclaw.threadCpuMs();
			const reply = await llm.chat(request, { signal: aborter.signal, onEvent: () => { events++; }, hears: heard ? undefined : hearsNoDeltas });
			const cpuMs = __xsclaw.threadCpuMs() - cpu;
			const heapBytes = peak() - start;
			if (!events) throw new Error("round-bench: no events");
			(globalThis as any).__mark("bench.end");
			const steps: Record<string, number> = {};
			for (let i = 1; i < markCount; i++) {
				const key = `${markNames[i - 1]}>${markNames[i]}`;
				steps[key] = (steps[key] ?? 0) + markValues[i] - markValues[i - 1];
			}
			report({ protocol, heard, turn, round, cpuMs, heapBytes, gcs: 0, steps, marks: markCount });
			messages.push(reply.message);
			for (const call of reply.message.tool_calls ?? []) messages.push({ role: "tool", tool_call_id: call.id, content: "2026-12-01 08:00 (UTC)" });
		}
	}
	llm.close();
}
http.close();
exit(0);
