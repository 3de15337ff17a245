// main: assembles the main machine of the firmware: the config store, the
// agent machine's supervisor with the agent port's client, the event router,
// the chat channels (every one channels/all lists: the console, Telegram, QQ),
// the Wi-Fi station and the serial console (SPEC §1). The agent machine (a
// Worker: core, LLM runtime, sessions, memory, tools) is reached only through
// that client (ARCHITECTURE.md); the channels have their own HTTP client.
//
// Boot: the agent machine is started and opened first (its own files: sessions,
// memory, LLM usage), so the console's table has the agent's commands before the
// first line is read; if it cannot start, the console still comes up and says so.
import * as network from "host/network";
import Timer from "timer";
import { collectGarbage, consoleKind, exit, heap, name as platformName, now, reboot } from "host/platform";
import * as psram from "psram";
import { configCommands } from "config/commands";
import { FIRMWARE_NAME, FIRMWARE_VERSION } from "config/firmware";
import { Config, type KeyValueStore } from "config/store";
import { openConsole } from "console/port";
import { factoryResetCommand, storageRefusedWarning } from "console/reset";
import type { Repl } from "console/repl";
import { systemCommands } from "console/system";
import { CommandTable } from "console/table";
import { UsageError, type Command } from "console/types";
import { agentCommands, agentStatusLines, proxyCommand } from "agent/console";
import { agentDeadlineMs, spawnAgentWorker } from "agent/spawn";
import { AgentSupervisor } from "agent/supervisor";
import * as channelList from "channels/all";
import { openChannels } from "channels/setup";
import { boardHttp } from "net/board";
import { boardWebSocket } from "net/websocket/board";
import { openRouter } from "router/setup";
import { HttpRoutes } from "httpd/routes";
import { McpHttpServer } from "mcp/server";
import { openLogSettings } from "console/log";
import { messageOf } from "util/errors";
import { eraseStorage, files as filesRoot, openKeyValue, storage } from "util/io";
import { wifiCommands } from "wifi/console";
import { WifiStation } from "wifi/station";
import { log, setLogSink } from "util/log";

const bootMs = now();
const CONFIG_NAMESPACE = "config";

// A namespace that cannot be read leaves the firmware running on settings kept in
// memory only, so the damaged data stays on flash for whoever repairs it.
function openConfig(): { config: Config; warning?: string } {
	try {
		return { config: new Config(openKeyValue(CONFIG_NAMESPACE)) };
	} catch (error) {
		const message = messageOf(error);
		return { config: new Config(memoryStore()), warning: `settings cannot be read, so changes are not saved this time: ${message}` };
	}
}

function memoryStore(): KeyValueStore {
	const entries = new Map<string, ArrayBuffer>();
	return {
		read: (key) => entries.get(key),
		write: (key, value) => void entries.set(key, value),
		delete: (key) => void entries.delete(key),
		[Symbol.iterator]: () => entries.keys(),
	};
}

const { config, warning } = openConfig();
// This machine's logger: the level from log.level, every secret setting's value masked in every line.
const logCommands = openLogSettings(config);
// The way onto the network: Wi-Fi from wifi.ssid/wifi.password, then the clock
// by SNTP (on lin: the host's, at once). The network interface is the board's
// hardware, so the station belongs to this machine; its lines reach the console
// once it exists. Its gate holds this machine's name lookups (the channels' HTTP
// client) until Wi-Fi and the clock are up; the agent machine's lookups (the
// LLM's) wait on the same state, told over the agent port (net/online).
// The channels that watch the link (the web console's setup network closes once the board is online).
const linkWatchers: ((up: boolean) => void)[] = [];
const station = new WifiStation({
	network, settings: config, timer: Timer, log: (line) => print(line), onChange: (state) => agent.client.online(state),
	onLink: (up) => { for (const watcher of linkWatchers) watcher(up); },
});
const firmware = { name: FIRMWARE_NAME, version: FIRMWARE_VERSION, platform: platformName };
// Lines for the console before it exists (while the agent starts) wait here.
const early: string[] = [];
let print: (line: string) => void = (line) => void early.push(line);

// The agent's own commands (session, memory, profile, llm, tools, skills, cron,
// gpio) come with its first ready message; a later machine's are the same, so
// each name is added once.
const commands = new CommandTable();
const proxied = new Set<string>();
const agent: AgentSupervisor = new AgentSupervisor({
	spawn: spawnAgentWorker,
	config,
	now,
	deadlineMs: agentDeadlineMs(),
	notice: (line) => print(line),
	onReady(ready, restart) {
		const added: Command[] = [];
		for (const info of ready.commands) {
			if (proxied.has(info.name)) continue;
			proxied.add(info.name);
			added.push(proxyCommand(routing.router, info));
		}
		if (added.length) commands.add(...added);
		if (!restart) for (const line of ready.warnings) print(`warning: ${line}`);
	},
});

