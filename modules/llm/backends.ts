// llm/backends: the shared backend registry with the two built-in protocols.
// register() adds a custom backend (refusing a duplicate id); get() finds one.
import { anthropicCompatible } from "llm/anthropic";
import { openaiCompatible } from "llm/openai";
import { BackendRegistry } from "llm/registry";
import type { BackendRegistration } from "llm/types";

/** A registry holding openai_compatible and anthropic_compatible. */
export function builtInRegistry(): BackendRegistry {
	const registry = new BackendRegistry();
	registry.register(openaiCompatible);
	registry.register(anthropicCompatible);
	return registry;
}

/** The firmware's registry: what config (llm.backend) chooses from. */
export const backends: BackendRegistry = builtInRegistry();

export function register(backend: BackendRegistration): void {
	backends.register(backend);
}

export function get(id: string): BackendRegistration | undefined {
	return backends.get(id);
}
