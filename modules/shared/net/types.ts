// net/types: the public contract of the HTTP transport (modules/shared/net/http.ts) and
// the shapes of what it needs injected (sockets, resolver, buffers, clock).
// The LLM backends depend on this file only, so tests can swap in a fake
// HttpTransport, and the client can run on fake sockets.
//
// Contracts in brief:
// - request() never throws synchronously; it resolves with a 2xx HttpResponse or
//   rejects with an HttpError (never another error class). start() is the same
//   without a promise (an XS promise and its reactions cost heap per request).
// - An abort, at any phase, closes the socket at once and rejects with
//   kind "aborted", message "aborted".
// - Every buffer taken from the injected BufferPool is freed when the request
//   settles, whatever the outcome; but the client's one read buffer, freed by close().
import type { BufferPool } from "util/buffers";
import { messageOf } from "util/errors";

/** A minimal AbortSignal (XS 13.3 has no AbortController). See net/abort. */
export interface AbortSignalLike {
	readonly aborted: boolean;
	readonly reason?: string;
	/** Calls fn once when aborted (at once, synchronously, if already aborted). Returns a remover. */
	addListener(fn: (reason: string) => void): () => void;
	/** addListener for an object (its abort(reason) is called), taken away by unlisten: no closure made. Optional. */
	listen?(listener: AbortListener): void;
	unlisten?(listener: AbortListener): void;
}

export interface AbortListener {
	abort(reason: string): void;
}

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";

export interface HttpRequest {
	method: HttpMethod;
	/** http:// or https://; the host may be a name or an IP literal ([v6] in brackets). */
	url: string;
	/** Header names are sent as given; Host, Content-Length and Connection are set by the client. */
	headers?: Record<string, string>;
	/**
	 * Strings are UTF-8-sanitised (invalid sequences, lone surrogates -> U+FFFD)
	 * before sending; bytes are sent as they are, and must stay unchanged until
	 * the request settles (a stale keep-alive connection may replay them).
	 */
	body?: string | ArrayBuffer | Uint8Array;
	signal?: AbortSignalLike;
	/**
	 * Streaming: decoded body bytes (after de-chunking) as they arrive, for 2xx
	 * responses only; the body is then not buffered and HttpResponse.body is ''.
	 * The view is only valid during the call (copy what you keep). If it throws,
	 * the request fails with kind "protocol" carrying the thrown message.
	 * Non-2xx bodies are still buffered (bounded) to build the HttpError message.
	 * Called as a method of the request (this = the request), as onBody is: a
	 * caller's class can be its own request, with no closure per request.
	 */
	onChunk?: (bytes: Uint8Array) => void;
	/**
	 * With onChunk: the 2xx response's status and headers (lower-case names), once,
	 * before its first onChunk, for a caller that must read a header before the
	 * body (an MCP session id). A throw fails the request as onChunk's does.
	 */
	onHead?: (status: number, headers: Record<string, string>) => void;
	/**
	 * Without onChunk: the whole 2xx body as bytes, once, when it is complete (a
	 * view of the client's buffer, valid only during the call; empty when there
	 * is no body); HttpResponse.body is then ''. So a caller that parses the
	 * body needs no string of it. A throw fails the request as onChunk's does.
	 */
	onBody?: (bytes: Uint8Array) => void;
	/** TCP (+TLS) connect including DNS. Default budgets.HTTP_CONNECT_TIMEOUT_MS. */
	connectTimeoutMs?: number;
	/**
	 * Request sent -> first byte of the response body (or the end of a response
	 * without one): headers alone do not stop it. Default budgets.HTTP_FIRST_BYTE_TIMEOUT_MS.
	 */
	firstByteTimeoutMs?: number;
	/** Whole request, start to last byte. Default budgets.HTTP_TOTAL_TIMEOUT_MS. */
	totalTimeoutMs?: number;
	/** Buffered body cap. Default budgets.HTTP_BODY_MAX_BYTES. Streaming bodies are not capped. */
	maxBodyBytes?: number;
}

