// caps/types: the contract of the capability layer (SPEC §7): one declarative
// table entry per tool (Capability), who asks (Role), and the hooks around a call.
// The registry (caps/registry) turns a list of capabilities into what the agent
// core plugs in: the TOOLS context provider, the CallCap and runsAlone.
import type { AgentRequest, Role, ToolContext, ToolOutcome } from "core/types";
import type { JsonObject, ToolDefinition } from "llm/types";

export { ROLES, type Role } from "core/types";

/** The request's context as a tool sees it. */
export interface CapContext extends ToolContext {
	role: Role;
}

/**
 * One tool as a declarative table entry. Contract of run: it receives
 * schema-checked arguments; a string result becomes the tool result; a throw or
 * rejection becomes an is_error result carrying the error's message (so the
 * message must be a sentence for the model, saying what to do instead).
 */
export interface Capability {
	definition: ToolDefinition;
	/** A group name ("time", "gpio", "files", ...): skills make hidden groups visible. */
	group: string;
	/** Not offered to the model until a skill makes its group visible in the session. */
	hidden?: boolean;
	/** Owner only (caps/policy), except where `cron` says a schedule may run it too. */
	restricted?: boolean;
	/** A restricted tool that an owner's schedule (role cron) may still run (a pin a routine drives). */
	cron?: boolean;
	/** Must not run in parallel with other calls of the same round. */
	runsAlone?: boolean;
	run(args: JsonObject, context: CapContext): Promise<ToolOutcome | string> | ToolOutcome | string;
}

/** What a before hook decides: undefined runs the call as it is. */
export type BeforeDecision = undefined | { veto: string } | { args: JsonObject };

/**
 * Hooks around every call, after the policy allowed it. before may veto (the
 * reason becomes the is_error result) or amend the arguments (they are checked
 * against the schema again); after may replace the outcome. A hook that throws
 * vetoes the call (before) or turns the outcome into an error (after).
 */
export interface CapHooks {
	before?(name: string, args: JsonObject, context: CapContext): BeforeDecision | Promise<BeforeDecision>;
	after?(name: string, args: JsonObject, outcome: ToolOutcome, context: CapContext): ToolOutcome | undefined | Promise<ToolOutcome | undefined>;
}

/** Capabilities that come and go at run time (macro tools): asked on every request. */
export interface CapSource {
	/** The same array while the tools stay the same, a new one when they change (the registry reuses its offer while it gets the same). */
	list(): Capability[];
}

/** Which hidden groups a request's session has made visible (skills): the same set while they stay the same, a new one when they change (the registry reuses its offer while it gets the same). */
export type VisibleGroups = (request: AgentRequest) => ReadonlySet<string>;
