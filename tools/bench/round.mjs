// One LLM round through the firmware's own path, apart from the agent loop and
// its storage: llm/runtime (checks, the LLM slot, limits, retries), the protocol
// backend (body in PSRAM pieces), llm/wire, net/http, net/response, net/sse and
// the stream assembler, inside the lin host (test/peer/round-bench.ts), against
// the mock LLM on 127.0.0.1 over plain HTTP, streamed, the peer conversation's
// turns (tools/bench/peer/check.mjs: a tool-call round and an answer round each).
//   llm.round_heap_bytes.openai / .anthropic   XS heap (chunks + slots) allocated
//                                              by one Llm.chat call (its peak
//                                              over its start after a collection:
//                                              garbage counts)
//   llm.round_cpu_us.openai / .anthropic       XS thread CPU time of that call
//                                              (sockets' system time included)
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
		for (const protocol of ["openai", "anthropic"]) {
			const mine = lines.filter((l) => l.protocol === protocol);
			if (!mine.length) throw new Error(`bench round: no ${protocol} rounds`);
			figures.push({ name: `llm.round_heap_bytes.${protocol}`, unit: "XS heap bytes per call", values: mine.map((l) => l.heapBytes) });
			figures.push({ name: `llm.round_cpu_us.${protocol}`, unit: "µs XS thread CPU per call", values: mine.map((l) => l.cpuMs * 1000) });
		}
		return figures;
	} finally {
		await control.close();
		await mock.close();
	}
}
