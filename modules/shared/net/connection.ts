// net/connection: one TCP or TLS socket of the HTTP client, with the state a
// request and the keep-alive pool need of it (writable and readable counts, its
// response parser, whether it is pooled and until when). Its socket callbacks go
// to the request that owns it (ConnectionOwner); a pooled one that hears
// anything is dropped from its pool (IdlePool). Nothing thrown in a callback
// escapes into native code.
import { ResponseParser, type ResponseEvents } from "net/response";
import { toHttpError, type SocketStage, type TcpSocketLike } from "net/types";
import { logLine } from "util/log";

/** The pool that holds a connection while it idles (net/http's HttpClient). */
export interface IdlePool {
	dropIdle(connection: Connection): void;
}

/** What a connection reports to the request that currently owns it. Each method catches what it throws. */
export interface ConnectionOwner {
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
export class Connection {
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
	pool: IdlePool | undefined = undefined;
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
