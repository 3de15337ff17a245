// core/format: the text the core writes for people and logs: stage messages
// (what a chat sees while tools run), the failure note persisted when a request
// fails (so the next turn knows why there was no answer), and the METRIC line.
import { CORE_STAGE_ARGS_PREVIEW_MAX_CHARS, CORE_STAGE_SUMMARY_MAX_CHARS } from "budgets";
import type { AssistantMessage, Message, ToolCall } from "llm/types";
import type { CoreMetrics } from "core/types";
import type { Run } from "core/request";
import { maskedJson } from "util/secrets";
import { clip, oneLine } from "util/text";

export type StageVerbosity = "simple" | "verbose";

/**
 * A tool round's stage message: "running tools: a, b" (simple), or the round
 * number, a one-line summary of the model's text and each call's arguments,
 * secret-looking values masked since stage messages reach a chat (verbose).
 */
export function stageText(verbosity: StageVerbosity, iteration: number, message: AssistantMessage, calls: ToolCall[]): string {
	if (verbosity !== "verbose") return `running tools: ${calls.map((call) => call.function.name).join(", ")}`;
	const summary = clip(oneLine(message.content || message.reasoning_content || ""), CORE_STAGE_SUMMARY_MAX_CHARS);
	return [
		summary ? `round ${iteration}: ${summary}` : `round ${iteration}`,
		...calls.map((call) => `- ${call.function.name}(${clip(oneLine(maskedJson(call.function.arguments)), CORE_STAGE_ARGS_PREVIEW_MAX_CHARS)})`),
	].join("\n");
}

/** The assistant record persisted for a failed request: the error and the tools that ran. */
export function failureNote(run: Run, error: string): Message {
	const lines = [`(no answer to this request: ${error})`];
	if (run.toolSummary.length) lines.push("tools run:", ...run.toolSummary);
	if (run.toolNames.length > run.toolSummary.length) lines.push(`- ... and ${run.toolNames.length - run.toolSummary.length} more`);
	return { role: "assistant", content: lines.join("\n") };
}

/** The request's figures, as CoreMetrics. */
export function metricsOf(run: Run, outcome: CoreMetrics["outcome"], now: number): CoreMetrics {
	return {
		outcome, total_ms: now - run.started, llm_ms: run.llmMs, tool_ms: run.toolMs, rounds: run.rounds,
		tool_calls: run.toolNames.length, usage: run.usage, bytes_sent: run.bytesSent, bytes_received: run.bytesReceived,
		peak_heap_bytes: run.peakHeap,
	};
}

/**
 * `METRIC agent=root request=3 outcome=ok total_ms=... peak_heap_bytes=...`: one
 * line per request. One concat (in XS a template literal of this many parts
 * makes each intermediate string: 2.5 KiB of heap for this line on lin, 0.9 so).
 */
export function metricLine(agentId: string, requestId: number, m: CoreMetrics): string {
	return "METRIC agent=".concat(
		agentId, " request=", String(requestId), " outcome=", m.outcome, " total_ms=", String(Math.round(m.total_ms)),
		" llm_ms=", String(Math.round(m.llm_ms)), " tool_ms=", String(Math.round(m.tool_ms)), " rounds=", String(m.rounds),
		" tool_calls=", String(m.tool_calls), " tokens_in=", String(m.usage.input_tokens), " tokens_out=", String(m.usage.output_tokens),
		" bytes_sent=", String(m.bytes_sent), " bytes_received=", String(m.bytes_received), " peak_heap_bytes=", String(m.peak_heap_bytes),
	);
}
