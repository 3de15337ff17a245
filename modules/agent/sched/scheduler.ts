// sched/scheduler: the board's schedules (SPEC §7): 5-field cron, fixed
// interval and one-shot entries, each with a time zone and the chat that made
// it, kept in sched/schedules.json and fired as requests with role cron whose
// answer goes to that chat (the firing itself is the caller's fire()).
//
// Durability: an entry's next time is moved on (or a one-shot removed) and the
// file written atomically BEFORE the request is submitted, so a reboot right
// after a firing never fires it again; a power loss between the write and the
// submit loses that one firing instead (at most once, never twice).
//
// Missed entries after a reboot (or a clock jump), one rule for every kind: an
// entry whose time passed while the board was off fires once, late, when the
// scheduler starts, if the newest missed time is at most SCHED_CATCH_UP_MS old;
// older misses are skipped with a log line. Several missed firings of a repeating
// entry collapse into that one; it then continues at its next time after now. A
// one-shot is removed once it fired or was skipped.
//
// The timer is armed for the earliest entry but never longer than
// SCHED_TICK_MAX_MS, so a wall clock set late (SNTP) is noticed within that.
// Nothing fires while the wall clock is unset (before 2024). At most
// SCHED_ENTRIES_MAX entries.
import type { Directory } from "util/io";
import Timer from "timer";
import { SCHED_CATCH_UP_MS, SCHED_ENTRIES_MAX, SCHED_FILE_MAX_BYTES, SCHED_MIN_INTERVAL_S, SCHED_TEXT_MAX_CHARS, SCHED_TICK_MAX_MS } from "budgets";
import { loadFile, refuseIfUnreadable, textFile } from "memory/flash";
import { nextCron, parseCron } from "sched/cron";
import { formatLocal, fromLocal, parseTimeZone, type TimeZone } from "util/tz";
import { utf8, writeAtomically } from "util/files";
import { messageOf } from "util/errors";

export type ScheduleKind = "cron" | "every" | "once";

export interface ChatRef {
	channel: string;
	chat_id: string;
}

export interface ScheduleEntry {
	id: string;
	kind: ScheduleKind;
	/** cron: the expression; every: seconds; once: "" (next_ms is the time). */
	spec: string;
	/** The time zone the entry's cron fields are read in. */
	zone: string;
	/** What the fired request asks the agent ("" when the entry runs a script). */
	text: string;
	/** A stored script (caps/scripts) the entry runs instead of asking the agent: no LLM call. */
	script?: string;
	/** Where the answer goes: the chat that made the entry. */
	chat: ChatRef;
	created_ms: number;
	/** The next firing, wall-clock milliseconds. */
	next_ms: number;
	fired: number;
}

export interface NewSchedule {
	kind: ScheduleKind;
	/** cron: the 5-field expression. */
	cron?: string;
	/** every: the interval. */
	every_seconds?: number;
	/** once: an instant (ISO 8601; without an offset it is local time in zone). */
	at?: string;
	/** once: seconds from now (instead of at). */
	in_seconds?: number;
	text: string;
	/** Run this stored script instead of asking the agent (text is then ignored). */
	script?: string;
	/** Default: the configured zone. */
	timezone?: string;
	chat: ChatRef;
}

export interface SchedulerOptions {
	directory: Directory;
	/** Wall-clock milliseconds (Date.now). */
	wallClockMs(): number;
	/** The configured default zone (time.timezone). */
	zone(): TimeZone;
	/**
	 * Submits the entry's request; must not throw (a rejection is logged). due_ms:
	 * the time it was due (wall clock), so a late firing (missed while the board
	 * was off) can say so.
	 */
	fire(entry: ScheduleEntry, dueMs: number): void | Promise<void>;
	log(line: string): void;
	/** For tests: a timer that is not the real one. */
	timer?: { set(callback: () => void, ms: number): unknown; clear(handle: unknown): void };
}

