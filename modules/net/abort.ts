// net/abort: a minimal AbortController for XS 13.3, which has none.
// An Aborter owns one signal; abort() is idempotent and calls every listener
// once, synchronously, in registration order. A listener that throws does not
// stop the others; the first such error is rethrown after all have run.
import type { AbortSignalLike } from "net/types";

class Signal implements AbortSignalLike {
	#aborted = false;
	#reason: string | undefined = undefined;
	#listeners: Array<(reason: string) => void> = [];

	get aborted(): boolean { return this.#aborted; }
	get reason(): string | undefined { return this.#reason; }

	addListener(fn: (reason: string) => void): () => void {
		if (this.#aborted) {
			fn(this.#reason as string);
			return () => {};
		}
		this.#listeners.push(fn);
		return () => {
			const at = this.#listeners.indexOf(fn);
			if (at >= 0) this.#listeners.splice(at, 1);
		};
	}

	fire(reason: string): void {
		if (this.#aborted) return;
		this.#aborted = true;
		this.#reason = reason;
		const listeners = this.#listeners;
		this.#listeners = [];
		let first: unknown = undefined;
		let failed = false;
		for (const fn of listeners) {
			try {
				fn(reason);
			} catch (error) {
				if (!failed) first = error;
				failed = true;
			}
		}
		if (failed) throw first;
	}
}

export class Aborter {
	readonly #signal = new Signal();
	get signal(): AbortSignalLike { return this.#signal; }
	/** Aborts with the reason (default "aborted"); later calls do nothing. */
	abort(reason = "aborted"): void { this.#signal.fire(reason); }
}
