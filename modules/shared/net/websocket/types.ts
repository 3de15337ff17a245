// net/websocket/types: the WebSocket client's contract (modules/shared/net/websocket/client.ts).
import type { AbortSignalLike, ResolverConstructor, TcpConstructor, TimerLike, TlsConstructor } from "net/types";
import type { BufferPool } from "util/buffers";

export type WebSocketErrorKind = "aborted" | "timeout" | "connect" | "dns" | "tls" | "handshake" | "protocol" | "too_large" | "closed";

/** The one error class the client rejects with or reports. closeCode: the code sent to the server, if any. */
export class WebSocketError extends Error {
	override name = "WebSocketError";
	readonly kind: WebSocketErrorKind;
	readonly closeCode?: number;
	/** For kind "handshake": the HTTP status the server answered with. */
	readonly status?: number;
	constructor(kind: WebSocketErrorKind, message: string, closeCode?: number, status?: number) {
		super(message);
		this.kind = kind;
		if (closeCode !== undefined) this.closeCode = closeCode;
		if (status !== undefined) this.status = status;
	}
}

export interface WebSocketClose {
	/** The code the server sent (or we sent, when we failed the connection); 1005 none given, 1006 no close frame. */
	code: number;
	reason: string;
	/** True when both close frames were exchanged. */
	clean: boolean;
	/** Why, when the connection did not close cleanly (abort, protocol error, socket error, timeout). */
	error?: WebSocketError;
}

export interface WebSocketOptions {
	/** ws://host[:port]/path or wss://... */
	url: string;
	TCP: TcpConstructor;
	/** Needed for wss:// only. */
	TLS?: TlsConstructor;
	/** Needed for host names; IP literals and "localhost" skip it. */
	Resolver?: ResolverConstructor;
	Timer: TimerLike;
	/** Where received messages are reassembled (default: heapBuffers). The board passes its PSRAM pool. */
	buffers?: BufferPool;
	/** DER CA certificate for wss://, passed to TLS as secure.certificate. */
	certificate?: ArrayBuffer;
	/** Extra request headers for the opening handshake (e.g. Authorization). */
	headers?: Record<string, string>;
	/** Fills bytes with random values: the handshake key and every frame's mask (default util/random's randomFill: host/random). */
	random?: (bytes: Uint8Array) => void;
	signal?: AbortSignalLike;
	/** DNS + TCP + TLS + 101 answer. Default budgets.WS_HANDSHAKE_TIMEOUT_MS. */
	handshakeTimeoutMs?: number;
	/** Default budgets.WS_MESSAGE_MAX_BYTES. */
	maxMessageBytes?: number;
	/** Default budgets.WS_CLOSE_WAIT_MS. */
	closeWaitMs?: number;
	/** A whole message: a string for text, a view (valid only during the call) for binary. */
	onMessage?: (data: string | Uint8Array) => void;
	onPong?: (payload: Uint8Array) => void;
}

/** A WebSocket as its users see it (net/websocket/client's WebSocketClient is one). */
export interface WebSocketLike {
	readonly opened: Promise<void>;
	readonly closed: Promise<{ code: number; reason: string; error?: Error }>;
	send(text: string): void;
	close(code?: number, reason?: string): void;
	abort(reason?: string): void;
}

/** Opens a WebSocket (net/websocket/board's, on the board's sockets); onMessage hears each message. */
export type OpenWebSocket = (url: string, onMessage: (data: string | Uint8Array) => void, signal: AbortSignalLike) => WebSocketLike;
