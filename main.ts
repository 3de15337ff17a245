// main: assembles the firmware. Today: the config store, the serial console, the
// shared HTTP client, the LLM service, the session store, long-term memory and the
// profile, the capabilities (tools, scheduler, skills, macros, scripts), and the
// agent core with the console's ask/cancel; channels and the router join here
// (SPEC §1: config -> core -> providers -> caps -> channels -> router).
// The machine is locked down first (XS lockdown(): frozen built-ins), so that a
// script the agent runs in a Compartment (caps/script) cannot change them or
// reach this machine's globals.
// Nothing slow runs before the prompt: config and the LLM usage record are a few
// small key-value reads; the LLM backend is built on the first request.
import filesRoot from "embedded:storage/files";
import keyValue from "embedded:storage/key-value";
import Timer from "timer";
import * as psram from "psram";
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
import type { OutEvent } from "core/types";
import { openCore } from "core/setup";
import { openCaps } from "caps/setup";
import { openMemory } from "memory/setup";
import { CONSOLE_CHAT, sessionCommands } from "store/console";
import { openSessions, type Sessions } from "store/sessions";
import { messageOf } from "util/errors";
import { log } from "util/log";
import { openLogSettings } from "console/log";
import { Aborter } from "net/abort";
import { LocalPort } from "router/local_port";
import { openRouter } from "router/setup";
import { openTelegram } from "channels/telegram/setup";

// The lin host defines lockdown(); a device build without it runs unlocked (and without scripts).
if (typeof lockdown === "function") lockdown();
const bootMs = now();
const CONFIG_NAMESPACE = "config";

// A namespace that cannot be read leaves the firmware running on settings kept in
// memory only, so the damaged data stays on flash for whoever repairs it.
function openConfig(): { config: Config; warning?: string } {
	try {
		return { config: new Config(keyValue.open({ path: CONFIG_NAMESPACE, mode: "r+" })) };
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
// One HTTP client for every outgoing request (keep-alive per origin); big buffers
// (HTTP bodies, images, request bodies with images) come from PSRAM.
const { http, buffers } = boardHttp();
// The LLM runtime is built lazily from llm.* settings on the first request.
const llm = openLlm({ config, transport: http, buffers });
const firmware = { name: FIRMWARE_NAME, version: FIRMWARE_VERSION, platform: platformName };
// Sessions on flash (append-only files) and long-term memory with the profile.
const { sessions, warning: sessionsWarning } = openSessionStore();
const memory = openMemory({ config });
const sessionFor = (chat: { channel: string; chat_id: string }) => sessions?.currentSession(chat.channel, chat.chat_id) ?? "";
// Answers nobody waits for (a schedule's, the reply to a subagent's report that
// came after its ask ended, send_message) are printed as they come when they are
// the console's (repl exists by the time one does); the others go through the
// port to the router and its channels.
const printOut = consoleMessages((line) => repl.output.line(line));
const publish = (event: OutEvent) => {
	printOut(event);
	port.publish(event);
};
// The capabilities: the board's tools, the scheduler, skills, macros and scripts
// (memory's tools join the same table).
const caps = openCaps({
	config,
	firmware,
	now,
	bootMs,
	heap,
	pools: () => psram.stats(),
	network: () => (platformName === "lin" ? "the Linux host's network" : "Wi-Fi"),
	inferMedia: (request, options) => llm.llm.inferMedia(request, options),
	publish,
	consoleChat: CONSOLE_CHAT,
	sessionFor,
	// send_message's channels: the console, and Telegram through the router.
	messageChannels: () => [CONSOLE_CHAT.channel, "telegram"],
	otherTools: memory.tools,
	log,
});
// The agent core. Other areas plug in here: their context providers in prompt
// order (memory's profile (the persona) and long-term memory sections and the
// skills catalogue first, then the session history; the tools provider comes
// last), the capabilities, the session store's persist and gate, and the
// console's current session.
const agent = openCore({
	model: llm.llm,
	firmware,
	now,
	bootMs,
	heap,
	providers: [...memory.providers, ...caps.providers, ...(sessions ? [sessions.historyProvider] : [])],
	tools: caps.tools,
	sources: caps.sources,
	visibleGroups: caps.visibleGroups,
	toolLog: log,
	persist: sessions?.persist,
	gate: sessions?.gate,
	publish,
	session: () => sessionFor(CONSOLE_CHAT),
	consoleChatId: CONSOLE_CHAT.chat_id,
});
// Schedules fire into the root core's queue from here on.
caps.start((request, timeoutMs) => agent.core.submit(request, timeoutMs));
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
			request_id: 0, flags: 0, session_id: "", user_text: message.text, role: message.role,
			source: { channel: message.channel, chat_id: message.chat_id, sender_id: message.sender_id, message_id: message.message_id, cap: "router" },
		};
		const outcome = await agent.registry.callCap({ id: "router", name, arguments: JSON.stringify(args) }, { request, signal: new Aborter().signal, progress() {} });
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
	// The request in flight is cancelled and the scheduler stopped, so no socket or timer outlives the VM.
	caps.stop();
	agent.agents.stop();
	void telegram.stop();
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
		statusLines: [...agent.statusLines],
		reboot: restart,
	}),
	factoryResetCommand({ config, files: filesRoot, restart }),
	...configCommands(config),
	...llm.commands,
	...agent.commands,
	...(sessions ? sessionCommands(sessions) : []),
	...memory.commands,
	...logCommands,
	...routing.commands,
	...telegram.commands,
	...caps.commands(() => agent.registry),
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
