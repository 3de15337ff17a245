// core/core: the agent core (SPEC §4): an Active Object with one serial executor.
// This file is the loop and its lifecycle: submit/interrupt/cancel, the executor,
// the tool loop with its phases, the model call, the tool round, events,
// persistence and delivery. Its helpers each own one job:
//   core/mailbox  the request queue, waiting submitters, parked responses
//   core/context  the prompt layout (providers -> ChatRequest)
//   core/format   stage messages, the failure note, the METRIC line
//   core/request  the checked request copy and a run's state
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
import Timer from "timer";
import { heap as hostHeap, now as monotonicNow } from "host/platform";
import {
	CORE_EVENT_LISTENERS_MAX, CORE_INTERRUPTS_PER_REQUEST_MAX, CORE_TOOL_PROGRESS_MAX_CHARS, CORE_TOOL_SUMMARY_MAX_LINES,
	INSERT_QUEUE_DEPTH, MAX_COMPLETION_OBSERVERS, MAX_CONTEXT_PROVIDERS, MAX_TOOL_ITERATIONS,
} from "budgets";
import { Aborter } from "net/abort";
import { emptyUsage } from "llm/json";
import type { ChatOptions, ChatResponse, LlmEvent, Message, ToolCall, ToolMessage } from "llm/types";
import {
	RequestFlag,
	type AgentEvent, type AgentRequest, type AgentResponse, type CallCap, type ChatModel, type CompletionObserver,
	type CompletionSummary, type ContextProvider, type ContextRecord, type CoreMetrics, type EventFilter, type EventListener,
	type OutEvent, type Persist, type Phase, type RequestGate, type ToolCallInfo, type ToolOutcome,
} from "core/types";
import { Mailbox, type CoreTimers } from "core/mailbox";
import { buildContext, minuteOf } from "core/context";
import { failureNote, metricLine, metricsOf, stageText, type StageVerbosity } from "core/format";
import { CANCELLED, RequestFailure, copyRequest, failureText, newRun, targetOf, untilAborted, type Run, type SystemParts } from "core/request";
import { heapUsedBytes } from "util/heap";
import { clip } from "util/text";
import { isObject } from "util/values";
import { log, logLine, maskSecretsDeep } from "util/log";
import { wellFormed } from "net/utf8";

export type { CoreTimers } from "core/mailbox";
export type { StageVerbosity } from "core/format";
export { targetOf } from "core/request";

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
	/** Warnings (default util/log at info); the METRIC line too when metricLog is not given. */
	log?: (line: string) => void;
	/**
	 * The METRIC line, one per request (default: log when given, else util/log at
	 * debug: at the default level it stays off the console, between the answers).
	 */
	metricLog?: (line: string) => void;
	/**
	 * Masks secrets in the model's message (content, reasoning, tool call
	 * arguments, raw blocks) and in tool results before they are kept, sent on
	 * or shown (default util/log's maskSecretsDeep: this machine's secret settings).
	 */
	scrub?: <T>(value: T) => T;
	/** Default MAX_TOOL_ITERATIONS. */
	maxToolIterations?: number;
	/** Gives each request its id: never 0, never repeated (default 1, 2, 3, ...). */
	nextRequestId?: () => number;
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

/** A listener and the types it hears (all when hears is undefined). */
interface Heard { listener: EventListener; hears: EventFilter | undefined }

const STOPPED_BEFORE_START = "the agent stopped before this request started; send it again once it is back";
const STOPPED = "the agent has stopped; nothing more is accepted";

const defaultTimers: CoreTimers = {
	set: (callback, ms) => Timer.set(() => callback(), ms),
	clear: (id) => Timer.clear(id as Timer),
};

