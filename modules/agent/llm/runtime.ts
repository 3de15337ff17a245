// llm/runtime: what the rest of the firmware calls. It owns the lazily built
// "runtime" (profile + backend instance), rebuilt on the next request after any
// llm.* setting changes, so `config set llm.model ...` needs no restart; it checks
// a request against the profile and the call/token limits before anything is sent;
// it retries (llm/retry) and counts usage (llm/limits).
//
// Without a key or model, chat() sends nothing and rejects with LlmError "config"
// whose message is the guidance ("the LLM is not configured: use `config set
// llm.api_key ...`"); notReady() gives the same sentence without a call, so the
// agent core fails such a request before saving anything of it.
//
// One LLM call runs at a time (chat and infer_media alike): later callers wait in
// order, and a cancelled waiter leaves the queue at once. This bounds peak memory
// on the device the way esp-claw's llm_lock does.
import { LLM_CALLS_PER_DAY, LLM_CALLS_PER_HOUR, LLM_TOKENS_PER_DAY } from "budgets";
import { maskSecret } from "util/secrets";
import type { AbortSignalLike, HttpTransport } from "net/types";
import { heapBuffers, type BufferPool } from "util/buffers";
import { backends as sharedRegistry } from "llm/backends";
import { UsageLimiter, type Limits, type UsageSnapshot, type UsageStore } from "llm/limits";
import { checkImageUse, prepareImage, type ImageFiles } from "llm/media";
import { loadStored } from "llm/body";
import { llmSetting, readSettings, resolveProfile } from "llm/profiles";
import type { BackendRegistry } from "llm/registry";
import { DEFAULT_RETRY_POLICY, afterFailure, cancelled, systemClock, type Clock, type RetryContext, type RetryInfo, type RetryPolicy } from "llm/retry";
import {
	LlmError,
	type ChatOptions, type ChatRequest, type ChatResponse, type ChatSettle, type LlmBackend, type LlmEvent, type MediaRequest, type ModelProfile,
	type PreparedImage,
	type ContentPart, type ImagePart,
} from "llm/types";
import type { SettingsSource } from "config/settings";
import { messageOf } from "util/errors";
import { logLine } from "util/log";

/** The part of config/store's Config the runtime reads. */
export type ConfigSource = SettingsSource;

export interface LlmOptions {
	config: ConfigSource;
	transport: HttpTransport;
	/** Default: the shared registry of llm/backends. */
	registry?: BackendRegistry;
	/** Where call and token counts persist (NVS namespace "llm"); none: in memory only. */
	usageStore?: UsageStore;
	clock?: Clock;
	retry?: RetryPolicy;
	/** Reads local images for infer_media. */
	files?: ImageFiles;
	/** Big buffers (image files, request bodies with images), each freed as soon
	 * as it is no longer needed (default: heapBuffers). */
	buffers?: BufferPool;
	/** Called before each retry (for logs and tests). */
	onRetry?: (info: RetryInfo) => void;
}

export interface LlmStatus {
	configured: boolean;
	provider: string;
	backend: string;
	model: string;
	base_url: string;
	/** Masked ("****abcd"), or "(not set)". */
	api_key: string;
	stream: boolean;
	usage: UsageSnapshot;
	limits: Limits;
	/** Guidance (not configured) or a config error, as a sentence. */
	problem?: string;
}

interface Runtime {
	profile: ModelProfile;
	/** The call and token limits (llm.* settings: a change retires the runtime), read at its first call. */
	limits?: Limits;
	backend: LlmBackend;
	active: number;
	retired: boolean;
}

export class Llm {
	#options: LlmOptions;
	readonly #buffers: BufferPool;
	#registry: BackendRegistry;
	#clock: Clock;
	#limiter: UsageLimiter;
	#runtime: Runtime | undefined = undefined;
	#stopListening: () => void;
	#queue: Array<() => void> = [];
	#busy = false;
	#closed = false;

