// caps/setup: assembles the capability layer for the machine the agent runs in
// (SPEC §1: ... -> providers -> caps): the board's tools (time, system, GPIO,
// files, messaging, images, scripts), the scheduler (modules/agent/sched), skills
// (modules/agent/skills), macros and the owner's stored scripts with the
// automations that run them (caps/scripts, caps/automations), with the settings
// they read, the folders they own under the storage root (workspace/, sched/,
// skills/, caps/), and the console commands `tools`, `skills`, `cron`, `gpio`
// (`pins` on lin), `i2c`, `adc`, `pwm`, `uart` and `script`. The core gets the capabilities
// (plus memory's and spawn_subagent) through core/setup, which builds the one
// registry; start() then starts the scheduler, firing through submit().
//
// Settings read here (each at use, so `config set` applies at once):
//   time.timezone  the board's zone (util/tz forms; default UTC)
//   gpio.allow     the pins tools and `gpio` may touch ("2,4,5"; default none)
//   script.grants  what a script may use ("time,gpio,math"; default time,math)
//   i2c.*, adc.allow, pwm.allow, uart.*: the buses (caps/io)
//
// Never throws for a part that works only partly: a folder that cannot be made
// leaves that part on the storage root, a damaged file is kept aside (logged).
import { files as filesRoot, type Directory } from "util/io";
import { metered } from "host/sandbox";
import type { HeapFigures } from "host/platform";
import type { PoolStats } from "psram";
import { SCHED_SUBMIT_TIMEOUT_MS } from "budgets";
import type { Command } from "console/types";
import { Channel, RequestFlag, type AgentRequest, type ContextProvider, type OutEvent } from "core/types";
import type { ChatOptions, ChatResponse, MediaRequest } from "llm/types";
import { SPAWN_SUBAGENT } from "caps/agents";
import { boardTools } from "caps/board";
import { toolCommands } from "caps/console";
import { WORKSPACE_DIRECTORY, Workspace, fileTools } from "caps/files";
import { GpioBank, gpioCommands, gpioTools } from "caps/gpio";
import { IoBoard } from "caps/io";
import { ioCommands, ioTools } from "caps/io_tools";
import { Macros, macroTools } from "caps/macros";
import { messagingTools } from "caps/messaging";
import type { Registry } from "caps/registry";
import { Automations } from "caps/automations";
import { scriptTools } from "caps/script";
import { ScriptStore } from "caps/scripts";
import { scriptCommands, scriptTools as storedScriptTools } from "caps/script_tools";
import type { CapSource, Capability, VisibleGroups } from "caps/types";
import type { ChannelInfo } from "agent/protocol";
import { Scheduler, lateNote, type ChatRef, type ScheduleEntry } from "sched/scheduler";
import { cronCommands, scheduleTools } from "sched/tools";
import { parseTimeZone, type TimeZone } from "util/tz";
import { SKILLS_DIRECTORY, SkillCatalog } from "skills/catalog";
import { SkillState, skillCommands, skillTools } from "skills/tools";
import { messageOf } from "util/errors";

export const TIMEZONE_SETTING = "time.timezone";

export interface CapsOptions {
	config: { get(name: string): string | undefined };
	firmware: { name: string; version: string; platform: string };
	now(): number;
	bootMs: number;
	heap(): HeapFigures;
	pools?(): Record<string, PoolStats>;
	network?(): string;
	wallClockMs?(): number;
	/** llm/runtime's inferMedia, for inspect_image. */
	inferMedia(request: MediaRequest, options?: ChatOptions): Promise<ChatResponse>;
	/** Where send_message's texts go (the core's publish). */
	publish(event: OutEvent): void;
	/** The chat channels send_message may name, with their chats (default: the console's). */
	messageChannels?(): readonly ChannelInfo[];
	/** The console's chat: `cron add` entries answer there, `tools call` runs from it. */
	consoleChat: ChatRef;
	/** The session a chat talks in ("" = none). */
	sessionFor(chat: ChatRef): string;
	/** Other areas' capabilities (memory's): they join the table here, so macro names cannot take theirs. */
	otherTools?: Capability[];
	/** The storage root (default: embedded:storage/files). */
	files?: Directory;
	log?(line: string): void;
}

export interface CapsSetup {
	/** The capabilities of this layer and otherTools (spawn_subagent joins in core/setup). */
	tools: Capability[];
	sources: CapSource[];
	visibleGroups: VisibleGroups;
	/** The skills catalogue (a stable system-prompt section): put it before the history. */
	providers: ContextProvider[];
	scheduler: Scheduler;
	gpio: GpioBank;
	/** The stored scripts' runs: the port's run_script (router rules) and status reach it. */
	automations: Automations;
	/** `tools`, `skills`, `cron`, `gpio`, `script`; registry() is the core's (it exists once the core does). */
	commands(registry: () => Registry): Command[];
	/** Starts the scheduler; its entries fire through submit (the root core's). */
	start(submit: (request: AgentRequest, timeoutMs: number) => Promise<unknown>): void;
	stop(): void;
}

