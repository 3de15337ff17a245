// A worker's sockets against a Node echo server on 127.0.0.1, started by
// test/e2e/worker.test.mjs (--echo-port): the worker's own loop runs its TCP
// sockets and timers, and a worker that runs out of memory closes its sockets.
import Worker from "worker";
import Timer from "timer";
import { heap, option } from "host/platform";
import { assert, test } from "testing";

const ECHO = Number(option("echo-port"));
const WORKER = "test/peer/worker_net";
const delay = (ms: number) => new Promise((resolve) => Timer.set(resolve, ms));

function reply(worker: Worker, timeoutMs = 30_000): Promise<any> {
	return new Promise((resolve, reject) => {
		const timer = Timer.set(() => reject(new Error(`no reply within ${timeoutMs} ms`)), timeoutMs);
		worker.onmessage = (message: any) => { Timer.clear(timer); resolve(message); };
	});
}

test("a worker's TCP socket round-trips through a loopback echo server, after a timer", async () => {
	const worker = new Worker(WORKER);
	worker.postMessage({ command: "echo", port: ECHO, text: "through the worker's own loop" });
	assert.deepEqual(await reply(worker), { echoed: "through the worker's own loop" });
	worker.terminate();
});

test("the main machine and a worker use sockets at the same time", async () => {
	const workers = [new Worker(WORKER), new Worker(WORKER)];
	const replies = workers.map((w) => reply(w));
	workers.forEach((w, i) => w.postMessage({ command: "echo", port: ECHO, text: `worker ${i}` }));
	assert.deepEqual(await Promise.all(replies), [{ echoed: "worker 0" }, { echoed: "worker 1" }]);
	workers.forEach((w) => w.terminate());
});

test("a worker that runs out of memory closes its sockets; the creator is told", async () => {
	const before = heap().sockets;
	const worker = new Worker(WORKER, { chunk: { initial: 256 * 1024, incremental: 0 } });
	worker.postMessage({ command: "hold", port: ECHO, count: 3 });
	const held = await reply(worker);
	assert.equal(held.holding, 3);
	assert.equal(held.sockets, before + 3, "the socket count is the process's");
	const died = new Promise<string>((resolve) => { worker.onerror = resolve; });
	worker.postMessage({ command: "grow" });
	assert.match(await Promise.race([died, delay(5000).then(() => "no onerror")]), /^out of memory/);
	assert.equal(heap().sockets, before, "the worker's sockets were closed");
});
