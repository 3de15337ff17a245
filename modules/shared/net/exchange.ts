// net/exchange: one HTTP request of the client, from request() to settlement
// (net/http's header says what the client guarantees): its phases (resolve,
// connect, send, wait, receive), its deadlines, the response parsed as it
// comes, the body buffered or streamed, a stale pooled connection replaced, and
// every exit through #finish, the single clean-up path (timers, abort listener,
// socket or pool, buffers, promise). It owns its connection while it runs.
import {
	HTTP_BODY_MAX_BYTES, HTTP_BODY_START_BYTES, HTTP_CONNECT_TIMEOUT_MS, HTTP_ERROR_BODY_MAX_BYTES,
	HTTP_FIRST_BYTE_TIMEOUT_MS, HTTP_READ_BUFFER_BYTES, HTTP_STALE_RETRIES, HTTP_TOTAL_TIMEOUT_MS,
} from "budgets";
import { Connection, type ConnectionOwner } from "net/connection";
import { bodyOf, messageHead, type Head } from "net/head";
import { ResponseParser, type ResponseEvents, type ResponseHead } from "net/response";
import { errorText, parseRetryAfter } from "net/status";
import {
	HttpError, connectFailure, toHttpError, type AbortSignalLike, type HttpClientOptions, type HttpRequest, type HttpResponse, type HttpSettle,
	type ResolverLike, type SocketStage, type TcpSocketLike,
} from "net/types";
import { literalAddress, type ParsedUrl } from "net/url";
import { decodeUtf8 } from "net/utf8";
import { GrowableBuffer, type BufferPool } from "util/buffers";

const METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH"]);
const EMPTY_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** What an exchange needs of its client (net/http's HttpClient): its options, clock, deadlines, caches, pool and read buffer. */
export interface ExchangeClient {
	readonly options: HttpClientOptions;
	readonly buffers: BufferPool;
	now(): number;
	deadline(ms: number): number;
	url(text: string): ParsedUrl;
	head(method: string, url: ParsedUrl, headers: Record<string, string>): Head;
	resolver(): ResolverLike;
	takeIdle(origin: string): Connection | undefined;
	putIdle(connection: Connection): void;
	forget(exchange: Exchange): void;
	takeReadBuffer(): Uint8Array | undefined;
	giveReadBuffer(): void;
}

/**
 * The body of a response that is not streamed, in one pool buffer: it grows by
 * doubling from HTTP_BODY_START_BYTES, or is sized once from Content-Length, up to max.
 */
function bodySink(max: number, buffers: BufferPool): GrowableBuffer {
	return new GrowableBuffer(buffers, HTTP_BODY_START_BYTES, max,
		(size, error) => new HttpError("too_large", `no memory for a ${size}-byte response buffer (${toHttpError(error).message})`));
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
export class Exchange implements ConnectionOwner, ResponseEvents {
	readonly #client: ExchangeClient;
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

	constructor(client: ExchangeClient, request: HttpRequest, settle: HttpSettle) {
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