export interface HttpResponse {
	status: number;
	/** Lower-case names; repeated headers are joined with ", ". */
	headers: Record<string, string>;
	/** The body decoded as UTF-8 (invalid sequences -> U+FFFD); '' when streamed. */
	body: string;
	/** Request bytes written to the socket (head + body). */
	bytesSent: number;
	/** Response bytes read from the socket (head + body, as on the wire). */
	bytesReceived: number;
	/** True when the request went over a kept-alive connection of an earlier request. */
	reusedConnection: boolean;
	/** request() -> first body byte (or the end of a body-less response), in the client's clock (ms). */
	firstByteMs: number;
	/** request() -> settled (ms). */
	durationMs: number;
}

export type HttpErrorKind = "aborted" | "timeout" | "connect" | "dns" | "tls" | "protocol" | "too_large" | "status";

export interface HttpErrorDetails {
	status?: number;
	retryAfterMs?: number;
	/** For kind "status": the (bounded) response body text, for callers that parse error JSON. */
	body?: string;
	/** For kind "timeout": which one fired. */
	timeout?: "connect" | "first_byte" | "total";
}

/**
 * The one error class the transport rejects with.
 * kind "status": message `HTTP <status>: <error.message | message | first 160 bytes of body>`.
 * kind "timeout": message names the timeout ("connect timeout after 15000 ms", ...).
 */
export class HttpError extends Error {
	override name = "HttpError";
	readonly kind: HttpErrorKind;
	readonly status?: number;
	readonly retryAfterMs?: number;
	readonly body?: string;
	readonly timeout?: "connect" | "first_byte" | "total";
	constructor(kind: HttpErrorKind, message: string, details: HttpErrorDetails = {}) {
		super(message);
		this.kind = kind;
		if (details.status !== undefined) this.status = details.status;
		if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
		if (details.body !== undefined) this.body = details.body;
		if (details.timeout !== undefined) this.timeout = details.timeout;
	}
}

/** Who hears how a request ended (HttpTransport.start): exactly one of the two, once. */
export interface HttpSettle {
	resolve(response: HttpResponse): void;
	reject(error: HttpError): void;
}

export interface HttpTransport {
	request(req: HttpRequest): Promise<HttpResponse>;
	/**
	 * request() without a promise: settle hears the outcome, as the promise would
	 * have settled (an error before anything was sent, such as a bad URL or a
	 * signal already aborted, may reach it before start() returns). Optional: a
	 * transport without it is used through request().
	 */
	start?(req: HttpRequest, settle: HttpSettle): void;
	/** Closes every pooled connection and aborts requests in flight (kind "aborted"). */
	close(): void;
}

// ---- injected IO (ECMA-419 shapes; see SPEC §3) ----

export interface TcpSocketLike {
	/**
	 * Bytes available, or undefined when none. With a count, at most that many.
	 * With a buffer (ECMA-419): fills it from the bytes available and returns
	 * the count; a buffer larger than what onReadable reported may be refused
	 * (the SDK's lwIP TCP throws), so net/http sizes it to that.
	 */
	read(count?: number): ArrayBuffer | undefined;
	read(buffer: Uint8Array): number | undefined;
	/** Throws when more than the writable count given to onWritable. */
	write(bytes: ArrayBuffer | ArrayBufferView): void;
	close(): void;
}

export interface TcpOptions {
	address: string;
	port: number;
	nodelay?: boolean;
	format?: "buffer";
	/** bytes: how many are available to read now (net/http reads exactly that many). */
	onReadable?: (this: TcpSocketLike, bytes: number) => void;
	onWritable?: (this: TcpSocketLike, bytes: number) => void;
	/** stage: where it failed, when the socket says (ours do; the SDK's TCP does not): SocketStage. */
	onError?: (this: TcpSocketLike, message?: string, stage?: SocketStage) => void;
}

