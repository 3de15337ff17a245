// console/reset: `factory-reset confirm` (SPEC §8). It wipes what the person put
// on the board: every setting (config), and the storage directories of the
// sessions, long-term memory and profile, and chat pairing, then restarts the
// firmware so no module keeps the old state in RAM. It says what it wiped.
// It works on the storage itself, not through the modules that own it, because
// the restart that follows at once throws their RAM state away; the request in
// flight is cancelled by the restart.
//
// Known limit: the LLM usage counts (namespace "llm") and the request-id block
// (namespace "core") are kept: limits still count, ids stay unique.
import type { Directory } from "embedded:storage/files";
import { FACTORY_RESET_MAX_ENTRIES } from "budgets";
import type { Config } from "config/store";
import { UsageError, type Command } from "console/types";
import { messageOf } from "util/errors";

/** The storage directories wiped, with what a person calls them. */
export const WIPED_DIRECTORIES: ReadonlyArray<{ path: string; what: string }> = Object.freeze([
	{ path: "sessions", what: "sessions" },
	{ path: "memory", what: "memory and profile" },
	{ path: "telegram", what: "Telegram pairing" },
	{ path: "sched", what: "schedules" },
	{ path: "workspace", what: "the agent's files" },
	{ path: "caps", what: "macro tools" },
]);

export interface ResetDeps {
	config: Config;
	/** The storage root (embedded:storage/files). */
	files: Directory;
	/** Restarts the firmware (as `reboot` does). */
	restart(): void;
}

/** Deletes path below directory and all it holds; returns the files deleted. Bounded by FACTORY_RESET_MAX_ENTRIES. */
function removeTree(directory: Directory, path: string, budget: { left: number }): number {
	let files = 0;
	if (directory.status(path).isDirectory()) {
		for (const name of [...directory.scan(path)]) {
			if (--budget.left < 0) throw new Error(`more than ${FACTORY_RESET_MAX_ENTRIES} files under ${path}`);
			files += removeTree(directory, `${path}/${name}`, budget);
		}
	} else {
		files++;
	}
	directory.delete(path);
	return files;
}

function exists(directory: Directory, path: string): boolean {
	try {
		directory.status(path);
		return true;
	} catch {
		return false;
	}
}

export function factoryResetCommand(deps: ResetDeps): Command {
	return {
		name: "factory-reset",
		usage: "confirm",
		help: "wipe settings, sessions, memory and pairing, then restart",
		restarts: true,
		run(args, out) {
			if (args !== "confirm") {
				if (args) throw new UsageError();
				out.line("factory-reset wipes every setting, session, memory and chat pairing on this board, then restarts: type factory-reset confirm to do it.");
				return;
			}
			const wiped: string[] = [];
			const settings = deps.config.clear();
			wiped.push(`${settings} setting${settings === 1 ? "" : "s"}`);
			const budget = { left: FACTORY_RESET_MAX_ENTRIES };
			for (const { path, what } of WIPED_DIRECTORIES) {
				if (!exists(deps.files, path)) continue;
				try {
					const files = removeTree(deps.files, path, budget);
					wiped.push(`${what} (${files} file${files === 1 ? "" : "s"})`);
				} catch (error) {
					out.line(`error: ${what} could not be wiped completely (${messageOf(error)}); the rest was wiped, run factory-reset confirm again after the restart.`);
				}
			}
			out.line(`factory reset: wiped ${wiped.join(", ")}; restarting…`);
			deps.restart();
		},
	};
}
