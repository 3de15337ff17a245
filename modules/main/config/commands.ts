// config/commands: the console's `config get|set|unset|show|describe`. Every
// name is checked against config/settings' table: `config set` refuses an
// unknown name (suggesting the nearest known one) and a value that breaks the
// setting's rule (saying the rule). get and show print the effective value and
// where it comes from: set, preset (llm.provider's preset) or default. Secret
// values are shown masked, and a `config set` of a secret stays out of history.
import { UsageError, words, type Command, type Output } from "console/types";
import { checkName, type Config } from "config/store";
import {
	SETTINGS, checkSetting, effectiveSetting, findSetting, isSecret, ruleOf, settingOf, type SettingSpec,
} from "config/settings";
// The built-in protocols' defaults as data: the backends' code stays in the agent machine.
import { builtInDefaults, presetSetting } from "llm/profiles";
import { messageOf } from "util/errors";
import { maskSecret } from "util/secrets";

// "KEY VALUE": the name, then the value as the rest of the line.
function nameAndValue(args: string): [string, string] {
	const match = /^(\S+)\s+(.+)$/.exec(args);
	if (!match) throw new UsageError();
	return [match[1], match[2].trim()];
}

function onlyName(args: string): string {
	const list = words(args);
	if (list.length !== 1) throw new UsageError();
	return list[0];
}

/** A stored value as it may be shown: masked when secret (or undeclared). */
export function shownValue(name: string, value: string): string {
	return isSecret(name) ? maskSecret(value) : value;
}

/** "llm.timeout_ms = 120000 (default)", "llm.model is not set: ...", or the rule a stored value breaks. */
function describeValue(config: Config, spec: SettingSpec): string {
	const get = (name: string) => config.get(name);
	try {
		const effective = effectiveSetting(get, spec.name, (name) => presetSetting(get, name, builtInDefaults));
		if (!effective) return `${spec.name} is not set: config set ${spec.name} VALUE sets it.`;
		return `${spec.name} = ${shownValue(spec.name, effective.value)} (${effective.origin})`;
	} catch (error) {
		return `${spec.name} = ${shownValue(spec.name, config.get(spec.name) ?? "")} (set, but ${messageOf(error).replace(/\.$/, "")}: config set ${spec.name} fixes it)`;
	}
}

/** A stored name no setting declares (left by another firmware): masked, with how to remove it. */
function describeUnknown(name: string, value: string): string {
	return `${name} = ${shownValue(name, value)} (set, but not a setting of this firmware: config unset ${name} removes it)`;
}

function describeSetting(spec: SettingSpec, out: Output): void {
	const parts = [ruleOf(spec)];
	if (spec.preset) parts.push(spec.default !== undefined ? `default from llm.provider's preset, else ${spec.default}` : "default from llm.provider's preset");
	else if (spec.default !== undefined) parts.push(`default ${spec.default}`);
	else parts.push("no default");
	if (spec.secret) parts.push("secret: shown masked");
	out.line(`${spec.name}: ${spec.description}`);
	out.line(`  ${parts.join("; ")}`);
}

export function configCommands(config: Config): Command[] {
	return [
		{
			name: "config get",
			usage: "KEY",
			help: "show a setting's value and where it comes from (set, preset, default); secrets masked",
			run(args, out) {
				const name = onlyName(args);
				checkName(name);
				const stored = config.get(name);
				if (!findSetting(name) && stored !== undefined) return out.line(describeUnknown(name, stored));
				out.line(describeValue(config, settingOf(name)));
			},
		},
		{
			name: "config set",
			usage: "KEY VALUE",
			help: "change a setting (checked against its rule); VALUE is the rest of the line",
			secret: (args) => isSecret(words(args)[0] ?? ""),
			run(args, out) {
				const [name, text] = nameAndValue(args);
				checkName(name);
				const spec = settingOf(name);
				const value = checkSetting(spec, text);
				config.set(name, value);
				out.line(`ok: ${name} = ${shownValue(name, value)}`);
			},
		},
		{
			name: "config unset",
			usage: "KEY",
			help: "remove a setting (its default or preset applies again)",
			run(args, out) {
				const name = onlyName(args);
				checkName(name);
				if (config.unset(name)) return out.line(`ok: ${name} removed`);
				settingOf(name); // an unknown name gets the nearest known one
				out.line(`${name} was not set.`);
			},
		},
		{
			name: "config show",
			usage: "",
			help: "list every setting's value and where it comes from (secrets masked)",
			run(args, out) {
				if (args) throw new UsageError();
				for (const spec of SETTINGS) out.line(describeValue(config, spec));
				for (const [name, value] of config.entries()) if (!findSetting(name)) out.line(describeUnknown(name, value));
				for (const problem of config.problems()) out.line(`warning: ${problem}`);
			},
		},
		{
			name: "config describe",
			usage: "[KEY]",
			help: "what each setting does, its rule, default and whether it is secret",
			run(args, out) {
				const list = words(args);
				if (list.length > 1) throw new UsageError();
				if (list.length) return describeSetting(settingOf(list[0]), out);
				for (const spec of SETTINGS) describeSetting(spec, out);
			},
		},
	];
}
