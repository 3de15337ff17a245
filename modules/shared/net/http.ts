// net/http: the HTTP/1.1 client every LLM call goes through (SPEC §5).
//
// What it owns:
// - Keep-alive pools per origin (scheme+host+port). A connection goes back to
//   the pool only after a complete response that allows reuse, with nothing
//   left unsent or unread. An idle pooled connection that the server closes
//   (or writes to) is dropped at once; one that dies under a new request
//   before any response byte arrived is replaced (HTTP_STALE_RETRIES times).
//   Note: that replay can send a POST twice if the server did process it and
//   then closed without answering; servers do not do this for idle closes.
// - Timeouts: connect (DNS + TCP + TLS handshake), first byte (request fully
//   written -> first byte of the response body, or the end of a response
//   without one: headers alone do not count, so a server that answers with
//   headers and then stalls, as LLM APIs can, is caught), total (request()
//   -> settled).
// - Abort at any phase: the socket is closed synchronously inside abort(), and
//   the promise rejects with HttpError("aborted", "aborted").
// - Bodies: buffered bodies grow in a buffer from the injected BufferPool (the
//   "psram" pool), from HTTP_BODY_START_BYTES doubling up to the cap (in place
//   when the pool can resize); with a Content-Length the buffer is
//   sized once. Streamed (onChunk) 2xx bodies are not buffered at all; with
//   onBody a whole 2xx body is handed over as bytes (no string of it). Every
//   buffer is freed when the request settles.
//
// - Heap per request: a URL is parsed once (the client keeps the last
//   HTTP_URL_CACHE_MAX), and a frozen headers object (an LLM backend sends the
//   same one every call) is checked and encoded once, then reused for the same
//   method and URL; a mutable one is read again each time. Socket events reach
//   the Exchange through methods, not closures made per event.
//
// Structure: this file is the client (pools, the one timer, caches, the read
// buffer); one Exchange object per request (net/exchange) holds all of its
// state, over a Connection (net/connection), writing the head net/head makes;
// net/status reads what a failed response says. Every
// exit goes through Exchange.#finish, the single clean-up path (timers, abort
// listener, socket or pool, buffers, promise). Socket and timer callbacks
// catch what they throw (Exchange's ConnectionOwner methods, #guard), so
// nothing thrown escapes into native code.
import { HTTP_POOL_IDLE_MS, HTTP_POOL_IDLE_PER_ORIGIN, HTTP_READ_BUFFER_BYTES, HTTP_TIMER_REPEAT_MS, HTTP_URL_CACHE_MAX } from "budgets";
import type { Connection } from "net/connection";
import { Exchange, type ExchangeClient } from "net/exchange";
import { buildHead, type Head } from "net/head";
import { HttpError, toHttpError, type HttpClientOptions, type HttpRequest, type HttpResponse, type HttpSettle, type HttpTransport, type ResolverLike, type TimerLike } from "net/types";
import { parseUrl, type ParsedUrl } from "net/url";
import { heapBuffers, type BufferPool } from "util/buffers";
import { logLine } from "util/log";

export { errorText, parseRetryAfter } from "net/status";
export { toHttpError } from "net/types";

export class HttpClient implements HttpTransport, ExchangeClient {
	readonly options: HttpClientOptions;
	readonly timer: TimerLike;
	readonly buffers: BufferPool;
	readonly #idle = new Map<string, Connection[]>();
	readonly #active = new Set<Exchange>();
	/** Parsed URLs, newest last (at most HTTP_URL_CACHE_MAX): an LLM call repeats its URL. */
	readonly #urls = new Map<string, ParsedUrl>();
	/** Heads made for frozen headers objects (see Head). */
	readonly #heads = new WeakMap<object, Head>();
	/** Where every socket read of this client lands (a pool buffer, made at the first read), and whether one is in progress. */
	#readBuffer: Uint8Array | undefined;
	#readStorage: ArrayBufferLike | undefined;
	#reading = false;
	#closing = false;
	#resolver: ResolverLike | undefined;
	readonly #now: () => number;
	/** The one timer (see deadline()), when it is set for, and its callback, made once. */
	#timer: unknown = undefined;
	#timerDue = Infinity;
	readonly #tick = (): void => this.#sweep();

