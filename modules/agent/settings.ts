// agent/settings: which settings the agent machine gets, and its read-only copy
// of them. Config (config/store, the key-value store) is owned by the main
// machine; the agent machine receives the settings under AGENT_SETTING_PREFIXES
// when it starts and every change to them at once, so the LLM settings stay hot
// (llm/runtime rebuilds its backend on the next request after a change).
// Other settings (channel tokens, Wi-Fi) never enter the agent machine.
import type { ConfigSource } from "llm/runtime";
import { messageOf } from "util/errors";
import { log as logLine } from "util/log";

/** Settings the agent machine reads: the LLM runtime's, memory's, its logger's and the capabilities' (time zone, pins, script grants). */
export const AGENT_SETTING_PREFIXES = Object.freeze(["llm.", "memory.", "log.", "time.", "gpio.", "script."]);

export function isAgentSetting(name: string): boolean {
	return AGENT_SETTING_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The agent's settings out of every [name, value] (config/store's entries()). */
export function agentSettings(entries: Iterable<[string, string]>): Record<string, string> {
	const settings: Record<string, string> = {};
	for (const [name, value] of entries) if (isAgentSetting(name)) settings[name] = value;
	return settings;
}

/** The agent machine's copy of its settings: what llm/runtime and memory read (get, onChange). */
export class SettingsMirror implements ConfigSource {
	#values = new Map<string, string>();
	#listeners = new Set<(name: string, value: string | undefined) => void>();
	#log: (line: string) => void;

	constructor(settings: Record<string, string>, log: (line: string) => void = logLine) {
		for (const name of Object.keys(settings)) this.#values.set(name, settings[name]);
		this.#log = log;
	}

	get(name: string): string | undefined {
		return this.#values.get(name);
	}

	onChange(listener: (name: string, value: string | undefined) => void): () => void {
		this.#listeners.add(listener);
		return () => this.#listeners.delete(listener);
	}

	/** A change from the main machine (undefined: unset); listeners hear it at once. */
	apply(name: string, value: string | undefined): void {
		if (this.#values.get(name) === value) return;
		if (value === undefined) this.#values.delete(name);
		else this.#values.set(name, value);
		for (const listener of this.#listeners) {
			try {
				listener(name, value);
			} catch (error) {
				this.#log(`agent settings: a listener for ${name} failed: ${messageOf(error)}`);
			}
		}
	}
}
