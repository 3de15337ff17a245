// main: assembles the firmware. Today: the config store, the serial console, the
// shared HTTP client, the LLM service, the session store, long-term memory and the
// profile, and the agent core with its tools and the console's ask/cancel;
// capabilities, channels and the router join here
// (SPEC §1: config -> core -> providers -> caps -> channels -> router).
// Nothing slow runs before the prompt: config and the LLM usage record are a few
// small key-value reads; the LLM backend is built on the first request.
import keyValue from "embedded:storage/key-value";
import { consoleKind, exit, heap, name as platformName, now, reboot } from "host/platform";
import { configCommands } from "config/commands";
import { FIRMWARE_NAME, FIRMWARE_VERSION } from "config/firmware";
import { Config, type KeyValueStore } from "config/store";
import { openConsole } from "console/port";
import { systemCommands } from "console/system";
import { CommandTable } from "console/table";
import { boardHttp } from "net/board";
import { openLlm } from "llm/setup";
import { consoleMessages } from "core/console";
import { openCore } from "core/setup";
import { openMemory } from "memory/setup";
import { CONSOLE_CHAT, sessionCommands } from "store/console";
import { openSessions, type Sessions } from "store/sessions";
import { messageOf } from "util/errors";

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
// One HTTP client for every outgoing request (keep-alive per origin); big buffers
// (HTTP bodies, images, request bodies with images) come from PSRAM.
const { http, buffers } = boardHttp();
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
	publish: consoleMessages((line) => repl.output.line(line)),
	session: () => sessions?.currentSession(CONSOLE_CHAT.channel, CONSOLE_CHAT.chat_id) ?? "",
	consoleChatId: CONSOLE_CHAT.chat_id,
});
const commands = new CommandTable();
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
		reboot: () => {
			repl.stop();
			// The request in flight is cancelled, so no socket or timer outlives the VM.
			agent.agents.stop();
			sessions?.close();
			reboot();
		},
	}),
	...configCommands(config),
	...llm.commands,
	...agent.commands,
	...(sessions ? sessionCommands(sessions) : []),
	...memory.commands,
);

repl.output.line(`${FIRMWARE_NAME} ${FIRMWARE_VERSION} (${platformName}): type help for the commands`);
if (warning) repl.output.line(`warning: ${warning}`);
if (llm.warning) repl.output.line(`warning: ${llm.warning}`);
if (sessionsWarning) repl.output.line(`warning: ${sessionsWarning}`);
if (memory.warning) repl.output.line(`warning: ${memory.warning}`);
for (const problem of config.problems()) repl.output.line(`warning: ${problem}`);
repl.start();
