// store/console: the console's `session` commands (SPEC §8) over a Sessions
// manager, in the agent machine (the port runs them for the chat that asks). The
// console talks in channel "console", chat "local" (agent/protocol's
// CONSOLE_CHAT); the same commands are what /session in a chat does for its chat.
import type { Command, Output } from "console/types";
import { UsageError, words } from "console/types";
import { SESSION_SHOW_LINE_CHARS, SESSION_SHOW_MAX_RECORDS } from "budgets";
import type { Sessions } from "store/sessions";
import type { StoredRecord } from "store/session";
import { clip, oneLine } from "util/text";
import { maskedJson } from "util/secrets";
import { CONSOLE_CHAT, type ChatRef } from "agent/protocol";
import { REQUEST_CONTEXT_MARK } from "core/types";

function kib(bytes: number): string {
	return `${(bytes / 1024).toFixed(1)} KiB`;
}

function when(ms: number): string {
	return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) : "-";
}

function shortLine(text: string): string {
	return clip(oneLine(text), SESSION_SHOW_LINE_CHARS);
}

/** One readable line per record: time, kind, request, and its text or tool calls. */
export function describeRecord(record: StoredRecord): string {
	const m = record.message;
	let text: string;
	if (m.role === "assistant" && m.tool_calls?.length) {
		text = m.tool_calls.map((c) => `${c.function.name}(${maskedJson(c.function.arguments)})`).join(", ");
		if (m.content) text = `${m.content} -> ${text}`;
	} else if (typeof m.content === "string") {
		// A question is kept as it was sent: its own words here, without the volatile block.
		const cut = m.role === "user" ? m.content.indexOf(REQUEST_CONTEXT_MARK) : -1;
		text = cut < 0 ? m.content : m.content.slice(0, cut);
	}
	else if (Array.isArray(m.content)) text = m.content.map((p) => (p.type === "text" ? p.text : "[image]")).join(" ");
	else text = "";
	const tool = m.role === "tool" ? ` ${m.tool_call_id}${m.is_error ? " error" : ""}` : "";
	const done = record.turn_completed ? " (turn done)" : "";
	return `#${record.index} ${when(record.time)} r${record.request_id} ${record.kind}${tool}${done}: ${shortLine(text)}`;
}

function printRecords(out: Output, sessions: Sessions, id: string): void {
	const records = sessions.show(id, SESSION_SHOW_MAX_RECORDS);
	if (!records.length) {
		out.line(`session ${id} has no records yet`);
		return;
	}
	for (const record of records) out.line(describeRecord(record));
}

/** The `session` commands for the console's own chat. */
export function sessionCommands(sessions: Sessions, chat: ChatRef = CONSOLE_CHAT): Command[] {
	const current = () => sessions.currentSession(chat.channel, chat.chat_id);
	// A chat's /session new and switch run these too: the sentence names who talks there.
	const who = chat.channel === CONSOLE_CHAT.channel ? "the console" : "this chat";
	const noArgs = (args: string) => {
		if (words(args).length) throw new UsageError();
	};
	const oneId = (args: string) => {
		const list = words(args);
		if (list.length !== 1) throw new UsageError();
		return list[0];
	};
	return [
		{
			name: "session", usage: "", help: "the console's current session",
			run(args, out) {
				noArgs(args);
				const id = current();
				const summary = sessions.list().find((s) => s.id === id);
				out.line(`current session: ${id} (${summary?.records ?? 0} records, ${kib(summary?.bytes ?? 0)})${summary?.blocked ? " — full: start a new one with `session new`" : ""}`);
			},
		},
		{
			name: "session new", usage: "", help: "start a new session for the console",
			run(args, out) {
				noArgs(args);
				out.line(`new session ${sessions.newSession(chat.channel, chat.chat_id)}: ${who} talks in it from now on`);
			},
		},
		{
			name: "session list", usage: "", help: "sessions on flash: id, size, records, last activity (* = current)",
			run(args, out) {
				noArgs(args);
				const mine = current();
				const list = sessions.list();
				for (const s of list) {
					out.line(`${s.id === mine ? "*" : " "} ${s.id}  ${kib(s.bytes)}  ${s.records} records  ${when(s.last_activity)}${s.blocked ? "  full" : ""}`);
				}
			},
		},
		{
			name: "session switch", usage: "ID", help: "make another session the console's current one",
			run(args, out) {
				const id = oneId(args);
				sessions.switchSession(chat.channel, chat.chat_id, id);
				out.line(`${who} now talks in session ${id}`);
			},
		},
		{
			name: "session delete", usage: "ID", help: "delete a session's files (chats in it start a new one)",
			run(args, out) {
				const id = oneId(args);
				sessions.deleteSession(id);
				out.line(`session ${id} deleted`);
			},
		},
		{
			name: "session show", usage: "[ID]", help: `the newest ${SESSION_SHOW_MAX_RECORDS} records of a session (default: current)`,
			run(args, out) {
				const list = words(args);
				if (list.length > 1) throw new UsageError();
				printRecords(out, sessions, list[0] ?? current());
			},
		},
	];
}
