// llm/types: the contract between the agent core and the LLM backends.
//
// Canonical messages are OpenAI-shaped (the Chat Completions message list); each
// backend converts them to its wire protocol and back. An assistant message that
// came from a provider keeps `raw`: the message exactly as that provider sent it
// (for a streamed reply, as it would have sent it unstreamed). The loop and the
// session store keep `raw`, and a backend speaking the same protocol sends it back
// verbatim, so thinking signatures and fields we do not model survive.
//
// Contracts in brief:
// - LlmBackend.chat makes ONE attempt (retries, limits and configuration belong to
//   the runtime, modules/agent/llm/runtime.ts) and rejects with LlmError only.
// - Every message_start event is matched by exactly one message_end, also when the
//   attempt fails (message_end then carries `error`). A retry starts a new message:
//   a consumer drops the partial text it showed when it sees message_start again.
// - onEvent must not throw; if it does, the error is traced and ignored.
import type { AbortSignalLike, HttpTransport } from "net/types";
import type { BufferPool } from "util/buffers";

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject { [key: string]: JsonValue }

// ---- canonical messages ----

export interface TextPart { type: "text"; text: string }
/** url: https://... or a data URL ("data:image/png;base64,...") */
export interface ImagePart { type: "image_url"; image_url: { url: string; detail?: "auto" | "low" | "high" } }
export type ContentPart = TextPart | ImagePart;

export interface ToolCall {
	id: string;
	type: "function";
	/** arguments: the JSON text exactly as the model produced it (it may be invalid JSON). */
	function: { name: string; arguments: string };
}

export type WireProtocol = "openai" | "anthropic";

/** The assistant message as a provider sent it, tagged with its protocol. */
export interface RawAssistant { protocol: WireProtocol; message: JsonObject }

/**
 * A history message a store keeps outside the heap (store/sessions' history
 * provider hands these out). The message carrying it is a placeholder: its role,
 * and for pairing tool calls with results its tool_call_id or its tool_calls'
 * ids; its content is empty. Backends send the wire piece they encoded from
 * load() the first time (llm/body), so an old message is copied, not parsed.
 */
export interface StoredRef {
	/** The whole message as the prompt takes it; throws when it cannot be read. */
	load(): Message;
	/** Image parts it holds: "local" (a data URL) or "remote" (http(s) only); undefined when none. */
	readonly images?: "local" | "remote";
	/**
	 * The store's window this message belongs to (one object shared by every
	 * placeholder of it) and the message's key there (unique within the group):
	 * the backends keep a window's wire pieces together, in one pool buffer per
	 * protocol (llm/body). Without a group the message has a buffer of its own.
	 */
	readonly group?: object;
	readonly key?: number;
}

interface MessageCommon {
	/**
	 * Anthropic prompt caching: a cache breakpoint after this message (after the
	 * system prompt when on a system message). Ignored by OpenAI-compatible backends,
	 * whose caching is automatic. At most LLM_CACHE_BREAKPOINTS are honoured.
	 */
	cache_breakpoint?: boolean;
	/** Set on a placeholder for a message kept in a store: see StoredRef. */
	stored?: StoredRef;
}
export interface SystemMessage extends MessageCommon { role: "system"; content: string }
export interface UserMessage extends MessageCommon { role: "user"; content: string | ContentPart[] }
export interface AssistantMessage extends MessageCommon {
	role: "assistant";
	content: string | null;
	/** The model's reasoning (DeepSeek reasoning_content, Anthropic thinking blocks). */
	reasoning_content?: string;
	/** Anthropic's signature over the thinking, needed to send it back. */
	reasoning_signature?: string;
	tool_calls?: ToolCall[];
	raw?: RawAssistant;
}
export interface ToolMessage extends MessageCommon {
	role: "tool";
	tool_call_id: string;
	content: string;
	is_error?: boolean;
}
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface ToolDefinition {
	type: "function";
	function: { name: string; description?: string; parameters: JsonObject };
}

// ---- requests, responses, events ----

export interface ChatRequest {
	messages: Message[];
	tools?: ToolDefinition[];
	/** Overrides the profile's max_tokens for this request. */
	max_tokens?: number;
}

export interface Usage {
	input_tokens: number;
	output_tokens: number;
	/** Prompt tokens served from the provider's cache (when reported). */
	cache_read_tokens: number;
	/** Prompt tokens written to the cache (Anthropic). */
	cache_write_tokens: number;
}

/**
 * Why the model stopped: "stop" (a final answer), "tool_calls", "length" (max_tokens),
 * "content_filter", "other".
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "other";

export interface ChatResponse {
	message: AssistantMessage;
	finish_reason: FinishReason;
	usage: Usage;
	/** The model that answered, as the provider named it. */
	model: string;
	/** HTTP attempts made (1 without retries; 0 when nothing was sent). */
	attempts: number;
	bytes_sent: number;
	bytes_received: number;
	/** Wall time of the call including retries, ms. */
	elapsed_ms: number;
}

export type AssistantDelta =
	| { type: "text"; text: string }
	| { type: "reasoning"; text: string }
	/** id and name come with a call's first delta; arguments are a fragment of the JSON text. */
	| { type: "tool_call"; index: number; id?: string; name?: string; arguments: string };

export type LlmEvent =
	| { type: "message_start"; attempt: number }
	| { type: "message_update"; delta: AssistantDelta }
	| { type: "message_end"; message?: AssistantMessage; usage?: Usage; error?: string };

