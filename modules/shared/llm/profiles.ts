// llm/profiles: provider presets and the model profile built from config.
//
// The llm.* settings are declared in config/settings (type, range, default,
// secret); this file reads them through settingValue() and adds what the
// presets give (base URL, backend, auth, max_tokens field, vision) and the rules
// that join several settings: a key and a model are needed unless auth is none,
// and a key is not sent over plain http:// to another machine unless
// llm.allow_insecure says so.
//
// The main machine reads the presets too (`config show` says where a value comes
// from), so this file imports no backend: what the two built-in protocols leave
// to a profile is the table BUILT_IN_DEFAULTS, which llm/openai and llm/anthropic
// register, and the main machine holds none of the LLM's code.
import { IMAGE_MAX_BYTES } from "budgets";
import { settingValue } from "config/settings";
import type { BackendRegistry } from "llm/registry";
import { LlmError, type AuthKind, type BackendDefaults, type MaxTokensField, type ModelProfile } from "llm/types";
import { isLoopback, parseUrl } from "net/url";
import { messageOf } from "util/errors";

export interface Preset {
	backend: string;
	base_url: string;
	auth?: AuthKind;
	max_tokens_field?: MaxTokensField;
	supports_vision: boolean;
	/** What `llm status` suggests when no model is set. */
	example_model: string;
}

export const PRESETS: Readonly<Record<string, Preset>> = Object.freeze({
	openai: { backend: "openai_compatible", base_url: "https://api.openai.com/v1", max_tokens_field: "max_completion_tokens", supports_vision: true, example_model: "gpt-4o-mini" },
	anthropic: { backend: "anthropic_compatible", base_url: "https://api.anthropic.com/v1", supports_vision: true, example_model: "claude-sonnet-4-5" },
	deepseek: { backend: "openai_compatible", base_url: "https://api.deepseek.com", supports_vision: false, example_model: "deepseek-chat" },
	openrouter: { backend: "openai_compatible", base_url: "https://openrouter.ai/api/v1", supports_vision: true, example_model: "openai/gpt-4o-mini" },
	ollama: { backend: "openai_compatible", base_url: "http://localhost:11434/v1", auth: "none", supports_vision: false, example_model: "llama3.2" },
});

/** What each built-in protocol uses when config leaves it open; llm/openai and llm/anthropic register these. */
export const BUILT_IN_DEFAULTS = Object.freeze({
	openai_compatible: Object.freeze({ auth: "bearer", max_tokens_field: "max_tokens" }),
	anthropic_compatible: Object.freeze({ auth: "api-key", max_tokens_field: "max_tokens" }),
} satisfies Record<string, BackendDefaults>);

/** Where a backend's defaults are looked up: a BackendRegistry, or builtInDefaults. */
export interface DefaultsSource {
	get(id: string): { defaults: BackendDefaults } | undefined;
}

/** The built-in protocols' defaults without their code (the main machine's view; a registry has the same for them). */
export const builtInDefaults: DefaultsSource = Object.freeze({
	get: (id: string) => (Object.hasOwn(BUILT_IN_DEFAULTS, id) ? { defaults: BUILT_IN_DEFAULTS[id as keyof typeof BUILT_IN_DEFAULTS] } : undefined),
});

export type ConfigGetter = (name: string) => string | undefined;

/**
 * The value of a declared llm.* setting: set, else the preset's, else the
 * default. A stored value that breaks its rule throws LlmError("config") saying
 * how to fix it.
 */
export function llmSetting(get: ConfigGetter, name: string, registry?: DefaultsSource): string | undefined {
	try {
		return settingValue(get, name, (n) => presetSetting(get, n, registry));
	} catch (error) {
		throw new LlmError("config", `${messageOf(error).replace(/\.$/, "")}: use config set ${name} with such a value, or config unset ${name}`);
	}
}

/** What the llm.provider preset (or, for custom, the backend) gives a setting; undefined: nothing. */
export function presetSetting(get: ConfigGetter, name: string, registry?: DefaultsSource): string | undefined {
	const { preset, backend } = readSettings(get);
	const defaults = registry?.get(backend)?.defaults;
	switch (name) {
		case "llm.base_url": return preset?.base_url;
		case "llm.backend": return preset?.backend;
		case "llm.auth": return preset?.auth ?? defaults?.auth;
		case "llm.max_tokens_field": return preset?.max_tokens_field ?? defaults?.max_tokens_field;
		case "llm.supports_vision": return preset ? String(preset.supports_vision) : undefined;
		default: return undefined;
	}
}