	constructor(options: LlmOptions) {
		this.#options = options;
		this.#buffers = options.buffers ?? heapBuffers;
		this.#registry = options.registry ?? sharedRegistry;
		this.#clock = options.clock ?? systemClock;
		this.#limiter = new UsageLimiter(options.usageStore, () => this.#clock.wallNow());
		this.#stopListening = options.config.onChange((name) => {
			if (name.startsWith("llm.")) this.#retire();
		});
	}

	/** Drops the current runtime; the next request builds one from the new config. */
	#retire(): void {
		const runtime = this.#runtime;
		this.#runtime = undefined;
		if (!runtime) return;
		runtime.retired = true;
		if (!runtime.active) runtime.backend.deinit();
	}

	/** The runtime for the current config, or the guidance text when not configured. */
	#current(): Runtime | string {
		if (this.#closed) throw new LlmError("invalid", "the LLM service is closed");
		if (this.#runtime) return this.#runtime;
		const result = resolveProfile((name) => this.#options.config.get(name), this.#registry);
		if (!result.ok) return result.guidance;
		const backend = this.#registry.get(result.profile.backend)!.create();
		backend.init(result.profile, { transport: this.#options.transport, now: () => this.#clock.now(), buffers: this.#buffers });
		this.#runtime = { profile: result.profile, backend, active: 0, retired: false };
		return this.#runtime;
	}

	#limits(): Limits {
		const get = (name: string) => this.#options.config.get(name);
		return {
			callsPerHour: Number(llmSetting(get, "llm.calls_per_hour")),
			callsPerDay: Number(llmSetting(get, "llm.calls_per_day")),
			tokensPerDay: Number(llmSetting(get, "llm.tokens_per_day")),
		};
	}

	/**
	 * Takes the one LLM slot: undefined when it was free (no promise to wait for),
	 * else a promise of it; rejects at once when signal aborts while waiting.
	 * #release() gives it back.
	 */
	#acquire(signal: AbortSignalLike | undefined): Promise<void> | undefined {
		if (signal?.aborted) return Promise.reject(new LlmError("aborted", "the LLM request was cancelled"));
		if (!this.#busy) {
			this.#busy = true;
			return undefined;
		}
		return new Promise((resolve, reject) => {
			let remove = () => {};
			const grant = () => {
				remove();
				resolve();
			};
			this.#queue.push(grant);
			if (signal) {
				remove = signal.addListener(() => {
					const at = this.#queue.indexOf(grant);
					if (at >= 0) this.#queue.splice(at, 1);
					reject(new LlmError("aborted", "the LLM request was cancelled"));
				});
			}
		});
	}

	#release(): void {
		const next = this.#queue.shift();
		if (next) next();
		else this.#busy = false;
	}

	/** What a Call needs of this service, made once. */
	readonly #host: CallHost = {
		clock: () => this.#clock,
		current: () => this.#current(),
		acquire: (signal) => this.#acquire(signal),
		release: () => this.#release(),
		limits: () => this.#limits(),
		limiter: () => this.#limiter,
		retry: () => ({ policy: this.#options.retry ?? DEFAULT_RETRY_POLICY, clock: this.#clock, onRetry: this.#options.onRetry ?? traceRetry }),
	};

	/**
	 * Why no call can be sent now: the guidance when the LLM is not configured,
	 * or the sentence of a setting that breaks its rule; undefined when ready.
	 * Never throws.
	 */
	notReady(): string | undefined {
		try {
			const current = this.#current();
			return typeof current === "string" ? current : undefined;
		} catch (error) {
			return error instanceof LlmError && error.kind === "config" ? error.message : undefined;
		}
	}

	/** A chat completion. See the file comment for what happens before sending. */
	chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
		let call: ChatCall | undefined = undefined;
		const promise = new Promise<ChatResponse>((resolve, reject) => {
			call = new ChatCall(this.#host, request, options, resolve, reject);
		});
		(call as unknown as ChatCall).begin();
		return promise;
	}

	/** One-shot image inference (the inspect_image tool). */
	inferMedia(request: MediaRequest, options: ChatOptions = {}): Promise<ChatResponse> {
		if (typeof request?.prompt !== "string" || !request.image) return Promise.reject(new LlmError("invalid", "infer_media needs a prompt and an image"));
		let prepared: PreparedImage | undefined = undefined;
		const release = () => {
			// A file was read into a buffer of ours: give it back now, not at the next GC.
			if (prepared && "bytes" in prepared && "path" in request.image) this.#buffers.free(prepared.bytes);
			prepared = undefined;
		};
		return new Promise<ChatResponse>((resolve, reject) => {
			new FunctionCall(this.#host, options, resolve, reject,
				(profile) => {
					release();
					prepared = prepareImage(request.image, profile, this.#options.files, this.#buffers);
				},
				(backend, o) => backend.infer_media({ prompt: request.prompt, image: prepared!, system: request.system, max_tokens: request.max_tokens }, o),
			).begin();
		}).finally(release);
	}

	status(): LlmStatus {
		const settings = readSettings((name) => this.#options.config.get(name));
		const status: LlmStatus = {
			configured: false,
			provider: settings.provider,
			backend: settings.backend,
			model: settings.model,
			base_url: settings.base_url,
			api_key: settings.api_key ? maskSecret(settings.api_key) : "(not set)",
			stream: true,
			usage: this.#limiter.snapshot(),
			limits: { callsPerHour: LLM_CALLS_PER_HOUR, callsPerDay: LLM_CALLS_PER_DAY, tokensPerDay: LLM_TOKENS_PER_DAY },
		};
		try {
			status.limits = this.#limits();
			const current = this.#current();
			if (typeof current === "string") {
				status.problem = current;
			} else {
				const p = current.profile;
				Object.assign(status, { configured: true, provider: p.provider, backend: p.backend, model: p.model, base_url: p.base_url, stream: p.stream });
			}
		} catch (error) {
			status.problem = messageOf(error);
		}
		return status;
	}

	/** Stops listening to config and releases the backend. */
	close(): void {
		if (this.#closed) return;
		this.#limiter.flush();
		this.#stopListening();
		this.#retire();
		this.#closed = true;
	}
}

/** What a Call reaches of its Llm (the service's private parts, through closures made once). */
interface CallHost {
	clock(): Clock;
	/** The runtime for the current config, or the guidance; throws when the service is closed. */
	current(): Runtime | string;
	acquire(signal: AbortSignalLike | undefined): Promise<void> | undefined;
	release(): void;
	limits(): Limits;
	limiter(): UsageLimiter;
	retry(): RetryContext;
}

/**
 * One call (chat or media) from its start to its end, as one object: checks,
 * the LLM slot, limits, the attempts and the waits between them (llm/retry's
 * rule), usage. It is the attempts' options (onEvent is a method) and hears
 * each one's outcome (ChatSettle), so a chat call costs one promise (the one
 * chat() returns), where an async function and an await per layer (runtime,
 * retries, exchange, HTTP client) cost XS heap at every round.
 */
abstract class Call implements ChatOptions, ChatSettle {
	readonly signal: AbortSignalLike | undefined;
	readonly #host: CallHost;
	readonly #onEvent: ((event: LlmEvent) => void) | undefined;
	readonly #hears: ((type: LlmEvent["type"]) => boolean) | undefined;
	readonly #resolve: (response: ChatResponse) => void;
	readonly #reject: (error: unknown) => void;
	readonly #startedAt: number;
	#runtime: Runtime | undefined = undefined;
	#holding = false;          // the LLM slot is ours
	#attempts = 0;
	#retryStart = 0;
	#done = false;
	#traced = false;

	constructor(host: CallHost, options: ChatOptions, resolve: (response: ChatResponse) => void, reject: (error: unknown) => void) {
		this.#host = host;
		this.signal = options.signal;
		this.#onEvent = options.onEvent;
		this.#hears = options.hears;
		this.#resolve = resolve;
		this.#reject = reject;
		this.#startedAt = host.clock().now();
	}

	/** Refuses, before anything is sent, what the profile cannot do (throws). */
	protected abstract check(profile: ModelProfile): void;
	/** Sends one attempt through backend; the outcome goes to this call's resolve / reject. */
	protected abstract send(backend: LlmBackend): void;

	/** Starts the call: the slot when free, else after waiting for it. */
	begin(): void {
		let waiting: Promise<void> | undefined;
		try {
			const current = this.#host.current();
			if (typeof current === "string") throw new LlmError("config", current);
			waiting = this.#host.acquire(this.signal);
		} catch (error) {
			return this.#end(error);
		}
		if (waiting) waiting.then(() => this.#granted(), (error) => this.#end(error));
		else this.#granted();
	}

	#granted(): void {
		this.#holding = true;
		let runtime: Runtime;
		try {
			// The runtime may have been retired while we waited: take the current one.
			const current = this.#host.current();
			if (typeof current === "string") throw new LlmError("config", current);
			runtime = current;
			this.check(runtime.profile);
			const limits = runtime.limits ??= this.#host.limits();
			const limiter = this.#host.limiter();
			const refusal = limiter.check(limits);
			if (refusal) throw new LlmError("limit", refusal);
			limiter.recordCall(limits);
		} catch (error) {
			return this.#end(error);
		}
		runtime.active++;
		this.#runtime = runtime;
		this.#retryStart = this.#host.clock().now();
		this.#attempt();
	}

	#attempt(): void {
		if (this.#done) return;
		this.#attempts++;
		if (this.signal?.aborted) return this.#end(cancelled());
		try {
			this.send((this.#runtime as Runtime).backend);
		} catch (error) {
			this.reject(error as LlmError);
		}
	}

	/** ChatOptions: an attempt's event, numbered, to the caller's listener (its throws traced, never propagated). */
	onEvent(event: LlmEvent): void {
		const onEvent = this.#onEvent;
		if (!onEvent || this.#done) return;
		try {
			onEvent(event.type === "message_start" ? { ...event, attempt: this.#attempts } : event);
		} catch (error) {
			if (!this.#traced) logLine("warn", `llm: an onEvent listener threw on ${event.type} (later throws are not traced): ${messageOf(error)}`);
			this.#traced = true;
		}
	}

	/** ChatOptions: whether the caller hears events of type now (its own hears(); a throw counts as true). */
	hears(type: LlmEvent["type"]): boolean {
		if (!this.#onEvent || this.#done) return false;
		const hears = this.#hears;
		if (!hears) return true;
		try {
			return hears(type);
		} catch {
			return true;
		}
	}

	/** ChatSettle: the attempt succeeded. */
	resolve(response: ChatResponse): void {
		if (this.#done) return;
		try {
			this.#host.limiter().recordTokens(response.usage.input_tokens + response.usage.output_tokens);
		} catch (error) {
			return this.#end(error);
		}
		this.#end(undefined, { ...response, attempts: this.#attempts, elapsed_ms: this.#host.clock().now() - this.#startedAt });
	}

	/** ChatSettle: the attempt failed; another follows after the policy's wait, or the call ends. */
	reject(error: LlmError): void {
		if (this.#done) return;
		const context = this.#host.retry();
		context.signal = this.signal;
		const next = afterFailure(error, this.#attempts, this.#retryStart, context);
		if (typeof next !== "number") return this.#end(next);
		(context.clock as Clock).sleep(next, this.signal).then(() => this.#attempt(), (failure) => this.#end(failure));
	}

	/** The one way out: the backend and the slot go back, then the caller hears. */
	#end(error: unknown, response?: ChatResponse): void {
		if (this.#done) return;
		this.#done = true;
		const runtime = this.#runtime;
		this.#runtime = undefined;
		if (runtime) {
			runtime.active--;
			try {
				if (runtime.retired && !runtime.active) runtime.backend.deinit();
			} catch (failure) {
				logLine("warn", `llm: releasing a retired backend failed: ${messageOf(failure)}`);
			}
		}
		if (this.#holding) {
			this.#holding = false;
			this.#host.release();
		}
		if (response) this.#resolve(response);
		else this.#reject(error);
	}
}

/** A chat call: the request checked against the profile, sent through backend.start when it has one. */
class ChatCall extends Call {
	readonly #request: ChatRequest;

	constructor(host: CallHost, request: ChatRequest, options: ChatOptions, resolve: (response: ChatResponse) => void, reject: (error: unknown) => void) {
		super(host, options, resolve, reject);
		this.#request = request;
	}

	protected check(profile: ModelProfile): void {
		checkChat(this.#request, profile);
	}

	protected send(backend: LlmBackend): void {
		const request = backend.acceptsStored ? this.#request : loadStored(this.#request);
		if (backend.start) backend.start(request, this, this);
		else backend.chat(request, this).then((response) => this.resolve(response), (error: LlmError) => this.reject(error));
	}
}

/** A call whose check and send are functions (media: the image is prepared in check). */
class FunctionCall extends Call {
	readonly #check: (profile: ModelProfile) => void;
	readonly #send: (backend: LlmBackend, options: ChatOptions) => Promise<ChatResponse>;

	constructor(host: CallHost, options: ChatOptions, resolve: (response: ChatResponse) => void, reject: (error: unknown) => void,
		check: (profile: ModelProfile) => void, send: (backend: LlmBackend, options: ChatOptions) => Promise<ChatResponse>) {
		super(host, options, resolve, reject);
		this.#check = check;
		this.#send = send;
	}

	protected check(profile: ModelProfile): void {
		this.#check(profile);
	}

	protected send(backend: LlmBackend): void {
		this.#send(backend, this).then((response) => this.resolve(response), (error: LlmError) => this.reject(error));
	}
}

function traceRetry(info: RetryInfo): void {
	logLine("info", `llm: ${info.error.message}; retrying in ${Math.round(info.delayMs / 100) / 10} s (attempt ${info.attempt + 1})`);
}

// Compared once per message of a request (hundreds), named once.
const USER = "user", STRING = "string", LOCAL = "local", IMAGE_URL = "image_url";

function hasImages(request: ChatRequest): { any: boolean; local: boolean } {
	let any = false, local = false;
	const messages = request.messages;
	for (let i = 0; i < messages.length; i++) {
		const message = messages[i];
		if (message.stored?.images) {
			any = true;
			if (message.stored.images === LOCAL) local = true;
		}
		if (message.role !== USER || typeof message.content === STRING) continue;
		for (const part of message.content as ContentPart[]) {
			if (part.type !== IMAGE_URL) continue;
			any = true;
			if (!/^https?:/i.test((part as ImagePart).image_url.url)) local = true;
		}
	}
	return { any, local };
}

/** Refuses, before anything is sent, what the profile cannot do. */
export function checkChat(request: ChatRequest, profile: ModelProfile): void {
	if (!request || !Array.isArray(request.messages) || !request.messages.length)
		throw new LlmError("invalid", "a chat request needs at least one message");
	if (request.tools?.length && !profile.supports_tools)
		throw new LlmError("unsupported", `the model ${profile.model} does not take tools (llm.supports_tools is false); nothing was sent`);
	const images = hasImages(request);
	if (images.any) checkImageUse(profile, images.local);
}
