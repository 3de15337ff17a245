// console/reset: `factory-reset confirm` (SPEC §8). It wipes what the person put
// on the board: every setting (config), the storage directories of the
// sessions, long-term memory and profile, schedules, the agent's files and
// macro tools, and chat pairing, then restarts the firmware so no module keeps
// the old state in RAM. It says what it wiped.
//
// Each machine wipes what it owns (ARCHITECTURE.md): the agent machine is asked
// over the port to stop its cores, close its files and delete its directories
// (AGENT_DIRECTORIES); the main machine then clears the config and deletes the
// channels' pairing (its own directories, given by main.ts). An agent machine that is down holds no
// file, so then the main machine deletes the agent's directories itself.
//
// A storage this boot could not mount (util/io's storage.refused) holds no
// directory to wipe: it is erased instead, so the next boot formats it (issue 26).
//
// Known limit: the LLM usage counts (namespace "llm") and the request-id block
// (namespace "core") are kept: limits still count, ids stay unique.
import type { Directory } from "util/io";
import type { Config } from "config/store";
import { UsageError, type Command } from "console/types";
import { messageOf } from "util/errors";
import { wipeDirectories, type WipeResult, type WipedDirectory } from "util/files";
import { AGENT_DIRECTORIES } from "agent/protocol";

export interface ResetDeps {
	config: Config;
	/** The storage root (embedded:storage/files). */
	files: Directory;
	/** The main machine's own directories (the channels' pairing). */
	directories: readonly WipedDirectory[];
	/** Has the agent machine stop and wipe its directories; undefined when no agent machine runs. */
	wipeAgent(): Promise<WipeResult> | undefined;
	/** Restarts the firmware (as `reboot` does). */
	restart(): void;
	/** The storage as this boot found it: refused says why it could not be mounted; erase wipes it whole. */
	storage?: { refused?: string; erase(): void };
}

/** What the console says at boot when the storage could not be mounted. */
export function storageRefusedWarning(reason: string): string {
	return `the storage was not mounted, so sessions, memory, files, schedules and chat pairing are not available: ${reason}. Nothing on it was changed; factory-reset confirm erases it (everything on it is lost) and starts with an empty one.`;
}

export function factoryResetCommand(deps: ResetDeps): Command {
	return {
		name: "factory-reset",
		usage: "confirm",
		help: "wipe settings, sessions, memory and pairing, then restart",
		restarts: true,
		async run(args, out) {
			if (args !== "confirm") {
				if (args) throw new UsageError();
				out.line("factory-reset wipes every setting, session, memory and chat pairing on this board, then restarts: type factory-reset confirm to do it.");
				return;
			}
			if (deps.storage?.refused !== undefined) {
				try {
					deps.storage.erase();
				} catch (error) {
					out.line(`error: ${messageOf(error)}; nothing was wiped.`);
					return;
				}
				const settings = deps.config.clear();
				out.line(`factory reset: erased the storage (it could not be mounted), wiped ${settings} setting${settings === 1 ? "" : "s"}; restarting…`);
				deps.restart();
				return;
			}
			let agent: WipeResult;
			const asked = deps.wipeAgent();
			try {
				agent = asked ? await asked : wipeDirectories(deps.files, AGENT_DIRECTORIES);
			} catch (error) {
				agent = { wiped: [], errors: [`the agent could not wipe its files (${messageOf(error)})`] };
			}
			const settings = deps.config.clear();
			const own = wipeDirectories(deps.files, deps.directories);
			for (const error of [...agent.errors, ...own.errors]) out.line(`error: ${error}; the rest was wiped, run factory-reset confirm again after the restart.`);
			const wiped = [`${settings} setting${settings === 1 ? "" : "s"}`, ...agent.wiped, ...own.wiped];
			out.line(`factory reset: wiped ${wiped.join(", ")}; restarting…`);
			deps.restart();
		},
	};
}
