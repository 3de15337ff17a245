// channels/telegram/api: the Bot API client (https://core.telegram.org/bots/api)
// over the firmware's one HTTP client (net/http). Every call is a POST of a JSON
// object to <base>/bot<token>/<method>; the reply is {ok, result} or {ok: false,
// error_code, description, parameters: {retry_after, migrate_to_chat_id}}.
//
// The token travels in every URL path. It never leaves this file in a message:
// every error text passes through hide(), which replaces the token wherever it
// appears (the HTTP client names only host and port, but a proxy's error page or
// a future message might echo the path).
import { TELEGRAM_CALL_TIMEOUT_MS, TELEGRAM_RETRY_AFTER_MAX_S } from "budgets";
import { isObject } from "util/values";
import { HttpError, type AbortSignalLike, type HttpRequest, type HttpResponse, type HttpTransport } from "net/types";
import { messageOf } from "util/errors";
import { decodeUtf8 } from "net/utf8";

export const DEFAULT_BASE_URL = "https://api.telegram.org";

/**
 * kind: "api" (Telegram answered ok: false; code is its error_code), "network"
 * (no answer: connect, DNS, TLS, timeout, dropped), "aborted", "malformed" (an
 * answer that is not the Bot API's envelope), "too_large" (an answer over the
 * call's maxBodyBytes, not read).
 */
export type BotApiErrorKind = "api" | "network" | "aborted" | "malformed" | "too_large";

export class BotApiError extends Error {
	override name = "BotApiError";
	readonly kind: BotApiErrorKind;
	/** The Bot API's error_code (or the HTTP status), 0 when there was no answer. */
	readonly code: number;
	/** From a 429's parameters.retry_after (capped), in ms. */
	readonly retryAfterMs?: number;
	constructor(kind: BotApiErrorKind, message: string, code = 0, retryAfterMs?: number) {
		super(message);
		this.kind = kind;
		this.code = code;
		if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
	}
}

export interface CallOptions {
	signal?: AbortSignalLike;
	/** Whole call; default TELEGRAM_CALL_TIMEOUT_MS. */
	timeoutMs?: number;
	/** Buffered reply cap (getUpdates). */
	maxBodyBytes?: number;
}

/** The parts of Telegram's User object the channel uses (getMe). */
export interface BotUser {
	id: number;
	username: string;
}

/** The text that replaces the token wherever it would appear. */
export const TOKEN_MASK = "<token>";

export class BotApi {
	readonly #http: HttpTransport;
	readonly #base: string;
	readonly #token: string;

	constructor(http: HttpTransport, token: string, baseUrl = DEFAULT_BASE_URL) {
		this.#http = http;
		this.#token = token;
		this.#base = baseUrl.replace(/\/+$/, "");
	}

	/** text with the token replaced (for any message that may carry it). */
	hide(text: string): string {
		return this.#token ? text.split(this.#token).join(TOKEN_MASK) : text;
	}

