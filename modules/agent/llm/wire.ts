// llm/wire: one HTTP attempt of a backend: serialise the body, POST it through the
// injected transport, read a whole JSON reply or an SSE stream, emit events, and
// turn every failure into an LlmError. Protocol specifics come in as parse() and
// assembler(); everything else (headers, errors, events, byte counts) lives here once.
// protocolBackend() turns a protocol's conversions into a registered backend, so
// the built-in backends share one init / chat / infer_media / deinit.
//
// Events: message_start when the reply starts (first streamed byte, or the whole
// body), message_update per delta, then exactly one message_end — with `error` when
// the attempt fails after message_start. Unstreamed replies emit their text,
// reasoning and tool calls as single deltas, so consumers need one code path.
import { LLM_REPLY_MAX_BYTES, LLM_STREAM_MAX_BYTES } from "budgets";
import { decodeUtf8, encodeUtf8, utf8Boundary } from "net/utf8";
import { HttpError, type AbortSignalLike, type HttpRequest, type HttpResponse, type HttpSettle } from "net/types";
import { base64Length, encodeInto } from "util/base64";
import { heapBuffers, type BufferPool } from "util/buffers";
import { emptyUsage } from "llm/json";
import { JsonReader, JsonSyntax, ReplyTooLarge } from "llm/scan";
import { SseParser } from "net/sse";
import {
	LlmError,
	type AssistantDelta, type AssistantMessage, type BackendEnv, type BackendRegistration, type ChatOptions, type ChatRequest, type ChatSettle,
	type ChatResponse, type ContentPart, type FinishReason, type ImagePart, type JsonObject, type JsonValue, type LlmBackend,
	type LlmEvent, type Message, type ModelProfile, type PreparedMediaRequest, type Usage,
} from "llm/types";
import { messageOf } from "util/errors";
import { BodyWriter, loadStored, writeBody, type PieceSpec, type Prefix } from "llm/body";
import { logLine } from "util/log";
import { randomUint32 } from "util/random";

export interface ParsedReply {
	message: AssistantMessage;
	finish_reason: FinishReason;
	usage: Usage;
	model: string;
}

/** Where a stream assembler's deltas go (an attempt). */
export interface DeltaSink {
	/** Whether a delta would be heard now (ChatOptions.hears): when not, the assembler makes none, nor the strings for it. */
	hearsDeltas(): boolean;
	delta(delta: AssistantDelta): void;
}

/**
 * Reads a streamed reply's events into the reply. One serves a backend's calls
 * one after another (the runtime's one LLM slot): reset() starts a reply,
 * release() ends it, keeping its buffers for the next.
 */
export interface StreamAssembler {
	/** A new reply from now on; its deltas go to sink. */
	reset(sink: DeltaSink): void;
	/** One SSE event's data, bytes[start, end) (valid only during the call). Throws LlmError for error events and bad data. */
	push(bytes: Uint8Array, start: number, end: number): void;
	/** The whole reply; throws LlmError when the stream ended early. */
	finish(): ParsedReply;
	/** The reply is over (assembled or failed): the sink and what the reply built are let go. */
	release(): void;
	/** Between reset() and release(): a kept assembler is free when not. */
	readonly inUse: boolean;
}

/**
 * A stream assembler that reads each event from its bytes (llm/scan): scan()
 * notes where the values it uses are while the whole event is checked, then
 * apply() decodes only those. A syntax error anywhere in the event is the
 * stream's "not JSON" error, before anything of the event is applied.
 */
export abstract class EventAssembler implements StreamAssembler {
	protected readonly reader: JsonReader;
	/** Where deltas go, between reset() and release(). */
	protected sink: DeltaSink | undefined = undefined;

	/** reader: one a backend keeps for all its calls (one at a time), or a new one. */
	constructor(reader = new JsonReader()) {
		this.reader = reader;
	}

	reset(sink: DeltaSink): void {
		this.clear();
		this.sink = sink;
	}

