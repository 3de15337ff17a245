// core/mailbox: a core's queues. It owns the request queue (REQUEST_QUEUE_DEPTH,
// backpressure: a full queue makes submitters wait up to their timeout, at most
// CORE_SUBMIT_WAITERS_MAX of them), the request ids, and the response queue:
// receiveFor(id) matches by id, a response nobody waits for yet is parked, and a
// full parking (RESPONSE_QUEUE_DEPTH) drops its oldest with a log line so an
// absent reader never blocks the executor (SPEC §4, seed 000 §3).
//
// It never runs a request: the core takes() the head when it is free.
import { CORE_RESPONSE_WAITERS_MAX, CORE_SUBMIT_WAITERS_MAX, REQUEST_QUEUE_DEPTH, RESPONSE_QUEUE_DEPTH } from "budgets";
import type { AgentRequest, AgentResponse } from "core/types";

/** Timer-shaped set/clear, injectable so tests run on fake time. */
export interface CoreTimers {
	set(callback: () => void, ms: number): unknown;
	clear(id: unknown): void;
}

/** Rejects receiveFor when no response came in time (told apart by name, not by message). */
export class ResponseTimeout extends Error {
	override name = "ResponseTimeout";
}

interface SubmitWaiter { request: AgentRequest; resolve(id: number): void; reject(error: Error): void; timer: unknown }
interface ResponseWaiter { resolve(response: AgentResponse): void; timer: unknown }

export class Mailbox {
	readonly #timers: CoreTimers;
	readonly #log: (line: string) => void;
	readonly #agentId: string;
	readonly #nextId: () => number;
	readonly #queue: AgentRequest[] = [];
	readonly #submitWaiters: SubmitWaiter[] = [];
	readonly #parked: AgentResponse[] = [];
	readonly #responseWaiters = new Map<number, ResponseWaiter>();

	/** nextId gives every request its id (never 0, never repeated). */
	constructor(agentId: string, timers: CoreTimers, log: (line: string) => void, nextId: () => number) {
		this.#agentId = agentId;
		this.#timers = timers;
		this.#log = log;
		this.#nextId = nextId;
	}

	get queued(): number { return this.#queue.length; }
	get parked(): number { return this.#parked.length; }

	/** A new request id. */
	newId(): number {
		return this.#nextId();
	}

	/**
	 * Queues request (giving it its id) and resolves with the id; when the queue is
	 * full, waits up to timeoutMs for room, then rejects with a sentence.
	 */
	enqueue(request: AgentRequest, timeoutMs: number): Promise<number> {
		if (this.#queue.length < REQUEST_QUEUE_DEPTH) {
			request.request_id = this.#nextId();
			this.#queue.push(request);
			return Promise.resolve(request.request_id);
		}
		if (!(timeoutMs > 0) || this.#submitWaiters.length >= CORE_SUBMIT_WAITERS_MAX) return Promise.reject(this.#busy());
		return new Promise<number>((resolve, reject) => {
			const waiter: SubmitWaiter = {
				request, resolve, reject,
				timer: this.#timers.set(() => {
					const at = this.#submitWaiters.indexOf(waiter);
					if (at >= 0) this.#submitWaiters.splice(at, 1);
					reject(this.#busy());
				}, timeoutMs),
			};
			this.#submitWaiters.push(waiter);
		});
	}

	#busy(): Error {
		return new Error(`the agent is busy: ${this.#queue.length} requests are waiting; try again shortly`);
	}

	/** The queue's head, if any (a waiting submitter takes the room it leaves). */
	take(): AgentRequest | undefined {
		const request = this.#queue.shift();
		if (request) this.#admitWaiters();
		return request;
	}

	/** Puts requests back at the head, in order (a request's untaken interrupts run next). */
	putFront(requests: AgentRequest[]): void {
		this.#queue.unshift(...requests);
	}

	/** Removes a queued request by id; undefined when it is not queued. */
	remove(requestId: number): AgentRequest | undefined {
		const at = this.#queue.findIndex((r) => r.request_id === requestId);
		if (at < 0) return undefined;
		const [request] = this.#queue.splice(at, 1);
		this.#admitWaiters();
		return request;
	}

	/** Refuses every waiting submitter with reason and empties the queue, returning what was queued. */
	close(reason: string): AgentRequest[] {
		for (const waiter of this.#submitWaiters.splice(0)) {
			this.#timers.clear(waiter.timer);
			waiter.reject(new Error(reason));
		}
		return this.#queue.splice(0);
	}

	/** Moves waiting submitters into the queue while there is room (FIFO). */
	#admitWaiters(): void {
		while (this.#queue.length < REQUEST_QUEUE_DEPTH && this.#submitWaiters.length) {
			const waiter = this.#submitWaiters.shift() as SubmitWaiter;
			this.#timers.clear(waiter.timer);
			waiter.request.request_id = this.#nextId();
			this.#queue.push(waiter.request);
			waiter.resolve(waiter.request.request_id);
		}
	}

	// ---- responses ----

	/** Hands response to whoever waits for it, else parks it. */
	offer(response: AgentResponse): void {
		const waiter = this.#responseWaiters.get(response.request_id);
		if (waiter) {
			this.#responseWaiters.delete(response.request_id);
			this.#timers.clear(waiter.timer);
			waiter.resolve(response);
			return;
		}
		if (this.#parked.length >= RESPONSE_QUEUE_DEPTH) {
			const dropped = this.#parked.shift() as AgentResponse;
			this.#log(`core: ${this.#agentId}: nobody collected the answer to request ${dropped.request_id}; dropped it to make room`);
		}
		this.#parked.push(response);
	}

	/**
	 * The response to requestId: at once when it is parked, else when it arrives,
	 * else rejects after timeoutMs. Responses for other requests stay parked.
	 */
	receiveFor(requestId: number, timeoutMs: number): Promise<AgentResponse> {
		const at = this.#parked.findIndex((r) => r.request_id === requestId);
		if (at >= 0) return Promise.resolve(this.#parked.splice(at, 1)[0]);
		if (this.#responseWaiters.has(requestId)) return Promise.reject(new Error(`someone is already waiting for the answer to request ${requestId}`));
		if (this.#responseWaiters.size >= CORE_RESPONSE_WAITERS_MAX) return Promise.reject(new Error("too many callers are waiting for answers; try again shortly"));
		return new Promise<AgentResponse>((resolve, reject) => {
			const timer = this.#timers.set(() => {
				this.#responseWaiters.delete(requestId);
				reject(new ResponseTimeout(`no answer to request ${requestId} within ${Math.round(timeoutMs / 1000)} s; it may still be running (cancel ${requestId} stops it)`));
			}, timeoutMs);
			this.#responseWaiters.set(requestId, { resolve, timer });
		});
	}
}
