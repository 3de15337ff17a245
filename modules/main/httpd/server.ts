// httpd/server: the firmware's HTTP/1.1 server over the ECMA-419 TCP listener
// (embedded:io/socket/listener on the board, hosts/lin/src/listener.c on lin),
// in the main machine (issue 30). Each accepted connection is taken over with
// new TCP({from}); its requests are read within the budgets (WEB_*: head and
// body sizes, header count, the time each part may take), parsed by
// httpd/parser, and handed to their route (httpd/routes) with a response to
// answer through once: a whole body, or server-sent events. Connections are
// kept alive (HTTP/1.1; up to WEB_REQUESTS_PER_CONNECTION requests, idle at most
// WEB_IDLE_TIMEOUT_MS); pipelined requests wait their turn.
//
// Bounded: at most WEB_CONNECTIONS_MAX connections; a new one past that closes
// the oldest still waiting for (or slowly sending) a request head, so idle and
// slow clients cannot keep the owner out; when every connection is busy the new
// one is closed at once. A response's queued bytes are written as the client
// takes them; a client that stops taking them for WEB_WRITE_STALL_MS is
// dropped, and an event stream queueing past WEB_OUTPUT_MAX_BYTES is closed.
// One timer (every WEB_TICK_MS) checks every connection's deadline.
//
// Every response carries nosniff, no framing, no referrer and (unless the
// route says otherwise) no-store and a same-origin Content-Security-Policy. The
// server's own error answers are fixed sentences: nothing of the request is
// echoed.
import {
	WEB_BODY_LIMIT_MAX_BYTES, WEB_BODY_MAX_BYTES, WEB_BODY_TIMEOUT_MS, WEB_CONNECTIONS_MAX, WEB_HANDLER_TIMEOUT_MS, WEB_HEAD_MAX_BYTES,
	WEB_HEAD_START_BYTES, WEB_HEAD_TIMEOUT_MS, WEB_IDLE_TIMEOUT_MS, WEB_OUTPUT_MAX_BYTES, WEB_REQUESTS_PER_CONNECTION,
	WEB_STREAMS_MAX, WEB_TICK_MS, WEB_WRITE_STALL_MS,
} from "budgets";
import { encodeUtf8 } from "net/utf8";
import { headEnd, headerValue, parseHead, type RequestHead } from "httpd/parser";
import type { EventStream, HttpHeaders, HttpRequest, HttpResponse, RouteTable } from "httpd/types";
import { messageOf } from "util/errors";

/** What the server needs of an accepted connection's socket (embedded:io/socket/tcp). */
export interface ServerSocket {
	read(buffer: Uint8Array): number | undefined;
	write(bytes: Uint8Array): unknown;
	close(): void;
	readonly remoteAddress?: string;
}
export interface ServerSocketOptions {
	from: unknown;
	onReadable(this: ServerSocket, count: number): void;
	onWritable(this: ServerSocket, count: number): void;
	onError(this: ServerSocket, message?: string): void;
}
export type ServerSocketConstructor = new (options: ServerSocketOptions) => ServerSocket;

export interface ListenerLike {
	read(): { close(): void } | undefined;
	close(): void;
	readonly port: number;
}
export type ListenerConstructor = new (options: { port: number; address?: string; onReadable(this: ListenerLike, count: number): void }) => ListenerLike;

export interface ServerTimers {
	repeat(callback: () => void, ms: number): unknown;
	clear(id: unknown): void;
}

export interface HttpServerOptions {
	Listener: ListenerConstructor;
	TCP: ServerSocketConstructor;
	timers: ServerTimers;
	now(): number;
	routes: RouteTable;
	port: number;
	/** The address to listen on (the listener's default when absent: every interface on the board, 127.0.0.1 on lin). */
	address?: string;
	log(line: string): void;
}

export interface ServerStats {
	connections: number;
	streams: number;
	requests: number;
	/** Connections closed to make room for a new one, or refused. */
	evicted: number;
	refused: number;
}

const enum Phase { Idle, Head, Body, Handling, Sending, Streaming, Closing, Closed }

