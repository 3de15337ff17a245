// caps/script_tools: the stored scripts' tools and the `script` console
// command (issue 28). Every tool is restricted (the owner's scripts are the
// owner's: SPEC §7 privacy), and creating is the owner's decision: script_save,
// even from the owner's own request, saves a proposal that does not run until
// the owner confirms it on the console (`script confirm NAME`) — the model may
// propose, a person confirms. Replacing a script makes it a proposal again.
// Schedules that run a script are scheduler entries naming it (script_save's
// cron / every_seconds, `script on NAME cron "..."`), removed with the script.
import { SCHED_MIN_INTERVAL_S, SCRIPTS_MAX, SCRIPT_DESCRIPTION_MAX_CHARS, SCRIPT_FAILURES_DISABLE, SCRIPT_NAME_MAX_CHARS, SCRIPT_SOURCE_MAX_CHARS, SCRIPT_TRIGGERS_MAX } from "budgets";
import type { Automations } from "caps/automations";
import { GRANTS, type Grant } from "caps/script";
import { parseTrigger, triggerText, type ChatRef, type ScriptStore, type StoredScript, type Trigger } from "caps/scripts";
import type { Capability } from "caps/types";
import { UsageError, words, type Command, type Output } from "console/types";
import type { JsonObject } from "llm/types";
import { parseCron } from "sched/cron";
import type { Scheduler } from "sched/scheduler";

export interface ScriptToolsOptions {
	store: ScriptStore;
	automations: Automations;
	scheduler: Scheduler;
	/** Monotonic milliseconds (a run by hand's trigger time). */
	now(): number;
}

const NAME = { type: "string", minLength: 3, maxLength: SCRIPT_NAME_MAX_CHARS } as const;
const DEFAULT_GRANTS: Grant[] = ["time", "math"];

function stringList(args: JsonObject, name: string): string[] | undefined {
	const value = args[name];
	return Array.isArray(value) ? value.map(String) : undefined;
}

/** A schedule for a script: cron fields, an interval, or once in some seconds. */
function addSchedule(scheduler: Scheduler, name: string, chat: ChatRef, when: { cron?: string; every_seconds?: number; in_seconds?: number }): string {
	const entry = when.cron !== undefined
		? scheduler.add({ kind: "cron", cron: when.cron, text: "", script: name, chat })
		: when.in_seconds !== undefined
			? scheduler.add({ kind: "once", in_seconds: when.in_seconds, text: "", script: name, chat })
			: scheduler.add({ kind: "every", every_seconds: when.every_seconds, text: "", script: name, chat });
	return scheduler.describe(entry);
}

/** The whole of a script, for script_show and `script show`. */
export function describeScript(script: StoredScript, automations: Automations): string[] {
	return [
		automations.line(script),
		`for: ${script.description}`,
		`grants: ${script.grants.length ? script.grants.join(", ") : "none"}; owned by ${script.chat.channel}:${script.chat.chat_id}`,
		"source:",
		...script.source.split("\n").map((line) => `  ${line}`),
	];
}

