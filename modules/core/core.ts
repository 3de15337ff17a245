// core/core: the agent core (SPEC §4): an Active Object with one serial executor.
// It owns the request queue, the insert queue (user interrupts), the response
// queue, the tool loop with its phases, the context pipeline, cancellation, the
// event stream, completion observers, stage messages and the METRIC line.
//
// Everything that is not the loop comes in as options (core/types): the model
// (llm/runtime's Llm, or a fake), providers, the tool caller, persistence, the
// gate, the outbound publisher, clocks, timers and heap figures, so the loop runs
// in unit tests with a scripted model and no I/O.
//
// Known limits:
// - One JS thread: "serial executor" is one async run at a time per Core, not a
//   task. A tool that ignores its cancel signal keeps running after its request
//   ended "request cancelled"; its late result is dropped.
// - Interrupts that a request did not take before it ended (and every interrupt
//   past CORE_INTERRUPTS_PER_REQUEST_MAX) are queued as ordinary requests at the
//   head of the request queue, which may then briefly hold up to
//   REQUEST_QUEUE_DEPTH + INSERT_QUEUE_DEPTH entries.
// - The response queue keeps RESPONSE_QUEUE_DEPTH unclaimed responses; a newer one
//   drops the oldest with a log line, so an absent reader never blocks the core.
import Timer from "timer";
import { heap as hostHeap, now as monotonicNow } from "host/platform";
import {
	CORE_ERROR_MAX_CHARS, CORE_EVENT_LISTENERS_MAX, CORE_INTERRUPTS_PER_REQUEST_MAX, CORE_RESPONSE_WAITERS_MAX,
	CORE_STAGE_ARGS_PREVIEW_MAX_CHARS, CORE_STAGE_SUMMARY_MAX_CHARS, CORE_SUBMIT_WAITERS_MAX, CORE_TOOL_PROGRESS_MAX_CHARS,
	CORE_TOOL_SUMMARY_MAX_LINES, INSERT_QUEUE_DEPTH, MAX_COMPLETION_OBSERVERS, MAX_CONTEXT_PROVIDERS, MAX_TOOL_ITERATIONS,
	REQUEST_QUEUE_DEPTH, RESPONSE_QUEUE_DEPTH,
} from "budgets";
import { Aborter } from "net/abort";
import { emptyUsage } from "llm/json";
import { maskedArguments } from "core/tools";
import type { AbortSignalLike } from "net/types";
import type { AssistantMessage, ChatRequest, ChatResponse, LlmEvent, Message, ToolCall, ToolDefinition, ToolMessage, Usage } from "llm/types";
import {
	ProviderFlag, RequestFlag,
	type AgentEvent, type AgentRequest, type AgentResponse, type CallCap, type ChatModel, type CompletionObserver,
	type CompletionSummary, type ContextContent, type ContextProvider, type ContextRecord, type CoreMetrics, type EventListener,
	type OutEvent, type Persist, type Phase, type RequestGate, type RequestTarget, type ToolCallInfo, type ToolOutcome,
} from "core/types";
import { messageOf as errorText } from "util/errors";

/** Timer-shaped set/clear, injectable so tests run on fake time. */
export interface CoreTimers {
	set(callback: () => void, ms: number): unknown;
	clear(id: unknown): void;
}

export type StageVerbosity = "simple" | "verbose";

export interface CoreOptions {
	/** "root", "sub-1", ...: names the core in events and METRIC lines. */
	agentId: string;
	model: ChatModel;
	/** The framework prompt, the first text of every system prompt: required, non-empty and stable (no persona: that is the profile provider's). */
	systemPrompt: string;
	/** At most MAX_CONTEXT_PROVIDERS, unique names, asked in this order. More with addProvider() before start(). */
	providers?: ContextProvider[];
	callCap: CallCap;
	/** True when the named tool must not run in parallel with the round's other calls. Must not throw. */
	runsAlone?: (name: string) => boolean;
	persist?: Persist;
	gate?: RequestGate;
	/** Outbound events to the router. Must not throw (a throw is logged and ignored). */
	publish?: (event: OutEvent) => void;
	/** Stage messages: "simple" (tool names, the default) or "verbose". */
	stageVerbosity?: StageVerbosity;
	/** Monotonic milliseconds (default host/platform now). */
	now?: () => number;
	/** Wall-clock milliseconds for the time line of the volatile block (default Date.now). */
	wallNow?: () => number;
	/** Default: the "timer" module. */
	timers?: CoreTimers;
	/** Heap bytes in use, sampled for the METRIC line's peak (default: XS chunk + slot heap). */
	heap?: () => number;
	/** The METRIC line and warnings (default trace). */
	log?: (line: string) => void;
	/** Default MAX_TOOL_ITERATIONS. */
	maxToolIterations?: number;
}

/** What a request in flight, or its agent, looks like from outside. */
export interface CoreStatus {
	agent_id: string;
	phase: Phase;
	/** 0 when idle. */
	in_flight: number;
	queued: number;
	inserts: number;
	parked_responses: number;
}

/** An event without the ids every event carries (the core adds them). */
type EventBody<E = AgentEvent> = E extends AgentEvent ? Omit<E, "agent_id" | "request_id" | "session_id"> : never;

