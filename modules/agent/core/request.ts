// core/request: a request as the core holds it: the checked copy of what was
// submitted (copyRequest), where its answer goes (targetOf), and the state of
// one run of it (Run) that the loop, the context builder and the formatting
// share. Nothing here does I/O.
import { AGENT_PORT_LABEL_MAX_CHARS, CORE_ERROR_MAX_CHARS } from "budgets";
import { Aborter } from "net/abort";
import { emptyUsage } from "llm/json";
import type { AbortSignalLike } from "net/types";
import type { ChatOptions, Message, Usage } from "llm/types";
import { ROLES, type AgentRequest, type ContextContent, type RequestTarget } from "core/types";
import { messageOf } from "util/errors";
import { clip } from "util/text";
import { isObject } from "util/values";

/** Thrown inside the loop to end a request with a sentence for a person. */
export class RequestFailure extends Error {
	override name = "RequestFailure";
}

export const CANCELLED = "request cancelled";

/**
 * The system message as core/context laid it out, with the stable provider
 * sections it was made from (name and text, pairwise): reused while they stay
 * the same, by the next iteration and by the core's next request.
 */
export interface SystemParts {
	stable: string[];
	message: Message;
}

/**
 * A MESSAGES provider's history as core/context keeps it: messages[from, to) of
 * the array it is in (the provider's own, or the prompt it pushed onto), and the
 * last one as given (the prompt holds a copy marked as a cache breakpoint).
 */
export interface HistoryPart {
	kind: "history";
	messages: Message[];
	from: number;
	to: number;
	last: Message;
}

/** A provider's content as core/context keeps it (messages as a HistoryPart). */
export type Part = Exclude<ContextContent, { kind: "messages" }> | HistoryPart | undefined;

/**
 * What the last iteration of a request laid out (core/context), reused by the
 * next one when the providers gave the same again: the prompt's array itself
 * (the user message at userAt, then `runtime` messages of the request's own),
 * the history parts it holds, their last message marked as a cache breakpoint,
 * the current user message. `volatile` holds provider name and text, pairwise.
 */
export interface PromptParts {
	volatile: string[];
	user: Message;
	lastHistory: Message | undefined;
	marked: Message | undefined;
	histories: HistoryPart[];
	messages: Message[];
	userAt: number;
	runtime: number;
}

/** The state of the request in flight. */
export interface Run {
	request: AgentRequest;
	/** Cancels the whole request (tools see its signal). */
	aborter: Aborter;
	/** The LLM call in flight, if any: an interrupt aborts only this (cancel aborts it too). */
	call?: Aborter;
	/** The request's LLM call signal and options, reused by its calls until an interrupt aborts one. */
	callAborter?: Aborter;
	callOptions?: ChatOptions;
	cancelled: boolean;
	/** The call in flight was aborted by a user interrupt (not a failure). */
	interruptAbort: boolean;
	/** Interrupts waiting for a checkpoint, and those already merged in. */
	inserts: AgentRequest[];
	taken: AgentRequest[];
	/** REQUEST_START_ONLY results (undefined = "nothing" is cached too). */
	startCache: Map<string, Part>;
	providersUsed: string[];
	/** The last iteration's prompt parts (core/context), for the next iteration to reuse. */
	prompt?: PromptParts;
	/** The last system message laid out (by this request, or the core's request before). */
	system?: SystemParts;
	/** This request's messages after the current user message. */
	runtime: Message[];
	/** Minute-resolution wall time, computed once per request. */
	time: string;
	/** The request passed the gate and the model is configured: it is a turn of its session. */
	begun: boolean;
	/**
	 * The user message is in the session: as the first round sent it (the text with
	 * its volatile block), so the next request's history repeats it byte for byte.
	 */
	userPersisted: boolean;
	toolNames: string[];
	toolSummary: string[];
	started: number;
	llmMs: number;
	toolMs: number;
	rounds: number;
	usage: Usage;
	bytesSent: number;
	bytesReceived: number;
	peakHeap: number;
}

