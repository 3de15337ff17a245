// memory/providers: the "profile" and "memory" context providers (SYSTEM_PROMPT
// sections, in that order, before the history), and "relevant_memory" (VOLATILE:
// at the end of the request, after the history). All are REQUEST_START_ONLY: they
// are read once when a request starts, so a memory_write during the request's tool
// rounds does not change the prompt prefix the model has already seen (the prefix
// stays cacheable; the model knows what it wrote from the tool result).
//
// "memory" does not depend on the question (the newest entries that fit when not
// all do), so the stable prefix stays the same across the requests of a
// conversation; the entries that matter to this question but did not fit come in
// "relevant_memory", after the history, where text that changes belongs.
//
// Whose request sees what (issue 25): the owner's user notes and memory go only
// into the requests `sees` allows (memory/setup's caller decides, from the
// policy: by default not a user chat's); the persona goes into every request.
import { MEMORY_CONTEXT_MAX_BYTES, MEMORY_RELEVANT_MAX_BYTES } from "budgets";
import { ProviderFlag, type AgentRequest, type ContextProvider } from "core/types";
import type { Profile } from "memory/profile";
import type { LongTermMemory } from "memory/types";

type Section = { kind: "system_prompt"; content: string };

/** True when request may carry part of the owner's data in its prompt. */
export type Sees = (request: AgentRequest, part: "notes" | "memory") => boolean;
const EVERYONE: Sees = () => true;

/**
 * A provider's answer for its text: undefined when empty, else the same object
 * while the text stays the same (the sections change only with memory or the
 * profile; no new object per request).
 */
function sections(): (content: string | undefined) => Section | undefined {
	let last: Section | undefined = undefined;
	return (content) => {
		if (!content) return undefined;
		if (!last || last.content !== content) last = { kind: "system_prompt", content };
		return last;
	};
}

/** persona + user notes (the persona alone where sees says no notes); undefined only if both are empty (the built-in persona makes that rare). */
export function profileProvider(profile: Profile, sees: Sees = EVERYONE): ContextProvider {
	const full = sections();
	const persona = sections();
	return {
		name: "profile",
		flags: ProviderFlag.REQUEST_START_ONLY,
		collect: (request) => (sees(request, "notes") ? full(profile.context()) : persona(profile.context(false))),
	};
}

/** Long-term memory up to budgetBytes, the same whatever the question; undefined when empty. */
export function memoryProvider(memory: LongTermMemory, budgetBytes = MEMORY_CONTEXT_MAX_BYTES, sees: Sees = EVERYONE): ContextProvider {
	const section = sections();
	return {
		name: "memory",
		flags: ProviderFlag.REQUEST_START_ONLY,
		collect: (request) => (sees(request, "memory") ? section(memory.context(budgetBytes)) : undefined),
	};
}

/** The memories relevant to the request's text that "memory" left out (volatile); undefined when none. */
export function relevantMemoryProvider(memory: LongTermMemory, stableBudgetBytes = MEMORY_CONTEXT_MAX_BYTES, budgetBytes = MEMORY_RELEVANT_MAX_BYTES, sees: Sees = EVERYONE): ContextProvider {
	return {
		name: "relevant_memory",
		flags: ProviderFlag.REQUEST_START_ONLY | ProviderFlag.VOLATILE,
		collect(request) {
			if (!sees(request, "memory")) return undefined;
			const content = memory.relevant(request.user_text, stableBudgetBytes, budgetBytes);
			return content ? { kind: "system_prompt", content } : undefined;
		},
	};
}
