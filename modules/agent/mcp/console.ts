// mcp/console: `mcp status` (each server of mcp.servers: its URL, state, the
// server's name, the MCP revision and its tools, or why it failed; never the
// token) and `mcp tools` (each remote tool as the model sees it, who may run it,
// and the tools left out with the reason).
import { UsageError, words, type Command } from "console/types";
import type { McpTools } from "mcp/tools";
import { SERVERS_SETTING } from "mcp/types";
import { clip } from "util/text";

export function mcpCommands(mcp: McpTools): Command[] {
	return [
		{
			name: "mcp status",
			usage: "",
			help: "the MCP servers the agent uses (mcp.servers): state, revision, tools",
			run(args, out) {
				if (words(args).length) throw new UsageError();
				if (mcp.settingsProblem) out.line(`settings: ${mcp.settingsProblem}`);
				if (!mcp.servers.length) {
					out.line(`no MCP servers: config set ${SERVERS_SETTING} NAME URL [TOKEN], ...`);
					return;
				}
				for (const server of mcp.servers) {
					const url = server.entry.url;
					const auth = server.entry.token ? "token" : "no token";
					if (server.state === "ready") {
						out.line(`${server.name}: ready, ${url} (${auth}), ${server.serverName || "unnamed server"}, MCP ${server.protocolVersion}, ${server.tools.length} tools${server.listening ? ", listening" : ""}`);
					} else if (server.state === "failed") {
						out.line(`${server.name}: failed, ${url} (${auth}): ${server.error}`);
					} else out.line(`${server.name}: ${server.state}, ${url} (${auth})`);
				}
			},
		},
		{
			name: "mcp tools",
			usage: "",
			help: "the remote tools offered to the model, who may run them, and those left out",
			run(args, out) {
				if (words(args).length) throw new UsageError();
				const caps = mcp.list();
				if (!caps.length && !mcp.skipped.length) out.line("no remote tools (mcp status tells why)");
				for (const cap of caps) {
					const fn = cap.definition.function;
					out.line(`${fn.name} [${cap.restricted ? "owner only" : "granted: every role"}]: ${clip((fn.description ?? "").replace(/\s+/g, " "), 100)}`);
				}
				for (const skipped of mcp.skipped) out.line(`${skipped.name}: left out: ${skipped.why}`);
			},
		},
	];
}