	release(): void {
		this.sink = undefined;
		this.reader.release();   // the last event's bytes
		this.clear();
	}

	get inUse(): boolean { return this.sink !== undefined; }

	/** The reader keeps the event's bytes until the next event, a failure or release(): one try per event, no release call. */
	push(bytes: Uint8Array, start: number, end: number): void {
		const r = this.reader.reset(bytes, start, end);
		let scanned = false;
		try {
			this.scan(r);
			scanned = true;
			this.apply(r);
		} catch (error) {
			r.release();
			if (!scanned && error instanceof JsonSyntax) throw new LlmError("protocol", "the LLM stream sent an event that is not JSON");
			throw error;
		}
	}

	/** Forgets the reply (keeping buffers worth keeping). */
	protected abstract clear(): void;
	/** Notes where the event's values are; must read (and so check) all of it. */
	protected abstract scan(r: JsonReader): void;
	/** What the event says, from the positions scan() noted. */
	protected abstract apply(r: JsonReader): void;
	abstract finish(): ParsedReply;
}

/** Local image bytes whose base64 replaces `marker` (a JSON string value) in the body. */
export interface Attachment { marker: string; bytes: ArrayBufferLike }

export interface ExchangeSpec {
	url: string;
	/** Every request header (content-type, accept, auth ...): frozen, so the HTTP client checks and encodes them once (see requestHeaders). */
	headers: Readonly<Record<string, string>>;
	/** The body as JSON, or already written into a pool buffer (released when the exchange settles). */
	body: JsonObject | BodyWriter;
	attachment?: Attachment;
	stream: boolean;
	/** A whole reply from its bytes (llm/scan); throws JsonSyntax when they are not JSON. */
	parse(bytes: Uint8Array, reader?: JsonReader): ParsedReply;
	/** A new stream assembler (when there is no free kept one). */
	assembler(reader?: JsonReader): StreamAssembler;
	/** A stream assembler to reuse (the backend's own, reset for each attempt) when free; else one is made. */
	kept?: StreamAssembler;
	/** The reader parse() and the assembler use (the backend's own, kept across calls). */
	reader?: JsonReader;
	/** An SSE parser to reuse (the backend's own, reset for each attempt); else one is made. */
	sse?: SseParser;
}

/** base_url + "/" + path, with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
	return base.replace(/\/+$/, "") + "/" + path.replace(/^\/+/, "");
}

/** The headers of every request of a profile, in the order they are sent. */
export function requestHeaders(profile: ModelProfile, protocolHeaders: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
	const headers: Record<string, string> = { "content-type": "application/json", ...authHeaders(profile), ...protocolHeaders };
	if (profile.stream) headers.accept = "text/event-stream";
	return Object.freeze(headers);
}

/** The auth header of a profile (none for auth "none" or an empty key). */
export function authHeaders(profile: ModelProfile): Record<string, string> {
	if (!profile.api_key || profile.auth === "none") return {};
	return profile.auth === "bearer" ? { authorization: `Bearer ${profile.api_key}` } : { "x-api-key": profile.api_key };
}

let markerCount = 0;
/** A string that appears nowhere else in a request body. */
export function imageMarker(): string {
	return `@@xsclaw-image-${++markerCount}-${randomUint32()}@@`;
}

/** Replaces every occurrence of the key in text (errors may echo what was sent). */
export function scrubSecret(text: string, secret: string): string {
	return secret.length >= 4 ? text.split(secret).join("****") : text;
}

/**
 * The request body: a string, or with an attachment the bytes of the JSON with the
 * marker replaced by the base64 of the attachment, encoded straight into a buffer
 * from the pool (a PSRAM host buffer on the device: a Uint8Array views it, since a
 * host buffer is no ArrayBuffer instance). `buffer` is what to free afterwards.
 */
