// channels/qq/api: the QQ bot OpenAPI (v2) as the channel uses it, over the
// firmware's one HTTP client (net/http); sources in modules/main/channels/qq/NOTES.md.
//
// - The app access token: POST {appId, clientSecret} to the token URL
//   (https://bots.qq.com/app/getAppAccessToken) -> {access_token, expires_in}
//   (seconds, a number or a numeric string). It is fetched when first needed and
//   refreshed QQ_TOKEN_REFRESH_MARGIN_MS before it expires (QQ hands out a new
//   token only in the old one's last 60 s, and the old one stays valid then), or
//   halfway through a lifetime shorter than twice the margin. Callers that need
//   it while a fetch runs share that fetch.
// - Every OpenAPI call carries `Authorization: QQBot <token>`: GET /gateway for
//   the WebSocket URL, POST /v2/users/{openid}/messages and
//   /v2/groups/{group_openid}/messages for passive replies.
//
// The app secret and the tokens never leave this file in a message: hide()
// replaces each wherever it appears, and every error text passes through it.
import { QQ_BODY_MAX_BYTES, QQ_CALL_TIMEOUT_MS, QQ_TOKEN_LIFE_MAX_S, QQ_TOKEN_REFRESH_MARGIN_MS, QQ_TOKEN_REFRESH_MIN_MS } from "budgets";
import { HttpError, type AbortSignalLike, type HttpTransport } from "net/types";
import { messageOf } from "util/errors";
import { isObject } from "util/values";
import type { Timers } from "channels/sleeps";

export const DEFAULT_API_URL = "https://api.sgroup.qq.com";
export const SANDBOX_API_URL = "https://sandbox.api.sgroup.qq.com";
export const DEFAULT_TOKEN_URL = "https://bots.qq.com/app/getAppAccessToken";
export const SECRET_MASK = "<secret>";
export const TOKEN_MASK = "<token>";

/**
 * kind: "auth" (the token endpoint refused the app id or secret: retrying cannot
 * help), "api" (QQ answered with an error; status is the HTTP status), "network"
 * (no answer), "aborted", "malformed" (an answer that is not what QQ sends).
 */
export type QqApiErrorKind = "auth" | "api" | "network" | "aborted" | "malformed";

export class QqApiError extends Error {
	override name = "QqApiError";
	readonly kind: QqApiErrorKind;
	/** The HTTP status, 0 when there was no answer. */
	readonly status: number;
	/** QQ's own error code from the body, when it gave one. */
	readonly code?: number;
	constructor(kind: QqApiErrorKind, message: string, status = 0, code?: number) {
		super(message);
		this.kind = kind;
		this.status = status;
		if (code !== undefined) this.code = code;
	}
}

export type { Timers };

export interface QqApiOptions {
	http: HttpTransport;
	appId: string;
	secret: string;
	/** The OpenAPI base (DEFAULT_API_URL, SANDBOX_API_URL, or a mock's). */
	apiUrl: string;
	tokenUrl: string;
	timers: Timers;
	/** Monotonic ms. */
	now(): number;
	/** Log lines (refresh failures). */
	log(line: string): void;
}

/** Reads the token endpoint's answer: the token and its lifetime in ms. */
export function readToken(body: string, status = 200): { token: string; lifeMs: number } {
	let json: unknown;
	try {
		json = JSON.parse(body);
	} catch {
		throw new QqApiError("malformed", `QQ's token endpoint answered with something that is not JSON (HTTP ${status}, ${body.length} characters)`, status);
	}
	if (!isObject(json)) throw new QqApiError("malformed", "QQ's token endpoint answered with something that is not a JSON object", status);
	if (typeof json.access_token !== "string" || !json.access_token) {
		const code = typeof json.code === "number" ? json.code : undefined;
		const message = typeof json.message === "string" ? json.message.slice(0, 200) : "no access_token";
		throw new QqApiError("auth", `QQ refused the app id or secret (${code ?? status}: ${message})`, status, code);
	}
	const seconds = typeof json.expires_in === "string" ? Number(json.expires_in) : json.expires_in;
	if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) throw new QqApiError("malformed", "QQ's token answer has no valid expires_in", status);
	return { token: json.access_token, lifeMs: Math.min(seconds, QQ_TOKEN_LIFE_MAX_S) * 1000 };
}

/** When to refresh a token of this lifetime, in ms after it came. */
export function refreshDelayMs(lifeMs: number): number {
	const delay = lifeMs > 2 * QQ_TOKEN_REFRESH_MARGIN_MS ? lifeMs - QQ_TOKEN_REFRESH_MARGIN_MS : lifeMs / 2;
	return Math.max(QQ_TOKEN_REFRESH_MIN_MS, Math.floor(delay));
}

export class QqApi {
	readonly #o: QqApiOptions;
	readonly #api: string;
	#token = "";
	#expires = 0;
	#fetching?: Promise<string>;
	#refreshTimer: unknown = undefined;
	#hidden: string[] = [];
	#stopped = false;

	constructor(options: QqApiOptions) {
		this.#o = options;
		this.#api = options.apiUrl.replace(/\/+$/, "");
		this.#remember(options.secret);
	}

