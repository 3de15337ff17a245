// llm/backends: the shared backend registry with the two built-in protocols.
// backends.register() adds a custom backend (refusing a duplicate id).
import { anthropicCompatible } from "llm/anthropic";
import { openaiCompatible } from "llm/openai";
import { BackendRegistry } from "llm/registry";

/** A registry holding openai_compatible and anthropic_compatible. */
export function builtInRegistry(): BackendRegistry {
	const registry = new BackendRegistry();
	registry.register(openaiCompatible);
	registry.register(anthropicCompatible);
	return registry;
}

/** The firmware's registry: what config (llm.backend) chooses from. */
export const backends: BackendRegistry = builtInRegistry();
