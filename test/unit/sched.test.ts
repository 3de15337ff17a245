// The scheduler (modules/agent/sched): cron parsing and next times, time zones with
// DST, and the Scheduler's persistence, firing and missed-entry rule, on a fake
// clock and timer.
import { SCHED_CATCH_UP_MS, SCHED_ENTRIES_MAX, SCHED_MIN_INTERVAL_S } from "budgets";
import { nextCron, parseCron } from "sched/cron";
import { Scheduler, lateNote, type ScheduleEntry } from "sched/scheduler";
import { cronCommands, scheduleTools } from "sched/tools";
import { formatLocal, fromLocal, parseTimeZone } from "util/tz";
import { callTool, freshDirectory, Lines, readText, writeRaw } from "./memory_fakes";
import type { Directory } from "embedded:storage/files";
import { assert, test } from "testing";

const UTC = parseTimeZone("UTC");
const at = (text: string) => Date.parse(text);

test("a cron expression with the wrong number of fields or a bad field is refused, naming the field", () => {
	assert.throws(() => parseCron("* * * *"), /it needs 5 fields/);
	assert.throws(() => parseCron("61 * * * *"), /the minute field "61" is out of range/);
	assert.throws(() => parseCron("* 24 * * *"), /the hour field "24" is out of range/);
	assert.throws(() => parseCron("* * 0 * *"), /the day of month field "0" is out of range/);
	assert.throws(() => parseCron("* * * 13 *"), /the month field "13" is out of range/);
	assert.throws(() => parseCron("* * * * 8"), /the day of week field "8" is out of range/);
	assert.throws(() => parseCron("5-1 * * * *"), /runs backwards/);
	assert.throws(() => parseCron("*/0 * * * *"), /step of 0/);
	assert.throws(() => parseCron("x * * * *"), /is not a number/);
});

test("nextCron finds the next minute, hour, weekday and month, strictly after the given time", () => {
	const from = at("2026-12-01T10:30:00Z"); // a Tuesday
	assert.equal(nextCron(parseCron("* * * * *"), from, UTC), at("2026-12-01T10:31:00Z"));
	assert.equal(nextCron(parseCron("*/15 * * * *"), from, UTC), at("2026-12-01T10:45:00Z"));
	assert.equal(nextCron(parseCron("0 8 * * *"), from, UTC), at("2026-12-02T08:00:00Z"));
	assert.equal(nextCron(parseCron("30 10 * * *"), from, UTC), at("2026-12-02T10:30:00Z"), "not the same minute again");
	assert.equal(nextCron(parseCron("0 9 * * mon"), from, UTC), at("2026-12-07T09:00:00Z"));
	assert.equal(nextCron(parseCron("0 9 * * 7"), from, UTC), at("2026-12-06T09:00:00Z"), "7 is Sunday");
	assert.equal(nextCron(parseCron("0 0 1 jan *"), from, UTC), at("2027-01-01T00:00:00Z"));
	assert.equal(nextCron(parseCron("0 0 29 2 *"), from, UTC), at("2028-02-29T00:00:00Z"));
	assert.equal(nextCron(parseCron("0 12 13 * 5"), from, UTC), at("2026-12-04T12:00:00Z"), "day of month OR day of week when both are set");
	assert.equal(nextCron(parseCron("0 0 31 2 *"), from, UTC), undefined, "February 31 never comes");
});

test("time zones: fixed offsets, POSIX rules and named zones, with DST changes", () => {
	const berlin = parseTimeZone("Europe/Berlin");
	assert.equal(berlin.offsetAt(at("2026-01-15T12:00:00Z")), 60);
	assert.equal(berlin.offsetAt(at("2026-07-15T12:00:00Z")), 120);
	assert.equal(berlin.offsetAt(at("2026-03-29T00:59:00Z")), 60, "before 01:00 UTC on the last Sunday of March");
	assert.equal(berlin.offsetAt(at("2026-03-29T01:00:00Z")), 120);
	assert.equal(berlin.offsetAt(at("2026-10-25T00:59:00Z")), 120);
	assert.equal(berlin.offsetAt(at("2026-10-25T01:00:00Z")), 60);
	const sydney = parseTimeZone("Australia/Sydney");
	assert.equal(sydney.offsetAt(at("2026-01-15T00:00:00Z")), 660, "southern summer");
	assert.equal(sydney.offsetAt(at("2026-07-15T00:00:00Z")), 600);
	assert.equal(parseTimeZone("+05:30").offsetAt(0), 330);
	assert.equal(parseTimeZone("UTC-3").offsetAt(0), -180);
	assert.equal(parseTimeZone("CST-8").offsetAt(0), 480, "POSIX offsets count west");
	assert.equal(formatLocal(at("2026-12-01T10:00:00Z"), parseTimeZone("Asia/Shanghai")), "2026-12-01 18:00:00 (+08:00)");
	assert.equal(fromLocal(2026, 3, 29, 2, 30, berlin), undefined, "02:30 does not exist that night");
	assert.equal(fromLocal(2026, 10, 25, 2, 30, berlin), at("2026-10-25T00:30:00Z"), "a repeated time is its first occurrence");
	assert.throws(() => parseTimeZone("Mars/Olympus"), /is not a time zone this firmware knows/);
	assert.throws(() => parseTimeZone("+15:00"), /more than 14 hours/);
});

