// The `worker` module on the lin host (hosts/lin/src/worker.c): a second XS
// machine on its own thread; messages copied by XS marshalling; failures of
// the worker's machine end it alone and reach the creator's onerror.
import Worker from "worker";
import Timer from "timer";
import { assert, test } from "testing";
import { AGENT_PORT_HEADROOM_BYTES, WORKER_QUEUE_BYTES, WORKER_QUEUE_MESSAGES } from "budgets";
import { keepHeadroom } from "util/heap";
import * as pins from "host/pins";
import { stats } from "psram";
import { collectGarbage, heap } from "host/platform";

const ECHO = "test/unit/worker_echo";
const delay = (ms: number) => new Promise((resolve) => Timer.set(resolve, ms));

// Messages a worker sends, as a queue the test awaits one by one.
function inbox(worker: Worker) {
	const queue: any[] = [];
	const waiters: ((m: any) => void)[] = [];
	worker.onmessage = (message: any) => {
		const waiter = waiters.shift();
		if (waiter) waiter(message);
		else queue.push(message);
	};
	return {
		next(timeoutMs = 5000): Promise<any> {
			if (queue.length) return Promise.resolve(queue.shift());
			return new Promise((resolve, reject) => {
				const timer = Timer.set(() => reject(new Error(`no message within ${timeoutMs} ms`)), timeoutMs);
				waiters.push((m) => { Timer.clear(timer); resolve(m); });
			});
		},
	};
}

test("plain data, nested objects and an ArrayBuffer round-trip through a worker", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	assert.deepEqual(await messages.next(), { ready: true });
	const nested = { text: "héllo ✓", n: 42.5, list: [1, "two", null, true, { deep: [[3]] }], empty: {} };
	worker.postMessage(nested);
	assert.deepEqual(await messages.next(), nested);
	const bytes = new Uint8Array([0, 1, 2, 253, 254, 255]);
	worker.postMessage(bytes.buffer);
	const back = await messages.next();
	assert.ok(back instanceof ArrayBuffer, "an ArrayBuffer comes back as an ArrayBuffer");
	assert.deepEqual(new Uint8Array(back), bytes);
	worker.terminate();
});

// XS cannot collect while it copies a message in: the host collects first when
// the copy might not fit. Before, a heap full of garbage aborted the whole
// program on a message that fits once collected (the console's 1,000-line run).
test("a message that arrives while the heap is full of garbage is received, not an out of memory", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	await messages.next();
	const bytes = 128 * 1024;
	for (let round = 0; round < 3; round++) {
		let filled = false;
		for (let i = 0; i < 100_000 && !filled; i++) {
			void new ArrayBuffer(1024);
			const h = heap();
			filled = h.chunkSize - h.chunkUsed < bytes / 2;
		}
		assert.ok(filled, "the heap was filled with garbage");
		worker.postMessage({ command: "big", bytes });
		const back = await messages.next();
		assert.equal(back.byteLength, bytes, `round ${round}`);
	}
	worker.terminate();
});

test("keepHeadroom collects when less than AGENT_PORT_HEADROOM_BYTES of the chunk heap is free, and only then", () => {
	const free = () => { const h = heap(); return h.chunkSize - h.chunkUsed; };
	collectGarbage();
	const before = heap().chunkUsed;
	keepHeadroom();
	assert.ok(heap().chunkUsed >= before, "with room to spare nothing is collected");
	let short = false;
	for (let i = 0; i < 100_000 && !short; i++) {
		void new ArrayBuffer(1024);
		short = free() < AGENT_PORT_HEADROOM_BYTES;
	}
	assert.ok(short, "the heap was filled with garbage");
	keepHeadroom();
	assert.ok(free() >= AGENT_PORT_HEADROOM_BYTES, `room again: ${free()} bytes free`);
});

// The first message resumes the test in a promise job its delivery runs: the
// Worker terminated and collected there freed the host's record under the
// delivery (ASan: heap-use-after-free in onCreatorWake).
test("a Worker terminated and collected in a promise job its own message started", async () => {
	let worker: Worker | undefined = new Worker(ECHO);
	await new Promise((resolve) => { worker!.onmessage = resolve; });
	worker.terminate();
	worker = undefined;
	collectGarbage();
	await delay(20);
	collectGarbage();
});

test("messages arrive in the order they were posted, both ways", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	await messages.next();
	for (let i = 0; i < 40; i++) worker.postMessage(i);
	for (let i = 0; i < 40; i++) assert.equal(await messages.next(), i, "in order");
	worker.terminate();
});

