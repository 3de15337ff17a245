// config/settings: every setting the firmware reads, declared once: name, type,
// range or choices, default, whether it is secret, and what it does. The console's
// `config set` checks a value against its declaration before storing it, `config
// get/show/describe` show the effective value and where it comes from, and the
// areas read typed values through settingValue(), so a rule (a range, a choice) is
// written here only.
//
// Some defaults come from the llm.provider preset (llm/profiles): such settings
// say `preset: true`; their effective value is looked up by whoever knows the
// presets (config/commands asks llm/profiles).
//
// Known limit: a value checked against one setting's rule can still clash with
// another's (an http:// base URL with a key set); such rules are checked where
// the settings are used together (llm/profiles).
import {
	CONFIG_NAME_MAX_CHARS, CONFIG_SHOWN_VALUE_MAX_CHARS, LLM_CALLS_PER_DAY, LLM_CALLS_PER_HOUR, LLM_COUNT_SETTING_MAX, LLM_MAX_TOKENS, LLM_MAX_TOKENS_CEILING, LLM_TIMEOUT_MAX_MS,
	LLM_TIMEOUT_MIN_MS, LLM_TIMEOUT_MS, LLM_TOKENS_PER_DAY, TELEGRAM_POLL_TIMEOUT_MAX_S, TELEGRAM_POLL_TIMEOUT_S,
	GPIO_PIN_MAX, I2C_HZ_MAX, I2C_HZ_MIN, UART_BAUD_MAX, UART_BAUD_MIN,
	WEB_PORT_DEFAULT,
} from "budgets";
import { messageOf } from "util/errors";
import { clip, nearest } from "util/text";
import { parseTimeZone } from "util/tz";
import { parseGrants, parseServers, parseTokens, roleTokens, serverTokens } from "mcp/types";

/** Where settings are read: config/store's Config, or the agent machine's copy (agent/settings). */
export interface SettingsSource {
	get(name: string): string | undefined;
	/** Hears every change (undefined: unset); returns the removal. */
	onChange(listener: (name: string, value: string | undefined) => void): () => void;
}

export type SettingType = "text" | "integer" | "boolean" | "choice" | "list" | "url" | "identifier" | "timezone" | "pins";

export interface SettingSpec {
	readonly name: string;
	readonly type: SettingType;
	/** For "choice": the values allowed; for "list": the words a comma-separated list may hold. */
	readonly choices?: readonly string[];
	/** For "integer": the range, inclusive. */
	readonly min?: number;
	readonly max?: number;
	/** The value when nothing is set (and no preset gives one); absent: none. */
	readonly default?: string;
	/** The llm.provider preset gives the default. */
	readonly preset?: true;
	/** Never shown in full, never put in an error, kept out of the console's history. */
	readonly secret?: true;
	/** A further check of a text value's form: throws a sentence that never quotes a secret. */
	readonly check?: (value: string) => unknown;
	/** The secrets inside a secret value that are masked on their own too (tokens in a list). */
	readonly secretParts?: (value: string) => string[];
	readonly description: string;
}

const BOOLEAN = { type: "boolean" } as const;
const COUNT = { type: "integer", min: 0, max: LLM_COUNT_SETTING_MAX } as const;