function folder(root: Directory, path: string, log: (line: string) => void): Directory {
	try {
		root.createDirectory(path);
		return root.openDirectory({ path });
	} catch (error) {
		log(`caps: the folder "${path}" cannot be used (${messageOf(error)}); its files go to the storage root instead.`);
		return root;
	}
}

export function openCaps(options: CapsOptions): CapsSetup {
	const log = options.log ?? ((line: string) => trace(line + "\n"));
	const root = options.files ?? filesRoot;
	const wallClockMs = options.wallClockMs ?? (() => Date.now());
	let zoneText = "";
	let zoneCache: TimeZone = parseTimeZone("UTC");
	const zone = (): TimeZone => {
		const text = options.config.get(TIMEZONE_SETTING) ?? "UTC";
		if (text !== zoneText) {
			zoneText = text;
			try {
				zoneCache = parseTimeZone(text);
			} catch (error) {
				log(`caps: ${messageOf(error)}; UTC is used until ${TIMEZONE_SETTING} is fixed`);
				zoneCache = parseTimeZone("UTC");
			}
		}
		return zoneCache;
	};
	const gpio = new GpioBank(options.config);
	const io = new IoBoard(options.config);
	const workspace = new Workspace(folder(root, WORKSPACE_DIRECTORY, log));
	const skills = new SkillState(new SkillCatalog(folder(root, SKILLS_DIRECTORY, log), log));
	let submit: ((request: AgentRequest, timeoutMs: number) => Promise<unknown>) | undefined;
	// A schedule that names a stored script runs it here, without the LLM (caps/automations).
	let automations: Automations | undefined;
	const scheduler = new Scheduler({
		directory: folder(root, "sched", log),
		wallClockMs,
		zone,
		log,
		fire(entry: ScheduleEntry, dueMs: number) {
			if (entry.script) {
				if (!automations) throw new Error("the automations are not running");
				automations.runScheduled(entry);
				return;
			}
			if (!submit) throw new Error("the agent is not running");
			const late = lateNote(dueMs, wallClockMs(), zone());
			const request: AgentRequest = {
				request_id: 0,
				flags: RequestFlag.PUBLISH_OUT_MESSAGE | RequestFlag.SKIP_RESPONSE_QUEUE,
				session_id: options.sessionFor(entry.chat),
				user_text: `[schedule ${entry.id} fired${late ? `, ${late}` : ""}] ${entry.text}`,
				source: { channel: Channel.CRON, chat_id: entry.chat.chat_id, sender_id: entry.id, message_id: "", cap: "scheduler" },
				target: { channel: entry.chat.channel, chat_id: entry.chat.chat_id, label: late ? `schedule ${entry.id}, ${late}` : `schedule ${entry.id}` },
				role: "cron",
			};
			return submit(request, SCHED_SUBMIT_TIMEOUT_MS).then(() => undefined);
		},
	});
	const capsFolder = folder(root, "caps", log);
	const scriptDeps = { settings: options.config, gpio, wallClockMs, zone };
	const scripts = new ScriptStore(capsFolder, wallClockMs, log);
	automations = new Automations({
		store: scripts, scheduler, gpio, deps: scriptDeps, now: options.now, publish: options.publish, sessionFor: options.sessionFor, log,
	});
	const stored = { store: scripts, automations, scheduler, now: options.now };
	const builtinNames = new Set<string>();
	const macros = new Macros(capsFolder, (name) => builtinNames.has(name), log);
	const tools: Capability[] = [
		...boardTools({ wallClockMs, now: options.now, bootMs: options.bootMs, heap: options.heap, pools: options.pools, network: options.network, zone, firmware: options.firmware }),
		...gpioTools(gpio),
		...ioTools(io),
		...fileTools(workspace),
		...scheduleTools(scheduler),
		...skillTools(skills),
		...macroTools(macros),
		...messagingTools({
			send: (channel, chatId, text) => options.publish({ type: "out_message", channel, chat_id: chatId, text, request_id: 0, correlation_id: "" }),
			channels: options.messageChannels ?? (() => [{ name: options.consoleChat.channel, running: true, chats: [options.consoleChat.chat_id] }]),
			inferMedia: options.inferMedia,
		}),
		...scriptTools(scriptDeps),
		...(metered ? storedScriptTools(stored) : []),
		...(options.otherTools ?? []),
	];
	for (const cap of tools) builtinNames.add(cap.definition.function.name);
	builtinNames.add(SPAWN_SUBAGENT);
	return {
		tools,
		sources: [macros],
		visibleGroups: skills.visibleGroups,
		providers: [skills.provider],
		scheduler,
		gpio,
		automations,
		commands: (registry) => [
			...toolCommands({ registry, chat: options.consoleChat, session: () => options.sessionFor(options.consoleChat) }),
			...skillCommands(skills),
			...cronCommands(scheduler, options.consoleChat),
			...gpioCommands(gpio),
			...ioCommands(io),
			...(metered ? scriptCommands(stored) : []),
		],
		start(submitTo) {
			submit = submitTo;
			scheduler.start();
			if (metered) automations?.start(submitTo);
		},
		stop() {
			scheduler.stop();
			automations?.stop();
			gpio.close();
			io.close();
		},
	};
}