	/** text with the app secret and every token seen replaced. */
	hide(text: string): string {
		let out = text;
		for (const value of this.#hidden) out = out.split(value).join(value === this.#o.secret ? SECRET_MASK : TOKEN_MASK);
		return out;
	}

	/** A valid access token: the current one, or a fresh one. */
	token(signal?: AbortSignalLike): Promise<string> {
		if (this.#token && this.#o.now() < this.#expires) return Promise.resolve(this.#token);
		return this.#fetch(signal);
	}

	/** Stops the refresh timer; later calls still work on demand. */
	stop(): void {
		this.#stopped = true;
		if (this.#refreshTimer !== undefined) this.#o.timers.clear(this.#refreshTimer);
		this.#refreshTimer = undefined;
	}

	/** GET /gateway: the WebSocket URL. */
	async gatewayUrl(signal?: AbortSignalLike): Promise<string> {
		const json = await this.#call("GET", "/gateway", undefined, signal);
		if (!isObject(json) || typeof json.url !== "string" || !/^wss?:\/\//i.test(json.url)) throw new QqApiError("malformed", "QQ's answer to GET /gateway has no wss:// url", 200);
		return json.url;
	}

	/** POSTs a message body to a send path; resolves with QQ's answer. */
	send(path: string, body: Record<string, unknown>, signal?: AbortSignalLike): Promise<unknown> {
		return this.#call("POST", path, body, signal);
	}

	#remember(secret: string): void {
		if (secret && !this.#hidden.includes(secret)) this.#hidden.push(secret);
		if (this.#hidden.length > 4) this.#hidden.splice(1, 1); // the secret and the newest tokens
	}

	#fetch(signal?: AbortSignalLike): Promise<string> {
		this.#fetching ??= this.#fetchToken(signal).finally(() => { this.#fetching = undefined; });
		return this.#fetching;
	}

	async #fetchToken(signal?: AbortSignalLike): Promise<string> {
		let body: string, status = 200;
		try {
			const response = await this.#o.http.request({
				method: "POST", url: this.#o.tokenUrl,
				headers: { "content-type": "application/json" },
				body: JSON.stringify({ appId: this.#o.appId, clientSecret: this.#o.secret }),
				signal, firstByteTimeoutMs: QQ_CALL_TIMEOUT_MS, totalTimeoutMs: QQ_CALL_TIMEOUT_MS, maxBodyBytes: QQ_BODY_MAX_BYTES,
			});
			body = response.body;
		} catch (error) {
			if (error instanceof HttpError && error.kind === "status" && error.status !== undefined) {
				status = error.status;
				if (status === 401 || status === 403) {
					throw new QqApiError("auth", this.hide(`QQ refused the app id or secret (HTTP ${status})`), status);
				}
				if (status >= 400 && status < 500 && error.body) body = error.body;
				else throw new QqApiError("api", `QQ's token endpoint answered HTTP ${status}`, status);
			} else {
				throw this.#failure("the token request", error);
			}
		}
		let read;
		try {
			read = readToken(body, status);
		} catch (error) {
			throw error instanceof QqApiError ? new QqApiError(error.kind, this.hide(error.message), error.status, error.code) : error;
		}
		this.#token = read.token;
		this.#remember(read.token);
		this.#expires = this.#o.now() + read.lifeMs;
		this.#schedule(refreshDelayMs(read.lifeMs));
		return read.token;
	}

	#schedule(ms: number): void {
		if (this.#stopped) return;
		if (this.#refreshTimer !== undefined) this.#o.timers.clear(this.#refreshTimer);
		this.#refreshTimer = this.#o.timers.set(() => {
			this.#refreshTimer = undefined;
			this.#fetch().catch((error) => {
				// The old token may still be valid for a while; a call that needs one after it expires fetches again.
				this.#o.log(`qq: refreshing the access token failed: ${messageOf(error)}`);
				const left = this.#expires - this.#o.now();
				if (left > 2 * QQ_TOKEN_REFRESH_MIN_MS && !(error instanceof QqApiError && error.kind === "auth")) this.#schedule(left / 2);
			});
		}, ms);
	}

	async #call(method: "GET" | "POST", path: string, body: Record<string, unknown> | undefined, signal?: AbortSignalLike): Promise<unknown> {
		const token = await this.token(signal);
		let text: string;
		try {
			const response = await this.#o.http.request({
				method, url: this.#api + path,
				headers: { authorization: `QQBot ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
				...(body ? { body: JSON.stringify(body) } : {}),
				signal, firstByteTimeoutMs: QQ_CALL_TIMEOUT_MS, totalTimeoutMs: QQ_CALL_TIMEOUT_MS, maxBodyBytes: QQ_BODY_MAX_BYTES,
			});
			text = response.body;
		} catch (error) {
			if (error instanceof HttpError && error.kind === "status" && error.status !== undefined) {
				if (error.status === 401) this.#token = ""; // the next call fetches a new token
				let detail = "", code: number | undefined;
				try {
					const json: unknown = JSON.parse(error.body ?? "");
					if (isObject(json)) {
						code = typeof json.code === "number" ? json.code : undefined;
						detail = typeof json.message === "string" ? `: ${json.message.slice(0, 200)}` : "";
					}
				} catch {
					// not JSON: the status alone
				}
				throw new QqApiError("api", this.hide(`QQ answered ${method} ${path.replace(/\/v2\/(users|groups)\/[^/]+/, "/v2/$1/…")} with HTTP ${error.status}${code !== undefined ? ` (${code}${detail})` : detail}`), error.status, code);
			}
			throw this.#failure(`${method} ${path}`, error);
		}
		try {
			return text ? JSON.parse(text) : {};
		} catch {
			throw new QqApiError("malformed", `QQ's answer to ${method} is not JSON (${text.length} characters)`, 200);
		}
	}

	#failure(what: string, error: unknown): QqApiError {
		if (error instanceof HttpError && error.kind === "aborted") return new QqApiError("aborted", "aborted");
		return new QqApiError("network", this.hide(`${what}: ${messageOf(error)}`));
	}
}