/** Converts anything thrown inside the client into the one error class it rejects with. */
export function toHttpError(error: unknown): HttpError {
	if (error instanceof HttpError) return error;
	const message = messageOf(error);
	return new HttpError("protocol", message || "unknown failure");
}

/**
 * Where a socket failed before it was ready, as the hosts' sockets say in
 * onError's second argument (hosts/lin/src/tcp.c, hosts/esp32/tls): "connect"
 * (the TCP connection), "handshake" (the TLS handshake). Undefined: after it
 * was ready, or a socket that does not say (the SDK's TCP: a plain connection).
 */
export type SocketStage = "connect" | "handshake";

/**
 * The kind and sentence of a connection that failed before it was ready, by the
 * socket's stage, never by the words of its message: "tls" only for a TLS
 * socket that failed in its handshake. A socket's own connect sentence names the
 * address already (the hosts' do) and stands as it is.
 */
export function connectFailure(host: string, port: number, secure: boolean, message: string | undefined, stage: SocketStage | undefined): { kind: "connect" | "tls"; text: string } {
	const kind = secure && stage === "handshake" ? "tls" : "connect";
	const text = stage === "connect" && message ? message : `cannot connect to ${host}:${port}${message ? `: ${message}` : ""}`;
	return { kind, text };
}

export interface TlsOptions extends TcpOptions {
	/** SNI and the name the certificate must match. */
	host: string;
	secure?: { serverName?: string; certificate?: ArrayBuffer; verify?: boolean };
}

export type TcpConstructor = new (options: TcpOptions) => TcpSocketLike;
export type TlsConstructor = new (options: TlsOptions) => TcpSocketLike;

export interface ResolveRequest {
	host: string;
	onResolved(host: string, address: string): void;
	onError(host: string): void;
}
export interface ResolverLike {
	resolve(request: ResolveRequest): void;
	close?(): void;
}
export type ResolverConstructor = new (options: object) => ResolverLike;

export interface TimerLike {
	/** repeat: fire again every repeat ms after the first (Moddable's Timer.set). */
	set(callback: () => void, ms: number, repeat?: number): unknown;
	clear(timer: unknown): void;
	/** Sets a timer made by set() to fire in ms, then every repeat ms (Moddable's Timer.schedule); without it a timer is cleared and made again. */
	schedule?(timer: unknown, ms: number, repeat?: number): void;
}

export interface HttpClientOptions {
	TCP: TcpConstructor;
	/**
	 * Needed for https:// only; an https request without it fails with kind "tls".
	 * Its read(buffer) must fill what it can of a buffer larger than what is
	 * available (the lin host's and the board's do; the SDK's lwIP TCP refuses one).
	 */
	TLS?: TlsConstructor;
	/** Needed for host names; IP literals and "localhost" skip it. */
	Resolver?: ResolverConstructor;
	/** Where buffered response bodies live (default: heapBuffers). A body grows in
	 * place when the pool can resize, else by copying. An allocate or resize that
	 * throws fails the request with "too_large". */
	buffers?: BufferPool;
	/**
	 * Where every socket read lands (one read at a time; a read inside another's
	 * callback gets a buffer of its own). Default: HTTP_READ_BUFFER_BYTES from
	 * buffers, taken at the first read and freed by close().
	 */
	readBuffer?: Uint8Array;
	/** DER CA certificate passed to TLS as secure.certificate. */
	certificate?: ArrayBuffer;
	/** Monotonic milliseconds (default Date.now). */
	now?: () => number;
	Timer: TimerLike;
	/** Idle pooled connections per origin kept (default budgets.HTTP_POOL_IDLE_PER_ORIGIN). */
	maxIdlePerOrigin?: number;
}

/** Whether name lookups may go out (net/online): online, waiting for Wi-Fi and the clock, or no network configured. */
export type OnlineState = "online" | "waiting" | "offline";
export const ONLINE_STATES: readonly OnlineState[] = ["online", "waiting", "offline"];