test("bursts of more than a queue's worth arrive whole and in order, both ways", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	await messages.next();
	const count = WORKER_QUEUE_MESSAGES * 8 + 5;
	worker.postMessage({ command: "burst", count });
	for (let i = 0; i < count; i++) assert.equal(await messages.next(), i, "the worker's burst, in order");
	// The creator's burst: posted while the worker is busy, so all but the first find the queue waiting.
	worker.postMessage({ command: "block", ms: 50 });
	for (let i = 0; i < WORKER_QUEUE_MESSAGES - 1; i++) worker.postMessage(i);
	assert.deepEqual(await messages.next(), { blocked: 50 });
	for (let i = 0; i < WORKER_QUEUE_MESSAGES - 1; i++) assert.equal(await messages.next(), i, "the creator's burst, in order");
	worker.postMessage("after");
	assert.equal(await messages.next(), "after", "a message after a burst wakes the worker");
	worker.terminate();
});

test("a full queue makes postMessage throw after the wait, and loses none it took", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	await messages.next();
	worker.postMessage({ command: "block", ms: 2500 });
	await Promise.resolve();
	let posted = 0, error: unknown;
	for (let i = 0; i < WORKER_QUEUE_MESSAGES + 8; i++) {
		try {
			worker.postMessage(i);
			posted++;
		} catch (e) {
			error = e;
			break;
		}
	}
	assert.ok(error instanceof Error && /message queue full/.test(error.message), `postMessage threw: ${String(error)}`);
	assert.ok(posted >= WORKER_QUEUE_MESSAGES - 1 && posted <= WORKER_QUEUE_MESSAGES, `about a queue's worth taken (${posted})`);
	assert.deepEqual(await messages.next(), { blocked: 2500 });
	for (let i = 0; i < posted; i++) assert.equal(await messages.next(), i, "every message taken arrives");
	worker.postMessage("after");
	assert.equal(await messages.next(), "after", "the queue works again once drained");
	worker.terminate();
});

test("terminate ends the worker: no more messages, postMessage throws", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	await messages.next();
	worker.postMessage({ command: "later", ms: 100 });
	worker.terminate();
	assert.throws(() => worker.postMessage("x"), /terminated/);
	await assert.rejects(messages.next(400), /no message/);
	worker.terminate();   // a second terminate does nothing
});

test("self.close ends the worker after the messages it posted; no onerror", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	let errors = 0;
	worker.onerror = () => { errors++; };
	await messages.next();
	worker.postMessage({ command: "close" });
	assert.deepEqual(await messages.next(), { closing: true });
	await delay(200);
	assert.throws(() => worker.postMessage("x"), /closed itself/);
	assert.equal(errors, 0, "closing is not an error");
});

test("new Worker throws when the module throws, or is not in the manifest", () => {
	assert.throws(() => new Worker("test/unit/worker_throws"), /failed to start: Error: worker module failed on purpose/);
	assert.throws(() => new Worker("test/unit/no_such_worker"), /failed to start: .*module not found/);
	assert.throws(() => new Worker(42 as unknown as string), /specifier/);
	assert.throws(() => new Worker(ECHO, { chunk: { initial: -1 } }), /invalid chunk.initial/);
	assert.throws(() => new Worker(ECHO, { heap: 5 } as never), /heap must be an object/);
});

test("a worker that runs out of memory while starting makes new Worker throw", () => {
	assert.throws(() => new Worker("test/unit/worker_oom_start", { chunk: { initial: 128 * 1024, incremental: 0 } }), /failed to start: out of memory/);
});

async function expectDeath(command: string, options: object | undefined, pattern: RegExp) {
	const worker = new Worker(ECHO, options);
	const messages = inbox(worker);
	await messages.next();
	const died = new Promise<string>((resolve) => { worker.onerror = resolve; });
	worker.postMessage("before");
	worker.postMessage({ command });
	assert.equal(await messages.next(), "before", "a message posted before the end is delivered");
	const reason = await Promise.race([died, delay(5000).then(() => "no onerror within 5 s")]);
	assert.match(reason, pattern);
	assert.throws(() => worker.postMessage("after"), /the worker ended/);
	return reason;
}

test("terminate() called from onerror, and again later, is safe: the worker stays ended", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	await messages.next();
	const died = new Promise<string>((resolve) => {
		worker.onerror = (reason: string) => { worker.terminate(); resolve(reason); };
	});
	worker.postMessage({ command: "throw" });
	const reason = await Promise.race([died, delay(5000).then(() => "no onerror within 5 s")]);
	assert.match(reason, /^uncaught exception: /);
	worker.terminate();
	assert.throws(() => worker.postMessage("after"), /ended|terminated/);
});

test("a string a worker posted outlives the worker's machine (its code is freed with it)", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	await messages.next();
	worker.postMessage({ command: "literal" });
	const { literal } = await messages.next() as { literal: string };
	const kept = new Set([literal]);
	worker.terminate();
	await delay(300);   // the worker's thread deletes its machine and its code
	collectGarbage();
	assert.ok(kept.has("a string literal of the worker's own code"));
	assert.equal(literal.length, 41);
});

