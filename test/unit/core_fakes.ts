// Fakes for the agent core's unit tests: a scripted ChatModel (replies, tool
// calls, a reply that waits until aborted, failures) that records every chat
// request it gets, request builders, and small async helpers on real timers.
import Timer from "timer";
import { Core, type CoreOptions } from "core/core";
import { RequestFlag, type AgentEvent, type AgentRequest, type ChatModel, type ToolOutcome } from "core/types";
import { LlmError, type AssistantMessage, type ChatOptions, type ChatRequest, type ChatResponse, type Message } from "llm/types";

export interface ScriptedCall { name: string; arguments?: string; id?: string }

export type Step =
	/** A reply: text and/or tool calls (finish "tool_calls" when calls are present). */
	| { text?: string; reasoning?: string; calls?: ScriptedCall[]; tokensIn?: number; tokensOut?: number }
	/** Waits until the call is aborted, then rejects with an "aborted" LlmError. */
	| { hang: true }
	/** Waits for release (or an abort), then answers with then. */
	| { until: Promise<unknown>; then: Step }
	/** Rejects with a network LlmError carrying this message. */
	| { error: string };

let callIds = 0;

export class FakeModel implements ChatModel {
	/** Every chat request, as a JSON copy, in order. */
	readonly requests: ChatRequest[] = [];
	/** How many calls ended because their signal aborted. */
	aborted = 0;
	/** ChatModel.notReady: set to answer "not configured". */
	notReady?: () => string | undefined;
	#steps: Step[] = [];

	constructor(...steps: Step[]) {
		this.#steps = steps;
	}

	script(...steps: Step[]): this {
		this.#steps.push(...steps);
		return this;
	}

	get pending(): number { return this.#steps.length; }

	chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
		this.requests.push(JSON.parse(JSON.stringify(request)));
		const step = this.#steps.shift();
		if (!step) return Promise.reject(new LlmError("invalid", "the fake model has no more scripted replies"));
		return this.#answer(step, options);
	}

	#answer(step: Step, options: ChatOptions): Promise<ChatResponse> {
		const signal = options.signal;
		if ("hang" in step || "until" in step) {
			return new Promise<ChatResponse>((resolve, reject) => {
				const remove = signal?.addListener((reason) => {
					this.aborted++;
					reject(new LlmError("aborted", reason || "aborted"));
				}) ?? (() => {});
				if ("until" in step) step.until.then(() => { remove(); this.#answer(step.then, options).then(resolve, reject); });
			});
		}
		if ("error" in step) return Promise.reject(new LlmError("network", step.error));
		options.onEvent?.({ type: "message_start", attempt: 1 });
		if (step.text) options.onEvent?.({ type: "message_update", delta: { type: "text", text: step.text } });
		const message: AssistantMessage = { role: "assistant", content: step.text ?? null };
		if (step.reasoning) message.reasoning_content = step.reasoning;
		if (step.calls?.length) {
			message.tool_calls = step.calls.map((c) => ({ id: c.id ?? `call_${++callIds}`, type: "function", function: { name: c.name, arguments: c.arguments ?? "{}" } }));
		}
		message.raw = { protocol: "openai", message: JSON.parse(JSON.stringify({ ...message })) };
		const usage = { input_tokens: step.tokensIn ?? 10, output_tokens: step.tokensOut ?? 5, cache_read_tokens: 0, cache_write_tokens: 0 };
		options.onEvent?.({ type: "message_end", message, usage });
		return Promise.resolve({
			message, usage, model: "fake", attempts: 1, bytes_sent: 100, bytes_received: 50, elapsed_ms: 1,
			finish_reason: message.tool_calls ? "tool_calls" : "stop",
		});
	}
}

export function request(text: string, more: Partial<AgentRequest> = {}): AgentRequest {
	return {
		request_id: 0, flags: 0, session_id: "s1", user_text: text,
		source: { channel: "console", chat_id: "c1", sender_id: "u1", message_id: "m1", cap: "" },
		...more,
	};
}

export const ROUTER_FLAGS = RequestFlag.PUBLISH_OUT_MESSAGE | RequestFlag.SKIP_RESPONSE_QUEUE;

export interface Harness {
	core: Core;
	model: FakeModel;
	logs: string[];
	events: AgentEvent[];
}

/** A started core with a fake model, an echoing tool caller and collected logs and events. */
export function harness(model: FakeModel, options: Partial<CoreOptions> = {}): Harness {
	const logs: string[] = [];
	const events: AgentEvent[] = [];
	const core = new Core({
		agentId: "root",
		model,
		systemPrompt: "You are a test agent.",
		callCap: (call): ToolOutcome => ({ content: `ran ${call.name} ${call.arguments}` }),
		log: (line) => logs.push(line),
		...options,
	});
	core.addListener((event) => events.push(event));
	core.start();
	return { core, model, logs, events };
}

export function delay(ms: number): Promise<void> {
	return new Promise((resolve) => Timer.set(() => resolve(), ms));
}

/**
 * How long a test waits for an answer or a state the fakes bring about at once: a
 * bound for a hang, not a speed target (the ASan host on a loaded machine).
 */
export const ANSWER_MS = 30_000;

/** Polls until cond() holds; rejects naming what after timeoutMs. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = ANSWER_MS): Promise<void> {
	const start = Date.now();
	while (!cond()) {
		if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
		await delay(2);
	}
}

/** Timers that fire only when a test advances them. */
export class FakeTimers {
	#now = 0;
	#pending: { at: number; callback: () => void; id: number }[] = [];
	#ids = 0;
	set = (callback: () => void, ms: number): unknown => {
		const id = ++this.#ids;
		this.#pending.push({ at: this.#now + ms, callback, id });
		return id;
	};
	clear = (id: unknown): void => {
		this.#pending = this.#pending.filter((t) => t.id !== id);
	};
	get pending(): number { return this.#pending.length; }
	/** Moves fake time on by ms, firing what falls due, in order. */
	advance(ms: number): void {
		this.#now += ms;
		const due = this.#pending.filter((t) => t.at <= this.#now).sort((a, b) => a.at - b.at);
		this.#pending = this.#pending.filter((t) => t.at > this.#now);
		for (const t of due) t.callback();
	}
}

/** A promise with its resolve exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
	let resolve!: (value: T) => void;
	const promise = new Promise<T>((r) => { resolve = r; });
	return { promise, resolve };
}

/** The text of a message's content (string or text parts). */
export function textOf(message: Message): string {
	const content = message.content;
	if (content === null) return "";
	if (typeof content === "string") return content;
	return content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** Every user message text in a recorded request. */
export function userTexts(chat: ChatRequest): string[] {
	return chat.messages.filter((m) => m.role === "user").map(textOf);
}
