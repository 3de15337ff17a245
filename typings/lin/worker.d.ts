// The `worker` module on lin (hosts/lin/src/worker.c; the device build type-checks
// against the SDK's own declaration, typings/web/worker.d.ts, for its modWorker.c).
// The same shape as @moddable/typings@5.6.0's worker.d.ts (which tsconfig.json
// does not include: two ambient declarations of one class cannot both be
// exported), plus onerror, which the lin host adds.
declare module "worker" {
	export interface WorkerOptions {
		static?: number;
		chunk?: { initial?: number; incremental?: number };
		heap?: { initial?: number; incremental?: number };
		stack?: number;
		keys?: { initial?: number; incremental?: number; name?: number; symbol?: number };
		/** FreeRTOS task settings on the device; accepted and unused on lin. */
		nativeStack?: number;
	}

	interface MessagePort {
		onmessage(message: any): void;
		postMessage(message: any): void;
	}

	class Worker implements MessagePort {
		/** Blocks until the module has run; throws if it throws or the machine cannot start. */
		constructor(module: string, options?: WorkerOptions);
		onmessage(message: any): void;
		postMessage(message: any): void;
		terminate(): void;
		/**
		 * Called on the creating machine when the worker's machine ended on its
		 * own: out of memory, stack or keys, an uncaught exception or unhandled
		 * rejection, or the lin host's kill hook (SIGUSR2). `message` is a
		 * sentence saying which ("out of memory: ..."). Messages the worker
		 * posted before it ended are delivered first; after onerror,
		 * postMessage throws. Not called after terminate() or self.close().
		 * Web Workers have onerror too (with an ErrorEvent); the Moddable SDK
		 * has none: a lin-and-our-device extension (hosts/lin/NOTES.md).
		 */
		onerror?: (message: string) => void;
	}

	export class SharedWorker {
		constructor(module: string, options?: object);
		get port(): MessagePort;
	}

	export interface Self extends MessagePort {
		close(): void;
	}

	global {
		const self: Self;
	}

	export { Worker as default };
}
