// sched/tools: the scheduler's tools (schedule_create, schedule_list,
// schedule_delete) and its console commands (cron list|add|remove). Creating
// and deleting are restricted (owner only), and caps/policy refuses both to a
// cron request, so a schedule cannot breed schedules. The entry's chat is the
// request's source chat: the answer of each firing goes back there.
import { SCHED_ENTRIES_MAX, SCHED_MIN_INTERVAL_S, SCHED_TEXT_MAX_CHARS } from "budgets";
import type { Capability } from "caps/types";
import { UsageError, type Command } from "console/types";
import type { JsonObject } from "llm/types";
import type { ChatRef, NewSchedule, Scheduler } from "sched/scheduler";

function optionalNumber(args: JsonObject, name: string): number | undefined {
	return typeof args[name] === "number" ? (args[name] as number) : undefined;
}

function optionalString(args: JsonObject, name: string): string | undefined {
	return typeof args[name] === "string" ? (args[name] as string) : undefined;
}

export function scheduleTools(scheduler: Scheduler): Capability[] {
	return [
		{
			group: "sched",
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "schedule_create",
					description: `Schedule a request to yourself: kind "cron" (5 fields, e.g. "0 8 * * 1-5"), "every" (every_seconds, at least ${SCHED_MIN_INTERVAL_S}) or "once" (at a local date-time, or in_seconds). When it fires you get text as a message and your answer goes to this chat. At most ${SCHED_ENTRIES_MAX} schedules.`,
					parameters: {
						type: "object",
						properties: {
							kind: { type: "string", enum: ["cron", "every", "once"] },
							cron: { type: "string", minLength: 9, maxLength: 100, description: "minute hour day month weekday" },
							every_seconds: { type: "integer", minimum: SCHED_MIN_INTERVAL_S, maximum: 366 * 86_400 },
							at: { type: "string", minLength: 16, maxLength: 25, description: "2026-12-24T18:00 (local time in timezone)" },
							in_seconds: { type: "integer", minimum: 1, maximum: 366 * 86_400 },
							text: { type: "string", minLength: 1, maxLength: SCHED_TEXT_MAX_CHARS, description: "What to do when it fires, as a request to yourself." },
							timezone: { type: "string", minLength: 1, maxLength: 64, description: "Default: the board's time zone." },
						},
						required: ["kind", "text"],
						additionalProperties: false,
					},
				},
			},
			run(args, context) {
				const chat: ChatRef = context.request.target ?? { channel: context.request.source.channel, chat_id: context.request.source.chat_id };
				const entry = scheduler.add({
					kind: args.kind as NewSchedule["kind"],
					cron: optionalString(args, "cron"),
					every_seconds: optionalNumber(args, "every_seconds"),
					at: optionalString(args, "at"),
					in_seconds: optionalNumber(args, "in_seconds"),
					text: String(args.text),
					timezone: optionalString(args, "timezone"),
					chat,
				});
				return `created ${scheduler.describe(entry)}`;
			},
		},
		{
			group: "sched",
			definition: {
				type: "function",
				function: {
					name: "schedule_list",
					description: "The board's schedules: id, when, next time, the chat it answers, its text.",
					parameters: { type: "object", properties: {}, additionalProperties: false },
				},
			},
			run() {
				const entries = scheduler.list();
				return entries.length ? entries.map((entry) => scheduler.describe(entry)).join("\n") : "no schedules";
			},
		},
		{
			group: "sched",
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "schedule_delete",
					description: "Delete a schedule by its id (s1, s2, ...; see schedule_list).",
					parameters: {
						type: "object",
						properties: { id: { type: "string", minLength: 2, maxLength: 12 } },
						required: ["id"],
						additionalProperties: false,
					},
				},
			},
			run(args) {
				const id = String(args.id);
				if (!scheduler.remove(id)) throw new Error(`there is no schedule ${id}; schedule_list shows the ids`);
				return `deleted ${id}`;
			},
		},
	];
}

/**
 * `cron list`, `cron add WHEN TEXT`, `cron remove ID`; WHEN is `every SECONDS`,
 * `in SECONDS`, `at YYYY-MM-DDTHH:MM` or `cron "M H D MON WD"`. Entries made here
 * answer in chat (the console's).
 */
export function cronCommands(scheduler: Scheduler, chat: ChatRef): Command[] {
	return [
		{
			name: "cron list",
			usage: "",
			help: "list the schedules",
			run(_args, out) {
				const entries = scheduler.list();
				if (!entries.length) out.line("no schedules (cron add makes one)");
				for (const entry of entries) out.line(scheduler.describe(entry));
			},
		},
		{
			name: "cron add",
			usage: "every SECONDS TEXT | in SECONDS TEXT | at YYYY-MM-DDTHH:MM TEXT | cron \"M H D MON WD\" TEXT",
			help: "schedule a request to the agent; its answer is printed here",
			run(args, out) {
				const request = parseCronAdd(args, chat);
				const entry = scheduler.add(request);
				out.line(`created ${scheduler.describe(entry)}`);
			},
		},
		{
			name: "cron remove",
			usage: "ID",
			help: "delete a schedule",
			run(args, out) {
				if (!/^\S+$/.test(args)) throw new UsageError();
				if (!scheduler.remove(args)) throw new Error(`there is no schedule ${args}; cron list shows the ids`);
				out.line(`removed ${args}`);
			},
		},
	];
}

function parseCronAdd(args: string, chat: ChatRef): NewSchedule {
	const quoted = /^cron\s+"([^"]+)"\s+(.+)$/s.exec(args);
	if (quoted) return { kind: "cron", cron: quoted[1], text: quoted[2], chat };
	const match = /^(every|in|at)\s+(\S+)\s+(.+)$/s.exec(args);
	if (!match) throw new UsageError();
	const [, word, when, text] = match;
	if (word === "at") return { kind: "once", at: when, text, chat };
	if (!/^\d+$/.test(when)) throw new Error(`"${when}" is not a number of seconds`);
	return word === "every" ? { kind: "every", every_seconds: Number(when), text, chat } : { kind: "once", in_seconds: Number(when), text, chat };
}
