// console/log: the logger (util/log) configured from settings, and the console's
// `log level [LEVEL]`. The level is the setting log.level (kept across restarts);
// the secrets masked in every log line are the values of the settings declared
// secret (config/settings), refreshed whenever a setting changes. Each machine
// has its own logger: the agent machine applies the same settings from its copy
// of them (agent/settings forwards log.* and the LLM's secret).
import { SETTINGS, settingValue, type SettingsSource } from "config/settings";
import { UsageError, words, type Command } from "console/types";
import { LOG_LEVELS, logLevel, setLogLevel, setLogPrints, setLogSecrets } from "util/log";
import { isSecretPrint, type SecretPrint } from "util/secrets";
import { SECRET_PRINTS_SETTING } from "agent/settings";
import { messageOf } from "util/errors";

/** The settings `log level` sets: config/store's Config (the main machine's). */
export interface LogSettingsStore extends SettingsSource {
	set(name: string, value: string): void;
}

// The agent machine's fingerprints of the secrets it does not hold (agent/settings); none in the main machine.
function readPrints(value: string | undefined): SecretPrint[] {
	if (!value) return [];
	try {
		const list: unknown = JSON.parse(value);
		return Array.isArray(list) ? list.filter(isSecretPrint) : [];
	} catch {
		return [];
	}
}

/** Applies log.level and the secret values (and fingerprints) to this machine's logger now and on every change. */
export function applyLogSettings(config: SettingsSource): void {
	const apply = () => {
		const secrets: string[] = [];
		for (const spec of SETTINGS) {
			const value = spec.secret ? config.get(spec.name) : undefined;
			if (value === undefined) continue;
			secrets.push(value);
			if (spec.secretParts) secrets.push(...spec.secretParts(value));
		}
		setLogSecrets(secrets);
		setLogPrints(readPrints(config.get(SECRET_PRINTS_SETTING)));
		try {
			setLogLevel(settingValue((name) => config.get(name), "log.level") ?? "info");
		} catch (error) {
			setLogLevel("info");
			trace(`log: ${messageOf(error)}; info is used\n`);
		}
	};
	apply();
	config.onChange(() => apply());
}

/** Applies the log settings (applyLogSettings); returns the `log` commands. */
export function openLogSettings(config: LogSettingsStore): Command[] {
	applyLogSettings(config);
	return [{
		name: "log level", usage: "[LEVEL]", help: `show or set which log lines are shown: ${LOG_LEVELS.join(", ")} (kept across restarts)`,
		run(args, out) {
			const list = words(args);
			if (list.length > 1) throw new UsageError();
			if (list.length === 1) {
				if (!(LOG_LEVELS as readonly string[]).includes(list[0])) throw new Error(`"${list[0]}" is not a log level: use one of ${LOG_LEVELS.join(", ")}`);
				config.set("log.level", list[0]);
			}
			out.line(`log level: ${logLevel()}`);
		},
	}];
}
