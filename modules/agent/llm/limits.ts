// llm/limits: LLM calls per hour and per day and tokens per day, persisted across
// reboots in a key-value store (NVS namespace "llm" on the device), so a crash loop or
// a runaway cron cannot spend more than the limits allow.
//
// Windows are fixed and in UTC: the clock hour and the calendar day. A call is
// counted when it is about to be sent (retries of one call count once). Calls are
// stored ahead, in blocks: the write that a call needs stores the counts plus up to
// LLM_USAGE_RESERVE_CALLS - 1 calls more (never past a limit), so the next calls
// need no write until that block is used up. A key-value commit is a flash write on
// the device and an fdatasync on lin (a record in the namespace file's log); this
// makes it one per block of calls, not one per call. The stored count is never below the calls made, so a power loss or
// crash can only over-count: at most LLM_USAGE_RESERVE_CALLS - 1 calls that were
// never made count until the window ends, and a crash loop still stops at the
// limit. A call's tokens (prompt + output, as reported) are counted when it ends and
// stored with the next write: the next block, a write due because the last one is
// LLM_USAGE_SAVE_MS old, or flush() (the runtime's close, which also gives back the
// unused calls of the block). A power loss loses the tokens counted since the last
// write: those of at most LLM_USAGE_RESERVE_CALLS calls, ended within the last
// LLM_USAGE_SAVE_MS. A clock that goes backwards (before SNTP sets it, say) keeps
// the current window rather than opening a fresh one.
//
// Stored record, key "llm_usage" (UTF-8 JSON): {"v":1,"hour":H,"hourCalls":n,
// "day":D,"dayCalls":n,"dayTokens":n} with H = hours and D = days since 1970 (UTC);
// the call counts include the block stored ahead. An unreadable record is
// replaced, and traced; a failed write is traced, never fatal.
import { LLM_USAGE_RESERVE_CALLS, LLM_USAGE_SAVE_MS } from "budgets";
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
	/** The counts as they are (in memory); after a boot, what the store held. */
	#record: UsageRecord;
	/** What the store holds: the call counts include the block stored ahead of #record's. */
	#stored: UsageRecord;
	/** Wall-clock ms of the last write (or of the load). */
	#savedAt: number;

	constructor(store: UsageStore | undefined, wallNow: () => number) {
		this.#store = store;
		this.#wallNow = wallNow;
		this.#record = this.#load();
		this.#stored = { ...this.#record };
		this.#savedAt = wallNow();
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

	/** Stores the counts, with `ahead` calls more in both windows (a block of calls stored ahead). */
	#save(ahead: number): void {
		const r = this.#record;
		const stored: UsageRecord = { ...r, hourCalls: r.hourCalls + ahead, dayCalls: r.dayCalls + ahead };
		this.#savedAt = this.#wallNow();
		if (!this.#store) {
			this.#stored = stored;
			return;
		}
		try {
			this.#store.write(USAGE_KEY, ArrayBuffer.fromString(JSON.stringify(stored)));
			this.#stored = stored;
		} catch (error) {
			// #stored keeps what the store still holds: the next call writes again.
			logLine("warn", `llm: cannot store the LLM usage (${messageOf(error)})`);
		}
	}

	/** Whether the store holds these windows with at least these calls (so a power loss now loses no call). */
	#callsStored(): boolean {
		const r = this.#record, s = this.#stored;
		return s.hour === r.hour && s.day === r.day && s.hourCalls >= r.hourCalls && s.dayCalls >= r.dayCalls;
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

	/**
	 * Counts a call about to be sent. When the stored block is used up (or the window
	 * moved on), stores the counts before returning, with the next block ahead: up to
	 * LLM_USAGE_RESERVE_CALLS - 1 calls, never past `limits`.
	 */
	recordCall(limits: Limits): void {
		this.#roll();
		const r = this.#record;
		r.hourCalls++;
		r.dayCalls++;
		if (this.#callsStored()) return;
		const ahead = Math.max(0, Math.min(LLM_USAGE_RESERVE_CALLS - 1, limits.callsPerHour - r.hourCalls, limits.callsPerDay - r.dayCalls));
		this.#save(ahead);
	}

	/** Counts a call's tokens; stored with the next write, written now when the last write is LLM_USAGE_SAVE_MS old. */
	recordTokens(tokens: number): void {
		if (!(tokens > 0)) return;
		const now = this.#roll();
		this.#record.dayTokens += Math.round(tokens);
		// A clock that went backwards counts as due too.
		if (now - this.#savedAt < LLM_USAGE_SAVE_MS && now >= this.#savedAt) return;
		const r = this.#record, s = this.#stored;
		this.#save(this.#callsStored() ? Math.min(s.hourCalls - r.hourCalls, s.dayCalls - r.dayCalls) : 0);
	}

	/** Stores the exact counts when the store holds anything else: tokens not yet written, or calls stored ahead. */
	flush(): void {
		this.#roll();
		const r = this.#record, s = this.#stored;
		if (s.hour !== r.hour || s.day !== r.day || s.hourCalls !== r.hourCalls || s.dayCalls !== r.dayCalls || s.dayTokens !== r.dayTokens) this.#save(0);
	}
}
