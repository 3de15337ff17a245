// llm/profiles: provider presets and the model profile built from config.
//
// Config keys (all optional except a model, and a key unless auth is "none"):
//   llm.provider            openai | anthropic | deepseek | openrouter | ollama | custom
//                           (default openai; custom needs llm.base_url)
//   llm.api_key             the provider's key (secret: shown masked)
//   llm.model               e.g. gpt-4o-mini, claude-sonnet-4-5, deepseek-chat, llama3.2
//   llm.base_url            overrides the preset's URL (any OpenAI- or Anthropic-compatible server)
//   llm.backend             openai_compatible | anthropic_compatible | a registered custom id
//   llm.auth                bearer | api-key | none
//   llm.max_tokens          reply cap sent to the model (default LLM_MAX_TOKENS)
//   llm.max_tokens_field    max_tokens | max_completion_tokens
//   llm.stream              true | false: stream replies over SSE (default true)
//   llm.timeout_ms          one HTTP attempt (default LLM_TIMEOUT_MS)
//   llm.supports_tools      true | false (false: requests with tools are refused)
//   llm.supports_vision     true | false (false: images are refused)
//   llm.image_remote_url_only  true | false (true: only http(s) image URLs)
//   llm.tokens_per_day      daily token budget, 0 = none (default LLM_TOKENS_PER_DAY)
//   llm.calls_per_hour      (default LLM_CALLS_PER_HOUR)
//   llm.calls_per_day       (default LLM_CALLS_PER_DAY)
// Booleans accept true/false, yes/no, on/off, 1/0.
import {
	IMAGE_MAX_BYTES, LLM_COUNT_SETTING_MAX, LLM_MAX_TOKENS, LLM_MAX_TOKENS_CEILING, LLM_TIMEOUT_MAX_MS, LLM_TIMEOUT_MIN_MS, LLM_TIMEOUT_MS,
} from "budgets";
import type { BackendRegistry } from "llm/registry";
import { LlmError, type AuthKind, type MaxTokensField, type ModelProfile } from "llm/types";

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

export type ConfigGetter = (name: string) => string | undefined;

export function parseBoolean(name: string, text: string | undefined, fallback: boolean): boolean {
	if (text === undefined || text === "") return fallback;
	const t = text.trim().toLowerCase();
	if (t === "true" || t === "yes" || t === "on" || t === "1") return true;
	if (t === "false" || t === "no" || t === "off" || t === "0") return false;
	throw new LlmError("config", `${name} must be true or false (it is "${text}"): use config set ${name} true`);
}

export function parseCount(name: string, text: string | undefined, fallback: number, { min = 0, max = LLM_COUNT_SETTING_MAX } = {}): number {
	if (text === undefined || text === "") return fallback;
	const t = text.trim().replace(/_/g, "");
	if (!/^\d+$/.test(t) || Number(t) < min || Number(t) > max)
		throw new LlmError("config", `${name} must be a whole number from ${min} to ${max} (it is "${text}")`);
	return Number(t);
}

function oneOf<T extends string>(name: string, text: string | undefined, allowed: readonly T[]): T | undefined {
	if (text === undefined || text === "") return undefined;
	const t = text.trim();
	if ((allowed as readonly string[]).includes(t)) return t as T;
	throw new LlmError("config", `${name} must be one of ${allowed.join(", ")} (it is "${text}")`);
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
	const { provider, preset, backend: backendId, base_url: baseUrl, model, api_key: apiKey } = readSettings(get);
	if (!preset && provider !== "custom")
		throw new LlmError("config", `llm.provider "${provider}" is unknown: use one of ${[...Object.keys(PRESETS), "custom"].join(", ")}`);
	if (!baseUrl) throw new LlmError("config", "llm.provider is custom, so llm.base_url is needed: use config set llm.base_url https://host/v1");
	if (!/^https?:\/\/[^/\s]+/i.test(baseUrl)) throw new LlmError("config", `llm.base_url must start with http:// or https:// (it is "${baseUrl}")`);

	const registration = registry.get(backendId);
	if (!registration) throw new LlmError("config", `llm.backend "${backendId}" is not registered: use one of ${registry.ids().join(", ")}`);

	const auth = oneOf("llm.auth", get("llm.auth"), ["bearer", "api-key", "none"] as const) ?? preset?.auth ?? registration.defaults.auth;

	const missing: string[] = [];
	if (!apiKey && auth !== "none") missing.push("`config set llm.api_key ...`");
	if (!model) missing.push(`\`config set llm.model ...\` (e.g. ${preset?.example_model ?? "the model's name"})`);
	if (missing.length) return { ok: false, provider, guidance: `the LLM is not configured: use ${missing.join(" and ")}` };

	const profile: ModelProfile = {
		provider,
		backend: backendId,
		base_url: baseUrl.replace(/\/+$/, ""),
		api_key: auth === "none" ? "" : apiKey,
		auth,
		model,
		max_tokens: parseCount("llm.max_tokens", get("llm.max_tokens"), LLM_MAX_TOKENS, { min: 1, max: LLM_MAX_TOKENS_CEILING }),
		max_tokens_field: oneOf("llm.max_tokens_field", get("llm.max_tokens_field"), ["max_tokens", "max_completion_tokens"] as const)
			?? preset?.max_tokens_field ?? registration.defaults.max_tokens_field,
		stream: parseBoolean("llm.stream", get("llm.stream"), true),
		supports_tools: parseBoolean("llm.supports_tools", get("llm.supports_tools"), true),
		supports_vision: parseBoolean("llm.supports_vision", get("llm.supports_vision"), preset?.supports_vision ?? false),
		image_remote_url_only: parseBoolean("llm.image_remote_url_only", get("llm.image_remote_url_only"), false),
		timeout_ms: parseCount("llm.timeout_ms", get("llm.timeout_ms"), LLM_TIMEOUT_MS, { min: LLM_TIMEOUT_MIN_MS, max: LLM_TIMEOUT_MAX_MS }),
		image_max_bytes: IMAGE_MAX_BYTES,
	};
	return { ok: true, profile };
}