test("a daily cron in a zone with DST keeps its local time across the change", () => {
	const berlin = parseTimeZone("Europe/Berlin");
	const cron = parseCron("0 8 * * *");
	assert.equal(nextCron(cron, at("2026-03-28T12:00:00Z"), berlin), at("2026-03-29T06:00:00Z"), "08:00 CEST");
	assert.equal(nextCron(cron, at("2026-03-27T12:00:00Z"), berlin), at("2026-03-28T07:00:00Z"), "08:00 CET");
});

test("a cron item with more than one - or / is refused, not cut; leading zeros are numbers (007 is minute 7)", () => {
	assert.throws(() => parseCron("1-5-7 * * * *"), /the minute field "1-5-7" has more than one -/);
	assert.throws(() => parseCron("1/2/3 * * * *"), /the minute field "1\/2\/3" has more than one \//);
	assert.throws(() => parseCron("0 1-3-5/2 * * *"), /the hour field .* has more than one -/);
	assert.throws(() => parseCron("0 0 * * mon-wed-fri"), /the day of week field .* has more than one -/);
	assert.throws(() => parseCron("0 0 1,1/2/3 * *"), /the day of month field .* has more than one \//);
	assert.deepEqual([...parseCron("007 * * * *").minutes], [7]);
	assert.deepEqual([...parseCron("00-02/01 * * * *").minutes], [0, 1, 2]);
	assert.equal(nextCron(parseCron("007 * * * *"), at("2026-12-01T10:30:00Z"), UTC), at("2026-12-01T11:07:00Z"));
});

test("the day rule depends on the days named, not the spelling: */1 and 1-31 are *, */2 is restricted", () => {
	const from = at("2026-12-01T10:30:00Z"); // a Tuesday
	// Day of month unrestricted (*, */1, 1-31): only Mondays.
	for (const days of ["*", "*/1", "1-31"]) assert.equal(nextCron(parseCron(`0 9 ${days} * mon`), from, UTC), at("2026-12-07T09:00:00Z"), days);
	// Day of month restricted by a step: odd days or Mondays, the earlier first.
	assert.equal(nextCron(parseCron("0 9 */2 * mon"), from, UTC), at("2026-12-03T09:00:00Z"), "December 3 (odd)");
	assert.equal(nextCron(parseCron("0 9 2-31/2 * mon"), from, UTC), at("2026-12-02T09:00:00Z"));
	// Day of week unrestricted however written (*, */1, 0-6, 0-7, 1-7): only the day of month.
	for (const weekdays of ["*", "*/1", "0-6", "0-7", "1-7", "sun-sat"]) assert.equal(nextCron(parseCron(`0 9 15 * ${weekdays}`), from, UTC), at("2026-12-15T09:00:00Z"), weekdays);
	// Both restricted, one by a step: the 15th or Sun/Tue/Thu/Sat; both unrestricted: every day.
	assert.equal(nextCron(parseCron("0 9 15 * */2"), from, UTC), at("2026-12-03T09:00:00Z"), "Thursday December 3");
	assert.equal(nextCron(parseCron("0 9 1-31 * 0-6"), from, UTC), at("2026-12-02T09:00:00Z"));
});

test("a daily job in the hour a DST change skips fires that day, at the first time after the gap (New York, Berlin, Sydney, Auckland, Dublin)", () => {
	const cases: Array<[string, string, string, string]> = [
		// zone, the job, the evening before, the instant the clock jumps (the first valid time after the gap)
		["America/New_York", "30 2 * * *", "2026-03-07T12:00:00Z", "2026-03-08T07:00:00Z"],
		["Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z"],
		["Australia/Sydney", "30 2 * * *", "2026-10-03T06:00:00Z", "2026-10-03T16:00:00Z"],
		["Pacific/Auckland", "30 2 * * *", "2026-09-26T06:00:00Z", "2026-09-26T14:00:00Z"],
		["Europe/Dublin", "30 1 * * *", "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z"],
	];
	for (const [name, spec, before, gapEnd] of cases) {
		const zone = parseTimeZone(name);
		const cron = parseCron(spec);
		const fired = nextCron(cron, at(before), zone)!;
		assert.equal(fired, at(gapEnd), `${name}: ${spec} fires when the gap ends`);
		assert.equal(zone.offsetAt(fired) !== zone.offsetAt(fired - 1), true, `${name}: that is the change itself`);
		// And once: the next firing is the next day's, at the usual local time.
		const next = nextCron(cron, fired, zone)!;
		assert.equal(next - fired > 20 * 3_600_000, true, `${name}: next day`);
		assert.equal(formatLocal(next, zone).slice(11, 16), spec.startsWith("30 2") ? "02:30" : "01:30", name);
	}
	// Two fixed times in the gap fire once, at the change.
	const ny = parseTimeZone("America/New_York");
	const two = parseCron("0,30 2 * * *");
	const first = nextCron(two, at("2026-03-07T12:00:00Z"), ny)!;
	assert.equal(first, at("2026-03-08T07:00:00Z"));
	assert.equal(nextCron(two, first, ny), at("2026-03-09T06:00:00Z"), "02:00 EDT the next day");
	// A wild job (every minute of hour 2) has no minutes that night.
	assert.equal(nextCron(parseCron("* 2 * * *"), at("2026-03-07T12:00:00Z"), ny), at("2026-03-09T06:00:00Z"), "02:00 EDT on the 9th");
});

test("in the repeated hour a wild job (*/20 * * * *) fires in both halves, a fixed one (30 1 * * *) in the first only", () => {
	const ny = parseTimeZone("America/New_York"); // 2026-11-01: 01:00-02:00 happens twice (EDT, then EST)
	const every20 = parseCron("*/20 * * * *");
	const times: string[] = [];
	let t = at("2026-11-01T04:50:00Z"); // 00:50 EDT
	for (let i = 0; i < 8; i++) {
		t = nextCron(every20, t, ny)!;
		times.push(formatLocal(t, ny).slice(11));
	}
	assert.deepEqual(times, [
		"01:00:00 (-04:00)", "01:20:00 (-04:00)", "01:40:00 (-04:00)",
		"01:00:00 (-05:00)", "01:20:00 (-05:00)", "01:40:00 (-05:00)",
		"02:00:00 (-05:00)", "02:20:00 (-05:00)",
	]);
	const daily = parseCron("30 1 * * *");
	const once = nextCron(daily, at("2026-11-01T04:50:00Z"), ny)!;
	assert.equal(once, at("2026-11-01T05:30:00Z"), "01:30 EDT");
	assert.equal(nextCron(daily, once, ny), at("2026-11-02T06:30:00Z"), "not 01:30 EST again: the next day");
	const hourOne = parseCron("*/20 1 * * *"); // fixed hour, not every hour: first half only
	assert.equal(nextCron(hourOne, at("2026-11-01T05:40:00Z"), ny), at("2026-11-02T06:00:00Z"));
});

class FakeTimer {
	pending: Array<{ callback: () => void; ms: number; id: number }> = [];
	#next = 1;
	set = (callback: () => void, ms: number) => {
		const id = this.#next++;
		this.pending.push({ callback, ms, id });
		return id;
	};
	clear = (handle: unknown) => {
		this.pending = this.pending.filter((t) => t.id !== handle);
	};
	/** Runs the armed timer (there is one at a time). */
	fire(): void {
		const timer = this.pending.shift();
		if (!timer) throw new Error("no timer armed");
		timer.callback();
	}
}

function scheduler(directory: Directory, clock: { now: number }, fired: ScheduleEntry[], logs: string[] = [], dues: number[] = []) {
	const timer = new FakeTimer();
	const s = new Scheduler({ directory, wallClockMs: () => clock.now, zone: () => UTC, fire: (entry, dueMs) => { fired.push(entry); dues.push(dueMs); }, log: (line) => logs.push(line), timer });
	return { s, timer };
}

const CHAT = { channel: "console", chat_id: "local" };

test("a one-shot entry fires once at its time, to its chat, and is gone afterwards", () => {
	const directory = freshDirectory("sched-once");
	const clock = { now: at("2026-12-01T10:00:00Z") };
	const fired: ScheduleEntry[] = [];
	const { s, timer } = scheduler(directory, clock, fired);
	s.start();
	const entry = s.add({ kind: "once", in_seconds: 90, text: "water the plants", chat: CHAT });
	assert.equal(entry.next_ms, clock.now + 90_000);
	assert.equal(timer.pending.length, 1);
	assert.equal(timer.pending[0].ms, 60_000, "never armed for longer than a minute");
	clock.now += 60_000;
	timer.fire();
	assert.equal(fired.length, 0);
	clock.now += 30_000;
	timer.fire();
	assert.deepEqual(fired.map((e) => [e.id, e.text, e.chat.channel, e.fired]), [["s1", "water the plants", "console", 1]]);
	assert.equal(s.list().length, 0);
	assert.equal(JSON.parse(readText(directory, "schedules.json")).entries.length, 0, "removed on flash before it fired");
	s.stop();
	assert.equal(timer.pending.length, 0);
});

test("an entry survives a restart and fires once, not twice: its next time is saved before it fires", () => {
	const directory = freshDirectory("sched-reboot");
	const clock = { now: at("2026-12-01T10:00:00Z") };
	const fired: ScheduleEntry[] = [];
	const first = scheduler(directory, clock, fired);
	first.s.start();
	first.s.add({ kind: "every", every_seconds: 3600, text: "hourly check", chat: CHAT });
	first.s.add({ kind: "once", in_seconds: 120, text: "once", chat: CHAT });
	first.s.stop(); // power off
	clock.now += 125_000;
	const second = scheduler(directory, clock, fired);
	assert.equal(second.s.list().length, 2, "both entries were kept on flash");
	second.s.start();
	assert.deepEqual(fired.map((e) => e.text), ["once"], "the missed one-shot fired at start");
	second.s.stop(); // a reboot right after the firing
	const third = scheduler(directory, clock, fired);
	third.s.start();
	assert.deepEqual(fired.map((e) => e.text), ["once"], "and not again");
	clock.now = at("2026-12-01T11:00:00Z");
	third.timer.fire();
	assert.deepEqual(fired.map((e) => e.text), ["once", "hourly check"]);
	assert.equal(third.s.list()[0].next_ms, at("2026-12-01T12:00:00Z"));
});

test("after a long power-off, missed firings collapse into one when recent, and are skipped when older than the catch-up window", () => {
	const directory = freshDirectory("sched-missed");
	const clock = { now: at("2026-12-01T10:00:00Z") };
	const fired: ScheduleEntry[] = [];
	const first = scheduler(directory, clock, fired);
	first.s.add({ kind: "every", every_seconds: 600, text: "ten minutes", chat: CHAT });
	first.s.add({ kind: "cron", cron: "0 * * * *", text: "hourly", chat: CHAT });
	clock.now += 3 * 3600_000; // 18 missed ten-minute firings, 3 missed hourly ones
	const logs: string[] = [];
	const dues: number[] = [];
	const second = scheduler(directory, clock, fired, logs, dues);
	second.s.start();
	assert.deepEqual(fired.map((e) => e.text).sort(), ["hourly", "ten minutes"], "each fires once");
	assert.deepEqual(dues.sort(), [at("2026-12-01T10:10:00Z"), at("2026-12-01T11:00:00Z")], "each told the time it was first due");
	assert.equal(lateNote(at("2026-12-01T11:00:00Z"), clock.now, UTC), "due 2026-12-01 11:00:00 (+00:00), 2 h late (missed while the board was off)");
	assert.equal(lateNote(clock.now - 30_000, clock.now, UTC), "", "a firing within the scheduler's tick is on time");
	assert.equal(second.s.list().find((e) => e.kind === "every")?.next_ms, clock.now + 600_000);
	second.s.stop();
	fired.length = 0;
	clock.now += SCHED_CATCH_UP_MS + 2 * 3600_000;
	const third = scheduler(directory, clock, fired, logs);
	third.s.start();
	assert.deepEqual(fired, [], "too late: skipped");
	assert.ok(logs.some((l) => /missed its time by \d+ s \(more than 21600 s\), so it is skipped this time/.test(l)), logs.join("\n"));
	assert.equal(third.s.list().length, 2, "repeating entries stay");
});

test("bad schedules are refused with a sentence: kinds, intervals, past times, full table, unset clock", () => {
	const directory = freshDirectory("sched-bad");
	const clock = { now: at("2026-12-01T10:00:00Z") };
	const { s } = scheduler(directory, clock, []);
	assert.throws(() => s.add({ kind: "every", every_seconds: 5, text: "x", chat: CHAT }), new RegExp(`at least ${SCHED_MIN_INTERVAL_S}`));
	assert.throws(() => s.add({ kind: "once", at: "2026-11-30T10:00", text: "x", chat: CHAT }), /has already passed/);
	assert.throws(() => s.add({ kind: "once", at: "tomorrow", text: "x", chat: CHAT }), /is not a date and time/);
	assert.throws(() => s.add({ kind: "cron", cron: "* *", text: "x", chat: CHAT }), /needs 5 fields/);
	assert.throws(() => s.add({ kind: "cron", cron: "0 0 31 2 *", text: "x", chat: CHAT }), /never fires/);
	assert.throws(() => s.add({ kind: "once", in_seconds: 10, text: "  ", chat: CHAT }), /needs a text/);
	assert.throws(() => s.add({ kind: "once", in_seconds: 10, text: "x", timezone: "Nowhere", chat: CHAT }), /not a time zone/);
	const local = s.add({ kind: "once", at: "2026-12-02T08:00", timezone: "Asia/Shanghai", text: "x", chat: CHAT });
	assert.equal(local.next_ms, at("2026-12-02T00:00:00Z"), "a local time in the given zone");
	for (let i = s.list().length; i < SCHED_ENTRIES_MAX; i++) s.add({ kind: "once", in_seconds: 100 + i, text: `t${i}`, chat: CHAT });
	assert.throws(() => s.add({ kind: "once", in_seconds: 10, text: "one more", chat: CHAT }), new RegExp(`already ${SCHED_ENTRIES_MAX} schedules`));
	const early = scheduler(freshDirectory("sched-clock"), { now: 5000 }, []);
	assert.throws(() => early.s.add({ kind: "once", in_seconds: 10, text: "x", chat: CHAT }), /clock is not set yet/);
});

test("a damaged schedules file is kept aside and the board starts without schedules", () => {
	const directory = freshDirectory("sched-damaged");
	writeRaw(directory, "schedules.json", "{not json");
	const logs: string[] = [];
	const { s } = scheduler(directory, { now: at("2026-12-01T10:00:00Z") }, [], logs);
	assert.equal(s.list().length, 0);
	assert.ok(logs.some((l) => /schedules.json is damaged .* kept as schedules.json.bad/.test(l)), logs.join("\n"));
});

test("the schedule tools create, list and delete entries for the asking chat, and refuse bad arguments with a sentence", async () => {
	const directory = freshDirectory("sched-tools");
	const clock = { now: at("2026-12-01T10:00:00Z") };
	const { s } = scheduler(directory, clock, []);
	const tools = scheduleTools(s);
	const made = await callTool(tools, "schedule_create", { kind: "cron", cron: "30 7 * * *", text: "good morning" });
	assert.match(made, /^created s1: cron "30 7 \* \* \*" \(UTC\), next 2026-12-02 07:30:00 \(\+00:00\), to console:, fired 0x: good morning$/);
	assert.match(await callTool(tools, "schedule_list", {}), /^s1: cron/);
	await assert.rejects(() => callTool(tools, "schedule_create", { kind: "every", text: "x" }), /every_seconds/);
	await assert.rejects(() => callTool(tools, "schedule_delete", { id: "s9" }), /there is no schedule s9/);
	assert.equal(await callTool(tools, "schedule_delete", { id: "s1" }), "deleted s1");
	assert.equal(await callTool(tools, "schedule_list", {}), "no schedules");
});

test("cron add|list|remove on the console", async () => {
	const directory = freshDirectory("sched-console");
	const { s } = scheduler(directory, { now: at("2026-12-01T10:00:00Z") }, []);
	const commands = cronCommands(s, CHAT);
	const run = async (name: string, args: string) => {
		const out = new Lines();
		await commands.find((c) => c.name === name)!.run(args, out);
		return out.all;
	};
	assert.match((await run("cron add", "every 3600 check the soil"))[0], /^created s1: every 3600 s/);
	assert.match((await run("cron add", `cron "0 8 * * 1-5" weekday hello`))[0], /^created s2: cron "0 8 \* \* 1-5"/);
	assert.match((await run("cron add", "at 2026-12-24T18:00 presents"))[0], /^created s3: once, next 2026-12-24 18:00:00/);
	assert.equal((await run("cron list", "")).length, 3);
	assert.deepEqual(await run("cron remove", "s2"), ["removed s2"]);
	await assert.rejects(async () => run("cron remove", "s2"), /there is no schedule s2/);
	await assert.rejects(async () => run("cron add", "whenever x"), /wrong arguments/);
});
