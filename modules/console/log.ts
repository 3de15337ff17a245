// console/log: the logger (util/log) configured from settings, and the console's
// `log level [LEVEL]`. The level is the setting log.level (kept across restarts);
// the secrets masked in every log line are the values of the settings declared
// secret (config/settings), refreshed whenever a setting changes.
import { SETTINGS, settingValue } from "config/settings";
import type { Config } from "config/store";
import { UsageError, words, type Command } from "console/types";
import { LOG_LEVELS, logLevel, setLogLevel, setLogSecrets } from "util/log";
import { messageOf } from "util/errors";

/** Applies log.level and the secret values now and on every change; returns the `log` commands. */
export function openLogSettings(config: Config): Command[] {
	const apply = () => {
		setLogSecrets(SETTINGS.filter((spec) => spec.secret).map((spec) => config.get(spec.name) ?? ""));
		try {
			setLogLevel(settingValue((name) => config.get(name), "log.level") ?? "info");
		} catch (error) {
			setLogLevel("info");
			trace(`log: ${messageOf(error)}; info is used\n`);
		}
	};
	apply();
	config.onChange(() => apply());
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
