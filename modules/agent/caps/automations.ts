// caps/automations: runs the owner's stored scripts (caps/scripts) on triggers
// that need no LLM (issue 28): a schedule naming the script (sched/scheduler
// fires it), a GPIO edge (caps/gpio watch: Digital onReadable on the board, the
// simulated bank on lin), a router rule (the port's run_script, when the
// script has the router trigger), boot (start), or by hand (`script run`,
// script_run). Only enabled scripts run; a proposed one waits for the owner.
//
// A run is caps/script's runScript: the script's own grants, bounded by
// host/sandbox (steps, memory, stack; its promise jobs inside the same bounds),
// plus three globals: `trigger` (what fired it: {kind, pin, level} /
// {kind: "cron", schedule} / {kind: "router", text, channel, chat_id} /
// {kind: "boot"} / {kind: "manual"}), `notify(text)` (a message to the chat
// that owns the script; at most SCRIPT_NOTIFIES_PER_RUN a run, and
// SCRIPT_NOTIFIES_PER_MINUTE to one chat from all scripts: past either it
// returns false and the message is dropped and counted) and `ask(text)` (a
// request to the agent, answered in that chat: an LLM call, at most
// SCRIPT_ASKS_PER_HOUR per script, counted). What notify and ask queue goes out
// after the run, and only when the run succeeded: a failed run is reported
// instead.
//
// Failures (an error, or a bound hit): the first of a streak is reported once
// to the script's chat; after SCRIPT_FAILURES_DISABLE in a row the script is
// disabled (saved, so a reboot keeps it off) and the chat is told how to turn
// it on again. A success ends the streak. A trigger past
// SCRIPT_RUNS_PER_MINUTE runs of one script (a bouncing pin) is skipped and
// counted. Counts and the last run are kept in memory (a reboot starts them
// again); `status` and `script` show them.
import { SCRIPT_ASKS_PER_HOUR, SCRIPT_ASK_SUBMIT_TIMEOUT_MS, SCRIPT_FAILURES_DISABLE, SCRIPT_NOTIFIES_PER_MINUTE, SCRIPT_NOTIFIES_PER_RUN, SCRIPT_NOTIFY_MAX_CHARS, SCRIPT_RUNS_PER_MINUTE } from "budgets";
import type { GpioBank, PinWatch } from "caps/gpio";
import { runScript, type ScriptDeps } from "caps/script";
import { triggerText, type ChatRef, type ScriptStore, type StoredScript } from "caps/scripts";
import { Channel, RequestFlag, type AgentRequest, type OutEvent } from "core/types";
import type { ScheduleEntry, Scheduler } from "sched/scheduler";
import { formatLocal } from "util/tz";
import { messageOf } from "util/errors";
import { clip, oneLine } from "util/text";

/** What fired a run, as the script sees it in `trigger`. */
export type TriggerData =
	| { kind: "boot" }
	| { kind: "manual" }
	| { kind: "cron"; schedule: string }
	| { kind: "router"; text: string; channel: string; chat_id: string }
	| { kind: "gpio"; pin: number; level: 0 | 1 };

export interface RunOutcome {
	ok: boolean;
	/** The script's result, or the sentence why it did not run or failed. */
	text: string;
}

/** One run's figures (for the bench: trigger to the script's first step). */
export interface RunRecord {
	name: string;
	trigger: TriggerData["kind"];
	ok: boolean;
	/** Monotonic ms: when the trigger reached the firmware, and when the script took its first step. */
	triggered_ms: number;
	started_ms: number;
	/** The whole run, ms. */
	run_ms: number;
}

interface Stats {
	runs: number;
	failed: number;
	skipped: number;
	streak: number;
	notified: number;
	dropped: number;
	asked: number;
	/** Run start times (monotonic) in the last minute, and ask times in the last hour. */
	recent: number[];
	asks: number[];
	last?: { wall_ms: number; trigger: string; ok: boolean; text: string; run_ms: number; latency_ms: number };
}

