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
// Structure: one Exchange object per request holds all of its state; every
// exit goes through Exchange.#finish, the single clean-up path (timers, abort
// listener, socket or pool, buffers, promise). Socket and timer callbacks
// catch what they throw (Exchange's ConnectionOwner methods, #guard), so
// nothing thrown escapes into native code.
import {
	HTTP_BODY_MAX_BYTES, HTTP_BODY_START_BYTES, HTTP_CONNECT_TIMEOUT_MS, HTTP_ERROR_BODY_MAX_BYTES,
	HTTP_ERROR_MESSAGE_MAX_BYTES, HTTP_FIRST_BYTE_TIMEOUT_MS, HTTP_POOL_IDLE_MS, HTTP_POOL_IDLE_PER_ORIGIN,
	HTTP_READ_BUFFER_BYTES, HTTP_STALE_RETRIES, HTTP_TIMER_REPEAT_MS, HTTP_TOTAL_TIMEOUT_MS, HTTP_URL_CACHE_MAX,
} from "budgets";
import { hasToken, ResponseParser, type ResponseEvents, type ResponseHead } from "net/response";
import {
	HttpError, connectFailure, type AbortSignalLike, type HttpClientOptions, type HttpRequest, type HttpResponse, type HttpSettle,
	type HttpTransport, type ResolverLike, type SocketStage, type TcpSocketLike, type TimerLike,
} from "net/types";
import { literalAddress, parseUrl, type ParsedUrl } from "net/url";
import { decodeUtf8, encodeUtf8, utf8Boundary } from "net/utf8";
import { GrowableBuffer, heapBuffers, type BufferPool } from "util/buffers";
import { messageOf } from "util/errors";
import { logLine } from "util/log";

const USER_AGENT = "xsclaw";
const METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH"]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE_FORBIDDEN = /[\x00\r\n]/;
// Set by the client itself; a caller's value is ignored (Connection: close is honoured below).
const MANAGED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);
const EMPTY_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Converts anything thrown inside the client into the one error class it rejects with. */
export function toHttpError(error: unknown): HttpError {
	if (error instanceof HttpError) return error;
	const message = messageOf(error);
	return new HttpError("protocol", message || "unknown failure");
}