/** Every setting, in the order `config describe` lists them. */
export const SETTINGS: readonly SettingSpec[] = Object.freeze([
	{ name: "llm.provider", type: "choice", choices: ["openai", "anthropic", "deepseek", "openrouter", "ollama", "custom"], default: "openai",
		description: "the LLM provider preset (ollama: local, plain HTTP, no key; custom: any server, needs llm.base_url)" },
	{ name: "llm.api_key", type: "text", secret: true, description: "the provider's API key (not needed when llm.auth is none)" },
	{ name: "llm.model", type: "text", description: "the model name, e.g. gpt-4o-mini, claude-sonnet-4-5, deepseek-chat" },
	{ name: "llm.base_url", type: "url", preset: true, description: "the server's base URL (any OpenAI- or Anthropic-compatible server)" },
	{ name: "llm.backend", type: "identifier", preset: true, default: "openai_compatible", description: "the protocol: openai_compatible (/chat/completions) or anthropic_compatible (/messages)" },
	{ name: "llm.auth", type: "choice", choices: ["bearer", "api-key", "none"], preset: true, description: "how the key is sent: bearer, api-key (x-api-key) or none" },
	{ name: "llm.max_tokens", type: "integer", min: 1, max: LLM_MAX_TOKENS_CEILING, default: String(LLM_MAX_TOKENS), description: "the reply cap sent to the model" },
	{ name: "llm.max_tokens_field", type: "choice", choices: ["max_tokens", "max_completion_tokens"], preset: true, description: "the request field that carries llm.max_tokens" },
	{ name: "llm.stream", ...BOOLEAN, default: "true", description: "stream replies (SSE); false for servers that cannot" },
	{ name: "llm.timeout_ms", type: "integer", min: LLM_TIMEOUT_MIN_MS, max: LLM_TIMEOUT_MAX_MS, default: String(LLM_TIMEOUT_MS), description: "one HTTP attempt, in milliseconds" },
	{ name: "llm.supports_tools", ...BOOLEAN, default: "true", description: "the model takes tools (false: requests with tools are refused)" },
	{ name: "llm.supports_vision", ...BOOLEAN, preset: true, default: "false", description: "the model takes images" },
	{ name: "llm.image_remote_url_only", ...BOOLEAN, default: "false", description: "only http(s) image URLs, no local images" },
	{ name: "llm.calls_per_hour", ...COUNT, default: String(LLM_CALLS_PER_HOUR), description: "LLM calls allowed per hour (counted across reboots)" },
	{ name: "llm.calls_per_day", ...COUNT, default: String(LLM_CALLS_PER_DAY), description: "LLM calls allowed per day (counted across reboots)" },
	{ name: "llm.tokens_per_day", ...COUNT, default: String(LLM_TOKENS_PER_DAY), description: "prompt and reply tokens allowed per day, 0 = no limit" },
	{ name: "llm.allow_insecure", ...BOOLEAN, default: "false", description: "allow sending the key over plain http:// to a host other than this machine" },
	{ name: "memory.mode", type: "choice", choices: ["full", "light"], default: "full", description: "long-term memory: full (records with tags) or light (one MEMORY.md); at the next start" },
	{ name: "memory.users_see", type: "choice", choices: ["persona", "profile", "all"], default: "persona",
		description: "what a user chat's requests carry of yours: persona (only the persona), profile (also your user notes) or all (also your long-term memory)" },
	{ name: "telegram.token", type: "text", secret: true, description: "the Telegram bot token BotFather gave you; setting it starts the channel" },
	{ name: "telegram.enabled", ...BOOLEAN, default: "true", description: "false keeps the Telegram channel off while a token is set" },
	{ name: "telegram.base_url", type: "url", default: "https://api.telegram.org", description: "the Bot API server (tests and self-hosted Bot API servers; plain http only to this machine)" },
	{ name: "telegram.poll_timeout_s", type: "integer", min: 0, max: TELEGRAM_POLL_TIMEOUT_MAX_S, default: String(TELEGRAM_POLL_TIMEOUT_S), description: "how long one getUpdates long poll waits, in seconds" },
	{ name: "qq.app_id", type: "text", description: "the QQ bot's AppID from q.qq.com (development settings); with qq.app_secret it starts the QQ channel" },
	{ name: "qq.app_secret", type: "text", secret: true, description: "the QQ bot's AppSecret from q.qq.com (development settings)" },
	{ name: "qq.sandbox", ...BOOLEAN, default: "false", description: "use QQ's sandbox (sandbox.api.sgroup.qq.com): only the sandbox users and groups set on q.qq.com reach the bot" },
	{ name: "qq.enabled", ...BOOLEAN, default: "true", description: "false keeps the QQ channel off while an app id and secret are set" },
	{ name: "qq.api_url", type: "url", description: "the QQ OpenAPI server (default https://api.sgroup.qq.com, or the sandbox's; tests use a mock; plain http only to this machine)" },
	{ name: "qq.token_url", type: "url", default: "https://bots.qq.com/app/getAppAccessToken", description: "where the app access token comes from (tests use a mock; plain http only to this machine)" },
	{ name: "log.level", type: "choice", choices: ["error", "warn", "info", "debug"], default: "info", description: "the log lines shown (on lin: stderr): error, warn, info (retries, reconnects) or debug (also a METRIC line per request and a line per tool call)" },
	{ name: "wifi.ssid", type: "text", description: "the Wi-Fi network to join (device)" },
	{ name: "wifi.password", type: "text", secret: true, description: "the Wi-Fi password (device)" },
	{ name: "web.enabled", ...BOOLEAN, default: "true", description: "false turns the web console off (its HTTP server, and with it /mcp)" },
	{ name: "web.port", type: "integer", min: 1, max: 65535, default: String(WEB_PORT_DEFAULT), description: "the web console's port on the board (lin serves it only when started with --http PORT)" },
	{ name: "time.timezone", type: "timezone", default: "UTC", description: "the board's time zone for get_time and schedules: UTC, an offset like +08:00, a POSIX rule like CET-1CEST,M3.5.0,M10.5.0/3, or a common name like Europe/Berlin" },
	{ name: "gpio.allow", type: "pins", description: "the GPIO pins the agent and the gpio command may read and drive, e.g. 2,4,5 (none when unset)" },
	{ name: "i2c.allow", type: "text", description: "the I2C addresses the agent and the i2c command may read and write, e.g. 0x44,0x50 (none when unset: the bus is not used)" },
	{ name: "i2c.sda", type: "integer", min: 0, max: GPIO_PIN_MAX, default: "4", description: "the I2C bus's SDA pin (the DevKitC-1's default 4)" },
	{ name: "i2c.scl", type: "integer", min: 0, max: GPIO_PIN_MAX, default: "5", description: "the I2C bus's SCL pin (the DevKitC-1's default 5)" },
	{ name: "i2c.hz", type: "integer", min: I2C_HZ_MIN, max: I2C_HZ_MAX, default: "100000", description: "the I2C bus's clock in Hz" },
	{ name: "adc.allow", type: "pins", description: "the ADC pins (ADC1: 1-10) adc_read and the adc command may read, e.g. 1,2 (none when unset)" },
	{ name: "pwm.allow", type: "pins", description: "the pins pwm_set and the pwm command may drive, e.g. 5,6 (none when unset)" },
	{ name: "uart.allow", type: "choice", choices: ["1", "2"], description: "the UART port the agent may use: 1 or 2 (none when unset; 0 is the console's)" },
	{ name: "uart.tx", type: "integer", min: 0, max: GPIO_PIN_MAX, default: "17", description: "the UART's TX pin (the DevKitC-1's UART1 default 17)" },
	{ name: "uart.rx", type: "integer", min: 0, max: GPIO_PIN_MAX, default: "18", description: "the UART's RX pin (the DevKitC-1's UART1 default 18)" },
	{ name: "uart.baud", type: "integer", min: UART_BAUD_MIN, max: UART_BAUD_MAX, default: "115200", description: "the UART's speed in baud" },
	{ name: "mcp.servers", type: "text", secret: true, check: parseServers, secretParts: serverTokens,
		description: "MCP servers whose tools the agent may use: NAME URL [TOKEN], ... (the token goes as a bearer token); their tools are NAME__tool, owner only unless mcp.grants names them" },
	{ name: "mcp.grants", type: "text", check: parseGrants, description: "remote tools chat users, schedules and subagents may run too: NAME__tool or NAME__*, comma-separated (none when unset)" },
	{ name: "mcp.tokens", type: "text", secret: true, check: parseTokens, secretParts: roleTokens,
		description: "who may use the board's tools at /mcp on the web console: ROLE TOKEN, ... (role owner or user, tokens of 16 or more characters); no token, no access" },
	{ name: "script.grants", type: "list", choices: ["time", "gpio", "math"], default: "time,math", description: "what run_script's snippets may use besides the language: time, gpio, math (comma-separated)" },
] satisfies SettingSpec[]);

