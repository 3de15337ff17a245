// agent/spawn: starts the agent machine as a Moddable Worker running
// agent/worker, with the creation sizes of manifest.json's config.agent (read
// through mc/config, as on the device). On lin, `--agent-chunk BYTES` and
// `--agent-slots COUNT` make them smaller for a test that runs the agent out of
// memory (host/platform's option() is undefined on the device), and
// `--agent-deadline-ms MS` makes the heartbeat's deadline short for the test of a
// hung agent machine.
//
// The Worker's onerror(reason) is how the host says the machine ended on its
// own (out of memory, an uncaught error, a kill); the supervisor restarts it.
import Worker from "worker";
import config from "mc/config";
import { option } from "host/platform";
import type { SpawnAgent } from "agent/supervisor";

/** The agent machine's main module. */
export const AGENT_MODULE = "agent/worker";

interface Creation {
	static?: number;
	chunk?: { initial?: number; incremental?: number };
	heap?: { initial?: number; incremental?: number };
	stack?: number;
	keys?: { available?: number; name?: number; symbol?: number };
	/** The Worker task's C stack in bytes on the board (the SDK's FreeRTOS task); lin's threads have megabytes and ignore it. */
	nativeStack?: number;
}

function whole(name: string): number | undefined {
	const text = option(name);
	if (text === undefined) return undefined;
	const value = Number(text);
	if (!Number.isInteger(value) || value <= 0) throw new RangeError(`--${name} must be a whole number above 0, not "${text}"`);
	return value;
}

/** The agent machine's creation sizes: manifest.json's config.agent.creation, with the lin test overrides. */
export function agentCreation(): Creation {
	const given = (config as { agent?: { creation?: Creation } }).agent?.creation;
	if (!given) throw new Error("manifest.json has no config.agent.creation: the agent machine's sizes must be stated there");
	const creation: Creation = JSON.parse(JSON.stringify(given));
	const chunk = whole("agent-chunk"), slots = whole("agent-slots");
	if (chunk) creation.chunk = { initial: chunk, incremental: 0 };
	if (slots) creation.heap = { initial: slots, incremental: 0 };
	return creation;
}

/** On lin, `--agent-deadline-ms MS`: the heartbeat's deadline made short for the test of a hung agent machine; else undefined (the budget's). */
export function agentDeadlineMs(): number | undefined {
	return whole("agent-deadline-ms");
}

/** Starts agent machines that run specifier as their main module (a bench's own agent, in tests). */
export function workerSpawner(specifier: string): SpawnAgent {
	return (handlers) => spawnWorker(specifier, handlers);
}

/** The firmware's agent machine. */
export const spawnAgentWorker: SpawnAgent = workerSpawner(AGENT_MODULE);

function spawnWorker(specifier: string, handlers: Parameters<SpawnAgent>[0]): ReturnType<SpawnAgent> {
	const worker = new Worker(specifier, agentCreation());
	worker.onmessage = (message: unknown) => handlers.onmessage(message);
	(worker as unknown as { onerror(reason: unknown): void }).onerror = (reason) => handlers.onerror(String(reason));
	return {
		post: (message) => worker.postMessage(message),
		terminate: () => worker.terminate(),
	};
}
