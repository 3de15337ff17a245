// caps/policy: who may run which tool, as a table of role x tool built once from
// the capabilities' flags and the rules below; the call path only looks it up
// (no tool name is special-cased in the loop).
//
// The rules (SPEC §7, issue 14):
// - owner: every tool.
// - user (another paired chat): tools that are not restricted.
// - cron (a request fired by a schedule the owner made): tools that are not
//   restricted, and restricted ones marked `cron` (driving an allowed pin is what
//   a watering routine is for); never the tools that create or delete schedules,
//   so a schedule cannot breed schedules (zclaw's cron guard).
// - subagent: tools that are not restricted; never spawn_subagent.
// A request's role comes with the request (channels set it from pairing); when it
// is missing it follows the source channel: console -> owner, cron -> cron,
// subagent -> subagent, anything else -> user. The channels "cron" and "subagent"
// always mean their role, whatever the request claims.
import { Channel, type AgentRequest } from "core/types";
import { ROLES, type Capability, type Role } from "caps/types";

/** Tools a role never runs, whatever their flags, with the reason told to the model. */
const DENIED: Readonly<Record<Role, Readonly<Record<string, string>>>> = {
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

const FORCED: Readonly<Record<string, Role>> = { [Channel.CRON]: "cron", [Channel.SUBAGENT]: "subagent" };

/** The role a request runs with (see the note at the top). */
export function roleOf(request: AgentRequest): Role {
	const forced = FORCED[request.source.channel];
	if (forced) return forced;
	const claimed = request.role;
	if (claimed && (ROLES as readonly string[]).includes(claimed)) return claimed;
	return request.source.channel === Channel.CONSOLE ? "owner" : "user";
}

/** The decision for one role and one tool: undefined = allowed, else the reason. */
export function decide(cap: Capability, role: Role): string | undefined {
	const name = cap.definition.function.name;
	const denied = DENIED[role][name];
	if (denied) return denied;
	if (!cap.restricted || role === "owner") return undefined;
	if (role === "cron" && cap.cron) return undefined;
	return `the tool ${name} is only for the owner (this request comes from a ${role === "user" ? "chat user" : role === "cron" ? "schedule" : "subagent"}); tell the person it needs the owner`;
}

export type PolicyTable = ReadonlyMap<string, Readonly<Record<Role, string | undefined>>>;

/** The whole table, built once per set of capabilities. */
export function policyTable(caps: readonly Capability[]): PolicyTable {
	const table = new Map<string, Record<Role, string | undefined>>();
	for (const cap of caps) {
		const row = {} as Record<Role, string | undefined>;
		for (const role of ROLES) row[role] = decide(cap, role);
		table.set(cap.definition.function.name, row);
	}
	return table;
}
