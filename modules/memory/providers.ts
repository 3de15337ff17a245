// memory/providers: the "profile" and "memory" context providers (SYSTEM_PROMPT
// sections, in that order, before the history). Both are REQUEST_START_ONLY: they
// are read once when a request starts, so a memory_write during the request's tool
// rounds does not change the prompt prefix the model has already seen (the prefix
// stays cacheable; the model knows what it wrote from the tool result).
import { MEMORY_CONTEXT_MAX_BYTES } from "budgets";
import { ProviderFlag, type ContextProvider } from "core/types";
import type { Profile } from "memory/profile";
import type { LongTermMemory } from "memory/types";

/** persona + user notes; undefined only if both are empty (the built-in persona makes that rare). */
export function profileProvider(profile: Profile): ContextProvider {
	return {
		name: "profile",
		flags: ProviderFlag.REQUEST_START_ONLY,
		collect() {
			const content = profile.context();
			return content ? { kind: "system_prompt", content } : undefined;
		},
	};
}

/** Long-term memory up to budgetBytes, relevant to the request's text first when not all fits; undefined when empty. */
export function memoryProvider(memory: LongTermMemory, budgetBytes = MEMORY_CONTEXT_MAX_BYTES): ContextProvider {
	return {
		name: "memory",
		flags: ProviderFlag.REQUEST_START_ONLY,
		collect(request) {
			const content = memory.context(request.user_text, budgetBytes);
			return content ? { kind: "system_prompt", content } : undefined;
		},
	};
}