export interface ChatOptions {
	signal?: AbortSignalLike;
	onEvent?: (event: LlmEvent) => void;
	/**
	 * Which event types onEvent hears, asked before streamed deltas are made
	 * (once per chunk of the stream): a message_update nobody hears costs no
	 * event, delta or string. Without it, onEvent hears every type. Must be
	 * cheap; a throw counts as true.
	 */
	hears?: (type: LlmEvent["type"]) => boolean;
}

// ---- media (one-shot image inference) ----

export type ImageSource =
	/** A file under the data directory (relative path, no ".."). */
	| { path: string }
	/** Image bytes; mime is sniffed from the bytes when absent. */
	| { bytes: ArrayBuffer; mime?: string }
	/** A remote image the provider fetches itself. */
	| { url: string };

export interface MediaRequest {
	prompt: string;
	image: ImageSource;
	system?: string;
	max_tokens?: number;
}

/** An image ready for a backend: a remote URL, or local bytes with their MIME type. */
export type PreparedImage = { url: string } | { mime: string; bytes: ArrayBufferLike };

export interface PreparedMediaRequest {
	prompt: string;
	image: PreparedImage;
	system?: string;
	max_tokens?: number;
}

// ---- profiles and backends ----

export type AuthKind = "bearer" | "api-key" | "none";
export type MaxTokensField = "max_tokens" | "max_completion_tokens";

/** Everything a backend needs to talk to one model; built by llm/profiles from config. */
export interface ModelProfile {
	/** Preset name ("openai", "anthropic", "deepseek", "openrouter", "ollama") or "custom". */
	provider: string;
	/** Registered backend id ("openai_compatible", "anthropic_compatible", ...). */
	backend: string;
	/** Without a trailing slash, e.g. "https://api.openai.com/v1". */
	base_url: string;
	/** Secret: never log, never show unmasked. "" when auth is "none". */
	api_key: string;
	auth: AuthKind;
	model: string;
	max_tokens: number;
	max_tokens_field: MaxTokensField;
	/** Stream replies over SSE; false falls back to one buffered JSON reply. */
	stream: boolean;
	supports_tools: boolean;
	supports_vision: boolean;
	/** The model fetches images itself: local images (data URLs) are refused. */
	image_remote_url_only: boolean;
	timeout_ms: number;
	image_max_bytes: number;
}

export interface BackendEnv {
	transport: HttpTransport;
	/** Monotonic milliseconds. */
	now(): number;
	/** Where request bodies with an image are built, and freed once the request
	 * settled (default: heapBuffers). */
	buffers?: BufferPool;
}

/** Who hears how an LLM attempt ended (LlmBackend.start): exactly one of the two, once. */
export interface ChatSettle {
	resolve(response: ChatResponse): void;
	reject(error: LlmError): void;
}

/** One backend instance, bound to one profile between init and deinit. */
export interface LlmBackend {
	/** Checks the profile; throws LlmError (kind "config") with guidance when unusable. */
	init(profile: ModelProfile, env: BackendEnv): void;
	/** One HTTP attempt. Rejects with LlmError only. */
	chat(request: ChatRequest, options: ChatOptions): Promise<ChatResponse>;
	/**
	 * chat() without a promise (optional; the runtime uses it when there): settle
	 * hears the outcome, possibly before start() returns. options.onEvent is
	 * called as a method of options. Never throws.
	 */
	start?(request: ChatRequest, options: ChatOptions, settle: ChatSettle): void;
	/** True when chat() takes stored history placeholders (StoredRef); otherwise the runtime loads them first. */
	readonly acceptsStored?: boolean;
	/**
	 * One-shot image inference. The runtime has prepared the image and checked it
	 * against the profile (vision, remote-only, size). Local bytes are base64-encoded
	 * straight into the request body buffer (env.buffers), never into a JS string.
	 */
	infer_media(request: PreparedMediaRequest, options: ChatOptions): Promise<ChatResponse>;
	/** Releases what init took. The instance is not used afterwards. */
	deinit(): void;
}

/** What a profile uses when config leaves it open. */
export interface BackendDefaults {
	auth: AuthKind;
	max_tokens_field: MaxTokensField;
}

export interface BackendRegistration {
	/** Unique; e.g. "openai_compatible". */
	id: string;
	/** What a profile uses when config leaves it open. */
	defaults: BackendDefaults;
	create(): LlmBackend;
}

// ---- errors ----

/**
 * kind:
 *  "config"      the LLM is not (correctly) configured; the message says what to set
 *  "unsupported" the profile cannot do what was asked (tools, images); nothing was sent
 *  "limit"       a call or token limit is reached; nothing was sent
 *  "http"        the provider answered with an error status (status set)
 *  "network"     connect, DNS, TLS, timeout, a broken or oversized reply
 *  "protocol"    the reply could not be understood
 *  "aborted"     cancelled through the signal
 *  "invalid"     the request itself is malformed (caller bug)
 */
export type LlmErrorKind = "config" | "unsupported" | "limit" | "http" | "network" | "protocol" | "aborted" | "invalid";

export class LlmError extends Error {
	override name = "LlmError";
	readonly kind: LlmErrorKind;
	/** Worth another attempt: connect errors, 429, 5xx. */
	readonly retryable: boolean;
	readonly status?: number;
	readonly retryAfterMs?: number;
	constructor(kind: LlmErrorKind, message: string, details: { retryable?: boolean; status?: number; retryAfterMs?: number } = {}) {
		super(message);
		this.kind = kind;
		this.retryable = details.retryable ?? false;
		if (details.status !== undefined) this.status = details.status;
		if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
	}
}
