// skills/tools: what the skills catalogue plugs in: the "skills" context provider
// (the catalogue as a stable system-prompt section, built once: its bytes never
// change with activations), the activate_skill tool (the document as the tool
// result; the skill's tool groups become visible for the rest of the session),
// the VisibleGroups the registry asks, and the console's `skills list|show`.
//
// Visible groups are remembered per session (or per chat for a session-less
// request) in memory, for at most SKILL_SESSIONS_MAX sessions (the oldest is
// forgotten); a restart forgets them, and the model activates the skill again.
import { SKILL_SESSIONS_MAX } from "budgets";
import type { Capability, VisibleGroups } from "caps/types";
import { UsageError, type Command } from "console/types";
import { ProviderFlag, type AgentRequest, type ContextProvider } from "core/types";
import type { SkillCatalog } from "skills/catalog";

const NO_GROUPS: ReadonlySet<string> = new Set<string>();

function sessionKey(request: AgentRequest): string {
	return request.session_id || `${request.source.channel}:${request.source.chat_id}`;
}

export class SkillState {
	readonly catalog: SkillCatalog;
	readonly #visible = new Map<string, Set<string>>();
	readonly #catalogue: string;

	constructor(catalog: SkillCatalog) {
		this.catalog = catalog;
		this.#catalogue = catalog.catalogue();
	}

	/** A session's set is replaced when it changes, never changed in place (VisibleGroups' contract). */
	readonly visibleGroups: VisibleGroups = (request) => this.#visible.get(sessionKey(request)) ?? NO_GROUPS;

	/** Marks the skill's groups visible for the request's session; returns them. */
	activate(name: string, request: AgentRequest): string[] {
		const skill = this.catalog.find(name);
		if (!skill) throw new Error(`there is no skill "${name}"; the skills are ${this.catalog.list().map((s) => s.name).join(", ")}`);
		const key = sessionKey(request);
		const groups = new Set<string>(this.#visible.get(key));
		for (const group of skill.groups) groups.add(group);
		this.#visible.delete(key);
		if (this.#visible.size >= SKILL_SESSIONS_MAX) this.#visible.delete(this.#visible.keys().next().value as string);
		this.#visible.set(key, groups);
		return skill.groups;
	}

	/** The catalogue section: the same string every time. */
	readonly provider: ContextProvider = {
		name: "skills",
		flags: ProviderFlag.REQUEST_START_ONLY,
		collect: () => (this.catalog.list().length ? { kind: "system_prompt", content: this.#catalogue } : undefined),
	};
}

export function skillTools(state: SkillState): Capability[] {
	return [
		{
			group: "skills",
			definition: {
				type: "function",
				function: {
					name: "activate_skill",
					description: "Get the instructions of a skill from the skills list (and the tools it needs). Do this before doing what the skill covers.",
					parameters: { type: "object", properties: { name: { type: "string", minLength: 1, maxLength: 32 } }, required: ["name"], additionalProperties: false },
				},
			},
			run(args, context) {
				const name = String(args.name);
				const groups = state.activate(name, context.request);
				const skill = state.catalog.find(name)!;
				return groups.length ? `${skill.document}\n[the tools of ${groups.join(", ")} are available from now on]` : skill.document;
			},
		},
	];
}

export function skillCommands(state: SkillState): Command[] {
	return [
		{
			name: "skills list",
			usage: "",
			help: "the skills the agent can activate",
			run(_args, out) {
				for (const skill of state.catalog.list()) out.line(`${skill.name} (${skill.origin}${skill.groups.length ? `; ${skill.groups.join(", ")}` : ""}): ${skill.title}. ${skill.summary}`);
			},
		},
		{
			name: "skills show",
			usage: "NAME",
			help: "print a skill's document",
			run(args, out) {
				if (!args) throw new UsageError();
				const skill = state.catalog.find(args);
				if (!skill) throw new Error(`there is no skill "${args}"; skills list shows them`);
				for (const line of skill.document.replace(/\n$/, "").split("\n")) out.line(line);
			},
		},
	];
}
