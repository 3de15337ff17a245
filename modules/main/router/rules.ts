// router/rules: the rules file's parser (router/rules.json in the storage; the
// format is in modules/main/router/NOTES.md). A rule matches an event on its channel,
// chat, sender, role, type and a text pattern, and names one action: run_agent
// (with flags and an optional text template), call_cap (a tool without the LLM),
// run_script (a stored script with the router trigger, without the LLM) or
// send_message (a fixed reply). The first rule that matches wins; an event no
// rule matches takes the fallback (by default run_agent with every flag on).
//
// The parser is strict: an unknown field, a wrong type, a bad pattern or a bad
// flag name throws a RulesError naming the field at fault ("rules[2].match.text:
// ..."), so the router keeps the rules it had. Fuzzed in test/unit/router_fuzz.
import { ROUTER_PATTERN_MAX_CHARS, ROUTER_RULES_MAX, ROUTER_TEXT_MAX_CHARS } from "budgets";
import { isObject } from "util/values";
import { CHAT_ROLES, RequestFlag, type ChatRole } from "core/types";

export const EVENT_TYPES = Object.freeze(["in_message"] as const);
export type EventType = (typeof EVENT_TYPES)[number];

export interface Match {
	channel?: string;
	chat?: string;
	sender?: string;
	role?: ChatRole;
	event: EventType;
	text?: RegExp;
}

export type Action =
	| { type: "run_agent"; flags: number; text?: string }
	| { type: "call_cap"; cap: string; args: Record<string, unknown>; reply: boolean }
	/** Runs a stored script of the owner's (one with the router trigger) without the LLM; its result is replied when reply. */
	| { type: "run_script"; script: string; reply: boolean }
	| { type: "send_message"; text: string; channel?: string; chat?: string };

export interface Rule {
	name: string;
	match: Match;
	action: Action;
}

export interface RuleSet {
	rules: Rule[];
	fallback: Action;
}

/** The flags the router sets for chat messages (seed 000 §3.2: all four). */
export const CHAT_FLAGS = RequestFlag.PUBLISH_OUT_MESSAGE | RequestFlag.SKIP_RESPONSE_QUEUE | RequestFlag.USER_INTERRUPT | RequestFlag.PUBLISH_STAGE_MESSAGE;

export const DEFAULT_RULES: RuleSet = Object.freeze({ rules: [], fallback: { type: "run_agent", flags: CHAT_FLAGS } }) as RuleSet;

/** A rules file that cannot be used; the message names the field at fault. */
export class RulesError extends Error {
	override name = "RulesError";
}

const FLAG_NAMES = Object.keys(RequestFlag) as Array<keyof typeof RequestFlag>;

function fail(path: string, what: string): never {
	throw new RulesError(`${path}: ${what}`);
}

function fields(value: unknown, path: string, allowed: readonly string[]): Record<string, unknown> {
	if (!isObject(value)) fail(path, "must be an object");
	for (const key of Object.keys(value)) {
		if (!allowed.includes(key)) fail(`${path}.${key.slice(0, 40)}`, `is not a field here (use ${allowed.join(", ")})`);
	}
	return value;
}

function text(value: unknown, path: string, max = ROUTER_TEXT_MAX_CHARS, optional = false): string | undefined {
	if (value === undefined && optional) return undefined;
	if (typeof value !== "string") fail(path, "must be a string");
	if (!value.length) fail(path, "must not be empty");
	if (value.length > max) fail(path, `is ${value.length} characters, more than ${max}`);
	return value;
}

function pattern(value: unknown, ignoreCase: unknown, path: string): RegExp | undefined {
	const source = text(value, path, ROUTER_PATTERN_MAX_CHARS, true);
	if (ignoreCase !== undefined && typeof ignoreCase !== "boolean") fail(`${path.replace(/text$/, "ignore_case")}`, "must be true or false");
	if (source === undefined) return undefined;
	try {
		return new RegExp(source, ignoreCase ? "i" : "");
	} catch {
		return fail(path, "is not a valid regular expression");
	}
}

function readMatch(value: unknown, path: string): Match {
	const m = fields(value ?? {}, path, ["channel", "chat", "sender", "role", "event", "text", "ignore_case"]);
	const match: Match = { event: "in_message" };
	const channel = text(m.channel, `${path}.channel`, 32, true);
	const chat = text(m.chat, `${path}.chat`, 64, true);
	const sender = text(m.sender, `${path}.sender`, 64, true);
	if (channel !== undefined) match.channel = channel;
	if (chat !== undefined) match.chat = chat;
	if (sender !== undefined) match.sender = sender;
	if (m.role !== undefined) {
		if (!CHAT_ROLES.includes(m.role as ChatRole)) fail(`${path}.role`, `must be one of ${CHAT_ROLES.join(", ")}`);
		match.role = m.role as ChatRole;
	}
	if (m.event !== undefined) {
		if (!EVENT_TYPES.includes(m.event as EventType)) fail(`${path}.event`, `must be one of ${EVENT_TYPES.join(", ")}`);
		match.event = m.event as EventType;
	}
	const textPattern = pattern(m.text, m.ignore_case, `${path}.text`);
	if (textPattern) match.text = textPattern;
	return match;
}

