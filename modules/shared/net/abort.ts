// net/abort: a minimal AbortController for XS 13.3, which has none.
// An Aborter owns one signal; abort() is idempotent and calls every listener
// (a function, or an object's abort(reason) given to listen()) once,
// synchronously, in registration order. A listener that throws does not
// stop the others; the first such error is rethrown after all have run.
import type { AbortListener, AbortSignalLike } from "net/types";

type Listener = ((reason: string) => void) | AbortListener;

class Signal implements AbortSignalLike {
	#aborted = false;
	#reason: string | undefined = undefined;
	#listeners: Listener[] = [];

	get aborted(): boolean { return this.#aborted; }
	get reason(): string | undefined { return this.#reason; }

	addListener(fn: (reason: string) => void): () => void {
		if (this.#aborted) {
			fn(this.#reason as string);
			return () => {};
		}
		this.#listeners.push(fn);
		return () => this.#remove(fn);
	}

	listen(listener: AbortListener): void {
		if (this.#aborted) listener.abort(this.#reason as string);
		else this.#listeners.push(listener);
	}

	unlisten(listener: AbortListener): void { this.#remove(listener); }

	#remove(listener: Listener): void {
		const at = this.#listeners.indexOf(listener);
		if (at >= 0) this.#listeners.splice(at, 1);
	}

	fire(reason: string): void {
		if (this.#aborted) return;
		this.#aborted = true;
		this.#reason = reason;
		const listeners = this.#listeners;
		this.#listeners = [];
		let first: unknown = undefined;
		let failed = false;
		for (const listener of listeners) {
			try {
				if (typeof listener === "function") listener(reason);
				else listener.abort(reason);
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