export function scriptTools(options: ScriptToolsOptions): Capability[] {
	const { store, automations, scheduler } = options;
	const named = (args: JsonObject): StoredScript => {
		const script = store.get(String(args.name));
		if (!script) throw new Error(`there is no stored script ${args.name}; script_list shows them`);
		return script;
	};
	return [
		{
			group: "script",
			hidden: true,
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "script_save",
					description: `Propose a stored script (an automation) that runs on the board without you: JavaScript with the globals of run_script plus trigger (what fired it), notify(text) (a message to this chat) and ask(text) (a request to you, an LLM call). It runs on its triggers (on: "boot", "router", "gpio PIN rising|falling|both") and schedules (cron, every_seconds) once the owner confirms it on the console with: script confirm NAME. Bounded like run_script; disabled after ${SCRIPT_FAILURES_DISABLE} failures in a row. At most ${SCRIPTS_MAX}; saving a name again replaces it (a proposal again).`,
					parameters: {
						type: "object",
						properties: {
							name: { ...NAME, description: "lowercase, e.g. door_bell" },
							description: { type: "string", minLength: 1, maxLength: SCRIPT_DESCRIPTION_MAX_CHARS, description: "what it is for" },
							source: { type: "string", minLength: 1, maxLength: SCRIPT_SOURCE_MAX_CHARS },
							grants: { type: "array", maxItems: GRANTS.length, items: { type: "string", enum: [...GRANTS] }, description: `default ${DEFAULT_GRANTS.join(", ")}` },
							on: { type: "array", maxItems: SCRIPT_TRIGGERS_MAX, items: { type: "string", minLength: 4, maxLength: 24 }, description: "boot, router, gpio 5 rising" },
							cron: { type: "string", minLength: 9, maxLength: 100, description: "also run on this schedule: minute hour day month weekday" },
							every_seconds: { type: "integer", minimum: SCHED_MIN_INTERVAL_S, maximum: 366 * 86_400, description: "also run every this many seconds" },
						},
						required: ["name", "description", "source"],
						additionalProperties: false,
					},
				},
			},
			run(args, context) {
				const chat: ChatRef = context.request.target ?? { channel: context.request.source.channel, chat_id: context.request.source.chat_id };
				const on = (stringList(args, "on") ?? []).map(parseTrigger);
				const grants = (stringList(args, "grants") ?? DEFAULT_GRANTS) as Grant[];
				const name = String(args.name);
				const schedule = typeof args.cron === "string" ? { cron: args.cron } : typeof args.every_seconds === "number" ? { every_seconds: args.every_seconds } : undefined;
				if (schedule?.cron !== undefined) parseCron(schedule.cron); // a bad expression is refused before anything is saved
				store.save({ name, description: String(args.description), source: String(args.source), grants, on, chat, state: "proposed" });
				automations.reset(name);
				const lines = [`saved ${name} as a proposal: it does not run until the owner confirms it on the console with: script confirm ${name}`];
				if (schedule) lines.push(`schedule: ${addSchedule(scheduler, name, chat, schedule)}`);
				return lines.join("\n");
			},
		},
		{
			group: "script",
			hidden: true,
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "script_list",
					description: "The stored scripts: state (proposed, enabled, disabled), triggers, runs, last result.",
					parameters: { type: "object", properties: {}, additionalProperties: false },
				},
			},
			run() {
				const lines = automations.lines();
				return lines.length ? lines.join("\n") : "no stored scripts";
			},
		},
		{
			group: "script",
			hidden: true,
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "script_show",
					description: "One stored script whole: its state, triggers, counts, grants and source.",
					parameters: { type: "object", properties: { name: NAME }, required: ["name"], additionalProperties: false },
				},
			},
			run(args) {
				return describeScript(named(args), automations).join("\n");
			},
		},
		{
			group: "script",
			hidden: true,
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "script_delete",
					description: "Delete a stored script and the schedules that run it.",
					parameters: { type: "object", properties: { name: NAME }, required: ["name"], additionalProperties: false },
				},
			},
			run(args) {
				const script = named(args);
				return deleteScript(options, script.name);
			},
		},
		{
			group: "script",
			hidden: true,
			restricted: true,
			runsAlone: true,
			definition: {
				type: "function",
				function: {
					name: "script_run",
					description: "Run an enabled stored script now (its trigger is {kind: \"manual\"}); returns its result or why it failed.",
					parameters: { type: "object", properties: { name: NAME }, required: ["name"], additionalProperties: false },
				},
			},
			run(args) {
				const outcome = automations.run(named(args).name, { kind: "manual" }, options.now());
				if (!outcome.ok) throw new Error(outcome.text);
				return outcome.text;
			},
		},
	];
}

function deleteScript(options: ScriptToolsOptions, name: string): string {
	const schedules = options.scheduler.removeScript(name);
	options.store.remove(name);
	options.automations.reset(name);
	return `deleted ${name}${schedules ? ` and ${schedules} schedule${schedules > 1 ? "s" : ""} that ran it` : ""}`;
}

/**
 * `script` (the list), `script show|confirm|enable|disable|delete|run NAME`,
 * `script on NAME TRIGGER` (boot, router, gpio PIN EDGE, cron "M H D MON WD",
 * every SECONDS, in SECONDS: once) and `script off NAME TRIGGER|SCHEDULE_ID`. The console is the
 * owner, so `confirm` here is the owner's.
 */