test("onerror tells the creator when the worker runs out of memory; the creator goes on", async () => {
	await expectDeath("grow", { chunk: { initial: 256 * 1024, incremental: 0 } }, /^out of memory: /);
	const again = new Worker(ECHO);
	const messages = inbox(again);
	assert.deepEqual(await messages.next(), { ready: true }, "a new worker starts after one died");
	again.terminate();
});

test("a worker running out of memory in a promise job ends the same way", async () => {
	await expectDeath("grow-later", { chunk: { initial: 256 * 1024, incremental: 0 } }, /^out of memory: /);
});

test("onerror tells the creator of an uncaught exception in the worker", async () => {
	await expectDeath("throw", undefined, /^uncaught exception: Error: thrown in the worker on purpose/);
});

test("onerror tells the creator of an unhandled rejection in the worker", async () => {
	await expectDeath("reject", undefined, /^unhandled rejection: Error: rejected in the worker on purpose/);
});

test("a worker's timers run on its own loop while the creator waits", async () => {
	const worker = new Worker(ECHO);
	const messages = inbox(worker);
	await messages.next();
	worker.postMessage({ command: "later", ms: 150 });
	worker.postMessage({ command: "later", ms: 50 });
	assert.deepEqual(await messages.next(), { later: 50 });
	assert.deepEqual(await messages.next(), { later: 150 });
	worker.terminate();
});

test("what cannot be marshalled makes postMessage throw", () => {
	const worker = new Worker(ECHO);
	assert.throws(() => worker.postMessage({ f() {} }));
	assert.throws(() => (worker.postMessage as Function)(), /message required/);
	worker.terminate();
});

test("Worker methods check their receiver", () => {
	const worker = new Worker(ECHO);
	assert.throws(() => Worker.prototype.postMessage.call({}, 1), /invalid receiver/);
	assert.throws(() => (Worker.prototype.terminate as Function).call({}), /invalid receiver/);
	worker.terminate();
});

test("a message larger than budgets.ts's WORKER_QUEUE_BYTES is refused whole", async () => {
	// worker.c reads build/lin/budgets.h, generated from budgets.ts. The main
	// machine's heap cannot hold such a buffer: the worker tries, in a big one.
	const worker = new Worker(ECHO, { chunk: { initial: 4 * WORKER_QUEUE_BYTES, incremental: 0 } });
	const messages = inbox(worker);
	await messages.next();
	worker.postMessage({ command: "big", bytes: WORKER_QUEUE_BYTES });
	assert.match((await messages.next()).refused, /more than a queue holds \(1048576\)/);
	worker.terminate();
});

test("a pin driven from the main machine reaches a Digital input the worker owns", async () => {
	const worker = new Worker("test/unit/worker_hardware");
	const messages = inbox(worker);
	worker.postMessage({ command: "watch", pin: 21 });
	assert.deepEqual(await messages.next(), { watching: 21 });
	assert.equal(pins.mode(21), 0, "the main machine sees the worker's Input on the shared bank");
	pins.drive(21, 0);
	pins.drive(21, 1);
	assert.deepEqual(await messages.next(), { edge: 1, level: 1 });
	worker.terminate();
	assert.equal(pins.mode(21), undefined, "terminate released the pin");
	pins.release(21);
});

test("the console, exit and reboot belong to the main machine: a worker's call throws", async () => {
	const worker = new Worker("test/unit/worker_hardware");
	const messages = inbox(worker);
	worker.postMessage({ command: "refusals" });
	const refusals = await messages.next();
	assert.match(refusals.serial, /console belongs to the main machine/);
	assert.match(refusals.exit, /exit belongs to the main machine/);
	worker.terminate();
});

test("a worker that runs out of memory gives back its PSRAM buffers, pin, file and timer", async () => {
	const before = stats().psram;
	const worker = new Worker("test/unit/worker_hardware", { chunk: { initial: 256 * 1024, incremental: 0 } });
	const messages = inbox(worker);
	const died = new Promise<string>((resolve) => { worker.onerror = resolve; });
	worker.postMessage({ command: "watch", pin: 22 });
	await messages.next();
	worker.postMessage({ command: "hold", bytes: 100_000 });
	assert.deepEqual(await messages.next(), { holding: 100_000 });
	assert.equal(stats().psram.used, before.used + 100_000, "the pools are shared: the main machine sees the worker's buffer");
	worker.postMessage({ command: "grow" });
	assert.match(await Promise.race([died, delay(5000).then(() => "no onerror")]), /^out of memory/);
	assert.equal(stats().psram.used, before.used, "the buffer went back to the pool");
	assert.equal(stats().psram.count, before.count);
	assert.equal(pins.mode(22), undefined, "the pin is free again");
});
