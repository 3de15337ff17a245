// core/events: what a core tells the world (core/core's outputs): the event
// listeners and the types each hears (emit: an event gets the ids every event
// carries), the outbound publisher (agent_stage, out_message to the router), and
// the completion observers (a finished request's summary). One per core; every
// hook is guarded, a throw is logged and ignored.
import { CORE_EVENT_LISTENERS_MAX, MAX_COMPLETION_OBSERVERS } from "budgets";
import type { LlmEvent } from "llm/types";
import type { AgentEvent, AgentResponse, CompletionObserver, CompletionSummary, EventFilter, EventListener, OutEvent } from "core/types";
import { failureText, type Run } from "core/request";

/** An event without the ids every event carries (emit adds them). */
export type EventBody<E = AgentEvent> = E extends AgentEvent ? Omit<E, "agent_id" | "request_id" | "session_id"> : never;

/** A listener and the types it hears (all when hears is undefined). */
interface Heard { listener: EventListener; hears: EventFilter | undefined }

export class CoreEvents {
	readonly #agentId: string;
	readonly #publishHook?: (event: OutEvent) => void;
	readonly #log: (line: string) => void;
	/** Replaced on add and remove, never changed in place: an emit walks the array it started with, without a copy. */
	#listeners: readonly Heard[] = [];
	/** Replaced on add and remove, like #listeners. */
	#observers: readonly CompletionObserver[] = [];

	constructor(agentId: string, publish: ((event: OutEvent) => void) | undefined, log: (line: string) => void) {
		this.#agentId = agentId;
		if (publish) this.#publishHook = publish;
		this.#log = log;
	}

	/** Whether outbound events go anywhere (stage messages are not even written otherwise). */
	get publishes(): boolean {
		return this.#publishHook !== undefined;
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
	readonly hearsLlm = (type: LlmEvent["type"]): boolean => this.heard(type);

	/**
	 * Whether a listener hears this type; the event is built only then. Index
	 * loops: a for-of makes an iterator object per call in XS (and this runs per
	 * streamed LLM event).
	 */
	heard(type: AgentEvent["type"]): boolean {
		const listeners = this.#listeners;
		for (let i = 0; i < listeners.length; i++) {
			const hears = listeners[i].hears;
			if (!hears || hears(type)) return true;
		}
		return false;
	}

	/**
	 * Gives event (a new object of the caller's) the ids every event carries and
	 * hands it to the listeners that hear its type. Callers on the request's path
	 * ask heard() first, so nobody listening costs no event object.
	 */
	emit(run: Run, event: EventBody): void {
		const listeners = this.#listeners;
		const type = event.type;
		if (!this.heard(type)) return;
		const full = event as Record<string, unknown>;
		full.agent_id = this.#agentId;
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

	/** An outbound event to the router (agent_stage, out_message). */
	publish(event: OutEvent): void {
		if (!this.#publishHook) return;
		try {
			this.#publishHook(event);
		} catch (error) {
			this.#log(`core: publishing ${event.type} failed: ${failureText(error)}`);
		}
	}

	addObserver(observer: CompletionObserver): void {
		if (this.#observers.length >= MAX_COMPLETION_OBSERVERS) throw new Error(`core: at most ${MAX_COMPLETION_OBSERVERS} completion observers`);
		this.#observers = [...this.#observers, observer];
	}

	removeObserver(observer: CompletionObserver): void {
		this.#observers = this.#observers.filter((o) => o !== observer);
	}

	/** A finished request's summary to the completion observers (none: no summary made). */
	completed(run: Run, response: AgentResponse): void {
		const observers = this.#observers;
		if (!observers.length) return;
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
}
