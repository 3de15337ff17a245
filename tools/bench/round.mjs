// One LLM round through the firmware's own path, apart from the agent loop and
// its storage: llm/runtime (checks, the LLM slot, limits, retries), the protocol
// backend (body in PSRAM pieces), llm/wire, net/http, net/response, net/sse and
// the stream assembler, inside the lin host (test/peer/round-bench.ts), against
// the mock LLM on 127.0.0.1 over plain HTTP, streamed, the peer conversation's
// turns (tools/bench/peer/check.mjs: a tool-call round and an answer round each).
//   llm.round_heap_bytes.openai / .anthropic   XS heap (chunks + slots) allocated
//                                              by one Llm.chat call (its peak
//                                              over its start after a collection:
//                                              garbage counts), called as the
//                                              console's `ask` calls it: nobody
//                                              hears the streamed deltas
//                                              (ChatOptions.hears)
//   llm.round_cpu_us.openai / .anthropic       XS thread CPU time of that call
//                                              (sockets' system time included)
//   llm.round_*.openai_heard / .anthropic_heard   the same with every event heard
//                                              (a chat that streams the answer)
import { startMockLLM } from "../mock-llm/index.mjs";
import { startControl } from "../peers.mjs";
import { CREATED, conversation } from "./peer/check.mjs";

export const title = "LLM round: heap and CPU of one streamed Llm.chat call (runtime, HTTP, SSE, assembler)";

const TURNS = 20;
const WARMUP_TURNS = 2;

export async function run({ runXs }) {
	const mock = await startMockLLM({ created: CREATED });
	const control = await startControl(mock);
	try {
		const options = { "mock-url": `http://127.0.0.1:${mock.port}`, "control-url": control.url, turns: TURNS };
		for (const protocol of ["openai", "anthropic"]) {
			options[`${protocol}-script`] = JSON.stringify(conversation(protocol, TURNS).map((t) => ({ question: t.question, scenarios: t.scenarios })));
		}
		const lines = (await runXs("test/peer/round-bench", options)).filter((l) => l.turn >= WARMUP_TURNS);
		const figures = [];
		for (const heard of [false, true]) {
			for (const protocol of ["openai", "anthropic"]) {
				const mine = lines.filter((l) => l.protocol === protocol && l.heard === heard);
				if (!mine.length) throw new Error(`bench round: no ${protocol} rounds${heard ? " with deltas heard" : ""}`);
				const name = heard ? `${protocol}_heard` : protocol;
				figures.push({ name: `llm.round_heap_bytes.${name}`, unit: "XS heap bytes per call", values: mine.map((l) => l.heapBytes) });
				figures.push({ name: `llm.round_cpu_us.${name}`, unit: "µs XS thread CPU per call", values: mine.map((l) => l.cpuMs * 1000) });
			}
		}
		return figures;
	} finally {
		await control.close();
		await mock.close();
	}
}
