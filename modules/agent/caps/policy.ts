// caps/policy: who may run which tool, and what of the owner's own data a
// request's prompt carries: one table, here, that the call path and the prompt's
// providers only look up (no tool name is special-cased in the loop). The docs'
// copies (docs/tools.md "Roles", modules/agent/caps/NOTES.md) are checked
// against it by test/e2e/policy.test.mjs, through `tools list`.
//
// The roles (SPEC §7, issues 14 and 25):
// - owner: the console and the owner's chat: every tool.
// - user: another paired chat: the board's shared tools (time, pins and buses
//   to read, the workspace to read, skills, images); never the owner's data: memory,
//   profile, schedules and macros are neither read nor written from a user's chat.
// - cron: a request fired by a schedule the owner made: it acts for the owner,
//   so it reads the owner's data, may drive pins and buses and keep its log in
//   the workspace (a watering routine is what it is for); it never writes memory or the profile, and never creates or
//   deletes schedules, so a schedule cannot breed schedules (zclaw's cron guard).
// - subagent: a helper the owner's request spawned: reads as the owner does;
//   never writes the owner's data, never spawns another subagent.
// A request's role comes with the request (channels set it from pairing); when it
// is missing it follows the source channel: console -> owner, cron -> cron,
// subagent -> subagent, anything else -> user. The channels "cron" and "subagent"
// always mean their role, whatever the request claims.
//
// Tools the table does not name (macro tools are by their group; tools made in
// tests by their flags): `restricted` is the owner's (and `cron`'s where marked),
// the rest every role's.
import { Channel, type AgentRequest } from "core/types";
import { ROLES, type Capability, type Role } from "caps/types";

type Who = readonly Role[];
const ALL: Who = ROLES;
const OWNER: Who = Object.freeze(["owner"]);
/** The owner and what acts for the owner (its schedules, its subagents). */
const OWNER_SIDE: Who = Object.freeze(["owner", "cron", "subagent"]);
const OWNER_AND_SCHEDULES: Who = Object.freeze(["owner", "cron"]);

/** One row: the roles that may run the tool, and what it touches when that is why others may not. */
interface Row {
	readonly who: Who;
	/** "the owner's memory": named in the refusal. */
	readonly touches?: string;
}

/**
 * THE role x tool table. Every built-in tool is a row (test/e2e/policy.test.mjs
 * checks `tools list` against docs/tools.md, which copies it).
 */
export const ROLE_TABLE: Readonly<Record<string, Row>> = Object.freeze({
	get_time: { who: ALL },
	system_info: { who: ALL },
	gpio_read: { who: ALL },
	gpio_write: { who: OWNER_AND_SCHEDULES },
	i2c_scan: { who: ALL },
	i2c_read: { who: ALL },
	i2c_write: { who: OWNER_AND_SCHEDULES },
	adc_read: { who: ALL },
	pwm_set: { who: OWNER_AND_SCHEDULES },
	pwm_stop: { who: OWNER_AND_SCHEDULES },
	uart_write: { who: OWNER_AND_SCHEDULES },
	uart_read: { who: ALL },
	file_list: { who: ALL },
	file_read: { who: ALL },
	file_write: { who: OWNER_AND_SCHEDULES },
	file_delete: { who: OWNER },
	schedule_create: { who: OWNER },
	schedule_list: { who: OWNER_SIDE, touches: "the owner's schedules" },
	schedule_delete: { who: OWNER },
	activate_skill: { who: ALL },
	macro_create: { who: OWNER },
	macro_list: { who: OWNER_SIDE, touches: "the owner's macros" },
	macro_delete: { who: OWNER },
	run_script: { who: OWNER },
	script_save: { who: OWNER },
	script_list: { who: OWNER },
	script_show: { who: OWNER },
	script_run: { who: OWNER },
	script_delete: { who: OWNER },
	send_message: { who: OWNER },
	inspect_image: { who: ALL },
	spawn_subagent: { who: OWNER },
	memory_write: { who: OWNER, touches: "the owner's long-term memory" },
	memory_read: { who: OWNER_SIDE, touches: "the owner's long-term memory" },
	memory_search: { who: OWNER_SIDE, touches: "the owner's long-term memory" },
	memory_forget: { who: OWNER, touches: "the owner's long-term memory" },
	profile_read: { who: OWNER_SIDE, touches: "the owner's profile" },
	profile_update: { who: OWNER, touches: "the owner's profile" },
});

