// config/commands: the console's `config get|set|unset|show`. Secret values are
// shown masked everywhere, and a `config set` of a secret stays out of history.
import { UsageError, words, type Command } from "console/types";
import { checkName, display, isSecretName, type Config } from "config/store";

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

export function configCommands(config: Config): Command[] {
	return [
		{
			name: "config get",
			usage: "KEY",
			help: "show one setting (secrets masked)",
			run(args, out) {
				const name = onlyName(args);
				checkName(name);
				const value = config.get(name);
				out.line(value === undefined ? `${name} is not set: config set ${name} VALUE sets it.` : display(name, value));
			},
		},
		{
			name: "config set",
			usage: "KEY VALUE",
			help: "change a setting; VALUE is the rest of the line",
			secret: (args) => isSecretName(words(args)[0] ?? ""),
			run(args, out) {
				const [name, value] = nameAndValue(args);
				config.set(name, value);
				out.line(`ok: ${name} = ${display(name, value)}`);
			},
		},
		{
			name: "config unset",
			usage: "KEY",
			help: "remove a setting",
			run(args, out) {
				const name = onlyName(args);
				out.line(config.unset(name) ? `ok: ${name} removed` : `${name} was not set.`);
			},
		},
		{
			name: "config show",
			usage: "",
			help: "list every setting (secrets masked)",
			run(args, out) {
				if (args) throw new UsageError();
				const entries = config.entries();
				if (!entries.length) out.line("no settings yet: config set KEY VALUE adds one.");
				for (const [name, value] of entries) out.line(`${name} = ${display(name, value)}`);
				for (const problem of config.problems()) out.line(`warning: ${problem}`);
			},
		},
	];
}
