// agent/machine: assembles the agent machine (the Worker that agent/worker
// runs): the shared HTTP client, the LLM runtime with its limits, the session
// store and chats.json, long-term memory and the profile, the capabilities
// (caps/setup: the board's tools and pins, the scheduler, skills, macros and
// scripts) and the agent core. Everything here is owned by this machine alone;
// the main machine reaches it only through the port (agent/service), and what
// the console commands `session`, `memory`, `profile`, `llm`, `tools`, `skills`,
// `cron` and `gpio` do runs here, for the chat that asked (ARCHITECTURE.md).
//
// Nothing here throws for a part that works only partly: sessions that cannot
// be opened leave the agent answering without saved conversations, a damaged
// memory file is kept aside; each such case becomes a warning for the console.
import * as psram from "psram";
import Timer from "timer";
import { roleOf, seesOwnerData, USERS_SEE_SETTING } from "caps/policy";
import { openCaps } from "caps/setup";
import { FIRMWARE_NAME, FIRMWARE_VERSION } from "config/firmware";
import { applyLogSettings } from "console/log";
import type { Command } from "console/types";
import { Channel, type ChatModel, type OutEvent } from "core/types";
import { openCore } from "core/setup";
import { collectGarbage, heap, name as platformName, now } from "host/platform";
import { openLlm } from "llm/setup";
import { openMemory } from "memory/setup";
import { mcpCommands } from "mcp/console";
import { McpTools } from "mcp/tools";
import { Aborter } from "net/abort";
import { boardHttp } from "net/board";
import type { OnlineGate } from "net/online";
import { sessionCommands } from "store/console";
import { openSessions, type Sessions } from "store/sessions";
import { messageOf } from "util/errors";
import { wipeDirectories } from "util/files";
import { files as filesRoot } from "util/io";
import { log, logLine } from "util/log";
import { AGENT_DIRECTORIES, CONSOLE_CHAT, type ChannelInfo, type ChatRef } from "agent/protocol";
import type { AgentParts } from "agent/service";
import type { SettingsMirror } from "agent/settings";

export interface AgentMachineOptions {
	/** A model instead of the LLM runtime's (the port bench's zero-cost fake). */
	model?: ChatModel;
}

// Storage that fails at boot (a damaged partition, a file where the sessions
// directory belongs) leaves the agent talking without saved conversations
// rather than not starting at all; the files stay as they are for whoever repairs them.
function openSessionStore(): { sessions?: Sessions; warning?: string } {
	try {
		return { sessions: openSessions() };
	} catch (error) {
		const message = messageOf(error);
		return { warning: `sessions cannot be opened, so conversations are not saved this time (${message}); check the storage, then reboot` };
	}
}

