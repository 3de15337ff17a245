// util/tz: time zones without a time-zone database. XS has no Intl, and the
// device has no tzdata, so a zone is a POSIX TZ rule (what ESP-IDF's setenv("TZ")
// takes too): "CST-8", "CET-1CEST,M3.5.0,M10.5.0/3", "<+0530>-5:30", a fixed
// offset ("UTC+8", "+05:30"), or one of the common IANA names below, which map to
// their current POSIX rule.
//
// Known limits: only the Mm.w.d form of DST rules (what every zone below uses),
// not Jn or n; historical rule changes are not known (the current rule is used
// for every date). A local time that a DST change skips does not exist (fromLocal
// returns undefined; localInstants says where the gap ends); one that repeats is
// taken at its first occurrence (localInstants gives both).
const NAMED: Readonly<Record<string, string>> = {
	"UTC": "UTC0", "Etc/UTC": "UTC0", "GMT": "GMT0",
	"Asia/Shanghai": "CST-8", "Asia/Hong_Kong": "HKT-8", "Asia/Taipei": "CST-8", "Asia/Singapore": "<+08>-8",
	"Asia/Tokyo": "JST-9", "Asia/Seoul": "KST-9", "Asia/Kolkata": "IST-5:30", "Asia/Dubai": "<+04>-4",
	"Europe/London": "GMT0BST,M3.5.0/1,M10.5.0", "Europe/Dublin": "IST-1GMT0,M10.5.0,M3.5.0/1",
	"Europe/Berlin": "CET-1CEST,M3.5.0,M10.5.0/3", "Europe/Paris": "CET-1CEST,M3.5.0,M10.5.0/3",
	"Europe/Madrid": "CET-1CEST,M3.5.0,M10.5.0/3", "Europe/Rome": "CET-1CEST,M3.5.0,M10.5.0/3",
	"Europe/Amsterdam": "CET-1CEST,M3.5.0,M10.5.0/3", "Europe/Zurich": "CET-1CEST,M3.5.0,M10.5.0/3",
	"Europe/Helsinki": "EET-2EEST,M3.5.0/3,M10.5.0/4", "Europe/Moscow": "MSK-3",
	"America/New_York": "EST5EDT,M3.2.0,M11.1.0", "America/Chicago": "CST6CDT,M3.2.0,M11.1.0",
	"America/Denver": "MST7MDT,M3.2.0,M11.1.0", "America/Phoenix": "MST7",
	"America/Los_Angeles": "PST8PDT,M3.2.0,M11.1.0", "America/Sao_Paulo": "<-03>3",
	"Australia/Sydney": "AEST-10AEDT,M10.1.0,M4.1.0/3", "Pacific/Auckland": "NZST-12NZDT,M9.5.0,M4.1.0/3",
};

interface Rule {
	month: number;   // 1..12
	week: number;    // 1..5 (5 = last)
	weekday: number; // 0 = Sunday
	seconds: number; // local time of day of the change
}

export interface TimeZone {
	/** As the person wrote it. */
	readonly name: string;
	/** Minutes east of UTC in force at the instant utcMs. */
	offsetAt(utcMs: number): number;
}

export interface LocalParts {
	year: number;
	month: number;   // 1..12
	day: number;     // 1..31
	hour: number;
	minute: number;
	second: number;
	weekday: number; // 0 = Sunday
}

const MINUTE_MS = 60_000;

/** The zone named by text; throws a sentence saying what forms work. */
export function parseTimeZone(text: string): TimeZone {
	const name = text.trim();
	const fixed = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(name);
	if (fixed) {
		const minutes = (Number(fixed[2]) * 60 + Number(fixed[3] ?? 0)) * (fixed[1] === "-" ? -1 : 1);
		if (Math.abs(minutes) > 14 * 60) throw new Error(`the time zone "${name}" is more than 14 hours from UTC; use an offset like +08:00`);
		return { name, offsetAt: () => minutes };
	}
	const rule = NAMED[name] ?? name;
	const parsed = parsePosix(rule);
	if (!parsed) throw new Error(`"${name}" is not a time zone this firmware knows: use UTC, an offset like +08:00, a POSIX rule like CET-1CEST,M3.5.0,M10.5.0/3, or one of ${Object.keys(NAMED).slice(0, 6).join(", ")}, ...`);
	return { name, offsetAt: parsed };
}

// "STD offset [DST [offset] [,start[/time],end[/time]]]"; POSIX offsets are hours WEST.
function parsePosix(rule: string): ((utcMs: number) => number) | undefined {
	const match = /^(<[^>]+>|[A-Za-z]{3,})([+-]?\d{1,2}(?::\d{2}){0,2})(?:(<[^>]+>|[A-Za-z]{3,})([+-]?\d{1,2}(?::\d{2}){0,2})?(?:,(M[^,]+),(M[^,]+))?)?$/.exec(rule);
	if (!match) return undefined;
	const standard = -clockSeconds(match[2]) / 60;
	if (!match[3]) return () => standard;
	const daylight = match[4] !== undefined ? -clockSeconds(match[4]) / 60 : standard + 60;
	const start = parseRule(match[5] ?? "M3.2.0");
	const end = parseRule(match[6] ?? "M11.1.0");
	if (!start || !end) return undefined;
	return (utcMs) => {
		const year = new Date(utcMs).getUTCFullYear();
		const on = ruleUtc(year, start, standard);
		const off = ruleUtc(year, end, daylight);
		const inDaylight = on < off ? utcMs >= on && utcMs < off : utcMs >= on || utcMs < off;
		return inDaylight ? daylight : standard;
	};
}

