// core/types: the contract of the agent core (SPEC §4) with everything that plugs
// into it: triggers that submit requests, context providers, the tool caller, the
// persistence hook (modules/agent/store implements it), the request gate, observers and
// the event stream. Requests, responses and events are plain data (JSON-able), so
// the core can sit behind a Worker on the device.
//
// The core is an Active Object: submit() only enqueues; one serial executor runs
// one request at a time. Hooks are called from that executor; each hook's contract
// says what happens when it throws.
import type { ChatOptions, ChatRequest, ChatResponse, Message, ToolDefinition, Usage } from "llm/types";

// ---- requests and responses ----

/**
 * What separates a user message's own text from the volatile block the core adds
 * after it (time, source, VOLATILE sections); the session keeps the message whole,
 * as it was sent, so displays cut it here.
 */
export const REQUEST_CONTEXT_MARK = "\n\n[request context]\n";

/** Request flags (bit values as in esp-claw's claw_core). */
export const RequestFlag = Object.freeze({
	/** The final text is published as an `out_message` event (to the router). */
	PUBLISH_OUT_MESSAGE: 1,
	/** The response never enters the response queue (delivery is by events only). */
	SKIP_RESPONSE_QUEUE: 2,
	/** Same-session message: steers the request in flight instead of waiting. */
	USER_INTERRUPT: 4,
	/** Stage messages (tool progress) are published as `agent_stage` events. */
	PUBLISH_STAGE_MESSAGE: 8,
});

/** The source channels the firmware itself names (chat channels add theirs). */
export const Channel = Object.freeze({
	CONSOLE: "console",
	SUBAGENT: "subagent",
	CRON: "cron",
	/** A client of the board's MCP server (main/mcp): its token's role. */
	MCP: "mcp",
});

/**
 * Who asks. owner: the console, or a chat paired as the owner; user: another
 * paired chat; cron: a request fired by a schedule; subagent: a helper agent's own
 * request. caps/policy decides what each may run.
 */
export type Role = "owner" | "user" | "cron" | "subagent";
export const ROLES: readonly Role[] = Object.freeze(["owner", "user", "cron", "subagent"]);
/** The roles a channel's pairing gives a chat or its sender (channels/pairing): owner or user. */
export type ChatRole = Extract<Role, "owner" | "user">;
export const CHAT_ROLES: readonly ChatRole[] = Object.freeze(["owner", "user"]);

export interface RequestSource {
	/** "console", "telegram", "qq", "cron", "subagent", "router", ... */
	channel: string;
	chat_id: string;
	sender_id: string;
	message_id: string;
	/** The capability that submitted it, when one did ("" otherwise). */
	cap: string;
}

export interface RequestTarget {
	channel: string;
	chat_id: string;
	/**
	 * What the answer answers when no person asked ("schedule s1, due 07:00,
	 * fired 12 min late"): carried on its out_message, shown by the console.
	 */
	label?: string;
}

export interface AgentRequest {
	/** 0 on submit: the core assigns the next id (never 0). */
	request_id: number;
	/** A sum of RequestFlag values. */
	flags: number;
	/** "" = no session: nothing is persisted and no history is read. */
	session_id: string;
	user_text: string;
	source: RequestSource;
	/** Where the answer goes; defaults to the source's channel and chat. */
	target?: RequestTarget;
	/** Who asks (caps/policy's roleOf fills a missing one from the source channel). */
	role?: Role;
}

export interface AgentResponse {
	request_id: number;
	session_id: string;
	ok: boolean;
	/** The final answer ("" when the request failed). */
	text: string;
	/** A sentence for a person when !ok ("request cancelled", "stopped after 10 tool rounds without a final answer; ...", ...). */
	error?: string;
}

// ---- the loop's phases ----

