// channels/web/auth: who may use the web console (issue 30). The owner logs in
// with a one-time code (`web login` on the serial console, or sent to the
// owner's paired chat): one code valid at a time, for WEB_LOGIN_CODE_TTL_MS,
// gone after one use. A login gets a session: a random token in a cookie
// (HttpOnly, SameSite=Strict, Path=/, Max-Age) that expires after
// WEB_SESSION_TTL_MS, and a CSRF token every change must carry in the
// X-CSRF-Token header; each change answers with the next token and the one
// it used is dead (a replayed token changes nothing). A change must also come
// from the page's own origin (Origin, and Sec-Fetch-Site when the browser sends
// it). Wrong codes are slowed (each answer waits WEB_LOGIN_FAIL_DELAY_MS) and
// limited: WEB_LOGIN_FAILURES_MAX wrong codes burn the code and lock logins out
// for WEB_LOGIN_LOCKOUT_MS. Tokens are compared in time independent of where
// they differ. Sessions live in memory: a reboot logs everyone out.
import {
	WEB_CSRF_TOKEN_BYTES, WEB_LOGIN_CODE_CHARS, WEB_LOGIN_CODE_TTL_MS, WEB_LOGIN_FAILURES_MAX, WEB_LOGIN_LOCKOUT_MS,
	WEB_SESSION_TOKEN_BYTES, WEB_SESSION_TTL_MS, WEB_SESSIONS_MAX,
} from "budgets";
import { randomCode, randomFill } from "util/random";
import type { HttpRequest } from "httpd/types";

export const SESSION_COOKIE = "xsclaw_session";
/** Codes avoid letters that read alike (0/O, 1/I/L). */
const CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";
const HEX = "0123456789abcdef";

export interface Session {
	readonly token: string;
	csrf: string;
	readonly expires: number;
}

export type Refusal = { status: number; error: string; csrf?: true };

function randomToken(bytes: number): string {
	const raw = randomFill(new Uint8Array(bytes));
	let text = "";
	for (let i = 0; i < raw.length; i++) text += HEX[raw[i] >> 4] + HEX[raw[i] & 15];
	return text;
}

/** Whether a and b are equal, in time that depends only on their lengths. */
export function sameText(a: string, b: string): boolean {
	if (a.length !== b.length) return false;
	let difference = 0;
	for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
	return difference === 0;
}

/** The value of one cookie in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
	if (!header) return undefined;
	for (const part of header.split(";")) {
		const at = part.indexOf("=");
		if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
	}
	return undefined;
}

export class WebAuth {
	#now: () => number;
	#code?: { text: string; expires: number };
	#failures = 0;
	#lockedUntil = 0;
	#sessions: Session[] = [];

	constructor(now: () => number) {
		this.#now = now;
	}

	/** A new one-time login code (the last one stops working). */
	issueCode(): { code: string; validMs: number } {
		const text = randomCode(CODE_ALPHABET, WEB_LOGIN_CODE_CHARS);
		this.#code = { text, expires: this.#now() + WEB_LOGIN_CODE_TTL_MS };
		this.#failures = 0;
		return { code: text, validMs: WEB_LOGIN_CODE_TTL_MS };
	}

	/** Whether logins are locked out now, and for how much longer. */
	lockedMs(): number {
		const left = this.#lockedUntil - this.#now();
		return left > 0 ? left : 0;
	}

	/** A session for the right code; a refusal (the caller slows it) otherwise. */
	login(code: string): Session | Refusal {
		const now = this.#now();
		const locked = this.lockedMs();
		if (locked) return { status: 429, error: `too many wrong codes: logins are locked for ${Math.ceil(locked / 1000)} s more; then get a new code with web login` };
		const current = this.#code;
		const given = code.trim().toUpperCase();
		if (!current || current.expires <= now) {
			this.#code = undefined;
			return { status: 401, error: "no login code is valid: type web login on the serial console for one" };
		}
		if (!sameText(given, current.text)) {
			this.#failures++;
			if (this.#failures >= WEB_LOGIN_FAILURES_MAX) {
				this.#code = undefined;
				this.#failures = 0;
				this.#lockedUntil = now + WEB_LOGIN_LOCKOUT_MS;
				return { status: 429, error: `too many wrong codes: the code is void and logins are locked for ${WEB_LOGIN_LOCKOUT_MS / 1000} s` };
			}
			return { status: 401, error: "wrong code" };
		}
		this.#code = undefined;
		this.#failures = 0;
		this.#expire(now);
		if (this.#sessions.length >= WEB_SESSIONS_MAX) this.#sessions.shift(); // the oldest is logged out
		const session: Session = { token: randomToken(WEB_SESSION_TOKEN_BYTES), csrf: randomToken(WEB_CSRF_TOKEN_BYTES), expires: now + WEB_SESSION_TTL_MS };
		this.#sessions.push(session);
		return session;
	}

	/** The Set-Cookie value of a session (and of none: a logout). */
	cookie(session?: Session): string {
		if (!session) return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
		const seconds = Math.floor((session.expires - this.#now()) / 1000);
		return `${SESSION_COOKIE}=${session.token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${seconds > 0 ? seconds : 0}`;
	}

	/** The request's session (from its cookie), or undefined. */
	session(request: HttpRequest): Session | undefined {
		const token = cookieValue(request.header("cookie"), SESSION_COOKIE);
		if (!token) return undefined;
		this.#expire(this.#now());
		for (const session of this.#sessions) if (sameText(session.token, token)) return session;
		return undefined;
	}

	/**
	 * A request that changes something: its session, from the page's own origin,
	 * with the session's current CSRF token, which is then replaced (the new one
	 * is session.csrf). A refusal changes nothing.
	 */
	change(request: HttpRequest): Session | Refusal {
		const session = this.session(request);
		if (!session) return { status: 401, error: "log in first" };
		const origin = checkOrigin(request);
		if (origin) return origin;
		const token = request.header("x-csrf-token") ?? "";
		if (!sameText(token, session.csrf)) return { status: 403, error: "the page's token is stale or wrong: reload the page", csrf: true };
		session.csrf = randomToken(WEB_CSRF_TOKEN_BYTES);
		return session;
	}

	logout(session: Session): void {
		const at = this.#sessions.indexOf(session);
		if (at >= 0) this.#sessions.splice(at, 1);
	}

	/** Logs every session out (web.enabled turned off, a factory reset). */
	clear(): void {
		this.#sessions.length = 0;
		this.#code = undefined;
	}

	get sessions(): number {
		this.#expire(this.#now());
		return this.#sessions.length;
	}

	#expire(now: number): void {
		for (let i = this.#sessions.length - 1; i >= 0; i--) if (this.#sessions[i].expires <= now) this.#sessions.splice(i, 1);
	}
}

/** A change from another site is refused: Origin must name this host, Sec-Fetch-Site (when sent) be same-origin. */
export function checkOrigin(request: HttpRequest): Refusal | undefined {
	const site = request.header("sec-fetch-site");
	if (site !== undefined && site !== "same-origin") return { status: 403, error: "changes are taken only from the web console's own pages" };
	const origin = request.header("origin");
	const host = request.header("host");
	if (origin === undefined || host === undefined || origin !== `http://${host}`) return { status: 403, error: "changes are taken only from the web console's own pages" };
	return undefined;
}