const FILE = "schedules.json";
const CLOCK_SET_AFTER_MS = Date.UTC(2024, 0, 1);

interface FileShape {
	version: 1;
	next_id: number;
	entries: ScheduleEntry[];
}

export class Scheduler {
	readonly #options: SchedulerOptions;
	#entries: ScheduleEntry[] = [];
	#nextId = 1;
	#unreadable: string | undefined;
	#handle: unknown;
	#running = false;

	constructor(options: SchedulerOptions) {
		this.#options = options;
		const loaded = loadFile<FileShape>(options.directory, {
			path: FILE, maxBytes: SCHED_FILE_MAX_BYTES, area: "sched", fallback: "the board starts without schedules",
			decode: (bytes) => {
				const text = textFile(bytes);
				if ("problem" in text) return text;
				try {
					const value = JSON.parse(text.value) as FileShape;
					if (value?.version !== 1 || !Array.isArray(value.entries) || !value.entries.every(isEntry)) return { problem: "it is not a schedules file" };
					return { value };
				} catch (error) {
					return { problem: `it is not JSON (${messageOf(error)})` };
				}
			},
			unreadable: (why) => { this.#unreadable = why; },
		}, options.log);
		if (loaded) {
			this.#entries = loaded.entries.slice(0, SCHED_ENTRIES_MAX);
			this.#nextId = Math.max(1, Math.floor(Number(loaded.next_id) || 1));
		}
	}

	list(): readonly ScheduleEntry[] {
		return this.#entries;
	}

	/** Applies the missed-entries rule, then arms the timer. */
	start(): void {
		this.#running = true;
		this.#tick();
	}

	stop(): void {
		this.#running = false;
		this.#disarm();
	}

	/** Adds an entry; throws a sentence when it is invalid, the table is full or the clock is unset. */
	add(request: NewSchedule): ScheduleEntry {
		refuseIfUnreadable(`sched/${FILE}`, this.#unreadable);
		const now = this.#options.wallClockMs();
		if (now < CLOCK_SET_AFTER_MS) throw new Error("the board's clock is not set yet (no network time), so nothing can be scheduled; try again once it is online");
		if (this.#entries.length >= SCHED_ENTRIES_MAX) throw new Error(`there are already ${SCHED_ENTRIES_MAX} schedules, the most the board keeps; delete one first`);
		const script = typeof request.script === "string" && request.script ? request.script : undefined;
		const text = script ? "" : typeof request.text === "string" ? request.text.trim() : "";
		if (!text && !script) throw new Error("a schedule needs a text: what the agent should do when it fires");
		if (text.length > SCHED_TEXT_MAX_CHARS) throw new Error(`the schedule's text has ${text.length} characters; keep it under ${SCHED_TEXT_MAX_CHARS}`);
		const zone = request.timezone ? parseTimeZone(request.timezone) : this.#options.zone();
		const entry: ScheduleEntry = { id: "", kind: request.kind, spec: "", zone: zone.name, text, chat: { channel: request.chat.channel, chat_id: request.chat.chat_id }, created_ms: now, next_ms: 0, fired: 0 };
		if (script) entry.script = script;
		if (request.kind === "cron") {
			if (typeof request.cron !== "string") throw new Error("a cron schedule needs cron: 5 fields like \"0 8 * * *\"");
			entry.spec = parseCron(request.cron).text;
		} else if (request.kind === "every") {
			const seconds = request.every_seconds;
			if (typeof seconds !== "number" || !Number.isInteger(seconds) || seconds < SCHED_MIN_INTERVAL_S)
				throw new Error(`an interval schedule needs every_seconds, a whole number of at least ${SCHED_MIN_INTERVAL_S}`);
			entry.spec = String(seconds);
		} else if (request.kind === "once") {
			entry.next_ms = onceTime(request, zone, now);
		} else {
			throw new Error(`"${String(request.kind)}" is not a schedule kind: use cron, every or once`);
		}
		if (entry.kind !== "once") {
			const next = this.#after(entry, now);
			if (next === undefined) throw new Error(`the cron expression "${entry.spec}" never fires`);
			entry.next_ms = next;
		}
		entry.id = `s${this.#nextId}`;
		const entries = [...this.#entries, entry];
		this.#save(entries, this.#nextId + 1);
		this.#rearm();
		return entry;
	}

	/** Removes every entry that runs the script name (it was deleted); how many. Throws when the file cannot be written. */
	removeScript(name: string): number {
		refuseIfUnreadable(`sched/${FILE}`, this.#unreadable);
		const entries = this.#entries.filter((entry) => entry.script !== name);
		const removed = this.#entries.length - entries.length;
		if (removed) {
			this.#save(entries, this.#nextId);
			this.#rearm();
		}
		return removed;
	}

	/** Removes an entry; false when there is none with that id. Throws when the file cannot be written. */
	remove(id: string): boolean {
		refuseIfUnreadable(`sched/${FILE}`, this.#unreadable);
		const entries = this.#entries.filter((entry) => entry.id !== id);
		if (entries.length === this.#entries.length) return false;
		this.#save(entries, this.#nextId);
		this.#rearm();
		return true;
	}

	/** One line per entry for people and the model. */
	describe(entry: ScheduleEntry): string {
		const what = entry.kind === "cron" ? `cron "${entry.spec}" (${entry.zone})` : entry.kind === "every" ? `every ${entry.spec} s` : "once";
		let zone: TimeZone;
		try {
			zone = parseTimeZone(entry.zone);
		} catch {
			zone = this.#options.zone();
		}
		const does = entry.script ? `runs script ${entry.script}` : entry.text;
		return `${entry.id}: ${what}, next ${formatLocal(entry.next_ms, zone)}, to ${entry.chat.channel}:${entry.chat.chat_id}, fired ${entry.fired}x: ${does}`;
	}

	#after(entry: ScheduleEntry, afterMs: number): number | undefined {
		if (entry.kind === "every") return afterMs + Number(entry.spec) * 1000;
		if (entry.kind === "once") return undefined;
		let zone: TimeZone;
		try {
			zone = parseTimeZone(entry.zone);
		} catch {
			zone = this.#options.zone();
		}
		return nextCron(parseCron(entry.spec), afterMs, zone);
	}

	#save(entries: ScheduleEntry[], nextId: number): void {
		const shape: FileShape = { version: 1, next_id: nextId, entries };
		writeAtomically(this.#options.directory, FILE, utf8(JSON.stringify(shape)));
		this.#entries = entries;
		this.#nextId = nextId;
	}

	#tick(): void {
		this.#handle = undefined;
		if (!this.#running) return;
		const now = this.#options.wallClockMs();
		if (now >= CLOCK_SET_AFTER_MS) {
			const due = this.#entries.filter((entry) => entry.next_ms <= now).sort((a, b) => a.next_ms - b.next_ms);
			if (due.length) {
				const fire: Array<{ entry: ScheduleEntry; dueMs: number }> = [];
				const entries: ScheduleEntry[] = [];
				for (const entry of this.#entries) {
					if (entry.next_ms > now) {
						entries.push(entry);
						continue;
					}
					const late = now - entry.next_ms;
					const fires = late <= SCHED_CATCH_UP_MS;
					if (!fires) this.#options.log(`sched: ${entry.id} missed its time by ${Math.round(late / 1000)} s (more than ${SCHED_CATCH_UP_MS / 1000} s), so it is skipped this time`);
					const next = this.#after(entry, now);
					const updated = { ...entry, fired: entry.fired + (fires ? 1 : 0), next_ms: next ?? 0 };
					if (next !== undefined) entries.push(updated);
					if (fires) fire.push({ entry: updated, dueMs: entry.next_ms });
				}
				try {
					// Written before anything fires: a reboot from here on never fires these again.
					this.#save(entries, this.#nextId);
				} catch (error) {
					this.#options.log(`sched: the schedules could not be saved (${messageOf(error)}); nothing fires until they can be, so nothing fires twice`);
					this.#arm(SCHED_TICK_MAX_MS);
					return;
				}
				for (const { entry, dueMs } of fire) {
					try {
						Promise.resolve(this.#options.fire(entry, dueMs)).catch((error) => this.#options.log(`sched: ${entry.id} could not start its request: ${messageOf(error)}`));
					} catch (error) {
						this.#options.log(`sched: ${entry.id} could not start its request: ${messageOf(error)}`);
					}
				}
			}
		}
		this.#rearm();
	}

	#rearm(): void {
		if (!this.#running) return;
		const now = this.#options.wallClockMs();
		let wait = SCHED_TICK_MAX_MS;
		for (const entry of this.#entries) wait = Math.min(wait, Math.max(0, entry.next_ms - now));
		this.#arm(wait);
	}

	#arm(ms: number): void {
		this.#disarm();
		const timer = this.#options.timer;
		this.#handle = timer ? timer.set(() => this.#tick(), ms) : Timer.set(() => this.#tick(), ms);
	}

	#disarm(): void {
		if (this.#handle === undefined) return;
		const timer = this.#options.timer;
		if (timer) timer.clear(this.#handle);
		else Timer.clear(this.#handle as ReturnType<typeof Timer.set>);
		this.#handle = undefined;
	}
}

/**
 * A schedule's firing later than the scheduler's tick allows (missed while the
 * board was off): when it was due and how late, for its request and the
 * console's label; "" when it fires on time.
 */
export function lateNote(dueMs: number, nowMs: number, zone: TimeZone): string {
	const late = nowMs - dueMs;
	if (late <= SCHED_TICK_MAX_MS) return "";
	const minutes = Math.round(late / 60_000);
	const howLate = minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
	return `due ${formatLocal(dueMs, zone)}, ${howLate} late (missed while the board was off)`;
}

function onceTime(request: NewSchedule, zone: TimeZone, now: number): number {
	if (typeof request.in_seconds === "number") {
		if (!Number.isFinite(request.in_seconds) || request.in_seconds < 1) throw new Error("in_seconds must be at least 1");
		return now + Math.round(request.in_seconds * 1000);
	}
	if (typeof request.at !== "string") throw new Error("a one-shot schedule needs at (a date and time like 2026-12-24T18:00) or in_seconds");
	const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2})?$/.exec(request.at.trim());
	if (!match) throw new Error(`"${request.at}" is not a date and time: write it like 2026-12-24T18:00`);
	const [, y, mo, d, h, mi, s, offset] = match;
	let at: number | undefined;
	if (offset) at = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s ?? "00"}${offset === "Z" ? "Z" : offset}`);
	else {
		const local = fromLocal(Number(y), Number(mo), Number(d), Number(h), Number(mi), zone);
		at = local === undefined ? undefined : local + Number(s ?? 0) * 1000;
	}
	if (at === undefined || !Number.isFinite(at)) throw new Error(`"${request.at}" is not a time that exists in ${zone.name}`);
	if (at <= now) throw new Error(`${request.at} has already passed; give a time in the future`);
	return at;
}

function isEntry(value: unknown): value is ScheduleEntry {
	const e = value as ScheduleEntry;
	return typeof e === "object" && e !== null && typeof e.id === "string" && (e.kind === "cron" || e.kind === "every" || e.kind === "once") &&
		typeof e.spec === "string" && typeof e.zone === "string" && typeof e.text === "string" && typeof e.next_ms === "number" &&
		typeof e.chat === "object" && e.chat !== null && typeof e.chat.channel === "string" && typeof e.chat.chat_id === "string" &&
		typeof e.fired === "number" && typeof e.created_ms === "number" && (e.script === undefined || typeof e.script === "string");
}
