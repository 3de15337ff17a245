// Runs the main machine out of memory while a worker is alive: the process
// still ends with exit 2 and the out-of-memory message, as without workers.
import Worker from "worker";

const worker = new Worker("test/unit/worker_echo");
worker.onmessage = () => {
	const hoard: string[] = [];
	for (;;) hoard.push("m".repeat(1024) + hoard.length);
};
