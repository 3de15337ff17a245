// llm/limits: LLM calls per hour and per day and tokens per day, persisted across
// reboots in a key-value store (NVS namespace "llm" on the device), so a crash loop or
// a runaway cron cannot spend more than the limits allow.
//
// Windows are fixed and in UTC: the clock hour and the calendar day. A call is
// counted when it is about to be sent (retries of one call count once), and the
// record is stored then, before anything is sent; its tokens (prompt + output, as
// reported) are counted when it ends and stored with the next call's count, or by
// flush() (the runtime's close): one write per call, not two (a tool round is two
// calls, each write a flash write on the device). A crash between a call's end
// and the next write loses that call's tokens from the count, never a call. A
// clock that goes backwards (before SNTP sets it, say) keeps the current window
// rather than opening a fresh one.
//
// Stored record, key "llm_usage" (UTF-8 JSON): {"v":1,"hour":H,"hourCalls":n,
// "day":D,"dayCalls":n,"dayTokens":n} with H = hours and D = days since 1970 (UTC).
// An unreadable record is replaced, and traced; a failed write is traced, never fatal.
import { messageOf } from "util/errors";
import { logLine } from "util/log";

export interface UsageStore {
	read(key: string): ArrayBuffer | undefined;
	write(key: string, value: ArrayBuffer): void;
}

export interface Limits {
	callsPerHour: number;
	callsPerDay: number;
	/** 0: no token limit. */
	tokensPerDay: number;
}

export interface UsageSnapshot {
	callsThisHour: number;
	callsToday: number;
	tokensToday: number;
}

interface UsageRecord { v: 1; hour: number; hourCalls: number; day: number; dayCalls: number; dayTokens: number }

export const USAGE_KEY = "llm_usage";
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

function minutes(ms: number): string {
	const m = Math.max(1, Math.ceil(ms / 60_000));
	return m >= 90 ? `${Math.round(m / 60)} h` : `${m} min`;
}

export class UsageLimiter {
	#store: UsageStore | undefined;
	#wallNow: () => number;
	#record: UsageRecord;
	/** Tokens counted since the record was last stored. */
	#unsaved = false;

	constructor(store: UsageStore | undefined, wallNow: () => number) {
		this.#store = store;
		this.#wallNow = wallNow;
		this.#record = this.#load();
	}

	#load(): UsageRecord {
		const fresh: UsageRecord = { v: 1, hour: 0, hourCalls: 0, day: 0, dayCalls: 0, dayTokens: 0 };
		let bytes: ArrayBuffer | undefined;
		try {
			bytes = this.#store?.read(USAGE_KEY);
		} catch (error) {
			logLine("warn", `llm: cannot read the stored LLM usage (${messageOf(error)}); counting from zero`);
			return fresh;
		}
		if (!bytes) return fresh;
		try {
			const r = JSON.parse(String.fromArrayBuffer(bytes));
			if (r?.v === 1 && [r.hour, r.hourCalls, r.day, r.dayCalls, r.dayTokens].every(isCount))
				return { v: 1, hour: r.hour, hourCalls: r.hourCalls, day: r.day, dayCalls: r.dayCalls, dayTokens: r.dayTokens };
		} catch {
			// fall through
		}
		logLine("warn", "llm: the stored LLM usage record is unreadable; counting from zero");
		return fresh;
	}

	#save(): void {
		this.#unsaved = false;
		if (!this.#store) return;
		try {
			this.#store.write(USAGE_KEY, ArrayBuffer.fromString(JSON.stringify(this.#record)));
		} catch (error) {
			logLine("warn", `llm: cannot store the LLM usage (${messageOf(error)})`);
		}
	}

	/** Moves the record into the current windows; returns the wall time used. */
	#roll(): number {
		const now = this.#wallNow();
		const hour = Math.floor(now / HOUR_MS), day = Math.floor(now / DAY_MS);
		const r = this.#record;
		if (hour > r.hour) {
			r.hour = hour;
			r.hourCalls = 0;
		}
		if (day > r.day) {
			r.day = day;
			r.dayCalls = 0;
			r.dayTokens = 0;
		}
		return now;
	}

	snapshot(): UsageSnapshot {
		this.#roll();
		const r = this.#record;
		return { callsThisHour: r.hourCalls, callsToday: r.dayCalls, tokensToday: r.dayTokens };
	}

	/** A sentence for the user when a limit is reached, else undefined. */
	check(limits: Limits): string | undefined {
		const now = this.#roll();
		const r = this.#record;
		const nextHour = (Math.max(r.hour, Math.floor(now / HOUR_MS)) + 1) * HOUR_MS - now;
		const nextDay = (Math.max(r.day, Math.floor(now / DAY_MS)) + 1) * DAY_MS - now;
		if (r.hourCalls >= limits.callsPerHour)
			return `the LLM call limit is reached: ${r.hourCalls} of ${limits.callsPerHour} calls this hour (llm.calls_per_hour); nothing was sent. It resets in ${minutes(nextHour)}.`;
		if (r.dayCalls >= limits.callsPerDay)
			return `the LLM call limit is reached: ${r.dayCalls} of ${limits.callsPerDay} calls today (llm.calls_per_day); nothing was sent. It resets in ${minutes(nextDay)} (midnight UTC).`;
		if (limits.tokensPerDay > 0 && r.dayTokens >= limits.tokensPerDay)
			return `the daily LLM token budget is spent: ${r.dayTokens} of ${limits.tokensPerDay} tokens today (llm.tokens_per_day); nothing was sent. It resets in ${minutes(nextDay)} (midnight UTC).`;
		return undefined;
	}

	recordCall(): void {
		this.#roll();
		this.#record.hourCalls++;
		this.#record.dayCalls++;
		this.#save();
	}

	/** Counts a call's tokens; stored with the next call's count or by flush(). */
	recordTokens(tokens: number): void {
		if (!(tokens > 0)) return;
		this.#roll();
		this.#record.dayTokens += Math.round(tokens);
		this.#unsaved = true;
	}

	/** Stores tokens counted since the last write, if any. */
	flush(): void {
		if (this.#unsaved) this.#save();
	}
}
