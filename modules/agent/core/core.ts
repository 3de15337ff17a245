// core/core: the agent core (SPEC §4): an Active Object with one serial executor.
// This file is the loop and its lifecycle: submit/interrupt/cancel (ingress), the
// executor, the tool loop with its phases, the model call and the end of a
// request. Its helpers each own one job:
//   core/mailbox  the request queue, waiting submitters, parked responses
//   core/context  the prompt layout (providers -> ChatRequest)
//   core/tools    a round's tool calls (the tool runner)
//   core/events   event listeners (emit), the outbound publisher, completion observers
//   core/persist  the glue to the session store
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
import { CORE_INTERRUPTS_PER_REQUEST_MAX, INSERT_QUEUE_DEPTH, MAX_CONTEXT_PROVIDERS, MAX_TOOL_ITERATIONS } from "budgets";
import { Aborter } from "net/abort";
import { emptyUsage } from "llm/json";
import type { ChatOptions, ChatResponse, LlmEvent, Message, ToolCall, ToolMessage } from "llm/types";
import {
	RequestFlag,
	type AgentRequest, type AgentResponse, type CallCap, type ChatModel, type CompletionObserver,
	type ContextProvider, type ContextRecord, type CoreMetrics, type EventFilter, type EventListener,
	type OutEvent, type Persist, type Phase, type RequestGate,
} from "core/types";
import { Mailbox, type CoreTimers } from "core/mailbox";
import { buildContext, minuteOf } from "core/context";
import { failureNote, metricLine, metricsOf, stageText, type StageVerbosity } from "core/format";
import { CANCELLED, RequestFailure, copyRequest, failureText, newRun, targetOf, type Run, type SystemParts } from "core/request";
import { CoreEvents } from "core/events";
import { ToolRunner } from "core/tools";
import { CorePersistence } from "core/persist";
import { heapUsedBytes } from "util/heap";
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
	readonly #gate?: RequestGate;
	readonly #events: CoreEvents;
	readonly #tools: ToolRunner;
	readonly #store: CorePersistence;
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
	#lastMetrics: CoreMetrics | undefined = undefined;

	constructor(options: CoreOptions) {
		if (typeof options.systemPrompt !== "string" || !options.systemPrompt.trim()) {
			throw new Error("core: the system prompt is required (the framework text every prompt starts with)");
		}
		if (!options.agentId) throw new Error("core: an agent id is required");
		this.agentId = options.agentId;
		this.#model = options.model;
		this.#systemPrompt = options.systemPrompt;
		if (options.gate) this.#gate = options.gate;
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
		this.#events = new CoreEvents(this.agentId, options.publish, this.#log);
		this.#store = new CorePersistence(this.agentId, options.persist, this.#log);
		this.#tools = new ToolRunner({
			callCap: options.callCap, runsAlone: options.runsAlone, events: this.#events, now: this.#now, scrub: this.#scrub, log: this.#log,
			checkpoint: (run, phase) => this.#checkpoint(run, phase), sampleHeap: (run) => this.#sampleHeap(run),
		});
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

	/** Adds a listener of every event, or of the types hears() says yes to (core/events). */
	addListener(listener: EventListener, hears?: EventFilter): void {
		this.#events.addListener(listener, hears);
	}

	removeListener(listener: EventListener): void {
		this.#events.removeListener(listener);
	}

	addCompletionObserver(observer: CompletionObserver): void {
		this.#events.addObserver(observer);
	}

	removeCompletionObserver(observer: CompletionObserver): void {
		this.#events.removeObserver(observer);
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
			if (this.#events.heard("agent_start")) this.#events.emit(run, { type: "agent_start", request });
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
		return this.#store.save(run, run.request, [{ kind: "user", message: run.prompt!.user }], false);
	}

	/** A failed turn's note; before its first round was laid out, the question as asked first. */
	#saveFailure(run: Run, error: string): Promise<void> | undefined {
		const note: ContextRecord = { kind: "failure_note", message: failureNote(run, error) };
		if (run.userPersisted) return this.#store.save(run, run.request, [note], true);
		if (!run.begun) return undefined;
		return this.#store.save(run, run.request, [{ kind: "user", message: { role: "user", content: run.request.user_text } }, note], true);
	}

	/** A round starts: counted, turn_start, IN_LLM_HTTP. */
	#turnStart(run: Run): number {
		const iteration = ++run.rounds;
		if (this.#events.heard("turn_start")) this.#events.emit(run, { type: "turn_start", iteration });
		this.#phase = "IN_LLM_HTTP";
		return iteration;
	}

	/** A call that threw: turn_end, then the request fails (cancelled, or the error) unless a user interrupt aborted it (not a round then). */
	#callFailed(run: Run, iteration: number, error: unknown): void {
		if (this.#events.heard("turn_end")) this.#events.emit(run, { type: "turn_end", iteration, tool_calls: 0 });
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
		if (this.#events.heard("turn_end")) this.#events.emit(run, { type: "turn_end", iteration, tool_calls: 0 });
		return this.#store.save(run, run.request, [{ kind: "assistant_final", message: reply.message }], true);
	}

	/** AFTER_LLM_BEFORE_TOOL; true when interrupts wait (taken before the calls run). */
	#beforeTools(run: Run): boolean {
		this.#phase = "AFTER_LLM_BEFORE_TOOL";
		return run.inserts.length > 0;
	}

	/** Tool calls dropped for an interrupt taken before they ran: not a round; asked again with the new text. */
	#roundDropped(run: Run, iteration: number): void {
		run.rounds--;
		if (this.#events.heard("turn_end")) this.#events.emit(run, { type: "turn_end", iteration, tool_calls: 0 });
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
			const saving = this.#store.save(run, insert, [{ kind: "user", message }], false);
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
			run.callOptions = { signal: call.signal, onEvent: this.#onEvent, hears: this.#events.hearsLlm };
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
		if (!this.#events.heard(event.type)) return;   // nobody hears it: no event objects per delta
		switch (event.type) {
			case "message_start":
				this.#events.emit(run, { type: "message_start", attempt: event.attempt });
				break;
			case "message_update": {
				const delta = event.delta;
				const text = delta.type === "tool_call" ? (delta.name ?? "") + delta.arguments : delta.text;
				this.#events.emit(run, { type: "message_update", delta: { type: delta.type, text } });
				break;
			}
			case "message_end":
				this.#events.emit(run, event.error === undefined ? { type: "message_end" } : { type: "message_end", error: event.error });
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
		if (request.flags & RequestFlag.PUBLISH_STAGE_MESSAGE && this.#events.publishes) {
			const target = targetOf(request);
			const text = stageText(this.#verbosity, iteration, reply.message, calls);
			this.#events.publish({ type: "agent_stage", channel: target.channel, chat_id: target.chat_id, text, request_id: request.request_id });
		}
		const results = this.#tools.run(run, calls);
		if (results instanceof Promise) return results.then((done) => this.#roundDone(run, iteration, reply, calls, done));
		return this.#roundDone(run, iteration, reply, calls, results);
	}

	/** The round's results kept and persisted; turn_end once the store has them. */
	#roundDone(run: Run, iteration: number, reply: ChatResponse, calls: ToolCall[], results: ToolMessage[]): Promise<void> | undefined {
		run.runtime.push(reply.message);
		for (let i = 0; i < results.length; i++) run.runtime.push(results[i]);
		const records: ContextRecord[] = [{ kind: "assistant_tool", message: reply.message }];
		for (let i = 0; i < results.length; i++) records.push({ kind: "tool_result", message: results[i] });
		const saving = this.#store.save(run, run.request, records, false);
		if (saving) return saving.then(() => { if (this.#events.heard("turn_end")) this.#events.emit(run, { type: "turn_end", iteration, tool_calls: calls.length }); });
		if (this.#events.heard("turn_end")) this.#events.emit(run, { type: "turn_end", iteration, tool_calls: calls.length });
		return undefined;
	}

	// ---- the end ----

	/**
	 * The end of every request, run or not: agent_end, the response (queue and
	 * out_message, for the interrupts it took too), observers, the METRIC line.
	 * Never throws: every hook is guarded.
	 */
	#finish(run: Run, response: AgentResponse, outcome: CoreMetrics["outcome"]): void {
		const request = run.request;
		if (this.#events.heard("agent_end")) this.#events.emit(run, { type: "agent_end", response });
		if (request.flags & RequestFlag.PUBLISH_OUT_MESSAGE) {
			const target = targetOf(request);
			const event: OutEvent = {
				type: "out_message", channel: target.channel, chat_id: target.chat_id,
				text: response.ok ? response.text : response.error ?? "", request_id: request.request_id,
				correlation_id: request.source.message_id,
			};
			if (target.label !== undefined) event.label = target.label;
			this.#events.publish(event);
		}
		if (!(request.flags & RequestFlag.SKIP_RESPONSE_QUEUE)) this.#mailbox.offer(response);
		// An interrupt that joined this request is answered by it.
		for (let i = 0; i < run.taken.length; i++) {
			const insert = run.taken[i];
			if (!(insert.flags & RequestFlag.SKIP_RESPONSE_QUEUE)) this.#mailbox.offer({ ...response, request_id: insert.request_id, session_id: insert.session_id });
		}
		this.#events.completed(run, response);
		this.#sampleHeap(run);
		this.#lastMetrics = metricsOf(run, outcome, this.#now());
		this.#metricLog(metricLine(this.agentId, request.request_id, this.#lastMetrics));
	}

	/** Ends a request that never ran (cancelled in the queue, or the core stopped). */
	#finishUnstarted(request: AgentRequest, error: string): void {
		const run = newRun(request, this.#now(), "");
		run.cancelled = true;
		if (this.#events.heard("agent_start")) this.#events.emit(run, { type: "agent_start", request });
		this.#finish(run, { request_id: request.request_id, session_id: request.session_id, ok: false, text: "", error }, "cancelled");
	}
}