/** Thrown inside the loop to end a request with a sentence for a person. */
class RequestFailure extends Error {
	override name = "RequestFailure";
}

const CANCELLED = "request cancelled";
const STOPPED_BEFORE_START = "the agent stopped before this request started; send it again once it is back";

interface SubmitWaiter { request: AgentRequest; resolve(id: number): void; reject(error: Error): void; timer: unknown }
interface ResponseWaiter { resolve(response: AgentResponse): void; timer: unknown }

/** The state of the request in flight. */
interface Run {
	request: AgentRequest;
	/** Cancels the whole request (tools see its signal). */
	aborter: Aborter;
	/** The LLM call in flight, if any: an interrupt aborts only this. */
	call?: Aborter;
	cancelled: boolean;
	/** The call in flight was aborted by a user interrupt (not a failure). */
	interruptAbort: boolean;
	/** Interrupts waiting for a checkpoint, and those already merged in. */
	inserts: AgentRequest[];
	taken: AgentRequest[];
	/** REQUEST_START_ONLY results (undefined = "nothing" is cached too). */
	startCache: Map<string, ContextContent | undefined>;
	providersUsed: string[];
	/** This request's messages after the current user message. */
	runtime: Message[];
	/** Minute-resolution wall time, computed once per request. */
	time: string;
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

const defaultTimers: CoreTimers = {
	set: (callback, ms) => Timer.set(() => callback(), ms),
	clear: (id) => Timer.clear(id as Timer),
};

function defaultHeap(): number {
	const figures = hostHeap();
	return figures.chunkUsed + figures.slotUsed;
}

function clip(text: string, max: number): string {
	return text.length <= max ? text : text.slice(0, Math.max(0, max - 1)) + "…";
}

function oneLine(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

function messageOf(error: unknown): string {
	const text = errorText(error);
	return clip(text || "an unknown error", CORE_ERROR_MAX_CHARS);
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A deep copy of a submitted request (JSON round trip), checked for shape.
 * Throws a sentence naming the bad field.
 */
function copyRequest(request: AgentRequest): AgentRequest {
	let copy: unknown;
	try {
		copy = JSON.parse(JSON.stringify(request));
	} catch (error) {
		throw new Error(`the request is not plain data (${messageOf(error)}); submit strings and numbers only`);
	}
	if (!isObject(copy)) throw new Error("the request must be an object");
	if (typeof copy.user_text !== "string" || !copy.user_text) throw new Error("the request has no user_text; say something to the agent");
	if (typeof copy.session_id !== "string") throw new Error("the request's session_id must be a string (\"\" for none)");
	if (typeof copy.flags !== "number" || !Number.isInteger(copy.flags) || copy.flags < 0) throw new Error("the request's flags must be a sum of RequestFlag values");
	const source = copy.source;
	if (!isObject(source)) throw new Error("the request has no source (channel, chat_id, sender_id, message_id, cap)");
	for (const key of ["channel", "chat_id", "sender_id", "message_id", "cap"]) {
		if (source[key] === undefined) source[key] = "";
		if (typeof source[key] !== "string") throw new Error(`the request's source.${key} must be a string`);
	}
	if (copy.target !== undefined) {
		const target = copy.target;
		if (!isObject(target) || typeof target.channel !== "string" || typeof target.chat_id !== "string") {
			throw new Error("the request's target must have a channel and a chat_id (or be left out to answer the source)");
		}
	}
	return copy as unknown as AgentRequest;
}

/** The state of a request that starts now. */
function newRun(request: AgentRequest, started: number, time: string): Run {
	return {
		request, aborter: new Aborter(), cancelled: false, interruptAbort: false, inserts: [], taken: [], startCache: new Map(),
		providersUsed: [], runtime: [], time, userPersisted: false, toolNames: [], toolSummary: [], started,
		llmMs: 0, toolMs: 0, rounds: 0, usage: emptyUsage(), bytesSent: 0, bytesReceived: 0, peakHeap: 0,
	};
}

/** Where a request's answer goes: its target, else back to its source. */
export function targetOf(request: AgentRequest): RequestTarget {
	return request.target ?? { channel: request.source.channel, chat_id: request.source.chat_id };
}

/** "2026-11-30 05:31 UTC" */
function minuteOf(ms: number): string {
	const iso = new Date(ms).toISOString();
	return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** Settles like promise, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignalLike): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		const remove = signal.addListener((reason) => reject(new Error(reason)));
		promise.then(
			(value) => { remove(); resolve(value); },
			(error) => { remove(); reject(error); },
		);
	});
}

export class Core {
	readonly agentId: string;
	readonly #model: ChatModel;
	readonly #systemPrompt: string;
	readonly #providers: ContextProvider[] = [];
	readonly #callCap: CallCap;
	readonly #runsAlone?: (name: string) => boolean;
	readonly #persistHook?: Persist;
	readonly #gate?: RequestGate;
	readonly #publishHook?: (event: OutEvent) => void;
	readonly #verbosity: StageVerbosity;
	readonly #now: () => number;
	readonly #wallNow: () => number;
	readonly #timers: CoreTimers;
	readonly #heap: () => number;
	readonly #log: (line: string) => void;
	readonly #maxIterations: number;