export type Phase =
	| "IDLE"
	| "BEFORE_BUILDING_CONTEXT"
	| "BUILDING_CONTEXT"
	| "BEFORE_LLM_HTTP"
	| "IN_LLM_HTTP"
	| "AFTER_LLM_BEFORE_TOOL"
	| "RUNNING_TOOL"
	| "FINALIZING";

// ---- context providers ----

export const ProviderFlag = Object.freeze({
	/** Collected once when the request starts; every iteration reuses the result (session history). */
	REQUEST_START_ONLY: 1,
	/** Volatile content (time, request source, behaviour notes): placed at the end of
	 * the request, after the history, never in front of stable text. SYSTEM_PROMPT
	 * only (the core ignores it on other kinds): the section goes into the volatile
	 * block at the end of the current user message. */
	VOLATILE: 2,
});

export type ContextContent =
	/** Appended to the system prompt as a `## <provider name>` section. */
	| { kind: "system_prompt"; content: string }
	/** Conversation history, oldest first, canonical (OpenAI-shaped) messages. */
	| { kind: "messages"; content: Message[] }
	| { kind: "tools"; content: ToolDefinition[] };

export interface ContextProvider {
	/** Unique among the core's providers; the section title for system_prompt content. */
	readonly name: string;
	/** A sum of ProviderFlag values. */
	readonly flags?: number;
	/**
	 * Contract: undefined = "nothing this time" (skipped). A throw or rejection fails
	 * the request with the provider's name in the error. Content that is empty ("" or
	 * []) while not undefined is a provider bug and also fails the request.
	 * A MESSAGES provider returns history from before this request: the core injects
	 * the current user message itself, exactly once. The USER record of this request
	 * (and its tool rounds) is persisted before providers are asked, so a provider
	 * that reads the session back must stop before this request's records (the
	 * store's does, by request_id); the core does not drop look-alike messages.
	 * prompt, when given (a request's first round), is the prompt being laid out: a
	 * MESSAGES provider may push its messages onto it (pushes only, nothing else of
	 * it changed) and answer { kind: "messages", content: prompt }, which spares an
	 * array of its own (in XS ~8 KiB for a full window on lin); it pushes nothing
	 * when it answers anything else. Without it, or for a provider that ignores it,
	 * content is an array of the provider's.
	 */
	collect(request: AgentRequest, prompt?: Message[]): ContextContent | undefined | Promise<ContextContent | undefined>;
}

// ---- tools ----

export interface ToolCallInfo {
	/** The model's id for this call. */
	id: string;
	name: string;
	/** The arguments' JSON text as the model produced it (may be invalid JSON). */
	arguments: string;
}

export interface ToolContext {
	request: AgentRequest;
	/** Aborts when the request is cancelled. */
	signal: import("net/types").AbortSignalLike;
	/** Progress for a long tool: becomes a tool_execution_update event. */
	progress(text: string): void;
}

export interface ToolOutcome {
	/** What the model sees as the tool's result. */
	content: string;
	is_error?: boolean;
}

/**
 * Runs one tool call. Contract: resolves with the outcome; a throw or rejection is
 * turned into an is_error result carrying the error's message (the request goes on).
 */
export type CallCap = (call: ToolCallInfo, context: ToolContext) => Promise<ToolOutcome> | ToolOutcome;

// ---- persistence (implemented by modules/agent/store) ----

export type RecordKind = "user" | "assistant_tool" | "tool_result" | "assistant_final" | "failure_note";

export interface ContextRecord {
	kind: RecordKind;
	/**
	 * user: a user message; assistant_tool: the assistant message with tool_calls
	 * (with its raw provider message); tool_result: one tool message;
	 * assistant_final: the final assistant message; failure_note: an assistant
	 * message whose text says why the request had no answer and which tools ran.
	 */
	message: Message;
}

export interface PersistBatch {
	session_id: string;
	request: AgentRequest;
	records: ContextRecord[];
	/** True with the final answer (and with a failure note): the turn is over. */
	turn_completed: boolean;
}

