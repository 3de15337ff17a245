// sched/cron: 5-field cron expressions (minute hour day-of-month month
// day-of-week) and the next time one fires in a time zone.
//
// Each field takes *, numbers (leading zeros allowed: 007 is 7), ranges a-b,
// lists a,b and steps */n or a-b/n or a/n; an item with more than one - or / is
// refused. Day-of-week 0-7 (0 and 7 are Sunday); months and days also by
// three-letter name (jan, mon). The rules next() follows (stated in
// modules/agent/sched/NOTES.md, the same for every spelling):
// - Days: a day field is restricted when it leaves out some value of its range
//   (so *, */1 and 1-31 are not; */2 is). When both day-of-month and day-of-week
//   are restricted a day matches either; otherwise a day must match both (an
//   unrestricted field matches every day).
// - DST gap: a time the clock skips fires once at the first instant after the
//   gap, unless the expression is "wild" (every minute or every hour: its minute
//   or hour field unrestricted), whose skipped times simply do not happen (as
//   Vixie cron).
// - DST repeat: a wild expression fires in both halves of a repeated hour; any
//   other fires at the first occurrence only (as Vixie cron).
// next() looks at most SCHED_CRON_SEARCH_DAYS ahead (a "30 2 29 2 *" fires
// within 8 years, so the bound covers every valid expression) and returns
// undefined when nothing matches in that window.
import { SCHED_CRON_SEARCH_DAYS } from "budgets";
import { daysIn, localInstants, localParts, type TimeZone } from "util/tz";

export interface Cron {
	readonly text: string;
	readonly minutes: ReadonlySet<number>;
	readonly hours: ReadonlySet<number>;
	readonly days: ReadonlySet<number>;
	readonly months: ReadonlySet<number>;
	readonly weekdays: ReadonlySet<number>;
	/** The day-of-month field leaves out no day (see the rules above). */
	readonly anyDay: boolean;
	readonly anyWeekday: boolean;
	/** The minute or the hour field leaves out no value: repeated times fire twice, skipped ones not at all. */
	readonly wild: boolean;
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const FIELDS = [
	{ name: "minute", min: 0, max: 59, names: [] as string[], base: 0 },
	{ name: "hour", min: 0, max: 23, names: [] as string[], base: 0 },
	{ name: "day of month", min: 1, max: 31, names: [] as string[], base: 0 },
	{ name: "month", min: 1, max: 12, names: MONTHS, base: 1 },
	{ name: "day of week", min: 0, max: 7, names: WEEKDAYS, base: 0 },
];

/** Parses text; throws a sentence naming the field that is wrong. */
export function parseCron(text: string): Cron {
	const parts = text.trim().split(/\s+/);
	if (parts.length !== 5) throw new Error(`"${text}" is not a cron expression: it needs 5 fields (minute hour day month weekday), e.g. "0 8 * * 1-5", not ${parts.length}`);
	const sets = parts.map((part, i) => parseField(part, FIELDS[i]));
	if (sets[4].has(7)) {
		sets[4].delete(7);
		sets[4].add(0);
	}
	// Restricted or not by the values named, never by the spelling.
	const full = (set: Set<number>, i: number) => set.size === FIELDS[i].max - FIELDS[i].min + 1;
	return {
		text: parts.join(" "),
		minutes: sets[0], hours: sets[1], days: sets[2], months: sets[3], weekdays: sets[4],
		anyDay: full(sets[2], 2),
		anyWeekday: sets[4].size === 7,
		wild: full(sets[0], 0) || full(sets[1], 1),
	};
}

function parseField(text: string, field: (typeof FIELDS)[number]): Set<number> {
	const out = new Set<number>();
	const bad = (why: string) => new Error(`the ${field.name} field "${text}" ${why} (allowed ${field.min}-${field.max})`);
	const value = (word: string): number => {
		const named = field.names.indexOf(word.toLowerCase());
		if (named >= 0) return named + field.base;
		if (!/^\d{1,4}$/.test(word)) throw bad("is not a number");
		const n = Number(word);
		if (n < field.min || n > field.max) throw bad("is out of range");
		return n;
	};
	for (const item of text.split(",")) {
		const slashes = item.split("/");
		if (slashes.length > 2) throw bad("has more than one /");
		const [range, stepText] = slashes;
		if (range.split("-").length > 2) throw bad("has more than one -");
		if (stepText !== undefined && !/^\d{1,4}$/.test(stepText)) throw bad("has a bad step");
		const step = stepText === undefined ? 1 : Number(stepText);
		if (step < 1) throw bad("has a step of 0");
		let low: number, high: number;
		if (range === "*") [low, high] = [field.min, field.max];
		else if (range.includes("-")) {
			const [a, b] = range.split("-");
			[low, high] = [value(a), value(b)];
			if (low > high) throw bad("has a range that runs backwards");
		} else {
			low = value(range);
			high = stepText === undefined ? low : field.max;
		}
		for (let n = low; n <= high; n += step) out.add(n);
	}
	return out;
}

/** The day rule (see the note at the top): either day field when both are restricted, else both. */
function dayMatches(cron: Cron, day: number, weekday: number): boolean {
	if (!cron.anyDay && !cron.anyWeekday) return cron.days.has(day) || cron.weekdays.has(weekday);
	return cron.days.has(day) && cron.weekdays.has(weekday);
}

/**
 * The first instant strictly after afterMs when cron fires in zone, or undefined
 * within the search window. Within a day, local times come in order except the
 * second half of a repeated hour, so the day's earliest candidate is kept and the
 * walk stops at the first local time whose first instant is past it.
 */
export function nextCron(cron: Cron, afterMs: number, zone: TimeZone): number | undefined {
	const start = localParts(afterMs, zone);
	let { year, month, day } = start;
	const hours = [...cron.hours].sort((a, b) => a - b);
	const minutes = [...cron.minutes].sort((a, b) => a - b);
	for (let i = 0; i < SCHED_CRON_SEARCH_DAYS; i++) {
		if (cron.months.has(month)) {
			const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
			if (dayMatches(cron, day, weekday)) {
				let best: number | undefined = undefined;
				walk: for (const hour of hours) {
					for (const minute of minutes) {
						const at = localInstants(year, month, day, hour, minute, zone);
						if (best !== undefined && at.first > best) break walk;
						// A skipped time: a wild expression's does not happen; another fires when the gap ends.
						if (at.skipped && cron.wild) continue;
						if (at.first > afterMs && (best === undefined || at.first < best)) best = at.first;
						if (cron.wild && at.second !== undefined && at.second > afterMs && (best === undefined || at.second < best)) best = at.second;
					}
				}
				if (best !== undefined) return best;
			}
		}
		day++;
		if (day > daysIn(year, month)) {
			day = 1;
			month++;
			if (month > 12) {
				month = 1;
				year++;
			}
		}
	}
	return undefined;
}