export function serializeBody(body: JsonObject, attachment: Attachment | undefined, buffers: BufferPool = heapBuffers): { body: string | Uint8Array; buffer?: ArrayBufferLike } {
	const text = JSON.stringify(body);
	if (!attachment) return { body: text };
	const at = text.indexOf(attachment.marker);
	if (at < 0 || text.indexOf(attachment.marker, at + 1) >= 0) throw new LlmError("invalid", "the image marker must appear exactly once in the request body");
	const head = encodeUtf8(text.slice(0, at));
	const tail = encodeUtf8(text.slice(at + attachment.marker.length));
	const size = head.length + base64Length(attachment.bytes.byteLength) + tail.length;
	const buffer = buffers.allocate(size);
	const out = new Uint8Array(buffer, 0, size);
	out.set(head, 0);
	const end = encodeInto(attachment.bytes, out, head.length);
	out.set(tail, end);
	return { body: out, buffer };
}

/**
 * The LlmError for what the transport, a protocol parser or our own code threw,
 * with the API key scrubbed from its message: a provider's error text (a status
 * body, an error event in a stream, an error object in a 200 reply) may echo it.
 */
export function toLlmError(error: unknown, profile: ModelProfile): LlmError {
	const scrub = (text: string) => scrubSecret(text, profile.api_key);
	if (error instanceof LlmError) {
		const message = scrub(error.message);
		return message === error.message ? error : new LlmError(error.kind, message, error);
	}
	if (error instanceof ReplyTooLarge) return new LlmError("network", error.message);
	if (error instanceof HttpError) {
		switch (error.kind) {
			case "aborted":
				return new LlmError("aborted", "the LLM request was cancelled");
			case "status": {
				const status = error.status ?? 0;
				return new LlmError("http", scrub(error.message) + statusHint(status), {
					status,
					retryable: retryableStatus(status),
					retryAfterMs: error.retryAfterMs,
				});
			}
			case "timeout":
				return new LlmError("network", `the LLM did not answer in time (${scrub(error.message)})${error.timeout === "total" ? "; if long replies need more, raise llm.timeout_ms" : ""}`, { retryable: error.timeout === "connect" });
			case "too_large":
				return new LlmError("network", `the LLM reply is too large (${scrub(error.message)}); lower llm.max_tokens or ask for a shorter answer`);
			case "connect": case "dns": {
				const why = scrub(error.message);
				const hint = /\bcheck\b/i.test(why) ? "" : "; check llm.base_url and the network";
				return new LlmError("network", `cannot reach the LLM at ${originOf(profile.base_url)}: ${why}${hint}`, { retryable: true });
			}
			default:
				return new LlmError("network", `the connection to the LLM at ${originOf(profile.base_url)} failed: ${scrub(error.message)}`);
		}
	}
	const message = messageOf(error);
	return new LlmError("protocol", scrub(`the LLM request failed: ${message}`));
}

/** Statuses worth another attempt: rate limits and server errors. */
export function retryableStatus(status: number): boolean {
	return status === 429 || status >= 500;
}

/** What a person can do about a status, when the status says (the provider's text says why). */
function statusHint(status: number): string {
	if (status === 401 || status === 403) return " (check the key: config set llm.api_key ...)";
	if (status === 404) return " (check llm.base_url and llm.model)";
	return "";
}

function originOf(url: string): string {
	const match = /^[a-z]+:\/\/[^/]+/i.exec(url);
	return match ? match[0] : url;
}

function emitWhole(message: AssistantMessage, emit: (event: LlmEvent) => void): void {
	if (message.reasoning_content) emit({ type: "message_update", delta: { type: "reasoning", text: message.reasoning_content } });
	if (message.content) emit({ type: "message_update", delta: { type: "text", text: message.content } });
	message.tool_calls?.forEach((call, index) => {
		emit({ type: "message_update", delta: { type: "tool_call", index, id: call.id, name: call.function.name, arguments: call.function.arguments } });
	});
}