function readFlags(value: unknown, path: string): number {
	if (value === undefined) return CHAT_FLAGS;
	if (!Array.isArray(value)) fail(path, `must be a list of flag names (${FLAG_NAMES.join(", ")})`);
	if (value.length > FLAG_NAMES.length) fail(path, `has ${value.length} entries, more than the ${FLAG_NAMES.length} flags`);
	let flags = 0;
	value.forEach((name, i) => {
		if (!FLAG_NAMES.includes(name as keyof typeof RequestFlag)) fail(`${path}[${i}]`, `must be one of ${FLAG_NAMES.join(", ")}`);
		flags |= RequestFlag[name as keyof typeof RequestFlag];
	});
	return flags;
}

function readAction(value: unknown, path: string): Action {
	if (!isObject(value)) fail(path, "must be an object with a type (run_agent, call_cap, run_script or send_message)");
	switch (value.type) {
		case "run_agent": {
			const a = fields(value, path, ["type", "flags", "text"]);
			const action: Action = { type: "run_agent", flags: readFlags(a.flags, `${path}.flags`) };
			const template = text(a.text, `${path}.text`, ROUTER_TEXT_MAX_CHARS, true);
			if (template !== undefined) action.text = template;
			return action;
		}
		case "call_cap": {
			const a = fields(value, path, ["type", "cap", "args", "reply"]);
			const cap = text(a.cap, `${path}.cap`, 64) as string;
			if (a.args !== undefined && !isObject(a.args)) fail(`${path}.args`, "must be an object of the tool's arguments");
			if (a.reply !== undefined && typeof a.reply !== "boolean") fail(`${path}.reply`, "must be true or false");
			return { type: "call_cap", cap, args: (a.args as Record<string, unknown> | undefined) ?? {}, reply: a.reply !== false };
		}
		case "run_script": {
			const a = fields(value, path, ["type", "script", "reply"]);
			const script = text(a.script, `${path}.script`, 64) as string;
			if (a.reply !== undefined && typeof a.reply !== "boolean") fail(`${path}.reply`, "must be true or false");
			return { type: "run_script", script, reply: a.reply === true };
		}
		case "send_message": {
			const a = fields(value, path, ["type", "text", "channel", "chat"]);
			const action: Action = { type: "send_message", text: text(a.text, `${path}.text`) as string };
			const channel = text(a.channel, `${path}.channel`, 32, true);
			const chat = text(a.chat, `${path}.chat`, 64, true);
			if (channel !== undefined) action.channel = channel;
			if (chat !== undefined) action.chat = chat;
			return action;
		}
		default:
			return fail(`${path}.type`, "must be run_agent, call_cap, run_script or send_message");
	}
}

/** Parses a rules file's text. Throws a RulesError naming the field at fault. */
export function parseRules(source: string): RuleSet {
	let json: unknown;
	try {
		json = JSON.parse(source);
	} catch (error) {
		throw new RulesError(`the file is not valid JSON (${error instanceof Error ? error.message : "parse error"})`);
	}
	const top = fields(json, "file", ["version", "rules", "fallback"]);
	if (top.version !== undefined && top.version !== 1) fail("version", "must be 1");
	const list = top.rules ?? [];
	if (!Array.isArray(list)) fail("rules", "must be a list");
	if (list.length > ROUTER_RULES_MAX) fail("rules", `has ${list.length} rules, more than ${ROUTER_RULES_MAX}`);
	const names = new Set<string>();
	const rules = list.map((value, i): Rule => {
		const path = `rules[${i}]`;
		const r = fields(value, path, ["name", "match", "action"]);
		const name = text(r.name, `${path}.name`, 64, true) ?? `rule ${i + 1}`;
		if (names.has(name)) fail(`${path}.name`, `"${name}" is used by an earlier rule`);
		names.add(name);
		return { name, match: readMatch(r.match, `${path}.match`), action: readAction(r.action, `${path}.action`) };
	});
	const fallback = top.fallback === undefined ? DEFAULT_RULES.fallback : readAction(top.fallback, "fallback");
	return { rules, fallback };
}

/** The first rule matching the message, or undefined. */
export function findRule(set: RuleSet, message: { channel: string; chat_id: string; sender_id: string; role: ChatRole; text: string }): Rule | undefined {
	return set.rules.find(({ match }) =>
		(match.channel === undefined || match.channel === message.channel) &&
		(match.chat === undefined || match.chat === message.chat_id) &&
		(match.sender === undefined || match.sender === message.sender_id) &&
		(match.role === undefined || match.role === message.role) &&
		(match.text === undefined || match.text.test(message.text)));
}

/** Fills {text}, {channel}, {chat} and {sender} in a template; other braces stay as they are. */
export function fill(template: string, message: { channel: string; chat_id: string; sender_id: string; text: string }): string {
	return template.replace(/\{(text|channel|chat|sender)\}/g, (_, name: string) =>
		name === "text" ? message.text : name === "channel" ? message.channel : name === "chat" ? message.chat_id : message.sender_id);
}