/**
 * Contract: called in this order per request: a USER batch before anything else;
 * one ASSISTANT_TOOL + TOOL_RESULT batch per tool round; an inserted (interrupt)
 * USER batch when one is taken; ASSISTANT_FINAL with turn_completed, or a
 * FAILURE_NOTE with turn_completed when the request fails. Never called for a
 * request without a session id. A throw or rejection is logged, never fatal.
 */
export type Persist = (batch: PersistBatch) => void | Promise<void>;

/**
 * The request gate: runs before anything else of a request. undefined lets it
 * through; a string answers the request with that text (ok, nothing sent to the
 * LLM, nothing persisted), e.g. guidance for a blocked session. Must not throw
 * (a throw fails the request with its message).
 */
export type RequestGate = (request: AgentRequest) => string | undefined;

// ---- events ----

/** Every event carries the core's agent id and the request it belongs to. */
interface EventBase {
	agent_id: string;
	request_id: number;
	session_id: string;
}

export type AgentEvent = EventBase & (
	| { type: "agent_start"; request: AgentRequest }
	/** One LLM round: iteration counts from 1. */
	| { type: "turn_start"; iteration: number }
	| { type: "message_start"; attempt: number }
	| { type: "message_update"; delta: { type: "text" | "reasoning" | "tool_call"; text: string } }
	| { type: "message_end"; error?: string }
	| { type: "tool_execution_start"; call: ToolCallInfo }
	| { type: "tool_execution_update"; call_id: string; text: string }
	| { type: "tool_execution_end"; call_id: string; name: string; is_error: boolean; ms: number }
	| { type: "turn_end"; iteration: number; tool_calls: number }
	/** Always emitted once per agent_start, also when a hook or provider threw. */
	| { type: "agent_end"; response: AgentResponse }
);

/** Must not throw; a throw is traced and ignored. */
export type EventListener = (event: AgentEvent) => void;

/**
 * Which event types a listener hears, asked before each event is built, so an
 * event nobody hears (a streamed delta nobody watches) costs no object. Must
 * not throw; cheap (it runs per delta).
 */
export type EventFilter = (type: AgentEvent["type"]) => boolean;

/** Outbound events to the router (SPEC §8). */
export type OutEvent =
	| { type: "out_message"; channel: string; chat_id: string; text: string; request_id: number; correlation_id: string; label?: string }
	| { type: "agent_stage"; channel: string; chat_id: string; text: string; request_id: number };

export interface CompletionSummary {
	request_id: number;
	session_id: string;
	ok: boolean;
	final_text: string;
	error?: string;
	/** Names of the providers that gave content, comma-separated. */
	providers_csv: string;
	/** Tool names called, in order, comma-separated. */
	tool_calls_csv: string;
}

/** Must not throw; a throw is logged and ignored. */
export type CompletionObserver = (summary: CompletionSummary) => void;

// ---- what the core needs ----

/** The part of llm/runtime's Llm the core uses (a scripted fake in tests). */
export interface ChatModel {
	/**
	 * One call. Contract: settles (rejects) soon after options.signal aborts, as
	 * llm/runtime's Llm does: the core does not race it with the signal (in XS a
	 * race costs a promise, closures and a listener per call). The request and its
	 * messages are the core's: read them during the call, keep nothing of them.
	 */
	chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse>;
	/**
	 * A sentence saying why no call can be sent now (the LLM is not configured), or
	 * undefined. The core fails such a request with it before saving anything of
	 * it. Must not throw.
	 */
	notReady?(): string | undefined;
}

export interface CoreMetrics {
	outcome: "ok" | "error" | "cancelled";
	total_ms: number;
	llm_ms: number;
	tool_ms: number;
	rounds: number;
	tool_calls: number;
	usage: Usage;
	bytes_sent: number;
	bytes_received: number;
	peak_heap_bytes: number;
}