/** The state of a request that starts now. */
export function newRun(request: AgentRequest, started: number, time: string): Run {
	return {
		request, aborter: new Aborter(), cancelled: false, interruptAbort: false, inserts: [], taken: [], startCache: new Map(),
		providersUsed: [], runtime: [], time, begun: false, userPersisted: false, toolNames: [], toolSummary: [], started,
		llmMs: 0, toolMs: 0, rounds: 0, usage: emptyUsage(), bytesSent: 0, bytesReceived: 0, peakHeap: 0,
	};
}

/** Where a request's answer goes: its target, else back to its source. */
export function targetOf(request: AgentRequest): RequestTarget {
	return request.target ?? { channel: request.source.channel, chat_id: request.source.chat_id };
}

/** A caught value as a sentence for a request's error, cut to CORE_ERROR_MAX_CHARS. */
export function failureText(error: unknown): string {
	return clip(messageOf(error) || "an unknown error", CORE_ERROR_MAX_CHARS);
}

/** Settles like promise, or rejects with the signal's reason as soon as it aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignalLike): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		const remove = signal.addListener((reason) => reject(new Error(reason)));
		promise.then(
			(value) => { remove(); resolve(value); },
			(error) => { remove(); reject(error); },
		);
	});
}

/**
 * A deep copy of a submitted request, checked for shape: its known fields (a
 * request is data: request_id, flags, session_id, user_text, source, target,
 * role; nothing else is kept), strings shared (they cannot change). Field by
 * field, not a JSON round trip: in XS that made the JSON text and a second
 * pair of objects per request (~1.5 KiB of heap on lin). Throws a sentence
 * naming the bad field.
 */
export function copyRequest(request: AgentRequest): AgentRequest {
	const given: unknown = request;
	if (!isObject(given)) throw new Error("the request must be an object");
	if (typeof given.user_text !== "string" || !given.user_text) throw new Error("the request has no user_text; say something to the agent");
	if (typeof given.session_id !== "string") throw new Error("the request's session_id must be a string (\"\" for none)");
	const flags = given.flags;
	if (typeof flags !== "number" || !Number.isInteger(flags) || flags < 0) throw new Error("the request's flags must be a sum of RequestFlag values");
	const source = given.source;
	if (!isObject(source)) throw new Error("the request has no source (channel, chat_id, sender_id, message_id, cap)");
	const copy: AgentRequest = {
		request_id: typeof given.request_id === "number" && Number.isFinite(given.request_id) ? given.request_id : 0, flags, session_id: given.session_id, user_text: given.user_text,
		source: { channel: sourceField(source, "channel"), chat_id: sourceField(source, "chat_id"), sender_id: sourceField(source, "sender_id"), message_id: sourceField(source, "message_id"), cap: sourceField(source, "cap") },
	};
	if (given.role !== undefined) {
		if (!(ROLES as readonly unknown[]).includes(given.role)) throw new Error(`the request's role must be one of ${ROLES.join(", ")} (or be left out)`);
		copy.role = given.role as AgentRequest["role"];
	}
	if (given.target !== undefined) {
		const target = given.target;
		if (!isObject(target) || typeof target.channel !== "string" || typeof target.chat_id !== "string") {
			throw new Error("the request's target must have a channel and a chat_id (or be left out to answer the source)");
		}
		copy.target = { channel: target.channel, chat_id: target.chat_id };
		if (target.label !== undefined) {
			if (typeof target.label !== "string" || target.label.length > AGENT_PORT_LABEL_MAX_CHARS) throw new Error(`the request's target label must be a text of at most ${AGENT_PORT_LABEL_MAX_CHARS} characters`);
			copy.target.label = target.label;
		}
	}
	return copy;
}

/** A source field: a string, "" when missing. */
function sourceField(source: Record<string, unknown>, key: string): string {
	const value = source[key];
	if (value === undefined) return "";
	if (typeof value !== "string") throw new Error(`the request's source.${key} must be a string`);
	return value;
}