function counter(): () => number {
	let last = 0;
	return () => ++last;
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
	readonly #heap: () => number;
	readonly #log: (line: string) => void;
	readonly #metricLog: (line: string) => void;
	readonly #scrub: <T>(value: T) => T;
	readonly #maxIterations: number;
	readonly #mailbox: Mailbox;

	#started = false;
	#stopped = false;
	#pumpScheduled = false;
	#phase: Phase = "IDLE";
	#run: Run | undefined = undefined;
	/** The system message the last request laid out, for the next to reuse (core/context). */
	#system: SystemParts | undefined = undefined;
	/** Replaced on add and remove, never changed in place: an emit walks the array it started with, without a copy. */
	#listeners: readonly Heard[] = [];
	/** Replaced on add and remove, like #listeners. */
	#observers: readonly CompletionObserver[] = [];
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
		this.#heap = options.heap ?? (() => heapUsedBytes(hostHeap()));
		this.#log = options.log ?? log;
		this.#metricLog = options.metricLog ?? options.log ?? ((line) => logLine("debug", line));
		this.#scrub = options.scrub ?? maskSecretsDeep;
		const max = options.maxToolIterations ?? MAX_TOOL_ITERATIONS;
		if (!Number.isInteger(max) || max < 1) throw new Error("core: maxToolIterations must be a whole number of at least 1");
		this.#maxIterations = max;
		this.#mailbox = new Mailbox(this.agentId, options.timers ?? defaultTimers, this.#log, options.nextRequestId ?? counter());
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
		for (const request of this.#mailbox.close(STOPPED)) this.#finishUnstarted(request, STOPPED_BEFORE_START);
		this.cancel(0);
	}

	/** Adds a listener of every event, or of the types hears() says yes to. */
	addListener(listener: EventListener, hears?: EventFilter): void {
		if (this.#listeners.some((l) => l.listener === listener)) return;
		if (this.#listeners.length >= CORE_EVENT_LISTENERS_MAX) throw new Error(`core: at most ${CORE_EVENT_LISTENERS_MAX} event listeners`);
		this.#listeners = [...this.#listeners, { listener, hears }];
	}

	removeListener(listener: EventListener): void {
		this.#listeners = this.#listeners.filter((l) => l.listener !== listener);
	}

	// What the model is told the core hears (ChatOptions.hears): an LLM event keeps its type here, so a streamed delta no listener hears is not even made.
	readonly #hearsLlm = (type: LlmEvent["type"]): boolean => this.#heard(type);

	/**
	 * Whether a listener hears this type; the event is built only then. Index
	 * loops: a for-of makes an iterator object per call in XS (and this runs per
	 * streamed LLM event).
	 */
	#heard(type: AgentEvent["type"]): boolean {
		const listeners = this.#listeners;
		for (let i = 0; i < listeners.length; i++) {
			const hears = listeners[i].hears;
			if (!hears || hears(type)) return true;
		}
		return false;
	}

	addCompletionObserver(observer: CompletionObserver): void {
		if (this.#observers.length >= MAX_COMPLETION_OBSERVERS) throw new Error(`core: at most ${MAX_COMPLETION_OBSERVERS} completion observers`);
		this.#observers = [...this.#observers, observer];
	}

	removeCompletionObserver(observer: CompletionObserver): void {
		this.#observers = this.#observers.filter((o) => o !== observer);
	}

	// ---- queries ----

	get phase(): Phase { return this.#phase; }
	/** The request in flight, 0 when idle. */
	get inFlightId(): number { return this.#run?.request.request_id ?? 0; }
	get inFlightSession(): string | undefined { return this.#run?.request.session_id; }
	get queueDepth(): number { return this.#mailbox.queued; }
	get parkedResponses(): number { return this.#mailbox.parked; }
	get lastMetrics(): CoreMetrics | undefined { return this.#lastMetrics; }

	status(): CoreStatus {
		return {
			agent_id: this.agentId, phase: this.#phase, in_flight: this.inFlightId, queued: this.#mailbox.queued,
			inserts: this.#run?.inserts.length ?? 0, parked_responses: this.#mailbox.parked,
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
		if (this.#stopped) return Promise.reject(new Error(STOPPED));
		let copy: AgentRequest;
		try {
			copy = copyRequest(request);
			if (copy.flags & RequestFlag.USER_INTERRUPT && this.#tryInsert(copy)) return Promise.resolve(copy.request_id);
		} catch (error) {
			return Promise.reject(error);
		}
		const id = this.#mailbox.enqueue(copy, timeoutMs);
		this.#schedulePump();
		return id;
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
		copy.request_id = this.#mailbox.newId();
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
		return this.#mailbox.receiveFor(requestId, timeoutMs);
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
				this.#log(`core: a cancel listener failed: ${failureText(error)}`);
			}
			// The LLM call in flight has a signal of its own (an interrupt aborts only it).
			try {
				run.call?.abort(CANCELLED);
			} catch (error) {
				this.#log(`core: the LLM call's cancel failed: ${failureText(error)}`);
			}
			return true;
		}
		if (requestId === 0) return false;
		const queued = this.#mailbox.remove(requestId);
		const inserted = run ? run.inserts.findIndex((r) => r.request_id === requestId) : -1;
		const request = queued ?? (run && inserted >= 0 ? run.inserts.splice(inserted, 1)[0] : undefined);
		if (!request) return false;
		this.#finishUnstarted(request, CANCELLED);
		return true;
	}

	// ---- the executor ----

	#schedulePump(): void {
		if (this.#pumpScheduled) return;
		this.#pumpScheduled = true;
		Promise.resolve().then(this.#pump);
	}

	// One function per core, not a closure per request (each costs heap in XS).
	readonly #pump = (): void => {
		this.#pumpScheduled = false;
		if (!this.#started || this.#stopped || this.#run) return;
		const request = this.#mailbox.take();
		if (request) this.#execute(request);
	};

	/** Starts a request: its state, agent_start, then its loop (never rejects). */
	#execute(request: AgentRequest): void {
		let run: Run;
		try {
			run = newRun(request, this.#now(), minuteOf(this.#wallNow()));
			run.system = this.#system;
			this.#run = run;
			if (this.#heard("agent_start")) this.#emit(run, { type: "agent_start", request });
		} catch (error) {
			this.#run = undefined;
			this.#log(`core: ${this.agentId}: the executor failed: ${failureText(error)}`);
			if (this.#mailbox.queued) this.#schedulePump();
			return;
		}
		this.#loop(run);
	}

	/**
	 * The loop of one request, then its end (a failure's note, agent_end, the
	 * response; #end). Never rejects. The one async function of a request, its LLM
	 * calls included: in XS every async call and promise costs heap, per request
	 * and per round. Every pass either ends the request, counts a round (at most
	 * maxIterations) or takes at least one interrupt (at most CORE_INTERRUPTS_PER_REQUEST_MAX).
	 */
	async #loop(run: Run): Promise<void> {
		let text: string | undefined = undefined, error: string | undefined = undefined;
		try {
			text = this.#begin(run);
			run.begun = text === undefined;
			const passes = this.#maxIterations + CORE_INTERRUPTS_PER_REQUEST_MAX + 1;
			for (let pass = 0; text === undefined && pass < passes; pass++) {
				this.#checkpoint(run, "BEFORE_BUILDING_CONTEXT");
				if (run.inserts.length && run.userPersisted) await this.#takeInserts(run); // checkpoint 1 (the first round's wait for 2: the question is saved first)
				this.#checkpoint(run, "BUILDING_CONTEXT");
				const built = buildContext(run, this.#systemPrompt, this.#providers);
				const chatRequest = built instanceof Promise ? await built : built;
				const question = run.userPersisted ? undefined : this.#saveQuestion(run);
				if (question) await question;
				this.#checkpoint(run, "BEFORE_LLM_HTTP");
				if (run.inserts.length && await this.#takeInserts(run)) continue; // checkpoint 2: rebuild with the new text
				const iteration = this.#turnStart(run);
				const started = this.#now();
				let reply: ChatResponse, ended = 0;
				try {
					// Not raced with the signal: a ChatModel settles once its signal aborts (core/types).
					reply = await this.#model.chat(chatRequest, this.#callOptions(run));
					ended = this.#now();
					this.#accept(run, reply);
				} catch (failure) {
					this.#callFailed(run, iteration, failure); // returns only when an interrupt aborted the call: checkpoint 3
					await this.#takeInserts(run);
					continue;
				} finally {
					this.#callEnded(run, started, ended);
				}
				const calls = reply.message.tool_calls ?? [];
				if (!calls.length) {
					const saving = this.#answered(run, iteration, reply);
					if (saving) await saving;
					text = reply.message.content ?? "";
				} else if (this.#beforeTools(run) && await this.#takeInserts(run)) {
					this.#roundDropped(run, iteration); // checkpoint 4: the user spoke before these calls ran
				} else {
					const round = this.#toolRound(run, iteration, reply, calls);
					if (round) await round;
					if (run.rounds >= this.#maxIterations) throw new RequestFailure(`stopped after ${this.#maxIterations} tool rounds without a final answer; ask for less at once or split the task`);
				}
			}
			if (text === undefined) throw new RequestFailure("the request was interrupted too many times to finish; send your message again");
		} catch (failure) {
			error = run.cancelled ? CANCELLED : failureText(failure);
			// The outcome is decided: from here a cancel is refused and an interrupt queues.
			this.#phase = "FINALIZING";
			const saving = this.#saveFailure(run, error);
			if (saving) await saving;
		} finally {
			this.#end(run, text, error);
		}
	}

	/**
	 * The question persisted as the first round sends it (its volatile block too: the
	 * next request's history repeats this request byte for byte), before it is sent
	 * (SPEC §6: input is never lost). A promise only when the store answered with one.
	 */
	#saveQuestion(run: Run): Promise<void> | undefined {
		run.userPersisted = true;
		return this.#persist(run, run.request, [{ kind: "user", message: run.prompt!.user }], false);
	}

	/** A failed turn's note; before its first round was laid out, the question as asked first. */
	#saveFailure(run: Run, error: string): Promise<void> | undefined {
		const note: ContextRecord = { kind: "failure_note", message: failureNote(run, error) };
		if (run.userPersisted) return this.#persist(run, run.request, [note], true);
		if (!run.begun) return undefined;
		return this.#persist(run, run.request, [{ kind: "user", message: { role: "user", content: run.request.user_text } }, note], true);
	}

	/** A round starts: counted, turn_start, IN_LLM_HTTP. */
	#turnStart(run: Run): number {
		const iteration = ++run.rounds;
		if (this.#heard("turn_start")) this.#emit(run, { type: "turn_start", iteration });
		this.#phase = "IN_LLM_HTTP";
		return iteration;
	}

	/** A call that threw: turn_end, then the request fails (cancelled, or the error) unless a user interrupt aborted it (not a round then). */
	#callFailed(run: Run, iteration: number, error: unknown): void {
		if (this.#heard("turn_end")) this.#emit(run, { type: "turn_end", iteration, tool_calls: 0 });
		if (run.cancelled) throw new RequestFailure(CANCELLED);
		if (!run.interruptAbort) throw error;
		run.rounds--;
		this.#phase = "BEFORE_BUILDING_CONTEXT";
	}

	#callEnded(run: Run, started: number, ended: number): void {
		run.call = undefined;
		run.llmMs += (ended || this.#now()) - started;
		this.#sampleHeap(run);
	}

	/** The final answer: FINALIZING, turn_end, persisted (a promise only when the store answered with one). */
	#answered(run: Run, iteration: number, reply: ChatResponse): Promise<void> | undefined {
		this.#phase = "FINALIZING";
		if (this.#heard("turn_end")) this.#emit(run, { type: "turn_end", iteration, tool_calls: 0 });
		return this.#persist(run, run.request, [{ kind: "assistant_final", message: reply.message }], true);
	}

	/** AFTER_LLM_BEFORE_TOOL; true when interrupts wait (taken before the calls run). */
	#beforeTools(run: Run): boolean {
		this.#phase = "AFTER_LLM_BEFORE_TOOL";
		return run.inserts.length > 0;
	}

	/** Tool calls dropped for an interrupt taken before they ran: not a round; asked again with the new text. */
	#roundDropped(run: Run, iteration: number): void {
		run.rounds--;
		if (this.#heard("turn_end")) this.#emit(run, { type: "turn_end", iteration, tool_calls: 0 });
	}

	/**
	 * The end of a request that ran: agent_end, the response, observers, METRIC
	 * (#finish), then the core is idle and the next request, if one waits, is
	 * scheduled (a submit schedules the pump itself). Never throws.
	 */
	#end(run: Run, text: string | undefined, error: string | undefined): void {
		const request = run.request;
		try {
			const response: AgentResponse = error !== undefined ? { request_id: request.request_id, session_id: request.session_id, ok: false, text: "", error }
				: text !== undefined ? { request_id: request.request_id, session_id: request.session_id, ok: true, text }
				: { request_id: request.request_id, session_id: request.session_id, ok: false, text: "", error: "the request ended unexpectedly" };
			this.#phase = "FINALIZING";
			this.#finish(run, response, error === undefined && text !== undefined ? "ok" : run.cancelled ? "cancelled" : "error");
			this.#system = run.system;
			this.#run = undefined;
			this.#phase = "IDLE";
			// Interrupts this request did not take are never lost: they run next, or,
			// when the core was stopped meanwhile, end with an answer saying so.
			if (run.inserts.length) {
				const untaken = run.inserts.splice(0);
				if (this.#stopped) for (const insert of untaken) this.#finishUnstarted(insert, STOPPED_BEFORE_START);
				else this.#mailbox.putFront(untaken);
			}
		} catch (failure) {
			this.#run = undefined;
			this.#phase = "IDLE";
			this.#log(`core: ${this.agentId}: the executor failed: ${failureText(failure)}`);
		}
		if (this.#mailbox.queued) this.#schedulePump();
	}

	/** Ends the request if it was cancelled, else enters phase. */
	#checkpoint(run: Run, phase: Phase): void {
		if (run.cancelled) throw new RequestFailure(CANCELLED);
		this.#phase = phase;
	}

	/**
	 * The heap in use, for the METRIC line's peak: sampled after each LLM call and
	 * tool round and at the end, where it is highest (each sample makes the host's
	 * figures object: ~0.3 KiB on lin).
	 */
	#sampleHeap(run: Run): void {
		try {
			const used = this.#heap();
			if (used > run.peakHeap) run.peakHeap = used;
		} catch {
			// heap figures are a diagnostic; a host without them reports 0
		}
	}

	/**
	 * Takes pending interrupts: persisted, then appended as user messages. The
	 * loop calls it only when some wait: in XS every async call costs heap.
	 */
	async #takeInserts(run: Run): Promise<boolean> {
		if (!run.inserts.length) return false;
		const inserts = run.inserts.splice(0);
		run.interruptAbort = false;
		for (const insert of inserts) {
			const message: Message = { role: "user", content: insert.user_text };
			run.taken.push(insert);
			run.runtime.push(message);
			const saving = this.#persist(run, insert, [{ kind: "user", message }], false);
			if (saving) await saving;
		}
		return true;
	}

	// ---- the model ----

	/**
	 * The request's start: the gate's refusal (a string: the answer), else undefined
	 * (the question is persisted once the first round is laid out, as it is sent).
	 * Throws when the model is not configured: an error, and not a turn (nothing of it is saved).
	 */
	#begin(run: Run): string | undefined {
		const request = run.request;
		this.#phase = "BEFORE_BUILDING_CONTEXT";
		const refusal = this.#gate?.(request);
		if (typeof refusal === "string") return refusal;
		const notReady = this.#model.notReady?.();
		if (notReady) throw new RequestFailure(notReady);
		return undefined;
	}

	/**
	 * The options of the LLM call that starts now. One Aborter and one options
	 * object per request, made again only after an interrupt aborted a call (cancel
	 * ends the request): a call costs no Aborter, closure or listener of its own.
	 */
	#callOptions(run: Run): ChatOptions {
		let call = run.callAborter;
		if (!call || call.signal.aborted) {
			run.callAborter = call = new Aborter();
			run.callOptions = { signal: call.signal, onEvent: this.#onEvent, hears: this.#hearsLlm };
		}
		run.call = call;
		run.interruptAbort = false;
		return run.callOptions!;
	}

	/** Takes a reply's figures and checks and masks its message; throws when it has none or the request was cancelled meanwhile. */
	#accept(run: Run, reply: ChatResponse): void {
		const usage = reply.usage ?? emptyUsage();
		run.usage.input_tokens += usage.input_tokens;
		run.usage.output_tokens += usage.output_tokens;
		run.usage.cache_read_tokens += usage.cache_read_tokens;
		run.usage.cache_write_tokens += usage.cache_write_tokens;
		run.bytesSent += reply.bytes_sent ?? 0;
		run.bytesReceived += reply.bytes_received ?? 0;
		if (!isObject(reply.message) || reply.message.role !== "assistant") throw new RequestFailure("the model's reply had no assistant message; try again");
		// A model that repeats a secret (one it was told elsewhere) repeats it to nobody: not to the chat, the session file or the next round.
		reply.message = this.#scrub(reply.message);
		// A lone surrogate the model escaped (\\udXXX) would stay in the session and may make the provider refuse every later request of it.
		if (typeof reply.message.content === "string") reply.message.content = wellFormed(reply.message.content);
		this.#checkpoint(run, "IN_LLM_HTTP");
	}

	/** The LLM's events, heard for the request in flight (one function per core, not a closure per call). */
	readonly #onEvent = (event: LlmEvent): void => {
		const run = this.#run;
		if (run) this.#onLlmEvent(run, event);
	};

	#onLlmEvent(run: Run, event: LlmEvent): void {
		if (!this.#heard(event.type)) return;   // nobody hears it: no event objects per delta
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

	/**
	 * Runs a reply's tool calls, keeps and persists the round. A promise only when a
	 * tool or the store answered with one: a round of synchronous tools costs no async
	 * call, promise or await (in XS each costs heap).
	 */
	#toolRound(run: Run, iteration: number, reply: ChatResponse, calls: ToolCall[]): Promise<void> | undefined {
		this.#phase = "RUNNING_TOOL";
		const request = run.request;
		if (request.flags & RequestFlag.PUBLISH_STAGE_MESSAGE && this.#publishHook) {
			const target = targetOf(request);
			const text = stageText(this.#verbosity, iteration, reply.message, calls);
			this.#publish({ type: "agent_stage", channel: target.channel, chat_id: target.chat_id, text, request_id: request.request_id });
		}
		const results = this.#runTools(run, calls);
		if (results instanceof Promise) return results.then((done) => this.#roundDone(run, iteration, reply, calls, done));
		return this.#roundDone(run, iteration, reply, calls, results);
	}

	/** The round's results kept and persisted; turn_end once the store has them. */
	#roundDone(run: Run, iteration: number, reply: ChatResponse, calls: ToolCall[], results: ToolMessage[]): Promise<void> | undefined {
		run.runtime.push(reply.message);
		for (let i = 0; i < results.length; i++) run.runtime.push(results[i]);
		const records: ContextRecord[] = [{ kind: "assistant_tool", message: reply.message }];
		for (let i = 0; i < results.length; i++) records.push({ kind: "tool_result", message: results[i] });
		const saving = this.#persist(run, run.request, records, false);
		if (saving) return saving.then(() => { if (this.#heard("turn_end")) this.#emit(run, { type: "turn_end", iteration, tool_calls: calls.length }); });
		if (this.#heard("turn_end")) this.#emit(run, { type: "turn_end", iteration, tool_calls: calls.length });
		return undefined;
	}

	/** The round's results in call order: at once when every tool answered at once, else a promise raced with cancel. */
	#runTools(run: Run, calls: ToolCall[]): ToolMessage[] | Promise<ToolMessage[]> {
		let alone = false;
		try {
			alone = !!this.#runsAlone && calls.some((call) => this.#runsAlone!(call.function.name));
		} catch (error) {
			alone = true; // a broken runsAlone: sequential is always safe
			this.#log(`core: runsAlone failed (${failureText(error)}); running the round's tools one by one`);
		}
		const started = this.#now();
		if (!alone && calls.length > 1) {
			return this.#toolsTimed(run, started, untilAborted(Promise.all(calls.map((call) => this.#runTool(run, call))), run.aborter.signal));
		}
		const results: ToolMessage[] = [];
		try {
			for (let i = 0; i < calls.length; i++) {
				this.#checkpoint(run, "RUNNING_TOOL");
				const result = this.#runTool(run, calls[i]);
				if (result instanceof Promise) return this.#toolsTimed(run, started, this.#runRest(run, calls, i, result, results));
				results.push(result);
			}
		} catch (error) {
			this.#toolsEnded(run, started);
			throw error;
		}
		this.#toolsEnded(run, started);
		return results;
	}

	/** The calls after calls[i], whose result is pending, one by one. */
	async #runRest(run: Run, calls: ToolCall[], i: number, pending: Promise<ToolMessage>, results: ToolMessage[]): Promise<ToolMessage[]> {
		results.push(await untilAborted(pending, run.aborter.signal));
		for (let j = i + 1; j < calls.length; j++) {
			this.#checkpoint(run, "RUNNING_TOOL");
			const result = this.#runTool(run, calls[j]);
			results.push(result instanceof Promise ? await untilAborted(result, run.aborter.signal) : result);
		}
		return results;
	}

	#toolsTimed(run: Run, started: number, results: Promise<ToolMessage[]>): Promise<ToolMessage[]> {
		return results.then(
			(done) => { this.#toolsEnded(run, started); return done; },
			(error) => { this.#toolsEnded(run, started); throw error; },
		);
	}

	#toolsEnded(run: Run, started: number): void {
		run.toolMs += this.#now() - started;
		this.#sampleHeap(run);
	}

	/** One call through callCap; at once when callCap answered at once. Never rejects: a failure is an is_error result. */
	#runTool(run: Run, call: ToolCall): ToolMessage | Promise<ToolMessage> {
		const info: ToolCallInfo = { id: call.id, name: call.function.name, arguments: call.function.arguments };
		if (this.#heard("tool_execution_start")) this.#emit(run, { type: "tool_execution_start", call: info });
		const started = this.#now();
		let result: ToolOutcome | Promise<ToolOutcome>;
		try {
			result = this.#callCap(info, {
				request: run.request,
				signal: run.aborter.signal,
				progress: (text) => this.#emit(run, { type: "tool_execution_update", call_id: call.id, text: clip(String(text), CORE_TOOL_PROGRESS_MAX_CHARS) }),
			});
		} catch (error) {
			return this.#toolEnded(run, info, started, { content: failureText(error), is_error: true });
		}
		if (result instanceof Promise) {
			return result.then(
				(outcome) => this.#toolEnded(run, info, started, outcome),
				(error) => this.#toolEnded(run, info, started, { content: failureText(error), is_error: true }),
			);
		}
		return this.#toolEnded(run, info, started, result);
	}

	#toolEnded(run: Run, info: ToolCallInfo, started: number, result: unknown): ToolMessage {
		const outcome: ToolOutcome = isObject(result) && typeof result.content === "string"
			? result as unknown as ToolOutcome
			: { content: `the tool ${info.name} returned no result (a bug in the tool)`, is_error: true };
		const failed = outcome.is_error === true;
		if (this.#heard("tool_execution_end")) this.#emit(run, { type: "tool_execution_end", call_id: info.id, name: info.name, is_error: failed, ms: this.#now() - started });
		run.toolNames.push(info.name);
		if (run.toolSummary.length < CORE_TOOL_SUMMARY_MAX_LINES) run.toolSummary.push("- ".concat(info.name, failed ? ": failed" : ": ok"));
		const message: ToolMessage = { role: "tool", tool_call_id: info.id, content: this.#scrub(outcome.content) };
		if (failed) message.is_error = true;
		return message;
	}

	// ---- outputs ----

	/**
	 * Gives event (a new object of the caller's) the ids every event carries and
	 * hands it to the listeners that hear its type. Callers on the request's path
	 * ask #heard first, so nobody listening costs no event object.
	 */
	#emit(run: Run, event: EventBody): void {
		const listeners = this.#listeners;
		const type = event.type;
		if (!this.#heard(type)) return;
		const full = event as Record<string, unknown>;
		full.agent_id = this.agentId;
		full.request_id = run.request.request_id;
		full.session_id = run.request.session_id;
		for (let i = 0; i < listeners.length; i++) {
			const { listener, hears } = listeners[i];
			if (hears && !hears(type)) continue;
			try {
				listener(full as unknown as AgentEvent);
			} catch (error) {
				this.#log(`core: an event listener threw on ${type}: ${failureText(error)}`);
			}
		}
	}

	#publish(event: OutEvent): void {
		if (!this.#publishHook) return;
		try {
			this.#publishHook(event);
		} catch (error) {
			this.#log(`core: publishing ${event.type} failed: ${failureText(error)}`);
		}
	}

	/**
	 * Persists one batch; never for a session-less request; failures are logged
	 * only. A promise only when the hook answered with one (the store answers at
	 * once): in XS every promise and await costs heap, three times per request.
	 */
	#persist(run: Run, request: AgentRequest, records: ContextRecord[], completed: boolean): Promise<void> | undefined {
		if (!this.#persistHook || !run.request.session_id) return undefined;
		let saving: void | Promise<void>;
		try {
			saving = this.#persistHook({ session_id: run.request.session_id, request, records, turn_completed: completed });
		} catch (error) {
			this.#persistFailed(run, error);
			return undefined;
		}
		return saving instanceof Promise ? saving.then(undefined, (error) => this.#persistFailed(run, error)) : undefined;
	}

	#persistFailed(run: Run, error: unknown): void {
		this.#log(`core: ${this.agentId}: saving session "${run.request.session_id}" failed (${failureText(error)}); the request goes on`);
	}

	/**
	 * The end of every request, run or not: agent_end, the response (queue and
	 * out_message, for the interrupts it took too), observers, the METRIC line.
	 * Never throws: every hook is guarded.
	 */
	#finish(run: Run, response: AgentResponse, outcome: CoreMetrics["outcome"]): void {
		const request = run.request;
		if (this.#heard("agent_end")) this.#emit(run, { type: "agent_end", response });
		if (request.flags & RequestFlag.PUBLISH_OUT_MESSAGE) {
			const target = targetOf(request);
			const event: OutEvent = {
				type: "out_message", channel: target.channel, chat_id: target.chat_id,
				text: response.ok ? response.text : response.error ?? "", request_id: request.request_id,
				correlation_id: request.source.message_id,
			};
			if (target.label !== undefined) event.label = target.label;
			this.#publish(event);
		}
		if (!(request.flags & RequestFlag.SKIP_RESPONSE_QUEUE)) this.#mailbox.offer(response);
		// An interrupt that joined this request is answered by it.
		for (let i = 0; i < run.taken.length; i++) {
			const insert = run.taken[i];
			if (!(insert.flags & RequestFlag.SKIP_RESPONSE_QUEUE)) this.#mailbox.offer({ ...response, request_id: insert.request_id, session_id: insert.session_id });
		}
		const observers = this.#observers;
		if (observers.length) {
			const summary: CompletionSummary = {
				request_id: response.request_id, session_id: response.session_id, ok: response.ok, final_text: response.text,
				providers_csv: run.providersUsed.join(","), tool_calls_csv: run.toolNames.join(","),
			};
			if (response.error !== undefined) summary.error = response.error;
			for (let i = 0; i < observers.length; i++) {
				try {
					observers[i](summary);
				} catch (error) {
					this.#log(`core: a completion observer threw: ${failureText(error)}`);
				}
			}
		}
		this.#sampleHeap(run);
		this.#lastMetrics = metricsOf(run, outcome, this.#now());
		this.#metricLog(metricLine(this.agentId, request.request_id, this.#lastMetrics));
	}

	/** Ends a request that never ran (cancelled in the queue, or the core stopped). */
	#finishUnstarted(request: AgentRequest, error: string): void {
		const run = newRun(request, this.#now(), "");
		run.cancelled = true;
		if (this.#heard("agent_start")) this.#emit(run, { type: "agent_start", request });
		this.#finish(run, { request_id: request.request_id, session_id: request.session_id, ok: false, text: "", error }, "cancelled");
	}
}
