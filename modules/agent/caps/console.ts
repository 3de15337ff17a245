// caps/console: `tools list` (every tool with its group, flags and the roles
// that may run it: the policy table as people read it), `tools show NAME` (one
// tool's description and arguments, with its JSON schema) and `tools call NAME
// JSON` (runs one tool through the whole call path as the owner, from the
// console's chat, and prints its result or its error).
import { UsageError, type Command } from "console/types";
import type { AgentRequest } from "core/types";
import { consoleContext, type Registry } from "caps/registry";
import { ROLES } from "caps/types";
import type { Capability } from "caps/types";
import { messageOf } from "util/errors";
import { clip, lines as textLines, nearest } from "util/text";

const SHOWN_NAME_CHARS = 64;

/** One argument of a tool as `tools show` prints it: "pin: integer 0..48, required — the GPIO number". */
function argumentLine(name: string, schema: Record<string, unknown>, required: boolean): string {
	const parts: string[] = [];
	const type = Array.isArray(schema.enum) ? `one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}` : String(schema.type ?? "any");
	parts.push(type);
	if (typeof schema.minimum === "number" || typeof schema.maximum === "number") parts.push(`${schema.minimum ?? ""}..${schema.maximum ?? ""}`);
	if (typeof schema.maxLength === "number") parts.push(`at most ${schema.maxLength} characters`);
	if (typeof schema.maxItems === "number") parts.push(`at most ${schema.maxItems} items`);
	return `  ${name}: ${parts.join(" ")}${required ? ", required" : ""}${typeof schema.description === "string" ? ` — ${schema.description}` : ""}`;
}

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
			name: "tools show",
			usage: "NAME",
			help: "one tool: what it does, its arguments and its JSON schema (what tools call takes)",
			run(args, out) {
				const name = args.trim();
				if (!name || /\s/.test(name)) throw new UsageError();
				const registry = options.registry();
				const cap: Capability | undefined = registry.list().find((c) => c.definition.function.name === name);
				if (!cap) {
					const near = nearest(name, registry.list().map((c) => c.definition.function.name));
					throw new Error(`there is no tool "${clip(name, SHOWN_NAME_CHARS)}"${near ? `: did you mean ${near}?` : ""} (tools list lists them)`);
				}
				const { description, parameters } = cap.definition.function;
				const roles = ROLES.filter((role) => registry.refusal(cap, role) === undefined).join(",");
				out.line(`${name} [${cap.group}${cap.restricted ? "; restricted" : ""}${cap.hidden ? "; hidden until a skill shows it" : ""}] roles: ${roles}`);
				if (description) for (const line of textLines(description)) out.line(line);
				const schema = (parameters ?? {}) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
				const properties = Object.entries(schema.properties ?? {});
				if (!properties.length) out.line("arguments: none (tools call " + name + ")");
				else {
					out.line("arguments:");
					for (const [key, value] of properties) out.line(argumentLine(key, value, (schema.required ?? []).includes(key)));
				}
				out.line(`schema: ${JSON.stringify(parameters ?? {})}`);
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
