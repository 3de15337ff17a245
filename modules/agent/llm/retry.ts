// llm/retry: retries of one LLM call. Connect errors, 429 and 5xx are retried
// (LlmError.retryable); other failures are final at once. The n-th retry waits
// retry-after when the server gave one, else backoffMs[n] (2 s, 4 s, 8 s); no more
// retries than backoffMs has entries, and never a wait that would end past budgetMs
// after the first attempt began. A cancel (signal) ends the wait and the call at once.
// The clock is injected, so tests run the whole schedule in milliseconds.
import { LLM_RETRY_BACKOFF_MS, LLM_RETRY_BUDGET_MS } from "budgets";
import Timer from "timer";
import { now as monotonicNow } from "host/platform";
import type { AbortSignalLike } from "net/types";
import { LlmError } from "llm/types";
import { messageOf } from "util/errors";

export interface Clock {
	/** Monotonic milliseconds. */
	now(): number;
	/** Wall-clock milliseconds since 1970 (for hourly and daily limits). */
	wallNow(): number;
	/** Resolves after ms; rejects with LlmError("aborted") as soon as signal aborts. */
	sleep(ms: number, signal?: AbortSignalLike): Promise<void>;
}

export interface RetryPolicy {
	backoffMs: readonly number[];
	budgetMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ backoffMs: LLM_RETRY_BACKOFF_MS, budgetMs: LLM_RETRY_BUDGET_MS });

/** The error of a call cancelled through its signal. */
export function cancelled(): LlmError {
	return new LlmError("aborted", "the LLM request was cancelled");
}

export const systemClock: Clock = Object.freeze({
	now: monotonicNow,
	wallNow: () => Date.now(),
	sleep(ms: number, signal?: AbortSignalLike): Promise<void> {
		return new Promise<void>((resolve, reject) => {
			if (signal?.aborted) return reject(cancelled());
			let remove = () => {};
			const timer = Timer.set(() => {
				remove();
				resolve();
			}, Math.max(0, ms));
			if (signal) {
				remove = signal.addListener(() => {
					Timer.clear(timer);
					reject(cancelled());
				});
			}
		});
	},
});

export interface RetryInfo { attempt: number; delayMs: number; error: LlmError }

export interface RetryContext {
	policy?: RetryPolicy;
	clock?: Clock;
	signal?: AbortSignalLike;
	onRetry?: (info: RetryInfo) => void;
}

/**
 * What follows the failure of attempt n (thrown: what it threw) of a call whose
 * first attempt began at startedAt (clock.now()): the LlmError that ends the
 * call, or how many ms to wait before attempt n + 1 (onRetry is told first).
 * The one rule for withRetries and the runtime's calls.
 */
export function afterFailure(thrown: unknown, n: number, startedAt: number, { policy = DEFAULT_RETRY_POLICY, clock = systemClock, signal, onRetry }: RetryContext): LlmError | number {
	const error = thrown instanceof LlmError ? thrown : new LlmError("protocol", messageOf(thrown));
	if (signal?.aborted || error.kind === "aborted") return error.kind === "aborted" ? error : cancelled();
	if (!error.retryable) return n > 1 ? withAttempts(error, n) : error;
	if (n > policy.backoffMs.length) return withAttempts(error, n);
	const delayMs = error.retryAfterMs ?? policy.backoffMs[n - 1];
	const elapsed = clock.now() - startedAt;
	if (elapsed + delayMs > policy.budgetMs) {
		const why = error.retryAfterMs !== undefined && delayMs > policy.budgetMs
			? `the server asked to wait ${Math.ceil(delayMs / 1000)} s, longer than the retry budget of ${Math.round(policy.budgetMs / 1000)} s`
			: `the retry budget of ${Math.round(policy.budgetMs / 1000)} s is spent`;
		return withAttempts(error, n, why);
	}
	onRetry?.({ attempt: n, delayMs, error });
	return delayMs;
}

/**
 * Runs attempt(1), attempt(2), ... as the policy allows. Resolves with the first
 * success; rejects with the last error (LlmError), its message telling how many
 * attempts were made when there was more than one.
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, context: RetryContext = {}): Promise<T> {
	const clock = context.clock ?? systemClock;
	const start = clock.now();
	for (let n = 1; ; n++) {
		if (context.signal?.aborted) throw cancelled();
		let thrown: unknown;
		try {
			return await attempt(n);
		} catch (error) {
			thrown = error;
		}
		const next = afterFailure(thrown, n, start, context);
		if (typeof next !== "number") throw next;
		await clock.sleep(next, context.signal);
	}
}

function withAttempts(error: LlmError, attempts: number, why?: string): LlmError {
	const tail = why ? `; gave up after ${attempts} attempt${attempts > 1 ? "s" : ""}: ${why}` : `; gave up after ${attempts} attempts`;
	return new LlmError(error.kind, error.message + tail, { retryable: false, status: error.status, retryAfterMs: error.retryAfterMs });
}