export interface AutomationsOptions {
	store: ScriptStore;
	scheduler: Scheduler;
	gpio: GpioBank;
	deps: ScriptDeps;
	/** Monotonic milliseconds. */
	now(): number;
	/** Where notify() messages and failure reports go (the core's publish: an out_message to the chat). */
	publish(event: OutEvent): void;
	/** The session a chat talks in (ask()'s requests). */
	sessionFor(chat: ChatRef): string;
	log(line: string): void;
	onRun?(record: RunRecord): void;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

function within(times: number[], now: number, windowMs: number): number[] {
	return times.filter((t) => now - t < windowMs);
}

/** text on one line, at most max characters. */
function shortLine(text: string, max: number): string {
	return clip(oneLine(text), max);
}

export class Automations {
	readonly #o: AutomationsOptions;
	readonly #stats = new Map<string, Stats>();
	/** Notify times (monotonic) per chat in the last minute, from every script. */
	readonly #notifies = new Map<string, number[]>();
	readonly #watches: PinWatch[] = [];
	/** A trigger that could not be armed, per script: shown by status and `script`. */
	readonly #problems = new Map<string, string[]>();
	#submit: ((request: AgentRequest, timeoutMs: number) => Promise<unknown>) | undefined;
	#running = false;

	constructor(options: AutomationsOptions) {
		this.#o = options;
		options.store.onChange = () => this.arm();
	}