function clockSeconds(text: string): number {
	const sign = text.startsWith("-") ? -1 : 1;
	const [h, m = "0", s = "0"] = text.replace(/^[+-]/, "").split(":");
	return sign * (Number(h) * 3600 + Number(m) * 60 + Number(s));
}

function parseRule(text: string): Rule | undefined {
	const match = /^M(\d{1,2})\.([1-5])\.([0-6])(?:\/([+-]?\d{1,3}(?::\d{2}){0,2}))?$/.exec(text);
	if (!match) return undefined;
	const month = Number(match[1]);
	if (month < 1 || month > 12) return undefined;
	return { month, week: Number(match[2]), weekday: Number(match[3]), seconds: match[4] ? clockSeconds(match[4]) : 7200 };
}

// The UTC instant of a rule's change in year, given the offset in force before it.
function ruleUtc(year: number, rule: Rule, offsetMinutes: number): number {
	const first = new Date(Date.UTC(year, rule.month - 1, 1)).getUTCDay();
	let day = 1 + ((rule.weekday - first + 7) % 7) + (rule.week - 1) * 7;
	const days = daysIn(year, rule.month);
	while (day > days) day -= 7;
	return Date.UTC(year, rule.month - 1, day) + rule.seconds * 1000 - offsetMinutes * MINUTE_MS;
}

export function daysIn(year: number, month: number): number {
	return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The local calendar fields of the instant utcMs in zone. */
export function localParts(utcMs: number, zone: TimeZone): LocalParts {
	const local = new Date(utcMs + zone.offsetAt(utcMs) * MINUTE_MS);
	return {
		year: local.getUTCFullYear(), month: local.getUTCMonth() + 1, day: local.getUTCDate(),
		hour: local.getUTCHours(), minute: local.getUTCMinutes(), second: local.getUTCSeconds(), weekday: local.getUTCDay(),
	};
}

/** The UTC instant of a local wall time in zone; undefined when a DST change skips it. */
export function fromLocal(year: number, month: number, day: number, hour: number, minute: number, zone: TimeZone): number | undefined {
	const at = localInstants(year, month, day, hour, minute, zone);
	return at.skipped ? undefined : at.first;
}

/**
 * Where a local wall time falls: its instant (the first, when a DST change repeats
 * it, with the second), or, when a change skips it, skipped and the first instant
 * after the gap (the change itself: 02:30 on the night New York springs forward
 * gives 03:00 EDT).
 */
export interface LocalInstants {
	first: number;
	second?: number;
	skipped?: true;
}

export function localInstants(year: number, month: number, day: number, hour: number, minute: number, zone: TimeZone): LocalInstants {
	const wall = Date.UTC(year, month - 1, day, hour, minute);
	// The offsets in force a day before and after the wall time (DST changes are months apart).
	const before = wall - zone.offsetAt(wall - 86_400_000) * MINUTE_MS;
	const after = wall - zone.offsetAt(wall + 86_400_000) * MINUTE_MS;
	const low = Math.min(before, after), high = Math.max(before, after);
	const lowFits = low + zone.offsetAt(low) * MINUTE_MS === wall;
	const highFits = high !== low && high + zone.offsetAt(high) * MINUTE_MS === wall;
	if (lowFits) return highFits ? { first: low, second: high } : { first: low };
	if (highFits) return { first: high };
	// Skipped: the clock jumped over it between low (still the old offset) and high
	// (the new one); the change is the first instant with the new offset, found by
	// halving that interval (an hour or two: ~22 halvings to the millisecond).
	let from = low, to = high;
	const newOffset = zone.offsetAt(high);
	while (to - from > 1) {
		const mid = Math.floor((from + to) / 2);
		if (zone.offsetAt(mid) === newOffset) to = mid;
		else from = mid;
	}
	return { first: to, skipped: true };
}

/** "2026-12-01 18:30 (+08:00)" */
export function formatLocal(utcMs: number, zone: TimeZone): string {
	const p = localParts(utcMs, zone);
	const offset = zone.offsetAt(utcMs);
	const sign = offset < 0 ? "-" : "+";
	const abs = Math.abs(offset);
	// One concat: in XS a template literal makes each intermediate string (get_time runs this per call).
	return String(p.year).concat("-", two(p.month), "-", two(p.day), " ", two(p.hour), ":", two(p.minute), ":", two(p.second), " (", sign, two(Math.floor(abs / 60)), ":", two(abs % 60), ")");
}

function two(n: number): string {
	return n < 10 ? "0".concat(String(n)) : String(n);
}