/** Opens every part of the agent machine (agent/service's OpenAgent). */
export function openAgent(settings: SettingsMirror, publish: (event: OutEvent) => void, online: OnlineGate, channels: () => readonly ChannelInfo[], options: AgentMachineOptions = {}): AgentParts {
	const bootMs = now();
	// This machine's own logger: the level and the secrets to mask, from its settings.
	applyLogSettings(settings);
	// One HTTP client for every outgoing request of this machine (keep-alive per
	// origin); big buffers (HTTP bodies, images) come from PSRAM. Its name lookups
	// wait for Wi-Fi and the clock (the main machine's station tells the state).
	const { http, buffers } = boardHttp(online);
	// The LLM runtime is built lazily from llm.* settings on the first request.
	const llm = openLlm({ config: settings, transport: http, buffers });
	const firmware = { name: FIRMWARE_NAME, version: FIRMWARE_VERSION, platform: platformName };
	const { sessions, warning: sessionsWarning } = openSessionStore();
	// The owner's notes and memory reach a user chat's prompt only as the owner set (caps/policy).
	const memory = openMemory({ config: settings, sees: (request, part) => seesOwnerData(roleOf(request), part, settings.get(USERS_SEE_SETTING)) });
	const sessionFor = (chat: ChatRef) => sessions?.currentSession(chat.channel, chat.chat_id) ?? "";
	// The capabilities: the board's tools, the scheduler, skills, macros and
	// scripts (memory's tools join the same table). send_message's and the
	// schedules' answers are out_messages: the port carries them to the main
	// machine, which prints the console's and routes the others to their channel.
	const caps = openCaps({
		config: settings,
		firmware,
		now,
		bootMs,
		heap,
		pools: () => psram.stats(),
		network: () => (platformName === "lin" ? "the Linux host's network" : "Wi-Fi"),
		inferMedia: (request, chatOptions) => llm.llm.inferMedia(request, chatOptions),
		publish,
		consoleChat: CONSOLE_CHAT,
		sessionFor,
		// send_message's channels: those the main machine runs (it tells every change).
		messageChannels: channels,
		otherTools: memory.tools,
		log,
	});
	// Remote tools (mcp.servers): each server's tools join the registry as NAME__tool.
	const mcp = new McpTools({ config: settings, http, timer: Timer, now, log, clientInfo: { name: FIRMWARE_NAME, version: FIRMWARE_VERSION },
		// An image a remote tool returns is looked at as inspect_image looks (llm/media's checks).
		inferMedia: (request, chatOptions) => llm.llm.inferMedia(request, chatOptions) });
	// Provider order: profile (the persona), long-term memory and the skills
	// catalogue first, then the session history; the tools provider comes last
	// (core/setup).
	const agent = openCore({
		model: options.model ?? llm.llm,
		firmware,
		now,
		bootMs,
		heap,
		providers: [...memory.providers, ...caps.providers, ...(sessions ? [sessions.historyProvider] : [])],
		tools: caps.tools,
		sources: [...caps.sources, mcp],
		visibleGroups: caps.visibleGroups,
		// One line per tool call: at debug, so at the default level it stays off the console.
		toolLog: (line) => logLine("debug", line),
		persist: sessions?.persist,
		gate: sessions?.gate,
		publish,
	});
	// Schedules fire into the root core's queue from here on.
	caps.start((request, timeoutMs) => agent.core.submit(request, timeoutMs));
	mcp.start();
	const capsCommands = caps.commands(() => agent.registry);
	const warnings = [llm.warning, sessionsWarning, memory.warning].filter((w): w is string => w !== undefined);
	return {
		core: agent.core,
		subagents: () => agent.agents.subagents(),
		sessionFor,
		// The board's own tools for a role (not the remote ones), as its MCP server offers them.
		listTools: (role) => agent.registry.offered({
			request_id: 0, flags: 0, session_id: "", user_text: "", role,
			source: { channel: Channel.MCP, chat_id: "", sender_id: "", message_id: "", cap: "mcp" },
		}).filter((tool) => agent.registry.find(tool.function.name)?.group !== "mcp"),
		callCap: async (name, argumentsJson, request) => agent.registry.callCap({ id: "router", name, arguments: argumentsJson }, { request, signal: new Aborter().signal, progress() {} }),
		runScript: (name, data) => caps.automations.runFromRouter(name, data),
		automationLines: () => caps.automations.lines(),
		commands: (chat: ChatRef): Command[] => [...llm.commands, ...(sessions ? sessionCommands(sessions, chat) : []), ...memory.commands, ...capsCommands, ...mcpCommands(mcp)],
		heap,
		collect: collectGarbage,
		warnings,
		stop() {
			// The scheduler stops and the requests in flight are cancelled, so no
			// socket or timer outlives the machine.
			caps.stop();
			mcp.stop();
			agent.agents.stop();
			// Stores the LLM usage counted since its last write (llm/limits).
			llm.llm.close();
			sessions?.close();
		},
		wipe: () => wipeDirectories(filesRoot, AGENT_DIRECTORIES),
	};
}
