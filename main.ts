// main: assembles the firmware. Today: the config store, the serial console, the
// shared HTTP client, the LLM service, the session store, long-term memory and the
// profile, and the agent core with its tools and the console's ask/cancel;
// capabilities, channels and the router join here
// (SPEC §1: config -> core -> providers -> caps -> channels -> router).
// Nothing slow runs before the prompt: config and the LLM usage record are a few
// small key-value reads; the LLM backend is built on the first request.
import * as network from "host/network";
import Timer from "timer";
import { consoleKind, exit, heap, name as platformName, now, reboot } from "host/platform";
import { configCommands } from "config/commands";
import { FIRMWARE_NAME, FIRMWARE_VERSION } from "config/firmware";
import { Config, type KeyValueStore } from "config/store";
import { openConsole } from "console/port";
import { systemCommands } from "console/system";
import { CommandTable } from "console/table";
import { factoryResetCommand } from "console/reset";
import { boardHttp } from "net/board";
import { openLlm } from "llm/setup";
import { consoleMessages } from "core/console";
import { openCore } from "core/setup";
import { openMemory } from "memory/setup";
import { CONSOLE_CHAT, sessionCommands } from "store/console";
import { openSessions, type Sessions } from "store/sessions";
import { messageOf } from "util/errors";
import { files as filesRoot, openKeyValue } from "util/io";
import { wifiCommands } from "wifi/console";
import { WifiStation } from "wifi/station";
import { log } from "util/log";
import { openLogSettings } from "console/log";
import { Aborter } from "net/abort";
import { LocalPort } from "router/local_port";
import { openRouter } from "router/setup";
import { openTelegram } from "channels/telegram/setup";

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

// Storage that fails at boot (a damaged partition, a file where the sessions
// directory belongs) leaves the firmware talking without saved conversations
// rather than not starting at all; the files stay as they are for whoever repairs them.
function openSessionStore(): { sessions?: Sessions; warning?: string } {
	try {
		return { sessions: openSessions() };
	} catch (error) {
		const message = messageOf(error);
		return { warning: `sessions cannot be opened, so conversations are not saved this time (${message}); check the storage, then reboot` };
	}
}

const { config, warning } = openConfig();
// One logger: the level from log.level, every secret setting's value masked in every line.
const logCommands = openLogSettings(config);
// The way onto the network: Wi-Fi from wifi.ssid/wifi.password, then the clock
// by SNTP (on lin: the host's, at once). Its lines reach the console once repl exists.
const station = new WifiStation({ network, settings: config, timer: Timer, log: (line) => repl.output.line(line) });
// One HTTP client for every outgoing request (keep-alive per origin); its name
// lookups wait for the station; big buffers (HTTP bodies, images, request bodies
// with images) come from PSRAM.
const { http, buffers } = boardHttp(station.gate);
// The LLM runtime is built lazily from llm.* settings on the first request.
const llm = openLlm({ config, transport: http, buffers });
const firmware = { name: FIRMWARE_NAME, version: FIRMWARE_VERSION, platform: platformName };
// Sessions on flash (append-only files) and long-term memory with the profile.
const { sessions, warning: sessionsWarning } = openSessionStore();
const memory = openMemory({ config });
// The agent core. Other areas plug in here: their context providers in prompt
// order (memory's profile (the persona) and long-term memory sections first, then
// the session history; the tools provider comes last), their tools, the session
// store's persist and gate, and the console's current session.
const agent = openCore({
	model: llm.llm,
	firmware,
	now,
	bootMs,
	heap,
	providers: sessions ? [...memory.providers, sessions.historyProvider] : memory.providers,
	tools: memory.tools,
	persist: sessions?.persist,
	gate: sessions?.gate,
	// Answers nobody waits for (the reply to a subagent's report that came after
	// its ask ended) are printed as they come. repl exists by the time one does.
	// Other outbound events go through the port to the router and its channels.
	publish: (event) => {
		printOut(event);
		port.publish(event);
	},
	session: () => sessions?.currentSession(CONSOLE_CHAT.channel, CONSOLE_CHAT.chat_id) ?? "",
	consoleChatId: CONSOLE_CHAT.chat_id,
});
const printOut = consoleMessages((line) => repl.output.line(line));
// The channels reach the agent through the agent port's interface; until the core
// moves into its own Worker, LocalPort adapts the core in this machine.
const port = new LocalPort({
	submit: (request, timeoutMs) => agent.core.submit(request, timeoutMs),
	cancel: (id) => agent.core.cancel(id),
	addListener: (listener) => agent.core.addListener(listener),
	sessionOf: (chat) => sessions?.currentSession(chat.channel, chat.chat_id) ?? "",
	commandsOf: (chat) => (sessions ? sessionCommands(sessions, chat) : []),
}, log);
// The event router: channels publish in_message; rules (router/rules.json) or the
// fallback decide; call_cap rules run a tool without the LLM.
const routing = openRouter({
	port,
	files: filesRoot,
	log,
	async callCap(name, args, message) {
		const request = {
			request_id: 0, flags: 0, session_id: "", user_text: message.text,
			source: { channel: message.channel, chat_id: message.chat_id, sender_id: message.sender_id, message_id: message.message_id, cap: "router" },
		};
		const outcome = await agent.toolbox.callCap({ id: "router", name, arguments: JSON.stringify(args) }, { request, signal: new Aborter().signal, progress() {} });
		if (outcome.is_error) throw new Error(outcome.content);
		return outcome.content;
	},
});
const telegram = openTelegram({
	config, http, files: filesRoot, router: routing.router, port, timers: Timer, now, log,
	notify: (line) => repl.output.line(line),
});
const commands = new CommandTable();
// reboot and factory-reset: the request in flight is cancelled, so no socket or
// timer outlives the VM; then the JS machine starts again.
const restart = () => {
	repl.stop();
	agent.agents.stop();
	void telegram.stop();
	network.disconnect();
	sessions?.close();
	reboot();
};
// The console edits and echoes lines on a UART and on a terminal; piped input is read as is.
const repl = openConsole({ table: commands, consoleKind, onEnd: () => exit(0) });
commands.add(
	...systemCommands({
		table: commands,
		firmware,
		now,
		bootMs,
		heap,
		statusLines: [...agent.statusLines, () => station.statusLine()],
		reboot: restart,
	}),
	factoryResetCommand({ config, files: filesRoot, restart }),
	...configCommands(config),
	...wifiCommands({ station, network, settings: config }),
	...llm.commands,
	...agent.commands,
	...(sessions ? sessionCommands(sessions) : []),
	...memory.commands,
	...logCommands,
	...routing.commands,
	...telegram.commands,
);

repl.output.line(`${FIRMWARE_NAME} ${FIRMWARE_VERSION} (${platformName}): type help for the commands`);
if (warning) repl.output.line(`warning: ${warning}`);
if (llm.warning) repl.output.line(`warning: ${llm.warning}`);
if (sessionsWarning) repl.output.line(`warning: ${sessionsWarning}`);
if (memory.warning) repl.output.line(`warning: ${memory.warning}`);
if (routing.warning) repl.output.line(`warning: ${routing.warning}`);
if (telegram.warning) repl.output.line(`warning: ${telegram.warning}`);
for (const problem of config.problems()) repl.output.line(`warning: ${problem}`);
repl.start();
telegram.start();
station.start();