/** A whole reply read from its bytes; bytes that are no JSON get a sentence quoting their start. */
function parseWhole(spec: ExchangeSpec, bytes: Uint8Array): ParsedReply {
	try {
		return spec.parse(bytes, spec.reader);
	} catch (error) {
		if (!(error instanceof JsonSyntax)) throw error;
		const head = decodeUtf8(bytes, 0, utf8Boundary(bytes, 40));
		throw new LlmError("protocol", `the LLM reply is not JSON (${bytes.length} bytes starting ${JSON.stringify(head)}): check that llm.base_url is the API's address`);
	}
}

/**
 * One POST and its reply, as one object: it is the HTTP request (onChunk or
 * onBody is one of its methods) and it hears the HTTP outcome (HttpSettle), so
 * an attempt makes no promise (with a transport that has start()), no closure
 * per call and none per chunk or event; `settle` hears how it ended, once,
 * with an LlmError only.
 *
 * The caller's options (its onEvent) and settle are dropped when the attempt
 * ends: what outlives it (the HTTP client's last view of the request, a parser
 * kept for the next call) must not reach the core's request and its history
 * window (a full window, ~300 KiB of agent heap, once stayed alive that way).
 */
class Attempt implements HttpRequest, HttpSettle, DeltaSink {
	readonly method = "POST";
	readonly url: string;
	readonly headers: Readonly<Record<string, string>>;
	body: string | Uint8Array = "";
	readonly signal: AbortSignalLike | undefined;
	readonly totalTimeoutMs: number;
	/** An unstreamed reply's body, held whole: its content is less. */
	readonly maxBodyBytes = LLM_REPLY_MAX_BYTES;
	onChunk: ((bytes: Uint8Array) => void) | undefined = undefined;
	onBody: ((bytes: Uint8Array) => void) | undefined = undefined;
	readonly #env: BackendEnv;
	readonly #profile: ModelProfile;
	readonly #spec: ExchangeSpec;
	#options: ChatOptions | undefined;
	#settle: ChatSettle | undefined;
	readonly #startedAt: number;
	#started = false;
	#traced = false;
	/** What a body callback threw, kept so the transport's "protocol" wrapper does not hide kind and status. */
	#sinkError: LlmError | undefined = undefined;
	#assembler: StreamAssembler | undefined = undefined;
	#sse: SseParser | undefined = undefined;
	#streamed = 0;
	/** Whether deltas are heard during the chunk being read: 1 yes, 0 no, -1 not asked yet. */
	#hears = -1;
	/** An unstreamed reply, read from the client's (PSRAM) body buffer: no string of the whole body. */
	#whole: ParsedReply | undefined = undefined;
	#bodyBuffer: ArrayBufferLike | undefined = undefined;

	constructor(env: BackendEnv, profile: ModelProfile, spec: ExchangeSpec, options: ChatOptions, settle: ChatSettle) {
		this.#env = env;
		this.#profile = profile;
		this.#spec = spec;
		this.#options = options;
		this.#settle = settle;
		this.url = spec.url;
		this.headers = spec.headers;
		this.signal = options.signal;
		this.totalTimeoutMs = profile.timeout_ms;
		this.#startedAt = env.now();
	}