/** Tools the table does not name, by their group. */
const GROUP_TABLE: Readonly<Record<string, Row>> = Object.freeze({
	// A macro hands the owner's stored action to the model.
	macros: { who: OWNER_SIDE, touches: "the owner's macros" },
});

/** Why a role is refused a tool the table keeps from it, for the model to tell the person. */
const WHY: Readonly<Record<Role, Readonly<Record<string, string>>>> = {
	owner: {},
	user: {},
	cron: {
		schedule_create: "a scheduled request cannot create schedules; answer with what the schedule asked for",
		schedule_delete: "a scheduled request cannot delete schedules; ask the owner to do it",
	},
	subagent: {
		spawn_subagent: "a subagent cannot start another subagent; do the task yourself",
	},
};

const ASKER: Readonly<Record<Role, string>> = { owner: "the owner", user: "a chat user", cron: "a schedule", subagent: "a subagent" };

const FORCED: Readonly<Record<string, Role>> = { [Channel.CRON]: "cron", [Channel.SUBAGENT]: "subagent" };

/** The role a request runs with (see the note at the top). */
export function roleOf(request: AgentRequest): Role {
	const forced = FORCED[request.source.channel];
	if (forced) return forced;
	const claimed = request.role;
	if (claimed && (ROLES as readonly string[]).includes(claimed)) return claimed;
	return request.source.channel === Channel.CONSOLE ? "owner" : "user";
}

function rowOf(cap: Capability): Row {
	const named = ROLE_TABLE[cap.definition.function.name] ?? GROUP_TABLE[cap.group];
	if (named) return named;
	return { who: !cap.restricted ? ALL : cap.cron ? OWNER_AND_SCHEDULES : OWNER };
}

/** The decision for one role and one tool: undefined = allowed, else the reason. */
export function decide(cap: Capability, role: Role): string | undefined {
	const row = rowOf(cap);
	if (row.who.includes(role)) return undefined;
	const name = cap.definition.function.name;
	const why = WHY[role][name];
	if (why) return why;
	const touches = row.touches ? `: it touches ${row.touches}` : "";
	return `the tool ${name} is only for the owner (this request comes from ${ASKER[role]})${touches}; tell the person it needs the owner`;
}

export type PolicyTable = ReadonlyMap<string, Readonly<Record<Role, string | undefined>>>;

/** The whole table for a set of capabilities, built once. */
export function policyTable(caps: readonly Capability[]): PolicyTable {
	const table = new Map<string, Record<Role, string | undefined>>();
	for (const cap of caps) {
		const row = {} as Record<Role, string | undefined>;
		for (const role of ROLES) row[role] = decide(cap, role);
		table.set(cap.definition.function.name, row);
	}
	return table;
}

// What a request's prompt carries of the owner's own data. The persona (how the
// agent behaves) goes into every request; the owner's user notes and long-term
// memory go into the owner's, its schedules' and its subagents' requests, and into
// a user chat's only as far as the setting USERS_SEE_SETTING says (default: neither).

/** The owner's data a prompt may carry besides the persona. */
export type OwnerData = "notes" | "memory";

/** persona (default) | profile (also the user notes) | all (also long-term memory); declared in config/settings. */
export const USERS_SEE_SETTING = "memory.users_see";

/** True when a request of role may carry part of the owner's data, with usersSee the setting's value. */
export function seesOwnerData(role: Role, part: OwnerData, usersSee: string | undefined): boolean {
	if (role !== "user") return true;
	if (usersSee === "all") return true;
	return usersSee === "profile" && part === "notes";
}