	#started = false;
	#stopped = false;
	#pumpScheduled = false;
	#lastId = 0;
	#phase: Phase = "IDLE";
	#run: Run | undefined = undefined;
	readonly #queue: AgentRequest[] = [];
	readonly #submitWaiters: SubmitWaiter[] = [];
	readonly #parked: AgentResponse[] = [];
	readonly #responseWaiters = new Map<number, ResponseWaiter>();
	readonly #listeners: EventListener[] = [];
	readonly #observers: CompletionObserver[] = [];
	#lastMetrics: CoreMetrics | undefined = undefined;

	constructor(options: CoreOptions) {
		if (typeof options.systemPrompt !== "string" || !options.systemPrompt.trim()) {
			throw new Error("core: the system prompt is required (the framework text every prompt starts with)");
		}
		if (!options.agentId) throw new Error("core: an agent id is required");
		this.agentId = options.agentId;
		this.#model = options.model;
		this.#systemPrompt = options.systemPrompt;
		this.#callCap = options.callCap;
		if (options.runsAlone) this.#runsAlone = options.runsAlone;
		if (options.persist) this.#persistHook = options.persist;
		if (options.gate) this.#gate = options.gate;
		if (options.publish) this.#publishHook = options.publish;
		this.#verbosity = options.stageVerbosity ?? "simple";
		this.#now = options.now ?? monotonicNow;
		this.#wallNow = options.wallNow ?? (() => Date.now());
		this.#timers = options.timers ?? defaultTimers;
		this.#heap = options.heap ?? defaultHeap;
		this.#log = options.log ?? ((line) => trace(line + "\n"));
		const max = options.maxToolIterations ?? MAX_TOOL_ITERATIONS;
		if (!Number.isInteger(max) || max < 1) throw new Error("core: maxToolIterations must be a whole number of at least 1");
		this.#maxIterations = max;
		for (const provider of options.providers ?? []) this.addProvider(provider);
	}

	// ---- assembly ----

