// memory/setup: opens long-term memory (mode from the setting memory.mode, read
// once here) and the profile in the directory "memory" under the files root, and
// hands main.ts what plugs into the core and the console:
//   providers: [profile, memory, relevant_memory]  (SYSTEM_PROMPT, REQUEST_START_ONLY;
//              register them before the history provider: the first two are stable
//              text; relevant_memory is VOLATILE, so the core puts it after the history)
//   tools:     memory_write/read/search/forget, profile_read/update (Capability[])
//   commands:  memory list|show|add|search|forget|mode, profile show|set|clear
// Never throws: a damaged file is kept aside and logged, an unknown mode falls back
// to full with a log line, and memory starts usable.
import { files as filesRoot, type Directory } from "util/io";
import type { Command } from "console/types";
import type { Capability } from "caps/types";
import type { ContextProvider } from "core/types";
import { memoryCommands } from "memory/console";
import { LightMemory } from "memory/light";
import { Profile } from "memory/profile";
import { memoryProvider, profileProvider, relevantMemoryProvider, type Sees } from "memory/providers";
import { FullMemory } from "memory/records";
import { memoryTools, profileTools } from "memory/tools";
import type { Log, LongTermMemory, MemoryMode, SettingsSource } from "memory/types";
import { messageOf } from "util/errors";
import { log as logInfo } from "util/log";

export const MEMORY_DIRECTORY = "memory";
export const MODE_SETTING = "memory.mode";

export interface MemorySetup {
	memory: LongTermMemory;
	profile: Profile;
	providers: ContextProvider[];
	tools: Capability[];
	commands: Command[];
	/** A sentence for the console when something works only partly (unknown mode, no directory). */
	warning?: string;
}

export interface MemoryOptions {
	/** Settings; memory.mode = "full" (default) | "light". */
	config: SettingsSource;
	/** Where the "memory" directory lives (default: the files root). */
	files?: Directory;
	/** One line per problem found (default: trace). */
	log?: Log;
	/** Wall clock for record dates (default Date.now). */
	now?: () => number;
	/** Which requests' prompts carry the user notes and memory (default: every request's; agent/machine asks caps/policy). */
	sees?: Sees;
}

function openDirectory(files: Directory, log: Log): Directory {
	try {
		files.createDirectory(MEMORY_DIRECTORY);
		return files.openDirectory({ path: MEMORY_DIRECTORY });
	} catch (error) {
		log(`memory: the directory "${MEMORY_DIRECTORY}" cannot be used (${messageOf(error)}); memory files go to the storage root instead.`);
		return files;
	}
}

export function openMemory({ config, files = filesRoot, log = logInfo, now, sees }: MemoryOptions): MemorySetup {
	const setting = config.get(MODE_SETTING);
	let mode: MemoryMode = "full";
	let warning: string | undefined;
	if (setting === "light" || setting === "full") mode = setting;
	else if (setting !== undefined) {
		warning = `the setting ${MODE_SETTING} is "${setting}", which is not a memory mode: full is used; set it to full or light.`;
		log(`memory: ${warning}`);
	}
	const directory = openDirectory(files, log);
	const memory: LongTermMemory = mode === "light" ? new LightMemory(directory, log) : new FullMemory(directory, log, now);
	const profile = new Profile(directory, log);
	return {
		memory,
		profile,
		providers: [profileProvider(profile, sees), memoryProvider(memory, undefined, sees), relevantMemoryProvider(memory, undefined, undefined, sees)],
		tools: [...memoryTools(memory), ...profileTools(profile)],
		commands: memoryCommands(memory, profile, warning),
		warning,
	};
}