const BY_NAME = new Map(SETTINGS.map((spec) => [spec.name, spec]));

export function findSetting(name: string): SettingSpec | undefined {
	return BY_NAME.get(name);
}

/**
 * True when a stored value under name must not be shown in full: a setting
 * declared secret, or a name no setting declares (an entry left by another
 * firmware: nothing says it is not a secret).
 */
export function isSecret(name: string): boolean {
	const spec = BY_NAME.get(name);
	return spec ? spec.secret === true : true;
}

/** The rule a value must follow, as a phrase: "a whole number from 1 to 1000000". */
export function ruleOf(spec: SettingSpec): string {
	switch (spec.type) {
		case "integer": return `a whole number from ${spec.min ?? 0} to ${spec.max ?? LLM_COUNT_SETTING_MAX}`;
		case "boolean": return "true or false (yes/no, on/off, 1/0)";
		case "choice": return `one of ${(spec.choices ?? []).join(", ")}`;
		case "list": return `a comma-separated list of ${(spec.choices ?? []).join(", ")}`;
		case "timezone": return "a time zone: UTC, an offset like +08:00, a POSIX rule like CET-1CEST,M3.5.0,M10.5.0/3, or a name like Europe/Berlin";
		case "pins": return `comma-separated GPIO numbers from 0 to ${GPIO_PIN_MAX}, e.g. 2,4,5`;
		case "url": return "a URL starting with http:// or https://";
		case "identifier": return "a lowercase name of letters, digits and _";
		default: return "any text";
	}
}

/**
 * The value to store for text under spec, in its canonical form (a boolean as
 * true/false, a number without _ separators); throws a sentence stating the rule.
 * The sentence never quotes a secret's text.
 */
