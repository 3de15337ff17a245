// router/setup: the event router for main.ts, its rules file (router/rules.json
// in the storage, read at start and by `router reload`) and its console
// commands: `router rules` (the rules in force) and `router reload`.
import type { Directory } from "util/io";
import { ROUTER_RULES_FILE_MAX_BYTES } from "budgets";
import { RequestFlag } from "core/types";
import { UsageError, words, type Command } from "console/types";
import { messageOf } from "util/errors";
import { decodeText, readWhole } from "util/files";
import { Router } from "router/router";
import type { Action } from "router/rules";
import type { AgentPort, CapRunner, ScriptRunner } from "router/types";

export const RULES_DIRECTORY = "router";
export const RULES_FILE = "rules.json";

export interface RouterSetupOptions {
	port: AgentPort;
	files: Directory;
	callCap?: CapRunner;
	runScript?: ScriptRunner;
	log(line: string): void;
}

export interface RouterSetup {
	router: Router;
	commands: Command[];
	/** A sentence when the rules file at start could not be used. */
	warning?: string;
}

function flagNames(flags: number): string {
	const names = Object.entries(RequestFlag).filter(([, bit]) => flags & bit).map(([name]) => name);
	return names.length ? names.join("|") : "no flags";
}

function describe(action: Action): string {
	switch (action.type) {
		case "run_agent":
			return `run_agent (${flagNames(action.flags)})${action.text ? ` with "${action.text}"` : ""}`;
		case "call_cap":
			return `call_cap ${action.cap} ${JSON.stringify(action.args)}${action.reply ? " (result replied)" : ""}`;
		case "run_script":
			return `run_script ${action.script}${action.reply ? " (result replied)" : ""}`;
		case "send_message":
			return `send_message "${action.text}"${action.channel || action.chat ? ` to ${action.channel ?? "(same)"}:${action.chat ?? "(same)"}` : ""}`;
	}
}

/** Reads the rules file: its text, undefined when there is none, or a sentence why it cannot be read. */
function readRules(files: Directory): { text?: string; error?: string } {
	try {
		const read = readWhole(files, `${RULES_DIRECTORY}/${RULES_FILE}`, ROUTER_RULES_FILE_MAX_BYTES);
		if (read.kind === "missing") return {};
		if (read.kind === "too_big") return { error: `${RULES_DIRECTORY}/${RULES_FILE} is ${read.size} bytes, more than ${ROUTER_RULES_FILE_MAX_BYTES}; the previous rules stay in force` };
		const text = decodeText(read.bytes);
		if (text === undefined) return { error: `${RULES_DIRECTORY}/${RULES_FILE} is not UTF-8 text; the previous rules stay in force` };
		return { text };
	} catch (error) {
		return { error: `${RULES_DIRECTORY}/${RULES_FILE} cannot be read (${messageOf(error)}); the previous rules stay in force` };
	}
}

export function openRouter(options: RouterSetupOptions): RouterSetup {
	const router = new Router({ port: options.port, callCap: options.callCap, runScript: options.runScript, log: options.log });
	const load = (): string | undefined => {
		const { text, error } = readRules(options.files);
		return error ?? router.load(text);
	};
	const warning = load();
	const noArgs = (args: string) => {
		if (words(args).length) throw new UsageError();
	};
	const commands: Command[] = [
		{
			name: "router rules", usage: "", help: `the routing rules in force (from ${RULES_DIRECTORY}/${RULES_FILE}) and the fallback`,
			run(args, out) {
				noArgs(args);
				router.rules.forEach((rule, i) => {
					const m = rule.match;
					const when = [m.channel && `channel=${m.channel}`, m.chat && `chat=${m.chat}`, m.sender && `sender=${m.sender}`, m.role && `role=${m.role}`, m.text && `text~${m.text.source}`].filter(Boolean).join(" ");
					out.line(`${i + 1}. ${rule.name}: ${m.event}${when ? ` ${when}` : ""} -> ${describe(rule.action)}`);
				});
				out.line(`fallback: ${describe(router.fallback)}`);
			},
		},
		{
			name: "router reload", usage: "", help: `read ${RULES_DIRECTORY}/${RULES_FILE} again (a malformed file is reported; the rules in force stay)`,
			run(args, out) {
				noArgs(args);
				const problem = load();
				if (problem) throw new Error(problem);
				out.line(`router: ${router.rules.length} rule(s) in force`);
			},
		},
	];
	return { router, commands, warning: warning && `router: ${warning}` };
}
