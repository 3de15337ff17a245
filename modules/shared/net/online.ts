// net/online: where name lookups wait for the network. A board is "online"
// once Wi-Fi is joined and SNTP has set the clock (a certificate cannot be
// checked in 1970); "waiting" while it joins or retries; "offline" when no
// network is configured, so waiting would be for nothing. The main machine's
// Wi-Fi station owns the state; the agent machine hears it over the agent
// port. Each keeps its own OnlineWaiters over its own view of the state,
// with the same bounds.
import type { OnlineState, TimerLike } from "net/types";
import { ONLINE_WAIT_MAX_MS, ONLINE_WAITERS_MAX } from "budgets";


/** Calls ready() when lookups may go out, or fail() when they cannot (the wifi status says why). */
export type OnlineGate = (ready: () => void, fail: () => void) => void;

interface Waiter { ready(): void; fail(): void; timer: unknown }

/** The lookups held until the state is online: at most ONLINE_WAITERS_MAX, each for at most ONLINE_WAIT_MAX_MS. */
export class OnlineWaiters {
	#timer: TimerLike;
	#state: () => OnlineState;
	#waiters: Waiter[] = [];

	constructor(timer: TimerLike, state: () => OnlineState) {
		this.#timer = timer;
		this.#state = state;
	}

	/** The gate: ready() at once when online, fail() at once when offline or full, else when online or after ONLINE_WAIT_MAX_MS. */
	gate: OnlineGate = (ready, fail) => {
		const state = this.#state();
		if (state === "online") return ready();
		if (state === "offline" || this.#waiters.length >= ONLINE_WAITERS_MAX) return fail();
		const waiter: Waiter = {
			ready, fail,
			timer: this.#timer.set(() => {
				this.#waiters = this.#waiters.filter((w) => w !== waiter);
				fail();
			}, ONLINE_WAIT_MAX_MS),
		};
		this.#waiters.push(waiter);
	};

	/** Lets every waiting lookup go if the state is now online. */
	settle(): void {
		if (this.#state() !== "online") return;
		const waiters = this.#waiters;
		this.#waiters = [];
		for (const waiter of waiters) {
			this.#timer.clear(waiter.timer);
			waiter.ready();
		}
	}

	/** How many lookups wait. */
	get waiting(): number {
		return this.#waiters.length;
	}
}