	constructor(options: HttpClientOptions) {
		if (typeof options?.TCP !== "function") throw new TypeError("HttpClient needs a TCP socket class (options.TCP)");
		if (!options.Timer) throw new TypeError("HttpClient needs a Timer (options.Timer)");
		this.options = options;
		this.timer = options.Timer;
		this.buffers = options.buffers ?? heapBuffers;
		this.#now = options.now ?? (() => Date.now());
	}

	now(): number { return this.#now(); }

	request(request: HttpRequest): Promise<HttpResponse> {
		return new Promise<HttpResponse>((resolve, reject) => this.start(request, { resolve, reject }));
	}

	start(request: HttpRequest, settle: HttpSettle): void {
		const exchange = new Exchange(this, request, settle);
		this.#active.add(exchange);
		exchange.start();
	}

	/**
	 * A deadline ms from now, in the client's clock, with the client's one
	 * timer set to fire by then: every request's timeouts and every pooled
	 * connection's idle time are checked by that timer (#sweep), so a request
	 * sets up no timer and no closure of its own.
	 */
	deadline(ms: number): number {
		const due = this.#now() + ms;
		if (due < this.#timerDue) this.#arm(due);
		return due;
	}

	#arm(due: number): void {
		const timer = this.timer;
		const delay = Math.max(0, Math.ceil(due - this.#now()));
		this.#timerDue = due;
		// A Moddable timer made with a repeat interval stays valid after it fires, so it can be
		// scheduled again (one made without one is gone once it has fired, on the device).
		if (this.#timer !== undefined && timer.schedule) timer.schedule(this.#timer, delay, HTTP_TIMER_REPEAT_MS);
		else {
			if (this.#timer !== undefined) timer.clear(this.#timer);
			this.#timer = timer.schedule ? timer.set(this.#tick, delay, HTTP_TIMER_REPEAT_MS) : timer.set(this.#tick, delay);
		}
	}

	#stopTimer(): void {
		if (this.#timer !== undefined) this.timer.clear(this.#timer);
		this.#timer = undefined;
		this.#timerDue = Infinity;
	}

	/** The timer fired: what is due fails or goes, then the timer is set for the next deadline, or stopped. */
	#sweep(): void {
		this.#timerDue = Infinity;
		const now = this.#now();
		// Copies: a request that fails leaves #active, and its callbacks may start others.
		for (const exchange of [...this.#active]) {
			try {
				exchange.expire(now);
			} catch (error) {
				logLine("warn", `net/http: a timeout's clean-up failed: ${toHttpError(error).message}`);
			}
		}
		for (const list of [...this.#idle.values()]) {
			for (const connection of [...list]) if (connection.idleDue <= now) this.dropIdle(connection);
		}
		this.#rearm();
	}

	/** The timer set for the next deadline of what is left, or stopped when nothing is. */
	#rearm(): void {
		let next = Infinity;
		for (const exchange of this.#active) if (exchange.due < next) next = exchange.due;
		for (const list of this.#idle.values()) for (const connection of list) if (connection.idleDue < next) next = connection.idleDue;
		if (next === Infinity) this.#stopTimer();
		else if (next !== this.#timerDue) this.#arm(next);
	}

	/** Aborts every request in flight and closes every pooled connection. */
	close(): void {
		for (const exchange of [...this.#active]) exchange.abort();
		for (const list of [...this.#idle.values()]) for (const connection of [...list]) this.dropIdle(connection);
		this.#rearm(); // stopped, unless a request's callback started another
		this.#idle.clear();
		if (this.#reading) this.#closing = true; // freed when the read in progress ends
		else this.#freeReadBuffer();
		try {
			this.#resolver?.close?.();
		} finally {
			this.#resolver = undefined;
		}
	}

	/** Idle connections per origin (for tests and status). */
	idleCount(origin?: string): number {
		let count = 0;
		for (const [key, list] of this.#idle) if (origin === undefined || key === origin) count += list.length;
		return count;
	}

	// ---- for Exchange ----

	resolver(): ResolverLike {
		const Resolver = this.options.Resolver;
		if (!Resolver) throw new HttpError("dns", "no DNS resolver was given to the HTTP client: use an IP address or configure a resolver");
		return this.#resolver ??= new Resolver({});
	}

	forget(exchange: Exchange): void { this.#active.delete(exchange); }

	/**
	 * The read buffer, while no other read uses it (a read runs callbacks: one
	 * that reaches another socket's read gets undefined and reads into a buffer
	 * of its own). Given back with giveReadBuffer.
	 */
	takeReadBuffer(): Uint8Array | undefined {
		if (this.#reading) return undefined;
		let buffer = this.#readBuffer ??= this.options.readBuffer;
		if (!buffer) {
			let storage: ArrayBufferLike;
			try {
				storage = this.buffers.allocate(HTTP_READ_BUFFER_BYTES);
			} catch (error) {
				throw new HttpError("too_large", `no memory for the ${HTTP_READ_BUFFER_BYTES}-byte socket read buffer (${toHttpError(error).message})`);
			}
			this.#readStorage = storage;
			buffer = this.#readBuffer = new Uint8Array(storage, 0, HTTP_READ_BUFFER_BYTES);
		}
		this.#reading = true;
		return buffer;
	}

	giveReadBuffer(): void {
		this.#reading = false;
		if (this.#closing) this.#freeReadBuffer(); // close() ran inside the read
	}

	#freeReadBuffer(): void {
		const storage = this.#readStorage;
		this.#readStorage = this.#readBuffer = undefined; // a caller's options.readBuffer stays the caller's
		this.#closing = false;
		if (storage) this.buffers.free(storage);
	}

	/** A URL parsed (kept for the next requests to it). Throws HttpError("protocol") on a bad one. */
	url(text: string): ParsedUrl {
		let url = this.#urls.get(text);
		if (!url) {
			url = Object.freeze(parseUrl(text));
			if (this.#urls.size >= HTTP_URL_CACHE_MAX) this.#urls.delete(this.#urls.keys().next().value as string);
			this.#urls.set(text, url);
		}
		return url;
	}

	/** The checked head of a request: kept for a frozen headers object, with the same method and URL. */
	head(method: string, url: ParsedUrl, headers: Record<string, string>): Head {
		if (!Object.isFrozen(headers)) return buildHead(method, url, headers);
		const kept = this.#heads.get(headers);
		if (kept && kept.method === method && kept.url === url) return kept;
		const head = buildHead(method, url, headers);
		this.#heads.set(headers, head);
		return head;
	}

	takeIdle(origin: string): Connection | undefined {
		const list = this.#idle.get(origin);
		while (list?.length) {
			const connection = list.pop() as Connection;
			this.#stopIdle(connection);
			if (!connection.closed) return connection;
		}
		return undefined;
	}

	putIdle(connection: Connection): void {
		const limit = this.options.maxIdlePerOrigin ?? HTTP_POOL_IDLE_PER_ORIGIN;
		if (limit <= 0) return connection.close();
		let list = this.#idle.get(connection.origin);
		while (list && list.length >= limit) {
			this.dropIdle(list[0]); // the oldest go first; may unmap an emptied list
			list = this.#idle.get(connection.origin);
		}
		if (!list) this.#idle.set(connection.origin, list = []);
		list.push(connection);
		connection.pool = this;
		connection.idleDue = this.deadline(HTTP_POOL_IDLE_MS);
	}

	#stopIdle(connection: Connection): void {
		connection.pool = undefined;
		connection.idleDue = Infinity;
	}

	/** An idle connection goes: the server spoke or closed, it idled too long, or the pool is full or closing. */
	dropIdle(connection: Connection): void {
		this.#stopIdle(connection);
		connection.close();
		const list = this.#idle.get(connection.origin);
		const at = list ? list.indexOf(connection) : -1;
		if (list && at >= 0) list.splice(at, 1);
		if (list && !list.length) this.#idle.delete(connection.origin);
	}
}
