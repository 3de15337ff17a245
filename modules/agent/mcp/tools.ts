// mcp/tools: the MCP servers of mcp.servers as a source of tools for the registry
// (caps/types CapSource). Each server's tools join as NAME__tool (group "mcp"),
// owner only (restricted) unless mcp.grants names them; their input schema is the
// tool's parameters, so the registry checks the model's arguments against it
// before anything is sent (caps/registry). A tool whose name, schema or size does
// not fit is left out with its reason (`mcp tools` shows it); at most
// MCP_TOOLS_MAX are offered, all servers together. Settings apply at once: a
// changed server is closed and connected again, a changed grant rebuilds the list.
//
// list() gives the same array while nothing changed (the registry reuses its
// offer, so the prompt's tool list keeps its bytes) and a new one when a server's
// tools, state or the grants change.
import { MCP_TOOL_DESCRIPTION_MAX_CHARS, MCP_TOOL_SCHEMA_MAX_BYTES, MCP_TOOLS_MAX } from "budgets";
import type { SettingsSource } from "config/settings";
import type { ChatOptions, ChatResponse, JsonObject, MediaRequest } from "llm/types";
import { checkCapability } from "caps/registry";
import type { CapSource, Capability } from "caps/types";
import type { HttpTransport, TimerLike } from "net/types";
import { McpServer } from "mcp/client";
import { GRANTS_SETTING, SERVERS_SETTING, TOOL_SEPARATOR, isGranted, parseGrants, parseServers, type ServerEntry } from "mcp/types";
import { messageOf } from "util/errors";
import { clip } from "util/text";

export interface McpToolsOptions {
	config: SettingsSource;
	http: HttpTransport;
	timer: TimerLike;
	now(): number;
	log(line: string): void;
	clientInfo: { name: string; version: string };
	/** The vision path for images a remote tool returns (McpClientDeps.inferMedia). */
	inferMedia?(request: MediaRequest, options?: ChatOptions): Promise<ChatResponse>;
}

/** A remote tool left out, and why. */
export interface SkippedTool {
	name: string;
	why: string;
}

export class McpTools implements CapSource {
	readonly #options: McpToolsOptions;
	#servers: McpServer[] = [];
	#grants: string[] = [];
	#caps: Capability[] = [];
	#skipped: SkippedTool[] = [];
	/** Why mcp.servers or mcp.grants cannot be used ("" when they can). */
	#settingsProblem = "";
	#removeListener: (() => void) | undefined;

	constructor(options: McpToolsOptions) {
		this.#options = options;
	}

	/** Reads the settings, connects to each server, and follows every change of them. */
	start(): void {
		this.#apply();
		this.#removeListener = this.#options.config.onChange((name) => {
			if (name === SERVERS_SETTING || name === GRANTS_SETTING) this.#apply();
		});
	}

	stop(): void {
		this.#removeListener?.();
		for (const server of this.#servers) server.close();
		this.#servers = [];
		this.#caps = [];
	}

	list(): Capability[] {
		return this.#caps;
	}

	get servers(): readonly McpServer[] { return this.#servers; }
	get skipped(): readonly SkippedTool[] { return this.#skipped; }
	get settingsProblem(): string { return this.#settingsProblem; }
	get grants(): readonly string[] { return this.#grants; }

	#apply(): void {
		const problems: string[] = [];
		let entries: ServerEntry[] = [];
		try {
			entries = parseServers(this.#options.config.get(SERVERS_SETTING) ?? "");
		} catch (error) {
			problems.push(messageOf(error));
		}
		try {
			this.#grants = parseGrants(this.#options.config.get(GRANTS_SETTING) ?? "");
		} catch (error) {
			this.#grants = [];
			problems.push(messageOf(error));
		}
		this.#settingsProblem = problems.join("; ");
		if (this.#settingsProblem) this.#options.log(`mcp: ${this.#settingsProblem}`);
		const kept: McpServer[] = [];
		for (const server of this.#servers) {
			const same = entries.find((e) => e.name === server.entry.name && e.url === server.entry.url && e.token === server.entry.token);
			if (same) kept.push(server);
			else server.close();
		}
		const servers: McpServer[] = [];
		for (const entry of entries) {
			let server = kept.find((s) => s.entry.name === entry.name);
			if (!server) {
				server = new McpServer(entry, {
					http: this.#options.http, timer: this.#options.timer, now: this.#options.now, log: this.#options.log,
					clientInfo: this.#options.clientInfo, changed: () => this.#rebuild(), inferMedia: this.#options.inferMedia,
				});
				server.start();
			}
			servers.push(server);
		}
		this.#servers = servers;
		this.#rebuild();
	}

	/** The capabilities of the ready servers' tools, a new array. */
	#rebuild(): void {
		const caps: Capability[] = [];
		const skipped: SkippedTool[] = [];
		for (const server of this.#servers) {
			if (server.state !== "ready" && server.state !== "connecting") continue;
			for (const tool of server.tools) {
				const name = server.name + TOOL_SEPARATOR + tool.name;
				const why = caps.length >= MCP_TOOLS_MAX ? `more than ${MCP_TOOLS_MAX} remote tools` : undefined;
				const made = why ?? remoteCapability(server, tool.name, name, tool.description, tool.inputSchema, isGranted(name, this.#grants));
				if (typeof made === "string") skipped.push({ name: clip(name, 80), why: made });
				else caps.push(made);
			}
		}
		this.#caps = caps;
		this.#skipped = skipped;
	}
}

/** One remote tool as a capability, or why it cannot be one. */
function remoteCapability(server: McpServer, tool: string, name: string, description: string, inputSchema: JsonObject, granted: boolean): Capability | string {
	let schemaText: string;
	try {
		schemaText = JSON.stringify(inputSchema);
	} catch (error) {
		return `its input schema cannot be written (${messageOf(error)})`;
	}
	if (schemaText.length > MCP_TOOL_SCHEMA_MAX_BYTES) return `its input schema is ${schemaText.length} bytes, more than ${MCP_TOOL_SCHEMA_MAX_BYTES}`;
	// The schema as offered: what the model needs, without the dialect's name.
	const parameters: JsonObject = { ...inputSchema };
	delete parameters.$schema;
	if (parameters.type === undefined) parameters.type = "object";
	const cap: Capability = {
		group: "mcp",
		restricted: !granted,
		definition: {
			type: "function",
			function: {
				name,
				description: clip(description.trim() || `the tool ${tool} of the MCP server ${server.name}`, MCP_TOOL_DESCRIPTION_MAX_CHARS),
				parameters,
			},
		},
		run: (args, context) => server.call(tool, args, context.signal),
	};
	try {
		checkCapability(cap);
	} catch (error) {
		return messageOf(error).replace(/^caps: /, "");
	}
	return cap;
}