export function checkSetting(spec: SettingSpec, text: string): string {
	const value = text.trim();
	const refuse = (): never => {
		const shown = spec.secret ? "" : ` (not "${clip(value, CONFIG_SHOWN_VALUE_MAX_CHARS)}")`;
		throw new RangeError(`${spec.name} must be ${ruleOf(spec)}${shown}.`);
	};
	if (!value) refuse();
	switch (spec.type) {
		case "integer": {
			const digits = value.replace(/_/g, "");
			if (!/^\d+$/.test(digits)) refuse();
			const n = Number(digits);
			if (n < (spec.min ?? 0) || n > (spec.max ?? LLM_COUNT_SETTING_MAX)) refuse();
			return String(n);
		}
		case "boolean": {
			const t = value.toLowerCase();
			if (["true", "yes", "on", "1"].includes(t)) return "true";
			if (["false", "no", "off", "0"].includes(t)) return "false";
			return refuse();
		}
		case "choice": {
			const t = value.toLowerCase();
			if (!(spec.choices ?? []).includes(t)) refuse();
			return t;
		}
		case "list": {
			const items = value.split(",").map((item) => item.trim().toLowerCase());
			if (items.some((item) => !(spec.choices ?? []).includes(item))) refuse();
			return [...new Set(items)].join(",");
		}
		case "timezone":
			try {
				parseTimeZone(value);
			} catch (error) {
				throw new RangeError(`${spec.name}: ${messageOf(error)}`);
			}
			return value;
		case "pins": {
			const pins = pinList(value);
			if (!pins) refuse();
			const reserved = pins!.find((pin) => RESERVED_PINS.has(pin));
			if (reserved !== undefined) throw new RangeError(`${spec.name}: pin ${reserved} is ${RESERVED_PINS.get(reserved)}: it is never allowed; use another pin`);
			return pins!.join(",");
		}
		case "url":
			if (!/^https?:\/\/[^/\s?#]+/i.test(value)) refuse();
			return value;
		case "identifier":
			if (!/^[a-z][a-z0-9_]*$/.test(value)) refuse();
			return value;
		default:
			spec.check?.(value);
			return value;
	}
}

/** Pins no pin setting (gpio.allow, the io settings) may name on an ESP32-S3 N16R8 (DevKitC-1), with why. */
export const RESERVED_PINS: ReadonlyMap<number, string> = new Map([
	[19, "the USB port's D- (the console over USB)"], [20, "the USB port's D+ (the console over USB)"],
	...[26, 27, 28, 29, 30, 31, 32].map((pin): [number, string] => [pin, "the flash's SPI bus"]),
	...[33, 34, 35, 36, 37].map((pin): [number, string] => [pin, "the octal PSRAM's bus"]),
	[43, "the console's UART0 TX"], [44, "the console's UART0 RX"],
]);

/** The pins of a comma-separated list of GPIO numbers (0 to GPIO_PIN_MAX), sorted, each once; undefined when one is not a pin. */
export function pinList(text: string): number[] | undefined {
	const pins = new Set<number>();
	for (const item of text.split(",")) {
		const word = item.trim();
		if (!/^\d{1,2}$/.test(word) || Number(word) > GPIO_PIN_MAX) return undefined;
		pins.add(Number(word));
	}
	return [...pins].sort((a, b) => a - b);
}

/** The declared name closest to name. */
export function nearestSetting(name: string): string {
	return nearest(name, SETTINGS.map((spec) => spec.name)) ?? SETTINGS[0].name;
}

/** The declaration of name; throws a sentence naming the nearest known setting when there is none. */
export function settingOf(name: string): SettingSpec {
	const spec = BY_NAME.get(name);
	if (!spec) throw new RangeError(`there is no setting "${clip(name, CONFIG_NAME_MAX_CHARS + 1)}": did you mean ${nearestSetting(name)}? (config describe lists them all)`);
	return spec;
}

export type SettingOrigin = "set" | "preset" | "default";

/**
 * The value a declared setting has: the stored one (checked; a stored value that
 * breaks the rule throws the rule's sentence), else the preset's (presetValue),
 * else the default; undefined when none applies.
 */
export function settingValue(get: (name: string) => string | undefined, name: string, presetValue?: (name: string) => string | undefined): string | undefined {
	return effectiveSetting(get, name, presetValue)?.value;
}

export function effectiveSetting(
	get: (name: string) => string | undefined, name: string, presetValue?: (name: string) => string | undefined,
): { value: string; origin: SettingOrigin } | undefined {
	const spec = settingOf(name);
	const stored = get(name);
	if (stored !== undefined && stored.trim() !== "") return { value: checkSetting(spec, stored), origin: "set" };
	const preset = spec.preset ? presetValue?.(name) : undefined;
	if (preset !== undefined) return { value: preset, origin: "preset" };
	return spec.default !== undefined ? { value: spec.default, origin: "default" } : undefined;
}
