// caps/console: `tools list` (every tool with its group, flags and the roles
// that may run it: the policy table as people read it) and `tools call NAME
// JSON` (runs one tool through the whole call path as the owner, from the
// console's chat, and prints its result or its error).
import { UsageError, type Command } from "console/types";
import type { AgentRequest } from "core/types";
import { consoleContext, type Registry } from "caps/registry";
import { ROLES } from "caps/types";
import { messageOf } from "util/errors";
import { lines as textLines } from "util/text";

export interface ToolsConsoleOptions {
	registry(): Registry;
	/** The console's chat (its session, for tools that act on "this chat"). */
	chat: { channel: string; chat_id: string };
	session(): string;
}

export function toolCommands(options: ToolsConsoleOptions): Command[] {
	return [
		{
			name: "tools list",
			usage: "",
			help: "every tool: group, flags, and the roles that may run it",
			run(_args, out) {
				const registry = options.registry();
				for (const cap of registry.list()) {
					const name = cap.definition.function.name;
					const flags = [cap.restricted ? "restricted" : "", cap.hidden ? "hidden" : "", cap.runsAlone ? "alone" : ""].filter((f) => f).join(",");
					const roles = ROLES.filter((role) => registry.refusal(cap, role) === undefined).join(",");
					out.line(`${name} [${cap.group}${flags ? `; ${flags}` : ""}] roles: ${roles}`);
				}
			},
		},
		{
			name: "tools call",
			usage: "NAME [JSON]",
			help: "run a tool as the owner, e.g. tools call gpio_write {\"pin\":2,\"value\":1}",
			async run(args, out) {
				const match = /^(\S+)\s*(.*)$/s.exec(args);
				if (!match) throw new UsageError();
				const [, name, json] = match;
				const request: AgentRequest = {
					request_id: 0, flags: 0, session_id: options.session(), user_text: `tools call ${name}`, role: "owner",
					source: { channel: options.chat.channel, chat_id: options.chat.chat_id, sender_id: "console", message_id: "", cap: "console" },
				};
				try {
					const outcome = await options.registry().call(name, json, consoleContext(request, (text) => out.line(`… ${text}`)));
					const lines = textLines(outcome.content);
					if (outcome.is_error) out.line(`error: ${lines.join(" ")}`);
					else for (const line of lines) out.line(line);
				} catch (error) {
					out.line(`error: ${messageOf(error)}`);
				}
			},
		},
	];
}