export function scriptCommands(options: ScriptToolsOptions): Command[] {
	const { store, automations, scheduler } = options;
	const named = (args: string): StoredScript => {
		const parts = words(args);
		if (parts.length !== 1) throw new UsageError();
		const script = store.get(parts[0]);
		if (!script) throw new Error(`there is no stored script ${parts[0]}; script lists them`);
		return script;
	};
	const print = (out: Output, lines: string[]) => { for (const line of lines) out.line(line); };
	return [
		{
			name: "script",
			usage: "",
			help: "the stored scripts: state, triggers, runs, last result",
			run(_args, out) {
				const lines = automations.lines();
				print(out, lines.length ? lines : ["no stored scripts (the agent proposes them with script_save; script confirm NAME turns one on)"]);
			},
		},
		{
			name: "script show",
			usage: "NAME",
			help: "one stored script whole",
			run(args, out) { print(out, describeScript(named(args), automations)); },
		},
		{
			name: "script confirm",
			usage: "NAME",
			help: "turn on a script the agent proposed (read it with script show first)",
			run(args, out) {
				const script = named(args);
				store.setState(script.name, "enabled");
				automations.reset(script.name);
				out.line(`${script.name} is enabled: it runs on ${automations.triggers(script).join(", ") || "script run only"}`);
			},
		},
		{
			name: "script enable",
			usage: "NAME",
			help: "turn a disabled script on again",
			run(args, out) {
				const script = named(args);
				if (script.state === "proposed") throw new Error(`${script.name} is a proposal; read it with script show ${script.name}, then: script confirm ${script.name}`);
				store.setState(script.name, "enabled");
				automations.reset(script.name);
				out.line(`${script.name} is enabled`);
			},
		},
		{
			name: "script disable",
			usage: "NAME",
			help: "stop a script from running on its triggers",
			run(args, out) {
				const script = named(args);
				store.setState(script.name, "disabled", "by the owner");
				out.line(`${script.name} is disabled`);
			},
		},
		{
			name: "script delete",
			usage: "NAME",
			help: "delete a stored script and its schedules",
			run(args, out) { out.line(deleteScript(options, named(args).name)); },
		},
		{
			name: "script run",
			usage: "NAME",
			help: "run an enabled script now",
			run(args, out) {
				const outcome = automations.run(named(args).name, { kind: "manual" }, options.now());
				if (!outcome.ok) throw new Error(outcome.text);
				out.line(outcome.text);
			},
		},
		{
			name: "script on",
			usage: "NAME boot|router|gpio PIN rising|falling|both|cron \"M H D MON WD\"|every SECONDS|in SECONDS",
			help: "add a trigger to a script",
			run(args, out) {
				const match = /^(\S+)\s+(.+)$/s.exec(args.trim());
				if (!match) throw new UsageError();
				const script = named(match[1]);
				const what = match[2].trim();
				const cron = /^cron\s+"([^"]+)"$/.exec(what);
				const timed = /^(every|in)\s+(\d{1,8})$/.exec(what);
				if (cron || timed) {
					const when = cron ? { cron: cron[1] } : timed![1] === "every" ? { every_seconds: Number(timed![2]) } : { in_seconds: Number(timed![2]) };
					out.line(`created ${addSchedule(scheduler, script.name, script.chat, when)}`);
					return;
				}
				const trigger = parseTrigger(what);
				if (script.on.some((t) => triggerText(t) === triggerText(trigger))) throw new Error(`${script.name} already runs on ${triggerText(trigger)}`);
				saveTriggers(store, script, [...script.on, trigger]);
				out.line(`${script.name} now runs on ${automations.triggers(store.get(script.name)!).join(", ")}`);
			},
		},
		{
			name: "script off",
			usage: "NAME TRIGGER|SCHEDULE_ID",
			help: "remove a trigger (or a schedule, by its id) from a script",
			run(args, out) {
				const match = /^(\S+)\s+(.+)$/s.exec(args.trim());
				if (!match) throw new UsageError();
				const script = named(match[1]);
				const what = match[2].trim();
				const entry = scheduler.list().find((e) => e.id === what && e.script === script.name);
				if (entry) {
					scheduler.remove(entry.id);
					out.line(`removed the schedule ${entry.id} of ${script.name}`);
					return;
				}
				const trigger = parseTrigger(what);
				const kept = script.on.filter((t) => triggerText(t) !== triggerText(trigger));
				if (kept.length === script.on.length) throw new Error(`${script.name} does not run on ${triggerText(trigger)}`);
				saveTriggers(store, script, kept);
				out.line(`${script.name} no longer runs on ${triggerText(trigger)}`);
			},
		},
	];
}

function saveTriggers(store: ScriptStore, script: StoredScript, on: Trigger[]): void {
	const state = script.state;
	store.save({ name: script.name, description: script.description, source: script.source, grants: script.grants, on, chat: script.chat, state });
	if (state === "disabled") store.setState(script.name, "disabled", script.note);
}