	/** Arms the triggers and runs the boot scripts; ask() submits through submit from now on. */
	start(submit: (request: AgentRequest, timeoutMs: number) => Promise<unknown>): void {
		this.#submit = submit;
		this.#running = true;
		this.arm();
		for (const script of this.#o.store.list())
			if (script.state === "enabled" && script.on.some((t) => t.kind === "boot")) this.run(script.name, { kind: "boot" }, this.#o.now());
	}

	stop(): void {
		this.#running = false;
		this.#disarm();
	}

	/** Watches the pins of the enabled scripts' gpio triggers (after every change to the scripts). */
	arm(): void {
		this.#disarm();
		this.#problems.clear();
		if (!this.#running) return;
		for (const script of this.#o.store.list()) {
			if (script.state !== "enabled") continue;
			for (const trigger of script.on) {
				if (trigger.kind !== "gpio") continue;
				try {
					this.#watches.push(this.#o.gpio.watch(trigger.pin, trigger.edge, (level) => this.run(script.name, { kind: "gpio", pin: trigger.pin, level }, this.#o.now())));
				} catch (error) {
					const problem = `${triggerText(trigger)} is not armed: ${messageOf(error)}`;
					this.#problems.set(script.name, [...(this.#problems.get(script.name) ?? []), problem]);
					this.#o.log(`automations: ${script.name}: ${problem}`);
				}
			}
		}
	}

	#disarm(): void {
		for (const watch of this.#watches.splice(0)) watch.close();
	}

	/** A schedule naming a script fired (sched/scheduler). */
	runScheduled(entry: ScheduleEntry): void {
		if (!entry.script) return;
		this.run(entry.script, { kind: "cron", schedule: entry.id }, this.#o.now());
	}

	/** A router rule names the script: it runs only when its triggers include router. */
	runFromRouter(name: string, data: { text: string; channel: string; chat_id: string }): RunOutcome {
		const script = this.#o.store.get(name);
		if (script && !script.on.some((t) => t.kind === "router"))
			return { ok: false, text: `the script ${name} is not to be run by router rules; the owner can allow it with: script on ${name} router` };
		return this.run(name, { kind: "router", text: data.text, channel: data.channel, chat_id: data.chat_id }, this.#o.now());
	}

	/** Runs an enabled script now; never throws. triggeredMs: when the trigger reached the firmware (monotonic). */
	run(name: string, trigger: TriggerData, triggeredMs: number): RunOutcome {
		const script = this.#o.store.get(name);
		if (!script) return { ok: false, text: `there is no stored script ${name}; script_list shows them` };
		if (script.state !== "enabled")
			return { ok: false, text: script.state === "proposed" ? `the script ${name} is a proposal: the owner confirms it with: script confirm ${name}` : `the script ${name} is disabled (${script.note || "by the owner"}); the owner turns it on with: script enable ${name}` };
		const stats = this.#statsOf(name);
		const now = this.#o.now();
		stats.recent = within(stats.recent, now, MINUTE_MS);
		if (stats.recent.length >= SCRIPT_RUNS_PER_MINUTE) {
			stats.skipped++;
			return { ok: false, text: `the script ${name} ran ${SCRIPT_RUNS_PER_MINUTE} times in the last minute, the most it may; this trigger was skipped` };
		}
		stats.recent.push(now);
		const notes: string[] = [];
		const asks: string[] = [];
		const extra = {
			trigger: Object.freeze({ ...trigger }),
			notify: Object.freeze((text: unknown) => {
				if (notes.length >= SCRIPT_NOTIFIES_PER_RUN) return false;
				notes.push(shortLine(String(text), SCRIPT_NOTIFY_MAX_CHARS));
				return true;
			}),
			ask: Object.freeze((text: unknown) => {
				if (asks.length >= 1 || within(stats.asks, this.#o.now(), HOUR_MS).length >= SCRIPT_ASKS_PER_HOUR) return false;
				asks.push(shortLine(String(text), SCRIPT_NOTIFY_MAX_CHARS));
				return true;
			}),
		};
		let started = now;
		let outcome: RunOutcome;
		try {
			outcome = { ok: true, text: runScript(script.source, this.#o.deps, script.grants, extra, () => { started = this.#o.now(); }, (fix) => `it was saved without that grant: save it again with grants ${fix}`) };
		} catch (error) {
			outcome = { ok: false, text: messageOf(error) };
		}
		const ended = this.#o.now();
		stats.runs++;
		stats.last = { wall_ms: this.#o.deps.wallClockMs(), trigger: describeTrigger(trigger), ok: outcome.ok, text: outcome.text, run_ms: ended - started, latency_ms: started - triggeredMs };
		this.#o.onRun?.({ name, trigger: trigger.kind, ok: outcome.ok, triggered_ms: triggeredMs, started_ms: started, run_ms: ended - started });
		if (outcome.ok) {
			stats.streak = 0;
			for (const note of notes) this.#notify(script, stats, note);
			for (const text of asks) this.#ask(script, stats, text);
		} else this.#failed(script, stats, trigger, outcome.text);
		return outcome;
	}

	#failed(script: StoredScript, stats: Stats, trigger: TriggerData, why: string): void {
		stats.failed++;
		stats.streak++;
		this.#o.log(`automations: ${script.name} failed (${describeTrigger(trigger)}), ${stats.streak} in a row: ${why}`);
		let report: string | undefined;
		if (stats.streak >= SCRIPT_FAILURES_DISABLE) {
			const note = `${SCRIPT_FAILURES_DISABLE} failures in a row, the last: ${shortLine(why, 200)}`;
			try {
				this.#o.store.setState(script.name, "disabled", note);
				report = `The script ${script.name} failed ${SCRIPT_FAILURES_DISABLE} times in a row, so it is disabled. The last failure: ${why}. Turn it on again with: script enable ${script.name}`;
			} catch (error) {
				this.#o.log(`automations: ${script.name} could not be disabled: ${messageOf(error)}`);
			}
		} else if (stats.streak === 1) report = `The script ${script.name} failed (${describeTrigger(trigger)}): ${why}. It stays on; after ${SCRIPT_FAILURES_DISABLE} failures in a row it is disabled.`;
		if (report) this.#send(script.chat, report);
	}

	#notify(script: StoredScript, stats: Stats, text: string): void {
		const key = `${script.chat.channel}\n${script.chat.chat_id}`;
		const now = this.#o.now();
		const times = within(this.#notifies.get(key) ?? [], now, MINUTE_MS);
		if (times.length >= SCRIPT_NOTIFIES_PER_MINUTE) {
			stats.dropped++;
			this.#notifies.set(key, times);
			return;
		}
		times.push(now);
		this.#notifies.set(key, times);
		stats.notified++;
		this.#send(script.chat, text);
	}

	#ask(script: StoredScript, stats: Stats, text: string): void {
		const submit = this.#submit;
		if (!submit) return;
		stats.asks = [...within(stats.asks, this.#o.now(), HOUR_MS), this.#o.now()];
		stats.asked++;
		const request: AgentRequest = {
			request_id: 0,
			flags: RequestFlag.PUBLISH_OUT_MESSAGE | RequestFlag.SKIP_RESPONSE_QUEUE,
			session_id: this.#o.sessionFor(script.chat),
			user_text: `[script ${script.name} asks] ${text}`,
			source: { channel: Channel.CRON, chat_id: script.chat.chat_id, sender_id: script.name, message_id: "", cap: "script" },
			target: { channel: script.chat.channel, chat_id: script.chat.chat_id },
			role: "cron",
		};
		submit(request, SCRIPT_ASK_SUBMIT_TIMEOUT_MS).catch((error) => this.#o.log(`automations: ${script.name}'s ask was not submitted: ${messageOf(error)}`));
	}

	#send(chat: ChatRef, text: string): void {
		try {
			this.#o.publish({ type: "out_message", channel: chat.channel, chat_id: chat.chat_id, text, request_id: 0, correlation_id: "" });
		} catch (error) {
			this.#o.log(`automations: a message to ${chat.channel}:${chat.chat_id} was not sent: ${messageOf(error)}`);
		}
	}

	#statsOf(name: string): Stats {
		let stats = this.#stats.get(name);
		if (!stats) {
			stats = { runs: 0, failed: 0, skipped: 0, streak: 0, notified: 0, dropped: 0, asked: 0, recent: [], asks: [] };
			this.#stats.set(name, stats);
		}
		return stats;
	}

	/** Forgets a script's counts (it was deleted, or turned on again). */
	reset(name: string): void {
		this.#stats.delete(name);
	}

	/** The script's triggers: its own and the schedules naming it. */
	triggers(script: StoredScript): string[] {
		const own = script.on.map(triggerText);
		const schedules = this.#o.scheduler.list().filter((e) => e.script === script.name).map((e) => e.kind === "cron" ? `cron "${e.spec}" (${e.id})` : e.kind === "every" ? `every ${e.spec} s (${e.id})` : `once (${e.id})`);
		return [...own, ...schedules];
	}

	/** One line per stored script: state, triggers, counts, last run. */
	lines(): string[] {
		return this.#o.store.list().map((script) => this.line(script));
	}

	line(script: StoredScript): string {
		const triggers = this.triggers(script);
		const s = this.#stats.get(script.name);
		const counts = s ? `runs ${s.runs} (${s.failed} failed, ${s.skipped} skipped), notified ${s.notified}${s.dropped ? ` (${s.dropped} dropped)` : ""}, asked ${s.asked}` : "no runs since boot";
		const last = s?.last ? `; last ${formatLocal(s.last.wall_ms, this.#o.deps.zone())} ${s.last.trigger}: ${s.last.ok ? "ok" : "failed"} in ${s.last.run_ms.toFixed(1)} ms: ${shortLine(s.last.text, 80)}` : "";
		const problems = this.#problems.get(script.name);
		const state = script.state === "disabled" && script.note ? `disabled (${shortLine(script.note, 120)})` : script.state;
		return `script ${script.name}: ${state}, on ${triggers.length ? triggers.join(", ") : "nothing (run by hand)"}; ${counts}${last}${problems ? `; ${problems.join("; ")}` : ""}`;
	}
}

function describeTrigger(trigger: TriggerData): string {
	switch (trigger.kind) {
		case "gpio": return `gpio ${trigger.pin} went ${trigger.level}`;
		case "cron": return `schedule ${trigger.schedule}`;
		case "router": return `router rule, ${trigger.channel}:${trigger.chat_id}`;
		default: return trigger.kind;
	}
}