export interface Settings {
	provider: string;
	/** The provider's preset; undefined for "custom" and for unknown names. */
	preset: Preset | undefined;
	backend: string;
	base_url: string;
	model: string;
	api_key: string;
}

/** The llm.* names that pick the model, trimmed, with the preset's defaults filled in; not validated. */
export function readSettings(get: ConfigGetter): Settings {
	const text = (name: string) => (get(name) ?? "").trim();
	const provider = text("llm.provider").toLowerCase() || "openai";
	const preset = Object.hasOwn(PRESETS, provider) ? PRESETS[provider] : undefined; // not "constructor" and friends
	return {
		provider,
		preset,
		backend: text("llm.backend") || preset?.backend || "openai_compatible",
		base_url: text("llm.base_url") || preset?.base_url || "",
		model: text("llm.model"),
		api_key: text("llm.api_key"),
	};
}

export type ProfileResult =
	| { ok: true; profile: ModelProfile }
	/** Not configured: guidance is the answer a request gets (nothing is sent). */
	| { ok: false; guidance: string; provider: string };

/**
 * The profile for the current config. Missing key or model gives guidance; a value
 * that is set but wrong throws LlmError("config") saying how to fix it.
 */
export function resolveProfile(get: ConfigGetter, registry: BackendRegistry): ProfileResult {
	const setting = (name: string) => llmSetting(get, name, registry);
	const flag = (name: string) => setting(name) === "true";
	const count = (name: string) => Number(setting(name));
	const provider = setting("llm.provider") as string;
	const { preset, model, api_key: apiKey } = readSettings(get);
	const baseUrl = setting("llm.base_url");
	if (!baseUrl) throw new LlmError("config", "llm.provider is custom, so llm.base_url is needed: use config set llm.base_url https://host/v1");
	const backendId = setting("llm.backend") ?? "openai_compatible";
	const registration = registry.get(backendId);
	if (!registration) throw new LlmError("config", `llm.backend "${backendId}" is not registered: use one of ${registry.ids().join(", ")}`);
	const auth = (setting("llm.auth") ?? registration.defaults.auth) as AuthKind;

	const missing: string[] = [];
	if (!apiKey && auth !== "none") missing.push("`config set llm.api_key ...`");
	if (!model) missing.push(`\`config set llm.model ...\` (e.g. ${preset?.example_model ?? "the model's name"})`);
	if (missing.length) return { ok: false, provider, guidance: `the LLM is not configured: use ${missing.join(" and ")}` };

	let url: ReturnType<typeof parseUrl>;
	try {
		url = parseUrl(baseUrl);
	} catch (error) {
		throw new LlmError("config", `llm.base_url cannot be used (${messageOf(error)}): use config set llm.base_url https://host/v1`);
	}
	if (!url.secure && auth !== "none" && !isLoopback(url.host) && !flag("llm.allow_insecure")) {
		throw new LlmError("config", `llm.base_url is plain http:// to ${url.host}, so your API key would cross the network unencrypted: use an https:// URL, or config set llm.allow_insecure true if you trust that network`);
	}
	const profile: ModelProfile = {
		provider,
		backend: backendId,
		base_url: baseUrl.replace(/\/+$/, ""),
		api_key: auth === "none" ? "" : apiKey,
		auth,
		model,
		max_tokens: count("llm.max_tokens"),
		max_tokens_field: (setting("llm.max_tokens_field") ?? registration.defaults.max_tokens_field) as MaxTokensField,
		stream: flag("llm.stream"),
		supports_tools: flag("llm.supports_tools"),
		supports_vision: flag("llm.supports_vision"),
		image_remote_url_only: flag("llm.image_remote_url_only"),
		timeout_ms: count("llm.timeout_ms"),
		image_max_bytes: IMAGE_MAX_BYTES,
	};
	return { ok: true, profile };
}
