// agent/console: the agent on the serial console (SPEC §8), in the main machine:
// `ask`, `cancel`, the agent's lines of `status`, the commands the agent machine
// owns (`session ...`, `memory ...`, `profile ...`, `llm ...`) as proxies. ask,
// cancel and the proxies go through the router, as every channel's messages,
// /stop and commands do, so a router rule applies to the console too (a rule's
// reply is the answer). Answers nobody waits for reach the console as a chat
// channel (console/channel).
//
// `ask TEXT` asks from channel "console" (as the owner) with no session id, so
// the agent machine puts it in the console's current session, and waits for the
// answer (at most CONSOLE_ASK_TIMEOUT_MS, then the agent cancels it). While it
// waits it prints one line per tool the agent runs, then the answer, or
// "error: <sentence>" (also when the agent machine stops meanwhile: the
// supervisor ends the wait at once). `ask` is not concurrent: the console holds
// a second `ask` until the first has its answer; `cancel` runs at once.
//
// A proxy command sends its name and arguments for the console's chat and
// prints the lines that come back; a usage error prints the usage, a failure
// its sentence, as for a local command. A proxy is never concurrent (even where
// the agent's command was, like `llm status`): its answer comes a turn later,
// and a concurrent one would overtake the lines typed before it. Known limit: text deltas are not
// streamed (the answer is printed whole), because a retried attempt would have
// to take back printed text.
import { CONSOLE_ASK_TIMEOUT_MS, CONSOLE_OUTPUT_LINE_MAX_CHARS, CONSOLE_SUBMIT_TIMEOUT_MS } from "budgets";
import { UsageError, words, type Command, type Output } from "console/types";
import { heapLine, type StatusOptions } from "console/system";
import type { AgentEvent, OutEvent } from "core/types";
import { lines } from "util/text";
import type { AgentClient } from "agent/client";
import { CONSOLE_CHAT, type CommandInfo } from "agent/protocol";
import type { InMessage, RouteIn } from "router/types";

export interface AgentConsoleOptions {
	/** The router: the console's way to the agent, as every channel's. */
	router: Pick<RouteIn, "ask" | "cancel">;
	/** Overrides for tests; the budgets otherwise. */
	askTimeoutMs?: number;
	submitTimeoutMs?: number;
}

function consoleMessage(text: string): InMessage {
	return { type: "in_message", channel: CONSOLE_CHAT.channel, chat_id: CONSOLE_CHAT.chat_id, sender_id: "console", message_id: "", text, role: "owner" };
}

// Prints text line by line: the console's Output takes one line per call.
function printText(out: Output, text: string): void {
	const all = lines(text);
	for (let i = 0; i < all.length; i++) {
		const line = all[i];
		if (line.length <= CONSOLE_OUTPUT_LINE_MAX_CHARS) out.line(line);
		else for (let at = 0; at < line.length; at += CONSOLE_OUTPUT_LINE_MAX_CHARS) out.line(line.slice(at, at + CONSOLE_OUTPUT_LINE_MAX_CHARS));
	}
}

function toolLine(event: AgentEvent): string | undefined {
	if (event.type === "tool_execution_start") return `… ${event.call.name}`;
	if (event.type === "tool_execution_end" && event.is_error) return `… ${event.name} failed`;
	return undefined;
}

/** `ask` and `cancel`. */
export function agentCommands(options: AgentConsoleOptions): Command[] {
	const { router } = options;
	const askTimeoutMs = options.askTimeoutMs ?? CONSOLE_ASK_TIMEOUT_MS;
	const submitTimeoutMs = options.submitTimeoutMs ?? CONSOLE_SUBMIT_TIMEOUT_MS;
	return [
		{
			name: "ask",
			usage: "TEXT",
			help: "ask the agent; waits for the answer (cancel stops it)",
			async run(args, out) {
				if (!args) throw new UsageError();
				const outcome = await router.ask(consoleMessage(args), {
					waitMs: submitTimeoutMs,
					responseMs: askTimeoutMs,
					events: ["tool_execution_start", "tool_execution_failed"],
					onEvent(event) {
						const line = toolLine(event);
						if (line) out.line(line);
					},
				});
				if (outcome.kind === "failed") out.line(`error: ${outcome.error}`);
				else if (outcome.ok) printText(out, outcome.text);
				else out.line(`error: ${outcome.error ?? "the request failed without saying why; see the log"}`);
			},
		},
		{
			name: "cancel",
			usage: "[REQUEST]",
			help: "stop the agent's request in flight (or the numbered one)",
			concurrent: true,
			async run(args, out) {
				const given = words(args);
				if (given.length > 1 || (given.length === 1 && !/^[1-9]\d{0,8}$/.test(given[0]))) throw new UsageError();
				const asked = given.length ? Number(given[0]) : 0;
				const cancelled = await router.cancel(asked);
				if (cancelled) out.line(`request ${cancelled} cancelled`);
				else if (asked) out.line(`request ${asked} is not running or waiting: nothing to cancel`);
				else out.line("nothing is running");
			},
		},
	];
}

/** A console command that runs in the agent machine, for the console's chat (through the router). */
export function proxyCommand(router: Pick<RouteIn, "command">, info: CommandInfo): Command {
	return {
		name: info.name,
		usage: info.usage,
		help: info.help,
		async run(args, out) {
			const result = await router.command(info.name, args, CONSOLE_CHAT);
			for (const line of result.lines) out.line(line);
			if (result.usage) throw new UsageError();
			if (result.error !== undefined) throw new Error(result.error);
		},
	};
}

/** The agent's `status` lines: its phase and queue, its subagents, its machine's heap, its stored scripts. */
export async function agentStatusLines(client: AgentClient, options: StatusOptions = { collect: false }): Promise<string[]> {
	const s = await client.status(options);
	return [
		`agent: ${s.phase}, ${s.in_flight ? `request ${s.in_flight} in flight` : "nothing in flight"}, ${s.queued} waiting`,
		`subagents: ${s.subagents.length ? s.subagents.map((sub) => `${sub.agent_id} ${sub.phase}`).join(", ") : "none running"}`,
		`agent heap: ${heapLine(s.heap)}`,
		...(s.automations?.length ? s.automations : s.automations ? ["scripts: none stored"] : []),
	];
}
