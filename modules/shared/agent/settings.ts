// agent/settings: which settings the agent machine gets, and its read-only copy
// of them. Config (config/store, the key-value store) is owned by the main
// machine; the agent machine receives the settings under AGENT_SETTING_PREFIXES
// when it starts and every change to them at once, so the LLM settings stay hot
// (llm/runtime rebuilds its backend on the next request after a change).
// Other settings (channel tokens, Wi-Fi) never enter the agent machine: of the
// secret ones it gets only their fingerprints (util/secrets), as the derived
// setting SECRET_PRINTS_SETTING, so that its logger and its scrubbing of the
// model's replies can mask one the model repeats without holding it.
import { findSetting, isSecret, type SettingsSource } from "config/settings";
import { messageOf } from "util/errors";
import { log as logLine } from "util/log";
import { secretPrints as formPrints } from "util/secrets";

/** Settings the agent machine reads: the LLM runtime's, memory's, its logger's and the capabilities' (time zone, pins, script grants). */
export const AGENT_SETTING_PREFIXES = Object.freeze(["llm.", "memory.", "log.", "time.", "gpio.", "script.", "i2c.", "adc.", "pwm.", "uart.", "mcp.servers", "mcp.grants"]);

export function isAgentSetting(name: string): boolean {
	return AGENT_SETTING_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** Derived, never stored: JSON of the fingerprints of the secret settings the agent machine does not get. */
export const SECRET_PRINTS_SETTING = "log.secret_prints";

/** True for a setting whose change changes SECRET_PRINTS_SETTING. */
export function isPrintedSecret(name: string): boolean {
	return !isAgentSetting(name) && isSecret(name);
}

/** SECRET_PRINTS_SETTING's value for every [name, value]. */
export function secretPrints(entries: Iterable<[string, string]>): string {
	const prints = [];
	// Every form the secret takes on the way out (util/secrets secretForms: as it is, JSON-escaped).
	for (const [name, value] of entries) {
		if (!value || !isPrintedSecret(name)) continue;
		prints.push(...formPrints(value));
		for (const part of findSetting(name)?.secretParts?.(value) ?? []) prints.push(...formPrints(part));
	}
	return JSON.stringify(prints);
}

/** The agent's settings out of every [name, value] (config/store's entries()), with the fingerprints of the others' secrets. */
export function agentSettings(entries: Iterable<[string, string]>): Record<string, string> {
	const all = [...entries];
	const settings: Record<string, string> = {};
	for (const [name, value] of all) if (isAgentSetting(name)) settings[name] = value;
	settings[SECRET_PRINTS_SETTING] = secretPrints(all);
	return settings;
}

/** The agent machine's copy of its settings: what llm/runtime and memory read (get, onChange). */
export class SettingsMirror implements SettingsSource {
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
