// core/console: the agent core on the serial console (SPEC §8): `ask`, `cancel`
// and the core's `status` lines.
//
// `ask TEXT` submits a request from source channel "console" in the console's
// current session (a function the session store provides; "" = none yet, so
// nothing is persisted) and waits for its answer on the response queue, at most
// CONSOLE_ASK_TIMEOUT_MS. While it waits it prints one line per tool the agent
// runs, then the answer, or "error: <sentence>". `ask` is not concurrent: the
// console holds a second `ask` until the first has its answer. `cancel` is
// concurrent, so it runs while an `ask` waits.
//
// consoleMessages() prints the out_message events addressed to the console
// channel: answers nobody waits for with `ask`, such as the agent's reply to a
// subagent's report that arrived after the ask that started it had its answer.
//
// This file depends on AgentConsole, the narrow part of the core it uses, so it
// stays independent of how the core is assembled (core/setup adapts the Core).
// Known limits: text deltas are not streamed to the console (the answer is
// printed whole), because a retried attempt would have to take back printed text.
import { CONSOLE_ASK_TIMEOUT_MS, CONSOLE_SUBMIT_TIMEOUT_MS } from "budgets";
import { UsageError, words, type Command, type Output } from "console/types";
import { Channel, type AgentEvent, type AgentRequest, type AgentResponse, type OutEvent, type Phase } from "core/types";
import { messageOf } from "util/errors";

/** The source and target channel of console requests. */
export const CONSOLE_CHANNEL = Channel.CONSOLE;

/** What the console needs of the agent core. */
export interface AgentConsole {
	/** Queues a request (request_id 0); resolves with its id; rejects with a sentence when the queue stays full. */
	submit(request: AgentRequest, timeoutMs: number): Promise<number>;
	/** The response for the id; rejects when none comes within timeoutMs (an Error named "ResponseTimeout"), or with another sentence. */
	receiveFor(requestId: number, timeoutMs: number): Promise<AgentResponse>;
	/** Cancels the request (0: the one in flight); false when nothing matched. */
	cancel(requestId: number): boolean;
	phase(): Phase;
	/** Requests waiting in the queue (not counting the one in flight). */
	queueDepth(): number;
	/** The id of the request in flight, 0 when none. */
	inFlight(): number;
	/** Adds an event listener; returns its removal. Optional: without it no tool lines are printed. */
	watch?(listener: (event: AgentEvent) => void): () => void;
}

export interface CoreConsoleDeps {
	core: AgentConsole;
	/** The console's current session id; "" when there is none (nothing is persisted then). */
	session(): string;
	/** The console's chat id in request sources (default "local"). */
	chatId?: string;
	/** Overrides for tests; the budgets otherwise. */
	askTimeoutMs?: number;
	submitTimeoutMs?: number;
}

function consoleRequest(text: string, sessionId: string, chatId: string): AgentRequest {
	return {
		request_id: 0,
		flags: 0,
		session_id: sessionId,
		user_text: text,
		source: { channel: CONSOLE_CHANNEL, chat_id: chatId, sender_id: "console", message_id: "", cap: "" },
	};
}

// Prints the answer line by line: the console's Output takes one line per call.
function printText(out: Output, text: string): void {
	for (const line of text.split(/\r?\n/)) out.line(line);
}

/** `ask`, `cancel`, and the status line provider for `status`. */
export function coreConsole(deps: CoreConsoleDeps): { commands: Command[]; statusLines: Array<() => string> } {
	const { core } = deps;
	const askTimeoutMs = deps.askTimeoutMs ?? CONSOLE_ASK_TIMEOUT_MS;
	const submitTimeoutMs = deps.submitTimeoutMs ?? CONSOLE_SUBMIT_TIMEOUT_MS;

	const ask: Command = {
		name: "ask",
		usage: "TEXT",
		help: "ask the agent; waits for the answer (cancel stops it)",
		async run(args, out) {
			if (!args) throw new UsageError();
			let id = 0;
			// Tool lines for this request only; the listener is removed whatever happens.
			const unwatch = core.watch?.((event) => {
				if (event.request_id !== id || id === 0) return;
				if (event.type === "tool_execution_start") out.line(`… ${event.call.name}`);
				else if (event.type === "tool_execution_end" && event.is_error) out.line(`… ${event.name} failed`);
			});
			try {
				try {
					id = await core.submit(consoleRequest(args, deps.session(), deps.chatId ?? "local"), submitTimeoutMs);
				} catch (error) {
					out.line(`error: ${messageOf(error)}`);
					return;
				}
				let response: AgentResponse;
				try {
					response = await core.receiveFor(id, askTimeoutMs);
				} catch (error) {
					// Nobody would read the answer any more: stop the work instead of parking it.
					core.cancel(id);
					if (error instanceof Error && error.name === "ResponseTimeout") {
						out.line(`error: no answer within ${Math.round(askTimeoutMs / 1000)} s, so the request was cancelled; try again, or check the LLM with llm test.`);
					} else {
						out.line(`error: ${messageOf(error)}; request ${id} was cancelled, try again`);
					}
					return;
				}
				if (response.ok) printText(out, response.text);
				else out.line(`error: ${response.error ?? "the request failed without saying why; see the log"}`);
			} finally {
				unwatch?.();
			}
		},
	};

	const cancel: Command = {
		name: "cancel",
		usage: "[REQUEST]",
		help: "stop the agent's request in flight (or the numbered one)",
		concurrent: true,
		run(args, out) {
			const given = words(args);
			if (given.length > 1 || (given.length === 1 && !/^[1-9]\d{0,8}$/.test(given[0]))) throw new UsageError();
			const id = given.length ? Number(given[0]) : core.inFlight();
			if (id === 0) return out.line("nothing is running");
			if (core.cancel(id)) out.line(`request ${id} cancelled`);
			else out.line(`request ${id} is not running or waiting: nothing to cancel`);
		},
	};

	const statusLines = [
		() => {
			const inFlight = core.inFlight();
			return `agent: ${core.phase()}, ${inFlight ? `request ${inFlight} in flight` : "nothing in flight"}, ${core.queueDepth()} waiting`;
		},
	];

	return { commands: [ask, cancel], statusLines };
}

/**
 * An outbound-event handler (core/setup's publish) that prints out_message events
 * for the console channel: a line naming the request, then the text. Other
 * channels' events and stage messages are ignored (the router delivers those;
 * `ask` prints its own tool lines). print must not throw.
 */
export function consoleMessages(print: (line: string) => void): (event: OutEvent) => void {
	return (event) => {
		if (event.type !== "out_message" || event.channel !== CONSOLE_CHANNEL) return;
		print(`agent (request ${event.request_id}):`);
		for (const line of event.text.split(/\r?\n/)) print(line);
	};
}
