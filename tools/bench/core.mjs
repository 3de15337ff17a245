// Agent core figures (SPEC §11), measured with test/peer/core-bench.ts inside the
// lin host: a root Core (persona, built-in tools, the real session store) over
// the real Llm, HTTP client and TLS, against the mock LLM on 127.0.0.1 with a test
// CA (OpenAI protocol, streamed replies). The bench session is filled to
// SESSION_KIB first, so each request carries a full history window (48 KiB).
//   core.iteration_overhead_ms       one loop iteration minus the LLM's own time
//                                    (submit -> response, minus the time inside
//                                    Llm.chat, per LLM call: context, history read,
//                                    tools, persistence); 2-round requests in a
//                                    116-146 KiB session (kept under the 150 KiB
//                                    compaction threshold)
//   core.interrupt_to_abort_ms       USER_INTERRUPT submitted (XS now()) -> the mock
//                                    sees the stalled call's connection close (Node
//                                    hrtime; both CLOCK_MONOTONIC)
//   core.prompt_prefix_stable_ratio  bytes a request repeats from the start of the
//                                    previous request of the same ask / its bytes
//   core.prompt_prefix_stable_ratio_across_requests  bytes the first call of each
//                                    request of one conversation repeats from the
//                                    start of the call before it / that call's bytes:
//                                    the share of what a provider cached of the
//                                    previous request that the next one reuses (a
//                                    new session, long-term memory over its 4 KiB
//                                    prompt section, each question about another
//                                    memory; what a request adds at its end is new
//                                    either way and is not counted against it)
//   core.peak_heap_per_body_byte     XS heap peak (chunks + slots) during a request,
//                                    minus the use at its start after a GC / the
//                                    largest request body of that request (the peak
//                                    counts garbage not yet collected)
import { withMockOverTLS } from "../peers.mjs";

export const title = "agent core: loop overhead, interrupt latency, prompt prefix stability, heap per body byte";

const CONVERSATIONS = 20;
const INTERRUPT_RUNS = 30;
const SESSION_KIB = 116;
const ACROSS_REQUESTS = 12;

function commonPrefix(a, b) {
	const n = Math.min(a.length, b.length);
	let i = 0;
	while (i < n && a[i] === b[i]) i++;
	return i;
}

// core.peak_heap_per_body_byte.board32  the same measured on the 32-bit host
//                                    (ctx.board32: the board's word size, 16-byte
//                                    slots and 4-byte pointers; its time figures
//                                    are not kept: it may run under an emulator)
export async function run({ runXs, board32 }) {
	const figures = await measure(runXs);
	if (!board32) return figures;
	const heap = (await measure((specifier, options) => runXs(specifier, options, { variant: board32 }))).find((f) => f.name === "core.peak_heap_per_body_byte");
	return [...figures, { ...heap, name: `${heap.name}.board32`, unit: `${heap.unit} (32-bit host)` }];
}

function measure(runXs) {
	return withMockOverTLS("xsclaw-bench-core-", async ({ ca, mock, control }) => {
		const lines = await runXs("test/peer/core-bench", {
			"mock-url": `https://localhost:${mock.port}`,
			"control-url": control.url,
			ca: ca.paths.ca,
			conversations: CONVERSATIONS,
			"interrupt-runs": INTERRUPT_RUNS,
			"session-kib": SESSION_KIB,
			"across-requests": ACROSS_REQUESTS,
		});
		const body = (seq) => {
			const record = mock.requests[seq - 1];
			if (!record) throw new Error(`bench core: the mock has no request ${seq}`);
			return Buffer.from(record.body);
		};
		// The figures are described as taken in a big session below the compaction threshold: check it.
		const [start, end] = ["start", "end"].map((at) => lines.find((l) => l.figure === "session" && l.at === at));
		if (!start || !end || start.bytes < (SESSION_KIB - 8) * 1024 || end.bytes >= end.limit || end.blocked)
			throw new Error(`bench core: the session was not as described: ${JSON.stringify({ start, end })}`);
		console.error(`bench core: session ${start.bytes} -> ${end.bytes} bytes (${start.records} -> ${end.records} records)`);
		const conversations = lines.filter((l) => l.figure === "conversation");
		const ratios = [];
		const heapPerByte = [];
		for (const c of conversations) {
			let largest = 0;
			for (let seq = c.first; seq <= c.last; seq++) {
				const current = body(seq);
				largest = Math.max(largest, current.length);
				if (seq > c.first) ratios.push(commonPrefix(body(seq - 1), current) / current.length);
			}
			heapPerByte.push(c.peakGrowth / largest);
		}
		const abortMs = lines.filter((l) => l.figure === "interrupt").map((l) => {
			const closedAt = mock.requests[l.seq - 1]?.response.closedAt;
			if (closedAt == null) throw new Error(`bench core: the mock never saw request ${l.seq} close`);
			return closedAt - l.interruptAt;
		});
		const across = lines.find((l) => l.figure === "across");
		if (!across) throw new Error("bench core: no across-requests conversation");
		const acrossRatios = [];
		for (let seq = across.first + 1; seq <= across.last; seq++) acrossRatios.push(commonPrefix(body(seq - 1), body(seq)) / body(seq - 1).length);
		return [
			{ name: "core.iteration_overhead_ms", unit: "ms per iteration (116-146 KiB session)", values: conversations.map((c) => c.overheadMs) },
			{ name: "core.interrupt_to_abort_ms", unit: "ms", values: abortMs },
			{ name: "core.prompt_prefix_stable_ratio", unit: "ratio", values: ratios, p99: false },
			{ name: "core.prompt_prefix_stable_ratio_across_requests", unit: "ratio", values: acrossRatios, p99: false },
			{ name: "core.peak_heap_per_body_byte", unit: "heap bytes / body byte", values: heapPerByte, p99: false },
		];
	});
}