// The event router: channels publish in_message; rules (router/rules.json) or the
// fallback decide; call_cap rules run a tool in the agent machine, without the LLM.
const routing = openRouter({
	port: agent.client,
	files: filesRoot,
	log,
	callCap: (name, args, message) => agent.client.callCap(name, args, {
		flags: 0, session_id: "", user_text: message.text, role: message.role,
		source: { channel: message.channel, chat_id: message.chat_id, sender_id: message.sender_id, message_id: message.message_id, cap: "router" },
	}),
	// run_script rules run the owner's stored scripts (those with the router trigger) in the agent machine.
	runScript: (name, message) => agent.client.runScript(name, { text: message.text, channel: message.channel, chat_id: message.chat_id }),
});
// The channels' own HTTP client (the agent machine has its own for the LLM); its
// name lookups wait for the station.
const { http, buffers } = boardHttp(station.gate);
const webSocket = boardWebSocket(buffers, station.gate);
// The HTTP server's routes: the web channel serves them; the web console and /mcp add theirs.
const routes = new HttpRoutes();
// The board's tools for MCP clients at /mcp: each token of mcp.tokens gives its role.
new McpHttpServer({ routes, config, agent: agent.client, now, log, firmware }).start();
// A console line run as the owner (the web console's pages): its output, or the error.
const consoleRunner = {
	async run(line: string): Promise<{ lines: string[]; error?: string }> {
		const lines: string[] = [];
		const found = commands.resolve(line);
		if ("hint" in found) return { lines, error: found.hint };
		try {
			await found.command.run(found.args, { line: (text) => void lines.push(text) });
			return { lines };
		} catch (error) {
			return { lines, error: error instanceof UsageError ? `usage: ${found.command.name} ${found.command.usage}` : messageOf(error) };
		}
	},
};
// Every chat channel (channels/all): bound to the router under its name; the
// agent machine hears which of them run (send_message's targets).
const channels = openChannels({
	definitions: Object.values(channelList),
	context: { config, http, openSocket: webSocket, files: filesRoot, router: routing.router, link: { up: () => station.linked(), watch: (watcher) => void linkWatchers.push(watcher) }, routes, console: consoleRunner, timers: Timer, now, log, notify: (line) => print(line) },
	bind: (name, sink) => routing.router.bind(name, sink),
	onChange: (infos) => agent.client.channels(infos),
});

let repl: Repl | undefined;
// reboot and factory-reset: the agent cancels its request in flight and closes its
// files, the channels stop and Wi-Fi disconnects, so no socket, timer or open file
// outlives either machine; then the firmware starts again.
const restart = async () => {
	repl?.stop();
	await Promise.all([channels.stop(), agent.stop()]);
	network.disconnect();
	reboot();
};
commands.add(
	...systemCommands({
		table: commands,
		firmware,
		now,
		bootMs,
		heap,
		collect: collectGarbage,
		pools: () => psram.stats(),
		statusLines: [() => agent.statusLine(), (options) => agentStatusLines(agent.client, options), () => station.statusLine()],
		reboot: restart,
		// exit/quit on lin end the firmware as the end of input does; a board keeps running.
		exit: consoleKind === "uart" ? undefined : async () => {
			repl?.stop();
			await Promise.all([channels.stop(), agent.stop()]);
			exit(0);
		},
	}),
	factoryResetCommand({
		config,
		files: filesRoot,
		// The channels' pairing is this machine's; the agent wipes its own.
		directories: channels.directories,
		wipeAgent: () => (agent.client.attached ? agent.client.wipe() : undefined),
		restart: () => void restart(),
		storage: { refused: storage.refused, erase: eraseStorage },
	}),
	...configCommands(config),
	...agentCommands({ router: routing.router }),
	...wifiCommands({ station, network, settings: config }),
	...logCommands,
	...routing.commands,
	...channels.commands,
);
agent.client.online(station.onlineState());
const ready = await agent.start();

// The console edits and echoes lines on a UART and on a terminal; piped input is read as is.
// At end of input the agent closes its files first, as for a reboot.
repl = openConsole({ table: commands, consoleKind, onEnd: () => void Promise.all([channels.stop(), agent.stop()]).then(() => exit(0)) });
const output = repl.output;
// On the board, log lines go to the console: trace() reaches no one a release
// build's owner sees (util/log). The agent machine's come over the port.
if (consoleKind === "uart") setLogSink((line) => output.line(line));
repl.output.line(`${FIRMWARE_NAME} ${FIRMWARE_VERSION} (${platformName}): type help for the commands`);
if (storage.refused !== undefined) output.line(`warning: ${storageRefusedWarning(storage.refused)}`);
if (warning) output.line(`warning: ${warning}`);
if (!ready) output.line(`warning: the agent could not start, so ask and the session, memory, llm, tools, skills, cron and gpio commands are not available yet (${agent.statusLine()})`);
for (const line of early) output.line(line);
if (routing.warning) output.line(`warning: ${routing.warning}`);
for (const line of channels.warnings) output.line(`warning: ${line}`);
for (const problem of config.problems()) output.line(`warning: ${problem}`);
print = (line) => output.line(line);
repl.start();
channels.start();
station.start();
