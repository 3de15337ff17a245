// sched/cron: 5-field cron expressions (minute hour day-of-month month
// day-of-week) and the next time one fires in a time zone.
//
// Each field takes *, numbers, ranges a-b, lists a,b and steps */n or a-b/n;
// day-of-week 0-7 (0 and 7 are Sunday); months and days also by three-letter
// name (jan, mon). As in Vixie cron, when both day-of-month and day-of-week are
// restricted a day matches either. next() looks at most SCHED_CRON_SEARCH_DAYS
// ahead (a "30 2 29 2 *" fires within 8 years, so the bound covers every valid
// expression) and returns undefined when nothing matches in that window.
import { SCHED_CRON_SEARCH_DAYS } from "budgets";
import { daysIn, fromLocal, localParts, type TimeZone } from "sched/tz";

export interface Cron {
	readonly text: string;
	readonly minutes: ReadonlySet<number>;
	readonly hours: ReadonlySet<number>;
	readonly days: ReadonlySet<number>;
	readonly months: ReadonlySet<number>;
	readonly weekdays: ReadonlySet<number>;
	readonly anyDay: boolean;
	readonly anyWeekday: boolean;
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
	return {
		text: parts.join(" "),
		minutes: sets[0], hours: sets[1], days: sets[2], months: sets[3], weekdays: sets[4],
		anyDay: parts[2] === "*" || parts[2] === "*/1",
		anyWeekday: parts[4] === "*" || parts[4] === "*/1",
	};
}

function parseField(text: string, field: (typeof FIELDS)[number]): Set<number> {
	const out = new Set<number>();
	const bad = (why: string) => new Error(`the ${field.name} field "${text}" ${why} (allowed ${field.min}-${field.max})`);
	const value = (word: string): number => {
		const named = field.names.indexOf(word.toLowerCase());
		if (named >= 0) return named + field.base;
		if (!/^\d{1,2}$/.test(word)) throw bad("is not a number");
		const n = Number(word);
		if (n < field.min || n > field.max) throw bad("is out of range");
		return n;
	};
	for (const item of text.split(",")) {
		const [range, stepText] = item.split("/");
		if (stepText !== undefined && !/^\d{1,2}$/.test(stepText)) throw bad("has a bad step");
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

function dayMatches(cron: Cron, day: number, weekday: number): boolean {
	if (cron.anyDay && cron.anyWeekday) return true;
	if (cron.anyDay) return cron.weekdays.has(weekday);
	if (cron.anyWeekday) return cron.days.has(day);
	return cron.days.has(day) || cron.weekdays.has(weekday);
}

/** The first instant strictly after afterMs when cron fires in zone, or undefined within the search window. */
export function nextCron(cron: Cron, afterMs: number, zone: TimeZone): number | undefined {
	const start = localParts(afterMs, zone);
	let { year, month, day } = start;
	const hours = [...cron.hours].sort((a, b) => a - b);
	const minutes = [...cron.minutes].sort((a, b) => a - b);
	for (let i = 0; i < SCHED_CRON_SEARCH_DAYS; i++) {
		if (cron.months.has(month)) {
			const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
			if (dayMatches(cron, day, weekday)) {
				for (const hour of hours) {
					for (const minute of minutes) {
						const at = fromLocal(year, month, day, hour, minute, zone);
						if (at !== undefined && at > afterMs) return at;
					}
				}
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
