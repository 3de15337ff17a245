// core/tools: a round's tool calls (core/core's tool runner): each through the
// core's callCap, in parallel unless a call must run alone, their results in
// call order, as tool messages (masked); tool_execution_start/update/end events;
// the round's tool time and heap sample. At once when every tool answered at
// once: a round of synchronous tools costs no async call, promise or await (in
// XS each costs heap). One per core, no closure per call.
import { CORE_TOOL_PROGRESS_MAX_CHARS, CORE_TOOL_SUMMARY_MAX_LINES } from "budgets";
import type { ToolCall, ToolMessage } from "llm/types";
import type { CallCap, Phase, ToolCallInfo, ToolOutcome } from "core/types";
import type { CoreEvents } from "core/events";
import { failureText, untilAborted, type Run } from "core/request";
import { clip } from "util/text";
import { isObject } from "util/values";

export interface ToolRunnerOptions {
	callCap: CallCap;
	/** True when the named tool must not run in parallel with the round's other calls. Must not throw. */
	runsAlone?: (name: string) => boolean;
	events: CoreEvents;
	now(): number;
	scrub<T>(value: T): T;
	log(line: string): void;
	/** The core's checkpoint: throws when the request was cancelled, else enters phase. */
	checkpoint(run: Run, phase: Phase): void;
	/** The core's heap sample for the METRIC line's peak. */
	sampleHeap(run: Run): void;
}

export class ToolRunner {
	readonly #o: ToolRunnerOptions;

	constructor(options: ToolRunnerOptions) {
		this.#o = options;
	}

	/** The round's results in call order: at once when every tool answered at once, else a promise raced with cancel. */
	run(run: Run, calls: ToolCall[]): ToolMessage[] | Promise<ToolMessage[]> {
		const runsAlone = this.#o.runsAlone;
		let alone = false;
		try {
			alone = !!runsAlone && calls.some((call) => runsAlone(call.function.name));
		} catch (error) {
			alone = true; // a broken runsAlone: sequential is always safe
			this.#o.log(`core: runsAlone failed (${failureText(error)}); running the round's tools one by one`);
		}
		const started = this.#o.now();
		if (!alone && calls.length > 1) {
			return this.#timed(run, started, untilAborted(Promise.all(calls.map((call) => this.#one(run, call))), run.aborter.signal));
		}
		const results: ToolMessage[] = [];
		try {
			for (let i = 0; i < calls.length; i++) {
				this.#o.checkpoint(run, "RUNNING_TOOL");
				const result = this.#one(run, calls[i]);
				if (result instanceof Promise) return this.#timed(run, started, this.#rest(run, calls, i, result, results));
				results.push(result);
			}
		} catch (error) {
			this.#ended(run, started);
			throw error;
		}
		this.#ended(run, started);
		return results;
	}

	/** The calls after calls[i], whose result is pending, one by one. */
	async #rest(run: Run, calls: ToolCall[], i: number, pending: Promise<ToolMessage>, results: ToolMessage[]): Promise<ToolMessage[]> {
		results.push(await untilAborted(pending, run.aborter.signal));
		for (let j = i + 1; j < calls.length; j++) {
			this.#o.checkpoint(run, "RUNNING_TOOL");
			const result = this.#one(run, calls[j]);
			results.push(result instanceof Promise ? await untilAborted(result, run.aborter.signal) : result);
		}
		return results;
	}

	#timed(run: Run, started: number, results: Promise<ToolMessage[]>): Promise<ToolMessage[]> {
		return results.then(
			(done) => { this.#ended(run, started); return done; },
			(error) => { this.#ended(run, started); throw error; },
		);
	}

	#ended(run: Run, started: number): void {
		run.toolMs += this.#o.now() - started;
		this.#o.sampleHeap(run);
	}

	/** One call through callCap; at once when callCap answered at once. Never rejects: a failure is an is_error result. */
	#one(run: Run, call: ToolCall): ToolMessage | Promise<ToolMessage> {
		const events = this.#o.events;
		const info: ToolCallInfo = { id: call.id, name: call.function.name, arguments: call.function.arguments };
		if (events.heard("tool_execution_start")) events.emit(run, { type: "tool_execution_start", call: info });
		const started = this.#o.now();
		let result: ToolOutcome | Promise<ToolOutcome>;
		try {
			result = this.#o.callCap(info, {
				request: run.request,
				signal: run.aborter.signal,
				progress: (text) => events.emit(run, { type: "tool_execution_update", call_id: call.id, text: clip(String(text), CORE_TOOL_PROGRESS_MAX_CHARS) }),
			});
		} catch (error) {
			return this.#done(run, info, started, { content: failureText(error), is_error: true });
		}
		if (result instanceof Promise) {
			return result.then(
				(outcome) => this.#done(run, info, started, outcome),
				(error) => this.#done(run, info, started, { content: failureText(error), is_error: true }),
			);
		}
		return this.#done(run, info, started, result);
	}

	#done(run: Run, info: ToolCallInfo, started: number, result: unknown): ToolMessage {
		const outcome: ToolOutcome = isObject(result) && typeof result.content === "string"
			? result as unknown as ToolOutcome
			: { content: `the tool ${info.name} returned no result (a bug in the tool)`, is_error: true };
		const failed = outcome.is_error === true;
		const events = this.#o.events;
		if (events.heard("tool_execution_end")) events.emit(run, { type: "tool_execution_end", call_id: info.id, name: info.name, is_error: failed, ms: this.#o.now() - started });
		run.toolNames.push(info.name);
		if (run.toolSummary.length < CORE_TOOL_SUMMARY_MAX_LINES) run.toolSummary.push("- ".concat(info.name, failed ? ": failed" : ": ok"));
		const message: ToolMessage = { role: "tool", tool_call_id: info.id, content: this.#o.scrub(outcome.content) };
		if (failed) message.is_error = true;
		return message;
	}
}
