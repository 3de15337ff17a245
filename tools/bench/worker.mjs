// The agent port (SPEC §11, issue 9), measured with test/peer/agent-bench.ts
// inside the lin host: the firmware's supervisor and port client in the main
// machine, a real Worker running the firmware's agent (agent/machine) with a
// zero-cost model that answers at once, requests without a session.
//   worker.round_trip_ms  one ask: submitted through the port's client -> its
//                         response back in the main machine (two messages each
//                         way, copied by XS marshalling, plus the core's run)
//   worker.heap_bytes     the agent machine's XS heap in use (chunks + slots) at
//                         rest, just after it said it was ready (status over the port)
export const title = "agent port: round trip through the Worker, agent machine heap at rest";

const RUNS = 200;
const HEAP_SAMPLES = 5;

export async function run({ runXs }) {
	const lines = await runXs("test/peer/agent-bench", { runs: RUNS, "heap-samples": HEAP_SAMPLES });
	const values = (key) => lines.filter((l) => key in l).map((l) => l[key]);
	return [
		{ name: "worker.round_trip_ms", unit: "ms", values: values("round_trip_ms") },
		{ name: "worker.heap_bytes", unit: "bytes", values: values("heap_bytes"), p99: false },
	];
}