	/** Registers a context provider (before start; at most MAX_CONTEXT_PROVIDERS, unique names). */
	addProvider(provider: ContextProvider): void {
		if (this.#started) throw new Error(`core: the provider "${provider.name}" must be added before the core starts`);
		if (this.#providers.length >= MAX_CONTEXT_PROVIDERS) throw new Error(`core: at most ${MAX_CONTEXT_PROVIDERS} context providers`);
		if (!provider.name || this.#providers.some((p) => p.name === provider.name)) {
			throw new Error(`core: the provider name "${provider.name}" is empty or used twice`);
		}
		this.#providers.push(provider);
	}

	/** Starts the executor; requests submitted before wait in the queue. */
	start(): void {
		this.#started = true;
		this.#schedulePump();
	}

	/**
	 * Stops the core: the request in flight is cancelled, queued ones end with an
	 * error, waiting submitters are refused. Later submits are refused.
	 */
	stop(): void {
		if (this.#stopped) return;
		this.#stopped = true;
		for (const waiter of this.#submitWaiters.splice(0)) {
			this.#timers.clear(waiter.timer);
			waiter.reject(new Error("the agent has stopped; nothing more is accepted"));
		}
		for (const request of this.#queue.splice(0)) this.#finishUnstarted(request, STOPPED_BEFORE_START);
		this.cancel(0);
	}

	addListener(listener: EventListener): void {
		if (this.#listeners.includes(listener)) return;
		if (this.#listeners.length >= CORE_EVENT_LISTENERS_MAX) throw new Error(`core: at most ${CORE_EVENT_LISTENERS_MAX} event listeners`);
		this.#listeners.push(listener);
	}

	removeListener(listener: EventListener): void {
		const at = this.#listeners.indexOf(listener);
		if (at >= 0) this.#listeners.splice(at, 1);
	}

	addCompletionObserver(observer: CompletionObserver): void {
		if (this.#observers.length >= MAX_COMPLETION_OBSERVERS) throw new Error(`core: at most ${MAX_COMPLETION_OBSERVERS} completion observers`);
		this.#observers.push(observer);
	}

	removeCompletionObserver(observer: CompletionObserver): void {
		const at = this.#observers.indexOf(observer);
		if (at >= 0) this.#observers.splice(at, 1);
	}

	// ---- queries ----

	get phase(): Phase { return this.#phase; }
	/** The request in flight, 0 when idle. */
	get inFlightId(): number { return this.#run?.request.request_id ?? 0; }
	get inFlightSession(): string | undefined { return this.#run?.request.session_id; }
	get queueDepth(): number { return this.#queue.length; }
	get parkedResponses(): number { return this.#parked.length; }
	get lastMetrics(): CoreMetrics | undefined { return this.#lastMetrics; }

	status(): CoreStatus {
		return {
			agent_id: this.agentId, phase: this.#phase, in_flight: this.inFlightId, queued: this.#queue.length,
			inserts: this.#run?.inserts.length ?? 0, parked_responses: this.#parked.length,
		};
	}

	// ---- ingress ----

	/**
	 * Queues a copy of request and resolves with its new request_id. A USER_INTERRUPT
	 * for the session in flight joins that request instead (and aborts its LLM call
	 * when one is in progress). When the queue is full, waits up to timeoutMs for
	 * room, then rejects with a sentence for the user.
	 */
	submit(request: AgentRequest, timeoutMs = 0): Promise<number> {
		if (this.#stopped) return Promise.reject(new Error("the agent has stopped; nothing more is accepted"));
		let copy: AgentRequest;
		try {
			copy = copyRequest(request);
			if (copy.flags & RequestFlag.USER_INTERRUPT && this.#tryInsert(copy)) return Promise.resolve(copy.request_id);
		} catch (error) {
			return Promise.reject(error);
		}
		if (this.#queue.length < REQUEST_QUEUE_DEPTH) {
			copy.request_id = ++this.#lastId;
			this.#queue.push(copy);
			this.#schedulePump();
			return Promise.resolve(copy.request_id);
		}
		const busy = new Error(`the agent is busy: ${this.#queue.length} requests are waiting; try again shortly`);
		if (!(timeoutMs > 0) || this.#submitWaiters.length >= CORE_SUBMIT_WAITERS_MAX) return Promise.reject(busy);
		return new Promise<number>((resolve, reject) => {
			const waiter: SubmitWaiter = {
				request: copy, resolve, reject,
				timer: this.#timers.set(() => {
					const at = this.#submitWaiters.indexOf(waiter);
					if (at >= 0) this.#submitWaiters.splice(at, 1);
					reject(new Error(`the agent is busy: ${this.#queue.length} requests are waiting; try again shortly`));
				}, timeoutMs),
			};
			this.#submitWaiters.push(waiter);
		});
	}

	/** Inserts an interrupt into the request in flight; false when it must queue instead. */
	#tryInsert(copy: AgentRequest): boolean {
		const run = this.#run;
		if (!run || run.cancelled || !copy.session_id || run.request.session_id !== copy.session_id) return false;
		if (this.#phase === "IDLE" || this.#phase === "FINALIZING") return false;
		if (run.taken.length + run.inserts.length >= CORE_INTERRUPTS_PER_REQUEST_MAX) return false;
		if (run.inserts.length >= INSERT_QUEUE_DEPTH) {
			throw new Error(`${INSERT_QUEUE_DEPTH} messages of this conversation are already waiting to join the answer in progress; wait for the answer, then send yours again`);
		}
		copy.request_id = ++this.#lastId;
		run.inserts.push(copy);
		if (this.#phase === "IN_LLM_HTTP" && run.call) {
			run.interruptAbort = true;
			run.call.abort("interrupted by a new message");
		}
		return true;
	}

	/**
	 * The response to request_id: at once when it is parked, else when it arrives,
	 * else rejects after timeoutMs. Responses for other requests stay parked.
	 */
	receiveFor(requestId: number, timeoutMs: number): Promise<AgentResponse> {
		const at = this.#parked.findIndex((r) => r.request_id === requestId);
		if (at >= 0) return Promise.resolve(this.#parked.splice(at, 1)[0]);
		if (this.#responseWaiters.has(requestId)) return Promise.reject(new Error(`someone is already waiting for the answer to request ${requestId}`));
		if (this.#responseWaiters.size >= CORE_RESPONSE_WAITERS_MAX) return Promise.reject(new Error("too many callers are waiting for answers; try again shortly"));
		return new Promise<AgentResponse>((resolve, reject) => {
			const timer = this.#timers.set(() => {
				this.#responseWaiters.delete(requestId);
				reject(new Error(`no answer to request ${requestId} within ${Math.round(timeoutMs / 1000)} s; it may still be running (cancel ${requestId} stops it)`));
			}, timeoutMs);
			this.#responseWaiters.set(requestId, { resolve, timer });
		});
	}

	/**
	 * Cancels request_id (0: whatever is in flight). The request ends with the error
	 * "request cancelled"; a queued one ends without running. False when nothing
	 * matches, and for a request already FINALIZING: its answer (or failure) is
	 * decided and being saved, so true would be a promise the core cannot keep.
	 */
	cancel(requestId: number): boolean {
		const run = this.#run;
		if (run && !run.cancelled && this.#phase !== "FINALIZING" && (requestId === 0 || run.request.request_id === requestId)) {
			run.cancelled = true;
			try {
				run.aborter.abort(CANCELLED);
			} catch (error) {
				this.#log(`core: a cancel listener failed: ${messageOf(error)}`);
			}
			return true;
		}
		if (requestId === 0) return false;
		const queued = this.#queue.findIndex((r) => r.request_id === requestId);
		if (queued >= 0) {
			const [request] = this.#queue.splice(queued, 1);
			this.#admitWaiters();
			this.#finishUnstarted(request, CANCELLED);
			return true;
		}
		const inserted = run ? run.inserts.findIndex((r) => r.request_id === requestId) : -1;
		if (run && inserted >= 0) {
			const [request] = run.inserts.splice(inserted, 1);
			this.#finishUnstarted(request, CANCELLED);
			return true;
		}
		return false;
	}

	// ---- the executor ----

	#schedulePump(): void {
		if (this.#pumpScheduled) return;
		this.#pumpScheduled = true;
		Promise.resolve().then(() => {
			this.#pumpScheduled = false;
			this.#pump();
		});
	}

	#pump(): void {
		if (!this.#started || this.#stopped || this.#run) return;
		const request = this.#queue.shift();
		if (!request) return;
		this.#admitWaiters();
		this.#execute(request).then(
			() => this.#schedulePump(),
			(error) => {
				this.#log(`core: ${this.agentId}: the executor failed: ${messageOf(error)}`);
				this.#schedulePump();
			},
		);
	}

	/** Moves waiting submitters into the queue while there is room (FIFO). */
	#admitWaiters(): void {
		while (this.#queue.length < REQUEST_QUEUE_DEPTH && this.#submitWaiters.length) {
			const waiter = this.#submitWaiters.shift() as SubmitWaiter;
			this.#timers.clear(waiter.timer);
			waiter.request.request_id = ++this.#lastId;
			this.#queue.push(waiter.request);
			waiter.resolve(waiter.request.request_id);
		}
	}

	async #execute(request: AgentRequest): Promise<void> {
		const run = newRun(request, this.#now(), minuteOf(this.#wallNow()));
		this.#run = run;
		this.#sampleHeap(run);
		let response: AgentResponse = { request_id: request.request_id, session_id: request.session_id, ok: false, text: "", error: "the request ended unexpectedly" };
		let outcome: CoreMetrics["outcome"] = "error";
		try {
			this.#emit(run, { type: "agent_start", request });
			try {
				const text = await this.#loop(run);
				response = { request_id: request.request_id, session_id: request.session_id, ok: true, text };
				outcome = "ok";
			} catch (error) {
				outcome = run.cancelled ? "cancelled" : "error";
				const message = run.cancelled ? CANCELLED : messageOf(error);
				response = { request_id: request.request_id, session_id: request.session_id, ok: false, text: "", error: message };
				// The outcome is decided: from here a cancel is refused and an interrupt queues.
				this.#setPhase("FINALIZING");
				if (run.userPersisted) await this.#persist(run, request, [{ kind: "failure_note", message: this.#failureNote(run, message) }], true);
			}
		} finally {
			this.#setPhase("FINALIZING");
			this.#emit(run, { type: "agent_end", response });
			this.#deliver(request, response, run.taken);
			this.#complete(run, response);
			this.#metric(run, outcome);
			this.#run = undefined;
			this.#setPhase("IDLE");
			// Interrupts this request did not take are never lost: they run next, or,
			// when the core was stopped meanwhile, end with an answer saying so.
			const untaken = run.inserts.splice(0);
			if (this.#stopped) for (const insert of untaken) this.#finishUnstarted(insert, STOPPED_BEFORE_START);
			else this.#queue.unshift(...untaken);
		}
	}

	/** The loop of one request; resolves with the final text, throws to fail it. */
	async #loop(run: Run): Promise<string> {
		const request = run.request;
		this.#setPhase("BEFORE_BUILDING_CONTEXT");
		if (this.#gate) {
			const answer = this.#gate(request);
			if (typeof answer === "string") return answer;
		}
		await this.#persist(run, request, [{ kind: "user", message: { role: "user", content: request.user_text } }], false);
		run.userPersisted = true;
		// Every pass either ends the request, counts a round (at most maxIterations)
		// or takes at least one interrupt (at most CORE_INTERRUPTS_PER_REQUEST_MAX).
		const passes = this.#maxIterations + CORE_INTERRUPTS_PER_REQUEST_MAX + 1;
		for (let pass = 0; pass < passes; pass++) {
			this.#checkCancelled(run);
			this.#setPhase("BEFORE_BUILDING_CONTEXT");
			await this.#takeInserts(run); // checkpoint 1: context is built next anyway
			this.#checkCancelled(run);
			this.#setPhase("BUILDING_CONTEXT");
			const chatRequest = await this.#buildContext(run);
			this.#checkCancelled(run);
			this.#setPhase("BEFORE_LLM_HTTP");
			if (await this.#takeInserts(run)) continue; // checkpoint 2: rebuild with the new text

			const iteration = ++run.rounds;
			this.#emit(run, { type: "turn_start", iteration });
			this.#setPhase("IN_LLM_HTTP");
			let reply: ChatResponse;
			try {
				reply = await this.#chat(run, chatRequest);
			} catch (error) {
				this.#emit(run, { type: "turn_end", iteration, tool_calls: 0 });
				this.#checkCancelled(run);
				if (!run.interruptAbort) throw error;
				// checkpoint 3: an interrupt aborted the call; neither a failure nor a round.
				run.rounds--;
				this.#setPhase("BEFORE_BUILDING_CONTEXT");
				await this.#takeInserts(run);
				continue;
			}
			this.#checkCancelled(run);
			const calls = reply.message.tool_calls ?? [];
			if (!calls.length) {
				this.#setPhase("FINALIZING");
				this.#emit(run, { type: "turn_end", iteration, tool_calls: 0 });
				const text = reply.message.content ?? "";
				await this.#persist(run, request, [{ kind: "assistant_final", message: reply.message }], true);
				return text;
			}
			this.#setPhase("AFTER_LLM_BEFORE_TOOL");
			if (await this.#takeInserts(run)) {
				// checkpoint 4: the user spoke before these calls ran; ask again with the new text.
				run.rounds--;
				this.#emit(run, { type: "turn_end", iteration, tool_calls: 0 });
				continue;
			}
			this.#setPhase("RUNNING_TOOL");
			this.#publishStage(run, iteration, reply.message, calls);
			const results = await this.#runTools(run, calls);
			run.runtime.push(reply.message, ...results);
			await this.#persist(run, request, [
				{ kind: "assistant_tool", message: reply.message },
				...results.map((message): ContextRecord => ({ kind: "tool_result", message })),
			], false);
			this.#emit(run, { type: "turn_end", iteration, tool_calls: calls.length });
			if (run.rounds >= this.#maxIterations) {
				throw new RequestFailure(`stopped after ${this.#maxIterations} tool rounds without a final answer; ask for less at once or split the task`);
			}
		}
		throw new RequestFailure("the request was interrupted too many times to finish; send your message again");
	}

	#checkCancelled(run: Run): void {
		if (run.cancelled) throw new RequestFailure(CANCELLED);
	}

	#setPhase(phase: Phase): void {
		this.#phase = phase;
	}

	#sampleHeap(run: Run): void {
		try {
			const used = this.#heap();
			if (used > run.peakHeap) run.peakHeap = used;
		} catch {
			// heap figures are a diagnostic; a host without them reports 0
		}
	}

	/** Takes pending interrupts: persisted, then appended as user messages. */
	async #takeInserts(run: Run): Promise<boolean> {
		if (!run.inserts.length) return false;
		const inserts = run.inserts.splice(0);
		run.interruptAbort = false;
		for (const insert of inserts) {
			const message: Message = { role: "user", content: insert.user_text };
			run.taken.push(insert);
			run.runtime.push(message);
			await this.#persist(run, insert, [{ kind: "user", message }], false);
		}
		return true;
	}

	// ---- context ----

	async #collect(run: Run, provider: ContextProvider): Promise<ContextContent | undefined> {
		const startOnly = ((provider.flags ?? 0) & ProviderFlag.REQUEST_START_ONLY) !== 0;
		if (startOnly && run.startCache.has(provider.name)) return run.startCache.get(provider.name);
		let content: ContextContent | undefined;
		try {
			// Raced with cancel: a provider stuck on flash must not hold a cancelled request.
			content = await untilAborted(Promise.resolve().then(() => provider.collect(run.request)), run.aborter.signal);
		} catch (error) {
			throw new RequestFailure(`the context provider "${provider.name}" failed: ${messageOf(error)}`);
		}
		if (content !== undefined) {
			const empty = !isObject(content) ||
				(content.kind === "system_prompt" ? typeof content.content !== "string" || !content.content :
					content.kind === "messages" || content.kind === "tools" ? !Array.isArray(content.content) || !content.content.length : true);
			if (empty) {
				throw new RequestFailure(`the context provider "${provider.name}" returned empty or unknown content (a bug: "nothing this time" must be undefined)`);
			}
		}
		if (startOnly) run.startCache.set(provider.name, content);
		return content;
	}

	/** Builds this iteration's chat request from scratch (see NOTES.md for the order). */
	async #buildContext(run: Run): Promise<ChatRequest> {
		const request = run.request;
		const stable: string[] = [this.#systemPrompt];
		const volatile: string[] = [];
		const tools: ToolDefinition[] = [];
		let history: Message[] = [];
		for (const provider of this.#providers) {
			const content = await this.#collect(run, provider);
			if (content === undefined) continue;
			if (!run.providersUsed.includes(provider.name)) run.providersUsed.push(provider.name);
			switch (content.kind) {
				case "system_prompt": {
					const section = `## ${provider.name}\n${content.content}`;
					if ((provider.flags ?? 0) & ProviderFlag.VOLATILE) volatile.push(section);
					else stable.push(section);
					break;
				}
				case "messages":
					history = history.concat(content.content);
					break;
				case "tools":
					tools.push(...content.content);
					break;
			}
		}
		// MESSAGES providers return history from before this request (the contract on
		// ContextProvider; the store's provider ends before this request's USER
		// record): the current message is injected below, exactly once. No dedupe
		// by text here: a person may well have sent the same words last time.
		if (history.length) history = [...history.slice(0, -1), { ...history[history.length - 1], cache_breakpoint: true }];

		const source = request.source;
		const block = [
			"[request context]",
			`time: ${run.time}`,
			`source: channel ${source.channel || "(none)"}, chat ${source.chat_id || "(none)"}, sender ${source.sender_id || "(none)"}`,
			"note: your final answer is delivered to the user automatically; do not send it again with a messaging tool.",
			...volatile,
		].join("\n");
		const messages: Message[] = [
			{ role: "system", content: stable.join("\n\n"), cache_breakpoint: true },
			...history,
			{ role: "user", content: `${request.user_text}\n\n${block}` },
			...run.runtime,
		];
		const chatRequest: ChatRequest = { messages };
		if (tools.length) chatRequest.tools = tools;
		return chatRequest;
	}

	// ---- the model ----

	async #chat(run: Run, chatRequest: ChatRequest): Promise<ChatResponse> {
		const call = new Aborter();
		run.call = call;
		run.interruptAbort = false;
		const unlink = run.aborter.signal.addListener((reason) => call.abort(reason));
		const started = this.#now();
		this.#sampleHeap(run);
		try {
			const pending = Promise.resolve().then(() => this.#model.chat(chatRequest, {
				signal: call.signal,
				onEvent: (event) => this.#onLlmEvent(run, event),
			}));
			const reply = await untilAborted(pending, call.signal);
			const usage = reply.usage ?? emptyUsage();
			run.usage.input_tokens += usage.input_tokens;
			run.usage.output_tokens += usage.output_tokens;
			run.usage.cache_read_tokens += usage.cache_read_tokens;
			run.usage.cache_write_tokens += usage.cache_write_tokens;
			run.bytesSent += reply.bytes_sent ?? 0;
			run.bytesReceived += reply.bytes_received ?? 0;
			if (!isObject(reply.message) || reply.message.role !== "assistant") throw new RequestFailure("the model's reply had no assistant message; try again");
			return reply;
		} finally {
			unlink();
			run.call = undefined;
			run.llmMs += this.#now() - started;
			this.#sampleHeap(run);
		}
	}

	#onLlmEvent(run: Run, event: LlmEvent): void {
		switch (event.type) {
			case "message_start":
				this.#emit(run, { type: "message_start", attempt: event.attempt });
				break;
			case "message_update": {
				const delta = event.delta;
				const text = delta.type === "tool_call" ? (delta.name ?? "") + delta.arguments : delta.text;
				this.#emit(run, { type: "message_update", delta: { type: delta.type, text } });
				break;
			}
			case "message_end":
				this.#emit(run, event.error === undefined ? { type: "message_end" } : { type: "message_end", error: event.error });
				break;
		}
	}

	// ---- tools ----

	async #runTools(run: Run, calls: ToolCall[]): Promise<ToolMessage[]> {
		let alone = false;
		try {
			alone = !!this.#runsAlone && calls.some((call) => this.#runsAlone!(call.function.name));
		} catch (error) {
			alone = true; // a broken runsAlone: sequential is always safe
			this.#log(`core: runsAlone failed (${messageOf(error)}); running the round's tools one by one`);
		}
		const started = this.#now();
		try {
			if (alone || calls.length === 1) {
				const results: ToolMessage[] = [];
				for (const call of calls) {
					this.#checkCancelled(run);
					results.push(await untilAborted(this.#runTool(run, call), run.aborter.signal));
				}
				return results;
			}
			return await untilAborted(Promise.all(calls.map((call) => this.#runTool(run, call))), run.aborter.signal);
		} finally {
			run.toolMs += this.#now() - started;
			this.#sampleHeap(run);
		}
	}

	async #runTool(run: Run, call: ToolCall): Promise<ToolMessage> {
		const info: ToolCallInfo = { id: call.id, name: call.function.name, arguments: call.function.arguments };
		this.#emit(run, { type: "tool_execution_start", call: info });
		const started = this.#now();
		let outcome: ToolOutcome;
		try {
			const result = await this.#callCap(info, {
				request: run.request,
				signal: run.aborter.signal,
				progress: (text) => this.#emit(run, { type: "tool_execution_update", call_id: call.id, text: clip(String(text), CORE_TOOL_PROGRESS_MAX_CHARS) }),
			});
			outcome = isObject(result) && typeof result.content === "string"
				? result
				: { content: `the tool ${info.name} returned no result (a bug in the tool)`, is_error: true };
		} catch (error) {
			outcome = { content: messageOf(error), is_error: true };
		}
		const failed = outcome.is_error === true;
		this.#emit(run, { type: "tool_execution_end", call_id: call.id, name: info.name, is_error: failed, ms: this.#now() - started });
		run.toolNames.push(info.name);
		if (run.toolSummary.length < CORE_TOOL_SUMMARY_MAX_LINES) run.toolSummary.push(`- ${info.name}: ${failed ? "failed" : "ok"}`);
		const message: ToolMessage = { role: "tool", tool_call_id: call.id, content: outcome.content };
		if (failed) message.is_error = true;
		return message;
	}

	// ---- outputs ----

	#emit(run: Run, event: EventBody): void {
		const full = { agent_id: this.agentId, request_id: run.request.request_id, session_id: run.request.session_id, ...event } as AgentEvent;
		for (const listener of this.#listeners.slice()) {
			try {
				listener(full);
			} catch (error) {
				this.#log(`core: an event listener threw on ${event.type}: ${messageOf(error)}`);
			}
		}
	}

	#publish(event: OutEvent): void {
		if (!this.#publishHook) return;
		try {
			this.#publishHook(event);
		} catch (error) {
			this.#log(`core: publishing ${event.type} failed: ${messageOf(error)}`);
		}
	}

	#publishStage(run: Run, iteration: number, message: AssistantMessage, calls: ToolCall[]): void {
		const request = run.request;
		if (!(request.flags & RequestFlag.PUBLISH_STAGE_MESSAGE) || !this.#publishHook) return;
		const names = calls.map((call) => call.function.name);
		let text: string;
		if (this.#verbosity === "verbose") {
			const summary = clip(oneLine(message.content || message.reasoning_content || ""), CORE_STAGE_SUMMARY_MAX_CHARS);
			text = [
				summary ? `round ${iteration}: ${summary}` : `round ${iteration}`,
				// Stage messages reach a chat: secret-looking argument values are masked.
				...calls.map((call) => `- ${call.function.name}(${clip(oneLine(maskedArguments(call.function.arguments)), CORE_STAGE_ARGS_PREVIEW_MAX_CHARS)})`),
			].join("\n");
		} else {
			text = `running tools: ${names.join(", ")}`;
		}
		const target = targetOf(request);
		this.#publish({ type: "agent_stage", channel: target.channel, chat_id: target.chat_id, text, request_id: request.request_id });
	}

	/** Persists one batch; never for a session-less request; failures are logged only. */
	async #persist(run: Run, request: AgentRequest, records: ContextRecord[], completed: boolean): Promise<void> {
		if (!this.#persistHook || !run.request.session_id) return;
		try {
			await this.#persistHook({ session_id: run.request.session_id, request, records, turn_completed: completed });
		} catch (error) {
			this.#log(`core: ${this.agentId}: saving session "${run.request.session_id}" failed (${messageOf(error)}); the request goes on`);
		}
	}

	#failureNote(run: Run, error: string): Message {
		const lines = [`(no answer to this request: ${error})`];
		if (run.toolSummary.length) lines.push("tools run:", ...run.toolSummary);
		if (run.toolNames.length > run.toolSummary.length) lines.push(`- ... and ${run.toolNames.length - run.toolSummary.length} more`);
		return { role: "assistant", content: lines.join("\n") };
	}

	/** Response queue and out_message for a finished request (and the interrupts it took). */
	#deliver(request: AgentRequest, response: AgentResponse, joined: AgentRequest[]): void {
		if (request.flags & RequestFlag.PUBLISH_OUT_MESSAGE) {
			const target = targetOf(request);
			this.#publish({
				type: "out_message", channel: target.channel, chat_id: target.chat_id,
				text: response.ok ? response.text : response.error ?? "", request_id: request.request_id,
				correlation_id: request.source.message_id,
			});
		}
		if (!(request.flags & RequestFlag.SKIP_RESPONSE_QUEUE)) this.#offerResponse(response);
		// An interrupt that joined this request is answered by it.
		for (const insert of joined) {
			if (insert.flags & RequestFlag.SKIP_RESPONSE_QUEUE) continue;
			this.#offerResponse({ ...response, request_id: insert.request_id, session_id: insert.session_id });
		}
	}

	#offerResponse(response: AgentResponse): void {
		const waiter = this.#responseWaiters.get(response.request_id);
		if (waiter) {
			this.#responseWaiters.delete(response.request_id);
			this.#timers.clear(waiter.timer);
			waiter.resolve(response);
			return;
		}
		if (this.#parked.length >= RESPONSE_QUEUE_DEPTH) {
			const dropped = this.#parked.shift() as AgentResponse;
			this.#log(`core: ${this.agentId}: nobody collected the answer to request ${dropped.request_id}; dropped it to make room`);
		}
		this.#parked.push(response);
	}

	#complete(run: Run, response: AgentResponse): void {
		const summary: CompletionSummary = {
			request_id: response.request_id, session_id: response.session_id, ok: response.ok, final_text: response.text,
			providers_csv: run.providersUsed.join(","), tool_calls_csv: run.toolNames.join(","),
		};
		if (response.error !== undefined) summary.error = response.error;
		for (const observer of this.#observers.slice()) {
			try {
				observer(summary);
			} catch (error) {
				this.#log(`core: a completion observer threw: ${messageOf(error)}`);
			}
		}
	}

	#metric(run: Run, outcome: CoreMetrics["outcome"]): void {
		this.#sampleHeap(run);
		const m: CoreMetrics = {
			outcome, total_ms: this.#now() - run.started, llm_ms: run.llmMs, tool_ms: run.toolMs, rounds: run.rounds,
			tool_calls: run.toolNames.length, usage: run.usage, bytes_sent: run.bytesSent, bytes_received: run.bytesReceived,
			peak_heap_bytes: run.peakHeap,
		};
		this.#lastMetrics = m;
		this.#log(`METRIC agent=${this.agentId} request=${run.request.request_id} outcome=${m.outcome} total_ms=${Math.round(m.total_ms)}` +
			` llm_ms=${Math.round(m.llm_ms)} tool_ms=${Math.round(m.tool_ms)} rounds=${m.rounds} tool_calls=${m.tool_calls}` +
			` tokens_in=${m.usage.input_tokens} tokens_out=${m.usage.output_tokens} bytes_sent=${m.bytes_sent}` +
			` bytes_received=${m.bytes_received} peak_heap_bytes=${m.peak_heap_bytes}`);
	}

	/** Ends a request that never ran (cancelled in the queue, or the core stopped). */
	#finishUnstarted(request: AgentRequest, error: string): void {
		const run = newRun(request, this.#now(), "");
		run.cancelled = true;
		const response: AgentResponse = { request_id: request.request_id, session_id: request.session_id, ok: false, text: "", error };
		// #emit, #deliver, #complete and #metric never throw: their hooks are guarded.
		this.#emit(run, { type: "agent_start", request });
		this.#emit(run, { type: "agent_end", response });
		this.#deliver(request, response, []);
		this.#complete(run, response);
		this.#metric(run, "cancelled");
	}
}
