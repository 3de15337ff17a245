// core/persist: the glue between a core's requests and its session store (the
// Persist hook, core/types): each batch of a request's records with the session
// it belongs to; never for a session-less request; a failure is logged and the
// request goes on. A promise only when the hook answered with one (the store
// answers at once): in XS every promise and await costs heap, three times per
// request.
import type { AgentRequest, ContextRecord, Persist } from "core/types";
import { failureText, type Run } from "core/request";

export class CorePersistence {
	readonly #agentId: string;
	readonly #hook?: Persist;
	readonly #log: (line: string) => void;

	constructor(agentId: string, hook: Persist | undefined, log: (line: string) => void) {
		this.#agentId = agentId;
		if (hook) this.#hook = hook;
		this.#log = log;
	}

	/** Persists one batch of request's records in run's session. */
	save(run: Run, request: AgentRequest, records: ContextRecord[], completed: boolean): Promise<void> | undefined {
		if (!this.#hook || !run.request.session_id) return undefined;
		let saving: void | Promise<void>;
		try {
			saving = this.#hook({ session_id: run.request.session_id, request, records, turn_completed: completed });
		} catch (error) {
			this.#failed(run, error);
			return undefined;
		}
		return saving instanceof Promise ? saving.then(undefined, (error) => this.#failed(run, error)) : undefined;
	}

	#failed(run: Run, error: unknown): void {
		this.#log(`core: ${this.#agentId}: saving session "${run.request.session_id}" failed (${failureText(error)}); the request goes on`);
	}
}
