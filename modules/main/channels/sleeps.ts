// channels/sleeps: a channel's waits (back-offs, retry delays) on its injected
// timers, all woken at once when the channel stops, so a stop never waits out a
// back-off and no timer outlives the channel.
import type { Timers } from "channels/types";

export type { Timers };

export class Sleeps {
	readonly #timers: Timers;
	readonly #waiting = new Set<() => void>();
	#stopped = false;

	constructor(timers: Timers) {
		this.#timers = timers;
	}

	/** Resolves after ms, or at once when stopped (now or later). */
	sleep(ms: number): Promise<void> {
		if (this.#stopped) return Promise.resolve();
		return new Promise((resolve) => {
			const wake = () => {
				this.#waiting.delete(wake);
				this.#timers.clear(timer);
				resolve();
			};
			const timer = this.#timers.set(wake, ms);
			this.#waiting.add(wake);
		});
	}

	/** Wakes every wait and makes later ones resolve at once. */
	stop(): void {
		this.#stopped = true;
		for (const wake of [...this.#waiting]) wake();
	}
}