const REASONS: Record<number, string> = {
	200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
	400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
	409: "Conflict", 411: "Length Required", 413: "Content Too Large", 414: "URI Too Long", 415: "Unsupported Media Type",
	422: "Unprocessable Content", 423: "Locked", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
	500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
};

const DEFAULT_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** The head of a response: status line, the route's headers, the server's. */
function responseHead(status: number, headers: HttpHeaders | undefined, length: number | undefined, keepAlive: boolean): Uint8Array {
	let head = `HTTP/1.1 ${status} ${REASONS[status] ?? "Status"}\r\n`;
	let type = false, cache = false, csp = false;
	if (headers) {
		for (const name in headers) {
			const value = headers[name];
			// A header that would split the head is the route's bug: it is left out.
			if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(value)) continue;
			const lower = name.toLowerCase();
			if (lower === "content-length" || lower === "connection" || lower === "transfer-encoding") continue;
			if (lower === "content-type") type = true;
			else if (lower === "cache-control") cache = true;
			else if (lower === "content-security-policy") csp = true;
			head += `${name}: ${value}\r\n`;
		}
	}
	if (!type && length !== 0) head += "Content-Type: text/plain; charset=utf-8\r\n";
	if (!cache) head += "Cache-Control: no-store\r\n";
	if (!csp) head += `Content-Security-Policy: ${DEFAULT_CSP}\r\n`;
	head += "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n";
	if (length !== undefined) head += `Content-Length: ${length}\r\n`;
	head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
	return encodeUtf8(head);
}

class Request implements HttpRequest {
	readonly method: string;
	readonly path: string;
	readonly query: string;
	readonly headers: readonly (readonly [string, string])[];
	readonly body: Uint8Array;
	readonly remote: string;
	constructor(head: RequestHead, body: Uint8Array, remote: string) {
		this.method = head.method;
		this.path = head.path;
		this.query = head.query;
		this.headers = head.headers;
		this.body = body;
		this.remote = remote;
	}
	header(name: string): string | undefined {
		return headerValue(this.headers, name.toLowerCase());
	}
}

class Stream implements EventStream {
	#connection: Connection;
	onClose?: () => void;
	constructor(connection: Connection) {
		this.#connection = connection;
	}
	get closed(): boolean {
		return this.#connection.stream !== this;
	}
	send(data: string, event?: string): boolean {
		let text = event ? `event: ${event.replace(/[\r\n]/g, " ")}\n` : "";
		for (const line of data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
		return this.#write(`${text}\n`);
	}
	comment(text: string): boolean {
		return this.#write(`: ${text.replace(/[\r\n]/g, " ")}\n\n`);
	}
	end(): void {
		if (!this.closed) this.#connection.endStream();
	}
	#write(text: string): boolean {
		if (this.closed) return false;
		return this.#connection.streamWrite(encodeUtf8(text));
	}
}

class Response implements HttpResponse {
	#connection: Connection;
	#serial: number;
	constructor(connection: Connection, serial: number) {
		this.#connection = connection;
		this.#serial = serial;
	}
	get done(): boolean {
		return this.#connection.answered(this.#serial);
	}
	send(status: number, body?: string | Uint8Array, headers?: HttpHeaders): void {
		if (this.done) return;
		const bytes = body === undefined ? new Uint8Array(0) : typeof body === "string" ? encodeUtf8(body) : body;
		this.#connection.respond(status, bytes, headers);
	}
	events(headers?: HttpHeaders): EventStream {
		const connection = this.#connection;
		if (this.done) {
			const dead = new Stream(connection);
			return dead;
		}
		return connection.startStream(headers);
	}
}

class Connection {
	readonly server: HttpServer;
	readonly socket: ServerSocket;
	readonly remote: string;
	phase = Phase.Idle;
	/** When the phase's deadline runs out (0: none). */
	deadline: number;
	/** When the current phase began (eviction picks the oldest waiting connection). */
	since: number;
	stream?: Stream;
	#available = 0;
	#writable = 0;
	#head?: Uint8Array;
	#headLength = 0;
	#request?: RequestHead;
	#body?: Uint8Array;
	#bodyLength = 0;
	#out: Uint8Array[] = [];
	#outOffset = 0;
	#outBytes = 0;
	#requests = 0;
	#keepAlive = false;
	#serial = 0;
	#answered = 0;
	#progress = 0;
	/** The answer is the connection's last: close once it has been written. */
	#closeWhenSent = false;
	/** Everything was handed to the socket: close at its next onWritable. */
	#drainWait = false;