const IMF_DATE = /^[A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** Retry-After (delay-seconds or IMF-fixdate) as milliseconds from nowMs (wall clock), or undefined. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
	if (value === undefined) return undefined;
	const text = value.trim();
	if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
	const date = IMF_DATE.exec(text);
	if (!date) return undefined;
	const month = MONTHS.indexOf(date[2].toLowerCase());
	if (month < 0) return undefined;
	const at = Date.UTC(Number(date[3]), month, Number(date[1]), Number(date[4]), Number(date[5]), Number(date[6]));
	return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** The readable part of an error body: error.message, message, error (a string), else its first bytes. */
export function errorText(body: Uint8Array): string {
	if (!body.length) return "";
	const text = decodeUtf8(body);
	if (/^\s*\{/.test(text)) {
		try {
			const json = JSON.parse(text) as { error?: unknown; message?: unknown };
			const error = json.error as { message?: unknown } | string | undefined;
			if (error && typeof error === "object" && typeof error.message === "string" && error.message) return error.message;
			if (typeof json.message === "string" && json.message) return json.message;
			if (typeof error === "string" && error) return error;
		} catch {
			// not JSON after all: quote the body's start below
		}
	}
	return decodeUtf8(body, 0, utf8Boundary(body, HTTP_ERROR_MESSAGE_MAX_BYTES)).trim();
}

/**
 * The body of a response that is not streamed, in one pool buffer: it grows by
 * doubling from HTTP_BODY_START_BYTES, or is sized once from Content-Length, up to max.
 */
function bodySink(max: number, buffers: BufferPool): GrowableBuffer {
	return new GrowableBuffer(buffers, HTTP_BODY_START_BYTES, max,
		(size, error) => new HttpError("too_large", `no memory for a ${size}-byte response buffer (${toHttpError(error).message})`));
}

/** What a connection reports to the request that currently owns it. Each method catches what it throws. */
interface ConnectionOwner {
	connected(): void;
	writable(): void;
	readable(): void;
	failed(message?: string, stage?: SocketStage): void;
}

/** A socket callback's failure outside any exchange (pool bookkeeping): the connection goes, with a log line. */
function socketCallbackFailed(connection: Connection, error: unknown): void {
	connection.close();
	logLine("warn", `net/http: socket callback failed: ${toHttpError(error).message}`);
}

/**
 * One TCP or TLS socket. Callbacks go to the owning Exchange; an idle
 * (pooled) connection that hears anything from the server is dropped.
 */
class Connection {
	readonly origin: string;
	socket: TcpSocketLike | undefined;
	owner: ConnectionOwner | undefined;
	writable = 0;
	/** Bytes onReadable last reported and not yet read; -1 when the socket gives no count. */
	readable = 0;
	/** Its read(buffer) fills what it can of a larger buffer (a TLS socket: HttpClientOptions.TLS); else a buffer is sized to what is available. */
	fills = false;
	connected = false;
	closed = false;
	/** The parser of its responses, made at the first and reset for each next one. */
	parser: ResponseParser | undefined = undefined;
	/** While pooled: the client that drops it on any event, and when (its clock). */
	pool: HttpClient | undefined = undefined;
	idleDue = Infinity;

	constructor(origin: string) { this.origin = origin; }

	open(socket: TcpSocketLike): void { this.socket = socket; }

	/** Its parser, ready for a response told to events. */
	parserFor(events: ResponseEvents): ResponseParser {
		const parser = this.parser;
		if (!parser) return this.parser = new ResponseParser(events);
		parser.reset(events);
		return parser;
	}

	// Socket callbacks: nothing thrown escapes into native code.
	handleWritable(count: number): void {
		if (this.closed) return;
		try {
			this.writable = count;
			const owner = this.owner;
			if (!this.connected) {
				this.connected = true;
				owner?.connected();
			} else owner?.writable();
		} catch (error) {
			socketCallbackFailed(this, error);
		}
	}

	handleReadable(count: number): void {
		if (this.closed) return;
		try {
			this.readable = typeof count === "number" && count > 0 ? count : -1;
			if (this.owner) this.owner.readable();
			else this.pool?.dropIdle(this); // unsolicited bytes: the connection is out of step
		} catch (error) {
			socketCallbackFailed(this, error);
		}
	}

	handleError(message?: string, stage?: SocketStage): void {
		if (this.closed) return;
		try {
			const owner = this.owner;
			this.close();
			if (owner) owner.failed(message, stage);
			else this.pool?.dropIdle(this);
		} catch (error) {
			socketCallbackFailed(this, error);
		}
	}

	write(bytes: Uint8Array): void {
		(this.socket as TcpSocketLike).write(bytes);
		this.writable -= bytes.length;
	}

	close(): void {
		if (this.closed) return;
		this.closed = true;
		const socket = this.socket;
		this.socket = undefined;
		try {
			socket?.close();
		} catch {
			// closing a socket the peer already dropped may throw; it is closed either way
		}
	}
}

/** A 2xx response; its header strings are made when asked for (an LLM call never asks). */
class Response implements HttpResponse {
	readonly status: number;
	readonly body: string;
	readonly bytesSent: number;
	readonly bytesReceived: number;
	readonly reusedConnection: boolean;
	readonly firstByteMs: number;
	readonly durationMs: number;
	readonly #head: ResponseHead;

	constructor(head: ResponseHead, body: string, bytesSent: number, bytesReceived: number, reused: boolean, firstByteMs: number, durationMs: number) {
		this.#head = head;
		this.status = head.status;
		this.body = body;
		this.bytesSent = bytesSent;
		this.bytesReceived = bytesReceived;
		this.reusedConnection = reused;
		this.firstByteMs = firstByteMs;
		this.durationMs = durationMs;
	}

	get headers(): Record<string, string> { return this.#head.headers; }
}

const enum Phase { Start, Resolve, Connect, Send, Wait, Receive, Done }
const enum SocketEvent { Connected, Writable, Readable, Failed }

/** One request, from request() to settlement; the owner of its connection while it runs. */
class Exchange implements ConnectionOwner, ResponseEvents {
	readonly #client: HttpClient;
	readonly #request: HttpRequest;
	readonly #settle: HttpSettle;
	#phase = Phase.Start;
	#url: ParsedUrl | undefined;
	// The message, kept for a replay: the head with its framing, then the body (if any).
	#sendHead: Uint8Array | undefined;
	#sendBody: Uint8Array | undefined;
	#sendIndex = 0;                       // 0 head, 1 body, 2 all sent
	#sendOffset = 0;
	#connection: Connection | undefined;
	#reused = false;
	#staleRetries = 0;
	#attempt = 0;                         // guards late DNS answers
	#parser: ResponseParser | undefined;
	#head: ResponseHead | undefined;
	#sink: GrowableBuffer | undefined;
	#streaming = false;
	#errorBodyCut = false;
	#reuseAllowed = true;
	#closes = false;                      // the request asked for Connection: close
	#bytesSent = 0;
	#bytesReceived = 0;
	#startedAt: number;
	#firstByteAt = -1;
	// Deadlines in the client's clock (Infinity: none); the client's one timer checks them.
	#connectDue = Infinity;
	#firstByteDue = Infinity;
	#totalDue = Infinity;
	#listening: AbortSignalLike | undefined;     // the signal this exchange listens to as an AbortListener
	#removeAbortListener: (() => void) | undefined; // or its remover, for a signal without listen()

	constructor(client: HttpClient, request: HttpRequest, settle: HttpSettle) {
		this.#client = client;
		this.#request = request;
		this.#settle = settle;
		this.#startedAt = client.now();
	}

	get done(): boolean { return this.#phase === Phase.Done; }

	start(): void {
		try {
			const request = this.#request;
			const signal: AbortSignalLike | undefined = request.signal;
			if (signal?.aborted) throw new HttpError("aborted", "aborted");
			// Checked in this order: URL, method, body, headers.
			const url = this.#client.url(request.url);
			if (!METHODS.has(request.method)) throw new HttpError("protocol", `unsupported HTTP method ${String(request.method)}`);
			const body = bodyOf(request);
			const head = this.#client.head(request.method, url, request.headers ?? EMPTY_HEADERS);
			this.#url = url;
			this.#closes = head.closes;
			this.#sendHead = messageHead(head, body);
			this.#sendBody = body?.length ? body : undefined;
			if (signal) {
				if (signal.listen) {
					this.#listening = signal;
					signal.listen(this);
				} else this.#removeAbortListener = signal.addListener(() => this.abort());
			}
			if (this.#phase === Phase.Done) return; // the listener fired at once
			this.#totalDue = this.#client.deadline(request.totalTimeoutMs ?? HTTP_TOTAL_TIMEOUT_MS);
			this.#acquire();
		} catch (error) {
			this.#finish(toHttpError(error));
		}
	}

	/** AbortListener: the signal fired (also the client's close()). */
	abort(): void {
		this.#finish(new HttpError("aborted", "aborted"));
	}

	/** The earliest of this exchange's deadlines (Infinity: none). */
	get due(): number {
		const a = this.#connectDue, b = this.#firstByteDue, c = this.#totalDue;
		return a < b ? (a < c ? a : c) : (b < c ? b : c);
	}

	/** The client's timer: fails the request with the earliest deadline that has passed, if one has. */
	expire(now: number): void {
		const due = this.due;
		if (this.#phase === Phase.Done || due > now) return;
		const request = this.#request;
		if (due === this.#connectDue) this.#timeout("connect", request.connectTimeoutMs ?? HTTP_CONNECT_TIMEOUT_MS);
		else if (due === this.#firstByteDue) this.#timeout("first_byte", request.firstByteTimeoutMs ?? HTTP_FIRST_BYTE_TIMEOUT_MS);
		else this.#timeout("total", request.totalTimeoutMs ?? HTTP_TOTAL_TIMEOUT_MS);
	}

	// ---- connection ----

	#acquire(): void {
		const url = this.#url as ParsedUrl;
		const pooled = this.#client.takeIdle(url.origin);
		if (pooled) {
			this.#reused = true;
			this.#attach(pooled);
			this.#phase = Phase.Send;
			this.#pump();
			return;
		}
		this.#reused = false;
		if (url.secure && !this.#client.options.TLS) throw new HttpError("tls", "https needs a TLS socket class, and none was given to the HTTP client");
		this.#connectDue = this.#client.deadline(this.#request.connectTimeoutMs ?? HTTP_CONNECT_TIMEOUT_MS);
		const address = literalAddress(url.host);
		if (address) return this.#connect(address);
		this.#phase = Phase.Resolve;
		const attempt = ++this.#attempt;
		const resolver = this.#client.resolver();
		resolver.resolve({
			host: url.host,
			onResolved: (_host: string, resolved: string) => this.#guard(() => {
				if (attempt === this.#attempt && this.#phase === Phase.Resolve) this.#connect(resolved);
			}),
			onError: () => this.#guard(() => {
				if (attempt === this.#attempt && this.#phase === Phase.Resolve) throw new HttpError("dns", `cannot resolve ${url.host}: check the host name and the network`);
			}),
		});
	}

	#connect(address: string): void {
		const url = this.#url as ParsedUrl;
		const { TCP, TLS, certificate } = this.#client.options;
		this.#phase = Phase.Connect;
		const connection = new Connection(url.origin);
		connection.fills = url.secure;
		this.#attach(connection);
		const callbacks = {
			address, port: url.port, nodelay: true, format: "buffer" as const,
			onWritable: (count: number) => connection.handleWritable(count),
			onReadable: (count: number) => connection.handleReadable(count),
			onError: (message?: string, stage?: SocketStage) => connection.handleError(message, stage),
		};
		try {
			connection.open(url.secure
				? new (TLS as NonNullable<HttpClientOptions["TLS"]>)({
					...callbacks, host: url.host,
					secure: { serverName: url.host, ...(certificate ? { certificate } : {}) },
				})
				: new TCP(callbacks));
		} catch (error) {
			throw new HttpError(url.secure ? "tls" : "connect", `cannot connect to ${url.host}:${url.port}: ${toHttpError(error).message}`);
		}
	}

	#attach(connection: Connection): void {
		this.#connection = connection;
		connection.owner = this;
	}

	// ConnectionOwner: what the connection reports, each through #event (no
	// closure per call: these run per socket event).
	connected(): void { this.#event(SocketEvent.Connected); }
	writable(): void { this.#event(SocketEvent.Writable); }
	readable(): void { this.#event(SocketEvent.Readable); }
	failed(message?: string, stage?: SocketStage): void { this.#event(SocketEvent.Failed, message, stage); }

	/** A connection event; whatever it throws ends the request with that error. */
	#event(event: SocketEvent, message?: string, stage?: SocketStage): void {
		if (this.#phase === Phase.Done) return;
		try {
			switch (event) {
				case SocketEvent.Connected:
					this.#connectDue = Infinity;
					this.#phase = Phase.Send;
					this.#pump();
					break;
				case SocketEvent.Writable:
					this.#pump();
					break;
				case SocketEvent.Readable:
					this.#read();
					break;
				case SocketEvent.Failed:
					this.#failed(message, stage);
					break;
			}
		} catch (error) {
			this.#finish(toHttpError(error));
		}
	}

	// ---- sending ----

	#pump(): void {
		const connection = this.#connection as Connection;
		while (this.#phase === Phase.Send && this.#sendIndex < 2 && connection.writable > 0) {
			const piece = (this.#sendIndex ? this.#sendBody : this.#sendHead) as Uint8Array;
			const count = Math.min(piece.length - this.#sendOffset, connection.writable);
			connection.write(count === piece.length ? piece : piece.subarray(this.#sendOffset, this.#sendOffset + count));
			this.#bytesSent += count;
			this.#sendOffset += count;
			if (this.#sendOffset === piece.length) {
				this.#sendIndex = this.#sendIndex || !this.#sendBody ? 2 : 1;
				this.#sendOffset = 0;
			}
		}
		if (this.#phase === Phase.Send && this.#sendIndex === 2) {
			this.#phase = Phase.Wait;
			this.#firstByteDue = this.#client.deadline(this.#request.firstByteTimeoutMs ?? HTTP_FIRST_BYTE_TIMEOUT_MS);
		}
	}

	get #sendComplete(): boolean { return this.#sendIndex === 2; }

	// ---- receiving ----

	/**
	 * Reads what the socket reported into the client's read buffer (no buffer
	 * made per read) and feeds it to the parser. For a TCP socket a view is
	 * sized to what is available when that is less than the buffer: ECMA-419's
	 * read(buffer) on the SDK's lwIP TCP refuses a buffer larger than the bytes
	 * it holds; a TLS socket fills what it can of the whole buffer.
	 */
	#read(): void {
		const connection = this.#connection as Connection;
		const client = this.#client;
		const kept = client.takeReadBuffer();
		try {
			const buffer = kept ?? new Uint8Array(HTTP_READ_BUFFER_BYTES); // a read inside another's callback
			const size = buffer.length;
			for (;;) {
				if (this.#phase === Phase.Done || connection.closed) return;
				const left = connection.readable;
				if (!left) return;
				const wanted = left > 0 && left < size && !connection.fills ? left : size;
				const count = (connection.socket as TcpSocketLike).read(wanted === size ? buffer : buffer.subarray(0, wanted));
				if (!count) {
					connection.readable = 0;
					return;
				}
				if (left > 0) connection.readable = left > count ? left - count : 0;
				this.#bytesReceived += count;
				if (this.#phase !== Phase.Receive) this.#phase = Phase.Receive; // also when the server answers before the request is fully sent
				const parser = this.#parser ??= connection.parserFor(this);
				const consumed = parser.feed(buffer, 0, count);
				if (this.done) return; // aborted or failed inside a callback
				if (parser.complete) {
					if (consumed < count) this.#reuseAllowed = false; // junk after the message
					return this.#complete();
				}
				if (this.#errorBodyCut) return this.#complete();
			}
		} finally {
			if (kept) client.giveReadBuffer();
		}
	}

	// ResponseEvents: the parser calls these (the Exchange is its listener: no closures per request).
	onHead(head: ResponseHead): void {
		this.#head = head;
		const parser = this.#parser as ResponseParser;
		const ok = head.status >= 200 && head.status < 300;
		if (ok && this.#request.onChunk) {
			this.#streaming = true;
			if (this.#request.onHead) this.#request.onHead(head.status, head.headers); // a method call: this is the request
			return;
		}
		const max = ok ? this.#request.maxBodyBytes ?? HTTP_BODY_MAX_BYTES : Math.min(this.#request.maxBodyBytes ?? HTTP_BODY_MAX_BYTES, HTTP_ERROR_BODY_MAX_BYTES);
		const sink = this.#sink = bodySink(max, this.#client.buffers);
		const length = parser.contentLength;
		if (ok && length > max) throw new HttpError("too_large", `the response body of ${length} bytes exceeds the ${max}-byte cap`);
		if (length > 0) sink.reserveExactly(Math.min(length, max));
	}

	onBody(data: Uint8Array): void {
		this.#gotFirstByte();
		if (this.#streaming) {
			this.#request.onChunk!(data); // a method call: this is the request
			return;
		}
		const sink = this.#sink as GrowableBuffer;
		if (this.#isOk()) {
			if (!sink.append(data)) throw new HttpError("too_large", `the response body exceeds the ${sink.max}-byte cap`);
		} else if (!sink.appendTruncating(data)) {
			// Enough of an error body to quote: stop reading, drop the connection.
			this.#errorBodyCut = true;
			this.#reuseAllowed = false;
			(this.#parser as ResponseParser).stop();
		}
	}

	#gotFirstByte(): void {
		if (this.#firstByteAt >= 0) return;
		this.#firstByteAt = this.#client.now();
		this.#firstByteDue = Infinity;
	}

	#isOk(): boolean {
		const status = this.#head?.status ?? 0;
		return status >= 200 && status < 300;
	}

	#failed(message?: string, stage?: SocketStage): void {
		// The socket is already closed (by the peer or an error).
		const phase = this.#phase;
		const url = this.#url as ParsedUrl;
		const detail = message ? `: ${message}` : "";
		if (phase === Phase.Connect) {
			const { kind, text } = connectFailure(url.host, url.port, url.secure, message, stage);
			throw new HttpError(kind, text);
		}
		const parser = this.#parser;
		if (parser) {
			parser.end(message); // completes a close-framed body, or throws
			return this.#complete();
		}
		// Closed before any response byte: a stale pooled connection, or a server that hung up.
		if (this.#reused && this.#staleRetries < HTTP_STALE_RETRIES) {
			this.#staleRetries++;
			this.#restart();
			return;
		}
		throw new HttpError("connect", `the server closed the connection before responding${detail}`);
	}

	#restart(): void {
		this.#firstByteDue = Infinity;
		this.#connection = undefined;
		this.#sendIndex = 0;
		this.#sendOffset = 0;
		this.#parser = undefined;
		this.#phase = Phase.Start;
		this.#acquire();
	}

	#complete(): void {
		this.#gotFirstByte(); // a response without a body
		const head = this.#head as ResponseHead;
		const sink = this.#sink;
		if (!this.#sendComplete) this.#reuseAllowed = false; // the server answered early; the rest of the request is unsent
		if (!(this.#parser as ResponseParser).complete) this.#reuseAllowed = false;
		if (!(this.#parser as ResponseParser).keepAlive || this.#closes) this.#reuseAllowed = false;
		if (this.#isOk()) {
			const request = this.#request;
			const onBody = this.#streaming ? undefined : request.onBody;
			if (onBody) request.onBody!(sink ? sink.view() : new Uint8Array(0)); // a method call: this is the request
			const now = this.#client.now();
			this.#finish(new Response(head, sink && !onBody ? decodeUtf8(sink.view()) : "", this.#bytesSent, this.#bytesReceived,
				this.#reused, this.#firstByteAt - this.#startedAt, now - this.#startedAt));
			return;
		}
		const body = sink ? sink.view() : new Uint8Array(0);
		const text = errorText(body) || head.reason || "no details from the server";
		const headers = head.headers;
		const retryAfterMs = headers["retry-after-ms"] !== undefined && /^\d{1,9}(\.\d+)?$/.test(headers["retry-after-ms"].trim())
			? Math.ceil(Number(headers["retry-after-ms"]))
			: parseRetryAfter(headers["retry-after"], Date.now());
		this.#finish(new HttpError("status", `HTTP ${head.status}: ${text}`, {
			status: head.status, body: decodeUtf8(body), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
		}));
	}

	// ---- endings ----

	#timeout(which: "connect" | "first_byte" | "total", ms: number): void {
		const name = which === "first_byte" ? "first-byte" : which;
		this.#finish(new HttpError("timeout", `${name} timeout after ${ms} ms (${(this.#url?.origin ?? this.#request.url)})`, { timeout: which }));
	}

	/** Runs a callback; whatever it throws ends the request with that error. */
	#guard(fn: () => void): void {
		if (this.#phase === Phase.Done) return;
		try {
			fn();
		} catch (error) {
			this.#finish(toHttpError(error));
		}
	}

	/** The one clean-up path: every request ends here exactly once. */
	#finish(outcome: HttpResponse | HttpError): void {
		if (this.#phase === Phase.Done) return;
		const failed = outcome instanceof HttpError;
		this.#phase = Phase.Done;
		this.#attempt++;
		this.#connectDue = this.#firstByteDue = this.#totalDue = Infinity;
		this.#listening?.unlisten?.(this);
		this.#listening = undefined;
		this.#removeAbortListener?.();
		this.#removeAbortListener = undefined;
		const parser = this.#parser;
		parser?.stop();
		const connection = this.#connection;
		this.#connection = undefined;
		if (connection) {
			connection.owner = undefined;
			const reusable = !connection.closed && this.#reuseAllowed && parser?.complete === true
				&& this.#sendComplete && (!failed || (outcome as HttpError).kind === "status");
			parser?.release();
			if (reusable) this.#client.putIdle(connection);
			else connection.close();
		}
		this.#sink?.release();
		this.#sink = undefined;
		this.#client.forget(this);
		if (failed) this.#settle.reject(outcome as HttpError);
		else this.#settle.resolve(outcome as HttpResponse);
	}
}

function wantsClose(headers: Record<string, string>): boolean {
	for (const name in headers) {
		if (name.toLowerCase() === "connection" && hasToken(headers[name], "close")) return true;
	}
	return false;
}

/**
 * A request's head up to its framing (request line, Host, the caller's
 * headers, User-Agent, Connection: close), checked and encoded once; the
 * Content-Length line and the empty line follow it. Kept by the client for a
 * frozen headers object (an LLM backend sends the same one every call).
 */
interface Head {
	method: string;
	url: ParsedUrl;
	bytes: Uint8Array;
	/** The caller asked for Connection: close. */
	closes: boolean;
}

/** The head of a request. Throws HttpError("protocol") on a bad header. */
function buildHead(method: string, url: ParsedUrl, headers: Record<string, string>): Head {
	let head = `${method} ${url.target} HTTP/1.1\r\nHost: ${url.hostHeader}\r\n`;
	let userAgent = false;
	for (const name in headers) {
		const value = String(headers[name]);
		if (!HEADER_NAME.test(name)) throw new HttpError("protocol", `invalid request header name ${JSON.stringify(name.slice(0, 40))}`);
		if (HEADER_VALUE_FORBIDDEN.test(value)) throw new HttpError("protocol", `invalid value for request header ${name}: line breaks are not allowed`);
		const lower = name.toLowerCase();
		if (MANAGED_HEADERS.has(lower)) continue;
		if (lower === "user-agent") userAgent = true;
		head += `${name}: ${value}\r\n`;
	}
	if (!userAgent) head += `User-Agent: ${USER_AGENT}\r\n`;
	const closes = wantsClose(headers);
	if (closes) head += "Connection: close\r\n";
	return { method, url, bytes: encodeUtf8(head), closes };
}

// Bytes made at preload: no call to net/utf8 (its scan is native, unavailable while the device links).
const END_OF_HEAD = new Uint8Array([13, 10]);

/** The request body as bytes. Throws HttpError("protocol") on a body of another type. */
function bodyOf(request: HttpRequest): Uint8Array | undefined {
	if (typeof request.body === "string") return encodeUtf8(request.body);
	if (request.body instanceof ArrayBuffer) return new Uint8Array(request.body);
	if (request.body instanceof Uint8Array) return request.body; // e.g. a view of a PSRAM host buffer, which is no ArrayBuffer instance
	if (request.body !== undefined) throw new HttpError("protocol", "the request body must be a string, an ArrayBuffer or a Uint8Array");
	return undefined;
}

const CONTENT_LENGTH = new Uint8Array([67, 111, 110, 116, 101, 110, 116, 45, 76, 101, 110, 103, 116, 104, 58, 32]); // "Content-Length: "
const CRLF_CRLF_BYTES = 4;

/**
 * The head to send with its framing (one piece, so one socket write: the
 * Content-Length line and the empty line written into it, no string made);
 * the body follows it.
 */
function messageHead(head: Head, body: Uint8Array | undefined): Uint8Array {
	const method = head.method;
	const bytes = head.bytes, headLength = bytes.length;
	if (!body && method !== "POST" && method !== "PUT" && method !== "PATCH") {
		const out = new Uint8Array(headLength + END_OF_HEAD.length);
		out.set(bytes, 0);
		out.set(END_OF_HEAD, headLength);
		return out;
	}
	const length = body ? body.length : 0;
	let digits = 1;
	for (let n = length; n >= 10; n = Math.floor(n / 10)) digits++;
	const out = new Uint8Array(headLength + CONTENT_LENGTH.length + digits + CRLF_CRLF_BYTES);
	out.set(bytes, 0);
	let at = headLength;
	out.set(CONTENT_LENGTH, at);
	at += CONTENT_LENGTH.length + digits;
	for (let n = length, k = at - 1; k >= at - digits; k--, n = Math.floor(n / 10)) out[k] = 0x30 + (n % 10);
	out[at] = 13;
	out[at + 1] = 10;
	out[at + 2] = 13;
	out[at + 3] = 10;
	return out;
}

export class HttpClient implements HttpTransport {
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