	/** Calls a method; resolves with its result, rejects with a BotApiError whose message never holds the token. */
	async call(method: string, params: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
		let body: string;
		try {
			body = (await this.#request(method, params, options, { maxBodyBytes: options.maxBodyBytes })).body;
		} catch (error) {
			throw this.#failure(method, error);
		}
		return readEnvelope(method, body, (text) => this.hide(text));
	}

	/**
	 * The first maxBytes bytes of a method's answer, as text (invalid UTF-8 ->
	 * U+FFFD); the rest is not read (the connection is dropped). For an answer too
	 * large to take whole, of which only its start is wanted (getUpdates: the
	 * update_id of an update over the cap). Rejects as call() does.
	 */
	async head(method: string, params: Record<string, unknown>, maxBytes: number, options: CallOptions = {}): Promise<string> {
		const head = new Uint8Array(maxBytes);
		let length = 0;
		try {
			await this.#request(method, params, options, {
				onChunk(bytes: Uint8Array) {
					const take = Math.min(bytes.length, maxBytes - length);
					head.set(bytes.subarray(0, take), length);
					length += take;
					// Enough: the request ends here (it fails, which is what stops the read).
					if (length >= maxBytes) throw new Error("head read");
				},
			});
		} catch (error) {
			if (length < maxBytes) throw this.#failure(method, error);
		}
		return decodeUtf8(head, 0, length);
	}

	// One POST of params as JSON to the method's URL, timed by options.timeoutMs.
	#request(method: string, params: Record<string, unknown>, options: CallOptions, extra: Pick<HttpRequest, "maxBodyBytes" | "onChunk">): Promise<HttpResponse> {
		const timeoutMs = options.timeoutMs ?? TELEGRAM_CALL_TIMEOUT_MS;
		return this.#http.request({
			method: "POST",
			url: `${this.#base}/bot${this.#token}/${method}`,
			headers: { "content-type": "application/json" },
			body: JSON.stringify(params),
			signal: options.signal,
			firstByteTimeoutMs: timeoutMs,
			totalTimeoutMs: timeoutMs,
			...extra,
		});
	}

	#failure(method: string, error: unknown): BotApiError {
		if (error instanceof HttpError) {
			if (error.kind === "aborted") return new BotApiError("aborted", "aborted");
			if (error.kind === "too_large") return new BotApiError("too_large", this.hide(`Telegram's answer to ${method} is too large (${error.message})`));
			if (error.kind === "status" && error.status !== undefined) {
				// Telegram's error JSON, when the body is one; else the status alone.
				try {
					readEnvelope(method, error.body ?? "", (text) => this.hide(text), error.status);
				} catch (failure) {
					if (failure instanceof BotApiError && failure.kind === "api") {
						return failure.retryAfterMs === undefined && error.retryAfterMs !== undefined
							? new BotApiError("api", failure.message, failure.code, capRetry(error.retryAfterMs))
							: failure;
					}
				}
				return new BotApiError("api", `Telegram answered ${method} with HTTP ${error.status}`, error.status, capRetry(error.retryAfterMs));
			}
			return new BotApiError("network", this.hide(`${method}: ${error.message}`));
		}
		return new BotApiError("network", this.hide(`${method}: ${messageOf(error)}`));
	}
}

function capRetry(ms: number | undefined): number | undefined {
	if (ms === undefined || !(ms >= 0)) return undefined;
	return Math.min(ms, TELEGRAM_RETRY_AFTER_MAX_S * 1000);
}

/**
 * Reads the Bot API's envelope. Resolves to result for ok: true; throws a
 * BotApiError("api") for ok: false, "malformed" for anything else.
 */
export function readEnvelope(method: string, body: string, hide: (text: string) => string, status = 200): unknown {
	let json: unknown;
	try {
		json = JSON.parse(body);
	} catch {
		throw new BotApiError("malformed", `Telegram's answer to ${method} is not JSON (HTTP ${status}, ${body.length} characters)`, status);
	}
	if (!isObject(json) || typeof json.ok !== "boolean") throw new BotApiError("malformed", `Telegram's answer to ${method} has no "ok" field`, status);
	if (json.ok) {
		if (!("result" in json)) throw new BotApiError("malformed", `Telegram's answer to ${method} has no "result"`, status);
		return json.result;
	}
	const code = typeof json.error_code === "number" && Number.isInteger(json.error_code) ? json.error_code : status;
	const description = typeof json.description === "string" ? json.description.slice(0, 200) : "no description";
	const parameters = isObject(json.parameters) ? json.parameters : {};
	const retryAfter = typeof parameters.retry_after === "number" && parameters.retry_after >= 0 ? parameters.retry_after * 1000 : undefined;
	throw new BotApiError("api", hide(`Telegram refused ${method} (${code}: ${description})`), code, capRetry(retryAfter));
}

/** Reads getMe's result. Throws a BotApiError("malformed") when it lacks an id or a username. */
export function readBotUser(result: unknown): BotUser {
	if (!isObject(result) || typeof result.id !== "number" || typeof result.username !== "string") {
		throw new BotApiError("malformed", "Telegram's answer to getMe has no bot id or username");
	}
	return { id: result.id, username: result.username };
}
