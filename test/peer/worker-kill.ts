// Main for test/e2e/worker.test.mjs's kill test: starts a worker, asks it
// something it answers only after a minute (a request in flight), prints
// "ready", then waits for SIGUSR2 (the lin host's kill hook) to end the
// worker. Prints "onerror <ms> <message>" and "postMessage <error>", exits 0.
import Worker from "worker";
import Timer from "timer";
import { exit, now } from "host/platform";

const worker = new Worker("test/unit/worker_echo");
worker.onmessage = (message: any) => {
	if (message?.ready) {
		worker.postMessage({ command: "later", ms: 60_000 });
		trace(`ready ${now()}\n`);
	}
};
worker.onerror = (message: string) => {
	trace(`onerror ${now()} ${message}\n`);
	try {
		worker.postMessage("after");
		trace("postMessage allowed\n");
	} catch (error) {
		trace(`postMessage ${(error as Error).message}\n`);
	}
	exit(0);
};
// Bounded: the test sends the signal within seconds.
Timer.set(() => { trace("no SIGUSR2 came\n"); exit(1); }, 30_000);