	constructor(server: HttpServer, from: unknown, TCP: ServerSocketConstructor, now: number) {
		this.server = server;
		this.since = now;
		this.deadline = now + WEB_IDLE_TIMEOUT_MS;
		const connection = this;
		this.socket = new TCP({
			from,
			onReadable(count) { connection.#onReadable(count); },
			onWritable(count) { connection.#onWritable(count); },
			onError() { connection.close(); },
		});
		this.remote = this.socket.remoteAddress ?? "";
	}

	answered(serial: number): boolean {
		return this.phase === Phase.Closed || serial <= this.#answered;
	}

	/** Closes at once: queued bytes are dropped. */
	close(): void {
		if (this.phase === Phase.Closed) return;
		this.phase = Phase.Closed;
		this.#answered = this.#serial;
		this.#out.length = 0;
		this.#head = this.#body = undefined;
		try { this.socket.close(); } catch { /* closed already */ }
		const stream = this.stream;
		this.stream = undefined;
		this.server.forget(this);
		if (stream?.onClose) {
			try { stream.onClose(); } catch (error) { this.server.log(`httpd: an event stream's onClose threw: ${messageOf(error)}`); }
		}
	}

	/** Checks the phase's deadline. */
	tick(now: number): void {
		if (!this.deadline || now < this.deadline) return;
		switch (this.phase) {
			case Phase.Idle: return this.close();
			case Phase.Head: return this.#fail(408, "the request head did not arrive in time");
			case Phase.Body: return this.#fail(408, "the request body did not arrive in time");
			case Phase.Handling: return this.#fail(503, "the answer took too long");
			default: return this.close(); // the client stopped taking what is written
		}
	}

	#onReadable(count: number): void {
		this.#available = count;
		this.#pump();
	}

	#onWritable(count: number): void {
		this.#writable = count;
		if (this.#drainWait && !this.#out.length) return this.close();
		this.#flush();
	}

	#read(into: Uint8Array): number {
		const wanted = this.#available < into.length ? this.#available : into.length;
		if (wanted <= 0) return 0;
		const count = this.socket.read(wanted === into.length ? into : into.subarray(0, wanted)) ?? 0;
		this.#available = count >= this.#available ? 0 : this.#available - count;
		return count;
	}

