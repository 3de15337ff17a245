// The XS side of tools/bench/worker.mjs, run as the host's main: the firmware's
// supervisor and port client over a real Worker running test/peer/agent-bench-worker
// (the firmware's agent with a zero-cost model). Traces `BENCH {json}` lines:
//   {"round_trip_ms": x}  one ask: submit through the port -> its response back
//   {"heap_bytes": x}     the agent machine's heap (chunks + slots) at rest, from status
// Options: --runs N (round trips), --heap-samples N.
import { exit, now, option } from "host/platform";
import { heapUsedBytes } from "util/heap";
import { CONSOLE_CHAT } from "agent/protocol";
import { workerSpawner } from "agent/spawn";
import { AgentSupervisor } from "agent/supervisor";

const RUNS = Number(option("runs") ?? 200);
const HEAP_SAMPLES = Number(option("heap-samples") ?? 5);

const supervisor = new AgentSupervisor({
	spawn: workerSpawner("test/peer/agent-bench-worker"),
	config: { entries: () => [], onChange: () => () => {} },
	now,
	notice: (line) => trace(`${line}\n`),
});
const ready = await supervisor.start();
if (!ready) {
	trace(`agent-bench: the agent did not start: ${supervisor.statusLine()}\n`);
	exit(1);
}
const client = supervisor.client;
const request = { flags: 0, session_id: "", user_text: "ping", source: { ...CONSOLE_CHAT, sender_id: "bench", message_id: "", cap: "" } };
for (let i = 0; i < HEAP_SAMPLES; i++) trace(`BENCH ${JSON.stringify({ heap_bytes: heapUsedBytes((await client.status()).heap) })}\n`);
for (let i = 0; i < RUNS; i++) {
	const start = now();
	const response = await client.ask(request, { waitMs: 1000, responseMs: 5000 });
	if (!response.ok) {
		trace(`agent-bench: a request failed: ${response.error}\n`);
		exit(1);
	}
	trace(`BENCH ${JSON.stringify({ round_trip_ms: now() - start })}\n`);
}
await supervisor.stop();
exit(0);