	/** Sends the request; the outcome goes to settle. */
	begin(): void {
		const spec = this.#spec;
		try {
			if (spec.body instanceof BodyWriter) this.body = spec.body.view();
			else {
				const serialized = serializeBody(spec.body, spec.attachment, this.#env.buffers ?? heapBuffers);
				this.body = serialized.body;
				this.#bodyBuffer = serialized.buffer;
			}
			if (spec.stream) {
				const kept = spec.kept;
				const assembler = this.#assembler = kept && !kept.inUse ? kept : spec.assembler(spec.reader);
				assembler.reset(this);
				const keptSse = spec.sse;
				const sse = this.#sse = keptSse && !keptSse.inUse ? keptSse : new SseParser(ignoreEvent);
				sse.reset(assembler);
				this.onChunk = this.streamChunk;
			} else this.onBody = this.wholeBody;
		} catch (error) {
			return this.#fail(error);
		}
		const transport = this.#env.transport;
		if (transport.start) transport.start(this, this);
		else transport.request(this).then((response) => this.resolve(response), (error: HttpError) => this.reject(error));
	}

	/** onChunk: streamed body bytes, through the SSE parser into the assembler. */
	streamChunk(bytes: Uint8Array): void {
		this.#start();
		this.#hears = -1;
		try {
			this.#streamed += bytes.length;
			// The stream's raw bytes (its framing too; none of it is kept): the reply's content is counted against LLM_REPLY_MAX_BYTES as it is gathered (llm/scan ReplyMeter).
			if (this.#streamed > LLM_STREAM_MAX_BYTES) throw new LlmError("network", `the LLM reply stream is larger than ${LLM_STREAM_MAX_BYTES} bytes; it was cut off: lower llm.max_tokens or ask for a shorter answer`);
			(this.#sse as SseParser).push(bytes);
		} catch (error) {
			this.#sinkError = toLlmError(error, this.#profile);
			throw error;
		}
	}

	/** onBody: the whole body's bytes, once. */
	wholeBody(bytes: Uint8Array): void {
		this.#start();
		try {
			this.#whole = parseWhole(this.#spec, bytes);
		} catch (error) {
			this.#sinkError = toLlmError(error, this.#profile);
			throw error;
		}
	}

	/** HttpSettle: the response arrived whole. */
	resolve(response: HttpResponse): void {
		if (!this.#settle) return;
		let result: ChatResponse;
		try {
			let reply: ParsedReply;
			this.#start();
			if (this.#assembler) {
				(this.#sse as SseParser).end();
				reply = this.#assembler.finish();
			} else {
				// A transport without onBody (a custom or fake one) gave the body as a string.
				reply = this.#whole ?? parseWhole(this.#spec, encodeUtf8(response.body));
				emitWhole(reply.message, (event) => this.#emit(event));
			}
			this.#emit({ type: "message_end", message: reply.message, usage: reply.usage });
			result = {
				message: reply.message,
				finish_reason: reply.finish_reason,
				usage: reply.usage ?? emptyUsage(),
				model: reply.model || this.#profile.model,
				attempts: 1,
				bytes_sent: response.bytesSent,
				bytes_received: response.bytesReceived,
				elapsed_ms: this.#env.now() - this.#startedAt,
			};
		} catch (error) {
			return this.#fail(error);
		}
		const settle = this.#end();
		settle.resolve(result);
	}

	/** HttpSettle: the request failed (what a body callback threw comes first). */
	reject(error: HttpError): void {
		this.#fail(this.#sinkError ?? error);
	}

	#fail(error: unknown): void {
		if (!this.#settle) return;
		const failure = toLlmError(error, this.#profile);
		if (this.#started) this.#emit({ type: "message_end", error: failure.message });
		const settle = this.#end();
		settle.reject(failure);
	}

	/** The attempt is over: buffers back, listeners dropped. Returns whom to tell. */
	#end(): ChatSettle {
		const settle = this.#settle as ChatSettle;
		this.#settle = undefined;
		this.#options = undefined;
		this.#assembler?.release();
		this.#assembler = undefined;
		this.#sse?.release();
		this.#sse = undefined;
		if (this.#bodyBuffer) (this.#env.buffers ?? heapBuffers).free(this.#bodyBuffer);
		this.#bodyBuffer = undefined;
		if (this.#spec.body instanceof BodyWriter) this.#spec.body.release();
		return settle;
	}

	#start(): void {
		if (this.#started) return;
		this.#started = true;
		this.#emit({ type: "message_start", attempt: 1 });
	}

	/**
	 * DeltaSink: whether the caller hears message_update now (ChatOptions.hears,
	 * asked as a method of its options once per chunk of the stream: the events
	 * of one chunk are read at once, with no turn of the event loop between them).
	 */
	hearsDeltas(): boolean {
		let hears = this.#hears;
		if (hears < 0) {
			const options = this.#options;
			if (!options?.onEvent) hears = 0;
			else if (!options.hears) hears = 1;
			else {
				try {
					hears = options.hears(UPDATE) ? 1 : 0;
				} catch {
					hears = 1;   // as if it had not said
				}
			}
			this.#hears = hears;
		}
		return hears === 1;
	}

	/** DeltaSink: a streamed delta, as a message_update event. */
	delta(delta: AssistantDelta): void {
		this.#emit({ type: UPDATE, delta });
	}

	/** Calls the caller's onEvent (as a method of its options), tracing (never propagating) what it throws. */
	#emit(event: LlmEvent): void {
		const options = this.#options;
		if (!options?.onEvent) return;
		try {
			options.onEvent(event);
		} catch (error) {
			if (!this.#traced) logLine("warn", `llm: an onEvent listener threw on ${event.type} (later throws are not traced): ${messageOf(error)}`);
			this.#traced = true;
		}
	}
}

const ignoreEvent = () => {};
const UPDATE = "message_update";

/** One POST and its reply (the promise form of start()). Rejects with LlmError only. */
export function exchange(env: BackendEnv, profile: ModelProfile, spec: ExchangeSpec, options: ChatOptions): Promise<ChatResponse> {
	return new Promise<ChatResponse>((resolve, reject) => startExchange(env, profile, spec, options, { resolve, reject }));
}

/** One POST and its reply; settle hears the outcome (possibly before this returns). Never throws. */
export function startExchange(env: BackendEnv, profile: ModelProfile, spec: ExchangeSpec, options: ChatOptions, settle: ChatSettle): void {
	new Attempt(env, profile, spec, options, settle).begin();
}

// ---- backends over a wire protocol ----

/** What one wire protocol brings to protocolBackend(). */
export interface ProtocolSpec extends Pick<BackendRegistration, "id" | "defaults"> {
	/** Appended to the profile's base_url, e.g. "chat/completions". */
	path: string;
	/** Sent besides the auth header (e.g. a protocol version). */
	headers?: Readonly<Record<string, string>>;
	/** The JSON body of a chat request, and sentences about what the conversion had to change (traced, never fatal). */
	toBody(request: ChatRequest, profile: ModelProfile): { body: JsonObject; notes?: string[] };
	/** The user message of a one-shot image request: the prompt and the image in the order the protocol prefers. */
	mediaContent(prompt: string, image: ImagePart): ContentPart[];
	/** A whole reply from its bytes (llm/scan); throws JsonSyntax when they are not JSON. */
	parse(bytes: Uint8Array, reader?: JsonReader): ParsedReply;
	/** A stream assembler (the backend keeps one, and makes another only while it is busy). */
	assembler(reader?: JsonReader): StreamAssembler;
	/** Body assembly in byte pieces (llm/body); without it the body is JSON.stringify(toBody()). */
	pieces?: PieceSpec;
}

/** A backend bound to one profile between init and deinit. */
class ProtocolBackend implements LlmBackend {
	readonly #spec: ProtocolSpec;
	#profile: ModelProfile | undefined = undefined;
	#env: BackendEnv | undefined = undefined;
	/** The stable prefix of the last body written in pieces, until what it was made from changes. */
	#prefix: Prefix | undefined = undefined;
	/** The profile's URL and request headers, made once at init. */
	#url = "";
	#headers: Readonly<Record<string, string>> = {};
	/** The reply reader and SSE parser of every call (one call at a time: the runtime's LLM slot). */
	readonly #reader = new JsonReader();
	#sse: SseParser | undefined = undefined;
	#assembler: StreamAssembler | undefined = undefined;
	/** Stored history placeholders are welcome: their wire pieces are cached (llm/body). */
	readonly acceptsStored = true;

	constructor(spec: ProtocolSpec) {
		this.#spec = spec;
	}

	init(profile: ModelProfile, env: BackendEnv): void {
		this.#profile = profile;
		this.#env = env;
		this.#url = joinUrl(profile.base_url, this.#spec.path);
		this.#headers = requestHeaders(profile, this.#spec.headers);
	}

	chat(request: ChatRequest, options: ChatOptions): Promise<ChatResponse> {
		return new Promise<ChatResponse>((resolve, reject) => this.#send(request, options, undefined, { resolve, reject }));
	}

	start(request: ChatRequest, options: ChatOptions, settle: ChatSettle): void {
		this.#send(request, options, undefined, settle);
	}

	/** A local image travels as a data URL whose base64 is a marker, replaced by the bytes in serializeBody. */
	infer_media(request: PreparedMediaRequest, options: ChatOptions): Promise<ChatResponse> {
		const image = request.image;
		const marker = imageMarker();
		const url = "url" in image ? image.url : `data:${image.mime};base64,${marker}`;
		const messages: Message[] = [];
		if (request.system) messages.push({ role: "system", content: request.system });
		messages.push({ role: "user", content: this.#spec.mediaContent(request.prompt, { type: "image_url", image_url: { url } }) });
		const attachment = "bytes" in image ? { marker, bytes: image.bytes } : undefined;
		return new Promise<ChatResponse>((resolve, reject) => this.#send({ messages, max_tokens: request.max_tokens }, options, attachment, { resolve, reject }));
	}

	deinit(): void {
		if (this.#prefix) (this.#env?.buffers ?? heapBuffers).free(this.#prefix.bytes.buffer);
		this.#profile = undefined;
		this.#env = undefined;
		this.#prefix = undefined;
	}

	#send(request: ChatRequest, options: ChatOptions, attachment: Attachment | undefined, settle: ChatSettle): void {
		const spec = this.#spec, profile = this.#profile, env = this.#env;
		if (!profile || !env) return settle.reject(new LlmError("invalid", `the ${spec.id} backend was used before init()`));
		const buffers = env.buffers ?? heapBuffers;
		const notes: string[] = [];
		let body: JsonObject | BodyWriter | undefined = undefined;
		try {
			if (spec.pieces && !attachment) {
				const writer = new BodyWriter(buffers);
				body = writer;
				const prefix = writeBody(spec.pieces, request, profile, writer, buffers, this.#prefix, notes);
				if (!prefix) {
					writer.release();
					body = undefined;
				} else if (prefix !== this.#prefix) {
					// The old prefix's bytes were only ever copied from: its buffer goes back at once.
					if (this.#prefix) buffers.free(this.#prefix.bytes.buffer);
					this.#prefix = prefix;
				}
			}
			if (!body) {
				const converted = spec.toBody(loadStored(request), profile);
				body = converted.body;
				notes.push(...converted.notes ?? []);
			}
		} catch (error) {
			if (body instanceof BodyWriter) body.release();
			return settle.reject(toLlmError(error, profile));
		}
		for (const note of notes) logLine("info", `llm: ${note}`);
		startExchange(env, profile, {
			url: this.#url,
			headers: this.#headers,
			body,
			attachment,
			stream: profile.stream,
			parse: spec.parse,
			assembler: spec.assembler,
			kept: profile.stream ? this.#assembler ??= spec.assembler(this.#reader) : undefined,
			reader: this.#reader,
			sse: profile.stream ? this.#sse ??= new SseParser(ignoreEvent) : undefined,
		}, options, settle);
	}
}

/** The registration of a backend speaking spec's protocol. */
export function protocolBackend(spec: ProtocolSpec): BackendRegistration {
	return Object.freeze({ id: spec.id, defaults: Object.freeze({ ...spec.defaults }), create: (): LlmBackend => new ProtocolBackend(spec) });
}