	/** Reads what the phase takes; more waits in the socket. */
	#pump(): void {
		for (let turns = 0; turns < 64 && this.#available > 0; turns++) {
			const phase = this.phase;
			if (phase === Phase.Idle || phase === Phase.Head) {
				if (!this.#readHead()) return;
			} else if (phase === Phase.Body) {
				if (!this.#readBody()) return;
			} else if (phase === Phase.Streaming || phase === Phase.Closing) {
				// Nothing more is served on this connection: read and drop, so the client's close is heard.
				const scratch = new Uint8Array(this.#available < 512 ? this.#available : 512);
				if (!this.#read(scratch)) return;
			} else return; // handling or sending: the next request waits its turn (pipelined)
		}
	}

	#readHead(): boolean {
		let head = this.#head;
		if (!head) head = this.#head = new Uint8Array(WEB_HEAD_START_BYTES);
		if (this.#headLength === head.length) {
			if (head.length >= WEB_HEAD_MAX_BYTES) {
				this.#fail(431, `the request head is over ${WEB_HEAD_MAX_BYTES} bytes`);
				return false;
			}
			const grown = new Uint8Array(head.length * 2 > WEB_HEAD_MAX_BYTES ? WEB_HEAD_MAX_BYTES : head.length * 2);
			grown.set(head);
			head = this.#head = grown;
		}
		const before = this.#headLength;
		const count = this.#read(head.subarray(before));
		if (!count) return false;
		this.#headLength += count;
		if (this.phase === Phase.Idle) {
			this.phase = Phase.Head;
			this.since = this.server.now();
			this.deadline = this.since + WEB_HEAD_TIMEOUT_MS;
		}
		return this.#scanHead(before);
	}

	/** Looks for the head's end from `from`; starts the request when it is there. */
	#scanHead(from: number): boolean {
		const head = this.#head as Uint8Array;
		// A client may send blank lines before a request (RFC 9112 §2.2).
		let start = 0;
		while (start + 1 < this.#headLength && head[start] === 13 && head[start + 1] === 10) start += 2;
		if (start) {
			head.copyWithin(0, start, this.#headLength);
			this.#headLength -= start;
			from = 0;
			if (!this.#headLength) return true;
		}
		const end = headEnd(head, from > 3 ? from - 3 : 0, this.#headLength);
		if (end < 0) {
			if (this.#headLength >= WEB_HEAD_MAX_BYTES) {
				this.#fail(431, `the request head is over ${WEB_HEAD_MAX_BYTES} bytes`);
				return false;
			}
			return true;
		}
		const parsed = parseHead(head, end);
		if ("status" in parsed) {
			this.#fail(parsed.status, parsed.error);
			return false;
		}
		if (parsed.contentLength > WEB_BODY_LIMIT_MAX_BYTES) {
			this.#fail(413, `the request body is over ${WEB_BODY_LIMIT_MAX_BYTES} bytes`);
			return false;
		}
		const match = this.server.routes.match(parsed.method, parsed.path);
		const route = match.route;
		this.#request = parsed;
		this.#keepAlive = parsed.keepAlive && this.#requests + 1 < WEB_REQUESTS_PER_CONNECTION;
		// What came after the head: the body's start, perhaps a pipelined request after it.
		const extra = head.subarray(end, this.#headLength);
		if (!route) {
			this.#serial++;
			this.#requests++;
			this.server.counted();
			this.#keep(extra, 0);
			if (parsed.contentLength) this.#keepAlive = false; // its body is not read: it must not pass for the next request
			if (match.allowed) this.respond(405, encodeUtf8("this path is not served for that method\n"), { Allow: match.allowed.join(", ") });
			else this.respond(404, encodeUtf8("not found\n"));
			return false;
		}
		const limit = route.bodyMaxBytes ?? WEB_BODY_MAX_BYTES;
		if (parsed.contentLength > limit) {
			this.#fail(413, `the request body is over ${limit} bytes`);
			return false;
		}
		const body = new Uint8Array(parsed.contentLength);
		const taken = extra.length < body.length ? extra.length : body.length;
		body.set(extra.subarray(0, taken));
		this.#body = body;
		this.#bodyLength = taken;
		this.#keep(extra, taken);
		if (this.#bodyLength < body.length) {
			this.phase = Phase.Body;
			this.deadline = this.server.now() + WEB_BODY_TIMEOUT_MS;
			return true;
		}
		this.#dispatch();
		return false;
	}

	/** Keeps the bytes after offset in extra (a pipelined request) as the start of the next head. */
	#keep(extra: Uint8Array, offset: number): void {
		const rest = extra.length - offset;
		const head = this.#head as Uint8Array;
		if (rest > 0) head.copyWithin(0, extra.byteOffset - head.byteOffset + offset, extra.byteOffset - head.byteOffset + extra.length);
		this.#headLength = rest > 0 ? rest : 0;
	}

	#readBody(): boolean {
		const body = this.#body as Uint8Array;
		const count = this.#read(body.subarray(this.#bodyLength));
		if (!count) return false;
		this.#bodyLength += count;
		if (this.#bodyLength < body.length) return true;
		this.#dispatch();
		return false;
	}

	#dispatch(): void {
		const head = this.#request as RequestHead;
		const body = this.#body as Uint8Array;
		this.#body = undefined;
		this.#requests++;
		const serial = ++this.#serial;
		this.phase = Phase.Handling;
		this.deadline = this.server.now() + WEB_HANDLER_TIMEOUT_MS;
		this.server.counted();
		const route = this.server.routes.match(head.method, head.path).route;
		const response = new Response(this, serial);
		if (!route) return this.respond(404, encodeUtf8("not found\n")); // removed meanwhile
		const request = new Request(head, body, this.remote);
		const failed = (error: unknown) => {
			this.server.log(`httpd: ${head.method} ${head.path} failed: ${messageOf(error)}`);
			if (!response.done) this.respond(500, encodeUtf8("the server failed to answer\n"));
		};
		try {
			const result = route.handle(request, response);
			if (result && typeof (result as Promise<void>).then === "function") (result as Promise<void>).then(undefined, failed);
		} catch (error) {
			failed(error);
		}
	}

	respond(status: number, body: Uint8Array, headers?: HttpHeaders): void {
		if (this.phase === Phase.Closed) return;
		this.#answered = this.#serial;
		const keepAlive = this.#keepAlive;
		this.phase = Phase.Sending;
		this.#progress = this.server.now();
		this.deadline = this.#progress + WEB_WRITE_STALL_MS;
		this.#queue(responseHead(status, headers, body.length, keepAlive));
		if (body.length) this.#queue(body);
		this.#closeWhenSent = !keepAlive;
		this.#flush();
	}

	/** A server error before (or instead of) a route: answered, then closed. */
	#fail(status: number, sentence: string): void {
		if (this.phase === Phase.Closed) return;
		if (this.phase === Phase.Sending || this.phase === Phase.Streaming || this.phase === Phase.Closing) return this.close();
		this.#keepAlive = false;
		this.#serial++;
		this.respond(status, encodeUtf8(`${sentence}\n`));
	}

	startStream(headers?: HttpHeaders): EventStream {
		const stream = new Stream(this);
		if (this.server.streams() >= WEB_STREAMS_MAX) {
			this.respond(503, encodeUtf8("too many streams are open; try again\n"));
			return stream; // closed: it is not this connection's stream
		}
		this.#answered = this.#serial;
		this.#keepAlive = false;
		this.phase = Phase.Streaming;
		this.stream = stream;
		this.#progress = this.server.now();
		this.deadline = 0;
		this.#queue(responseHead(200, { "Content-Type": "text/event-stream; charset=utf-8", ...headers }, undefined, false));
		this.#flush();
		return stream;
	}

	streamWrite(bytes: Uint8Array): boolean {
		if (this.#outBytes + bytes.length > WEB_OUTPUT_MAX_BYTES) {
			this.server.log("httpd: an event stream's client is too slow; it is closed");
			this.close();
			return false;
		}
		if (!this.#outBytes) {
			this.#progress = this.server.now();
			this.deadline = this.#progress + WEB_WRITE_STALL_MS;
		}
		this.#queue(bytes);
		this.#flush();
		return this.phase === Phase.Streaming;
	}

	endStream(): void {
		const stream = this.stream;
		this.stream = undefined;
		this.phase = Phase.Closing;
		this.#closeWhenSent = true;
		this.deadline = this.server.now() + WEB_WRITE_STALL_MS;
		this.#flush();
		if (stream?.onClose) {
			try { stream.onClose(); } catch (error) { this.server.log(`httpd: an event stream's onClose threw: ${messageOf(error)}`); }
		}
	}

	#queue(bytes: Uint8Array): void {
		this.#out.push(bytes);
		this.#outBytes += bytes.length;
	}

	#flush(): void {
		const out = this.#out;
		try {
			while (out.length && this.#writable > 0) {
				const piece = out[0];
				const left = piece.length - this.#outOffset;
				const count = left < this.#writable ? left : this.#writable;
				this.socket.write(count === piece.length ? piece : piece.subarray(this.#outOffset, this.#outOffset + count));
				this.#writable -= count;
				this.#outBytes -= count;
				this.#progress = this.server.now();
				if (count === left) {
					out.shift();
					this.#outOffset = 0;
				} else this.#outOffset += count;
			}
		} catch {
			return this.close(); // the client went away
		}
		if (out.length) {
			if (this.phase !== Phase.Streaming || this.#outBytes) this.deadline = this.#progress + WEB_WRITE_STALL_MS;
			return;
		}
		if (this.phase === Phase.Streaming) {
			this.deadline = 0;
			return;
		}
		if (this.phase !== Phase.Sending && this.phase !== Phase.Closing) return;
		if (this.#closeWhenSent) {
			// The socket may still hold what was written: close at its next onWritable (all sent).
			this.phase = Phase.Closing;
			this.#drainWait = true;
			return;
		}
		// Kept alive: the next request (perhaps pipelined already).
		this.phase = Phase.Idle;
		this.since = this.server.now();
		this.deadline = this.since + WEB_IDLE_TIMEOUT_MS;
		this.#request = undefined;
		if (this.#headLength) {
			this.phase = Phase.Head;
			this.deadline = this.since + WEB_HEAD_TIMEOUT_MS;
			this.#scanHead(0);
		}
		if (this.phase === Phase.Idle || this.phase === Phase.Head || this.phase === Phase.Body) this.#pump();
	}
}

export class HttpServer {
	readonly routes: RouteTable;
	#options: HttpServerOptions;
	#listener?: ListenerLike;
	#connections: Connection[] = [];
	#timer?: unknown;
	#stats = { requests: 0, evicted: 0, refused: 0 };

	constructor(options: HttpServerOptions) {
		this.#options = options;
		this.routes = options.routes;
	}

	/** Listens; throws a sentence when the port cannot be had. */
	start(): void {
		if (this.#listener) return;
		const server = this;
		const { Listener, port, address } = this.#options;
		this.#listener = new Listener({
			port,
			...(address ? { address } : {}),
			onReadable(count) { server.#accept(this, count); },
		});
		this.#timer = this.#options.timers.repeat(() => this.#tick(), WEB_TICK_MS);
	}

	/** Closes the listener and every connection (their streams' onClose run). */
	stop(): void {
		const listener = this.#listener;
		this.#listener = undefined;
		if (this.#timer !== undefined) this.#options.timers.clear(this.#timer);
		this.#timer = undefined;
		try { listener?.close(); } catch { /* closed */ }
		for (const connection of this.#connections.slice()) connection.close();
	}

	get port(): number {
		return this.#listener?.port ?? 0;
	}

	get running(): boolean {
		return this.#listener !== undefined;
	}

	stats(): ServerStats {
		return { connections: this.#connections.length, streams: this.streams(), ...this.#stats };
	}

	now(): number {
		return this.#options.now();
	}

	log(line: string): void {
		this.#options.log(line);
	}

	streams(): number {
		let count = 0;
		for (const connection of this.#connections) if (connection.stream) count++;
		return count;
	}

	counted(): void {
		this.#stats.requests++;
	}

	forget(connection: Connection): void {
		const at = this.#connections.indexOf(connection);
		if (at >= 0) this.#connections.splice(at, 1);
	}

	#accept(listener: ListenerLike, count: number): void {
		for (let i = 0; i < count; i++) {
			const from = listener.read();
			if (!from) return;
			if (this.#connections.length >= WEB_CONNECTIONS_MAX && !this.#evict()) {
				this.#stats.refused++;
				try { from.close(); } catch { /* gone */ }
				continue;
			}
			try {
				this.#connections.push(new Connection(this, from, this.#options.TCP, this.now()));
			} catch (error) {
				this.#stats.refused++;
				this.log(`httpd: a connection could not be taken: ${messageOf(error)}`);
				try { from.close(); } catch { /* gone */ }
			}
		}
	}

	/** Closes the connection waiting longest for a request head; false when every one is busy. */
	#evict(): boolean {
		let oldest: Connection | undefined;
		for (const connection of this.#connections) {
			if (connection.phase !== Phase.Idle && connection.phase !== Phase.Head) continue;
			if (!oldest || connection.since < oldest.since) oldest = connection;
		}
		if (!oldest) return false;
		this.#stats.evicted++;
		oldest.close();
		return true;
	}

	#tick(): void {
		const now = this.now();
		for (const connection of this.#connections.slice()) connection.tick(now);
	}
}
