// net/websocket/client: a WebSocket client (RFC 6455) on the injected TCP/TLS
// sockets, wired like net/http (board or test peer gives TCP, TLS, Resolver,
// Timer, the PSRAM BufferPool and the CA certificate).
//
// Life: connecting (DNS, TCP, TLS, the upgrade GET and its 101 answer, all
// under one handshake timeout) -> open -> closing (a close frame sent, waiting
// at most closeWaitMs for the server's) -> closed. `opened` resolves when the
// handshake is checked, or rejects with a WebSocketError; `closed` always
// resolves, once, with the code, reason and whether the close was clean.
//
// - Every frame we send is masked with a fresh key from `random` (§5.3).
// - A ping is answered with a pong carrying its payload; a close from the
//   server is echoed (its code) and the socket closed.
// - A protocol violation fails the connection: a close frame with 1002, 1007
//   or 1009 is sent, the rest of the input ignored, the socket closed when the
//   server drops it or after closeWaitMs.
// - abort() (or the signal) closes the socket synchronously in any phase.
// - Sent messages over WS_SEND_FRAME_MAX_BYTES go as fragments; bytes waiting
//   for the socket are capped (WS_SEND_QUEUE_MAX_BYTES): send() throws past it.
//
// Socket and timer callbacks enter through #guard: nothing thrown reaches native code.
import {
	WS_CLOSE_REASON_MAX_BYTES, WS_CLOSE_WAIT_MS, WS_HANDSHAKE_HEAD_MAX_BYTES, WS_HANDSHAKE_TIMEOUT_MS,
	WS_SEND_FRAME_MAX_BYTES, WS_SEND_QUEUE_MAX_BYTES,
} from "budgets";
import { ByteBuffer } from "net/bytes";
import { connectFailure, type HttpClientOptions, type SocketStage, type TcpSocketLike } from "net/types";
import { literalAddress, parseUrl, type ParsedUrl } from "net/url";
import { decodeUtf8, encodeUtf8, utf8Boundary } from "net/utf8";
import { encodeFrame, FrameParser, isValidUtf8, Opcode } from "net/websocket/frame";
import { checkAnswer, newKey, requestHead } from "net/websocket/handshake";
import { WebSocketError, type WebSocketClose, type WebSocketOptions } from "net/websocket/types";
import { messageOf } from "util/errors";
import { randomFill } from "util/random";

export type WebSocketState = "connecting" | "open" | "closing" | "closed";

/** Close codes an endpoint may send (RFC 6455 §7.4, IANA registry): not 1004-1006, 1015, nor unassigned. */
export function isValidCloseCode(code: number): boolean {
	return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

function toError(error: unknown): WebSocketError {
	if (error instanceof WebSocketError) return error;
	return new WebSocketError("protocol", messageOf(error) || "unknown failure");
}

export class WebSocketClient {
	readonly opened: Promise<void>;
	readonly closed: Promise<WebSocketClose>;
	readonly #options: WebSocketOptions;
	readonly #random: (bytes: Uint8Array) => void;
	#resolveOpened!: () => void;
	#rejectOpened!: (error: WebSocketError) => void;
	#resolveClosed!: (close: WebSocketClose) => void;
	#state: WebSocketState = "connecting";
	#url: ParsedUrl | undefined;
	#key = "";
	#socket: TcpSocketLike | undefined;
	#connected = false;
	#writable = 0;
	#queue: Uint8Array[] = [];
	#queueOffset = 0;
	#queued = 0;
	#head: ByteBuffer | undefined;
	#parser: FrameParser;
	#failure: WebSocketError | undefined;   // set when we failed the connection; input is then ignored
	#sentClose: { code: number; reason: string } | undefined;
	#receivedClose: { code: number; reason: string } | undefined;
	#handshakeTimer: unknown = undefined;
	#closeTimer: unknown = undefined;
	#removeAbortListener: (() => void) | undefined;

	constructor(options: WebSocketOptions) {
		this.#options = options;
		this.#random = options.random ?? randomFill;
		this.opened = new Promise<void>((resolve, reject) => { this.#resolveOpened = resolve; this.#rejectOpened = reject; });
		this.opened.catch(() => {}); // a caller may only watch `closed`
		this.closed = new Promise<WebSocketClose>((resolve) => { this.#resolveClosed = resolve; });
		this.#parser = new FrameParser({
			onMessage: (opcode, bytes) => this.#onMessage(opcode, bytes),
			onControl: (opcode, payload) => this.#onControl(opcode, payload),
		}, { buffers: options.buffers, maxMessageBytes: options.maxMessageBytes });
		this.#guard(() => this.#start());
	}

	get state(): WebSocketState { return this.#state; }
	/** Bytes queued for the socket and not yet written. */
	get bufferedAmount(): number { return this.#queued; }

	/** Sends a text (string) or binary (bytes) message; throws WebSocketError when not open or the queue is full. */
	send(data: string | Uint8Array | ArrayBuffer): void {
		if (this.#state !== "open") throw new WebSocketError("closed", `cannot send: the WebSocket is ${this.#state}`);
		const text = typeof data === "string";
		const bytes = text ? encodeUtf8(data) : data instanceof Uint8Array ? data : new Uint8Array(data);
		this.#checkRoom(bytes.length + 14 * Math.ceil(bytes.length / WS_SEND_FRAME_MAX_BYTES + 1));
		let at = 0;
		do {
			const end = Math.min(bytes.length, at + WS_SEND_FRAME_MAX_BYTES);
			const opcode = at === 0 ? (text ? Opcode.Text : Opcode.Binary) : Opcode.Continuation;
			this.#enqueue(encodeFrame(opcode, bytes.subarray(at, end), end === bytes.length, this.#mask()));
			at = end;
		} while (at < bytes.length);
		this.#guard(() => this.#pump());
	}

	/** Sends a ping (payload at most 125 bytes); the answer comes to options.onPong. */
	ping(payload: Uint8Array = new Uint8Array(0)): void {
		if (this.#state !== "open") throw new WebSocketError("closed", `cannot ping: the WebSocket is ${this.#state}`);
		if (payload.length > 125) throw new WebSocketError("too_large", "a ping payload is at most 125 bytes");
		this.#checkRoom(payload.length + 6);
		this.#enqueue(encodeFrame(Opcode.Ping, payload, true, this.#mask()));
		this.#guard(() => this.#pump());
	}

	/**
	 * Starts the closing handshake with code (1000, or 3000-4999) and a reason
	 * (cut to 123 bytes); `closed` resolves when the server answers, or after
	 * closeWaitMs. Before the connection is open it is an abort.
	 */
	close(code = 1000, reason = ""): void {
		if (code !== 1000 && (code < 3000 || code > 4999)) throw new WebSocketError("protocol", `close code ${code} is not one an application may send (1000 or 3000-4999)`);
		if (this.#state === "connecting") return this.#finish({ code: 1006, reason: "", clean: false, error: new WebSocketError("aborted", "closed before the WebSocket opened") });
		if (this.#state !== "open") return;
		this.#guard(() => this.#sendClose(code, reason));
	}

	/** Closes the socket at once, in any phase; `opened` rejects and `closed` resolves with kind "aborted". */
	abort(reason = "aborted"): void {
		this.#finish({ code: 1006, reason: "", clean: false, error: new WebSocketError("aborted", reason) });
	}

	// ---- connecting ----

	#start(): void {
		const options = this.#options;
		const signal = options.signal;
		if (signal?.aborted) throw new WebSocketError("aborted", signal.reason ?? "aborted");
		const match = /^(wss?):\/\//i.exec(options.url);
		if (!match) throw new WebSocketError("connect", `invalid WebSocket URL ${JSON.stringify(options.url.slice(0, 80))}: expected ws://host/path or wss://host/path`);
		let url: ParsedUrl;
		try {
			url = this.#url = parseUrl((match[1].toLowerCase() === "wss" ? "https" : "http") + options.url.slice(match[1].length));
		} catch (error) {
			throw new WebSocketError("connect", messageOf(error).replace(/https?:\/\//, match[1] + "://"));
		}
		if (url.secure && !options.TLS) throw new WebSocketError("tls", "wss needs a TLS socket class, and none was given to the WebSocket client");
		this.#key = newKey(this.#random);
		const head = requestHead(url.hostHeader, url.target, this.#key, options.headers);
		this.#enqueue(encodeUtf8(head));
		if (signal) this.#removeAbortListener = signal.addListener((why) => this.abort(why));
		if (this.#state === "closed") return;
		const ms = options.handshakeTimeoutMs ?? WS_HANDSHAKE_TIMEOUT_MS;
		this.#handshakeTimer = options.Timer.set(() => this.#guard(() => {
			this.#handshakeTimer = undefined;
			throw new WebSocketError("timeout", `the WebSocket handshake with ${url.host}:${url.port} took more than ${ms} ms: check the address and the network`);
		}), ms);
		const address = literalAddress(url.host);
		if (address) return this.#connect(address);
		const Resolver = options.Resolver;
		if (!Resolver) throw new WebSocketError("dns", "no DNS resolver was given to the WebSocket client: use an IP address or configure a resolver");
		new Resolver({}).resolve({
			host: url.host,
			onResolved: (_host: string, resolved: string) => this.#guard(() => {
				if (this.#state === "connecting" && !this.#socket) this.#connect(resolved);
			}),
			onError: () => this.#guard(() => {
				if (this.#state === "connecting") throw new WebSocketError("dns", `cannot resolve ${url.host}: check the host name and the network`);
			}),
		});
	}

	#connect(address: string): void {
		const url = this.#url as ParsedUrl;
		const { TCP, TLS, certificate } = this.#options;
		const callbacks = {
			address, port: url.port, nodelay: true, format: "buffer" as const,
			onWritable: (count: number) => this.#guard(() => this.#onWritable(count)),
			onReadable: () => this.#guard(() => this.#onReadable()),
			onError: (message?: string, stage?: SocketStage) => this.#guard(() => this.#onSocketError(message, stage)),
		};
		try {
			this.#socket = url.secure
				? new (TLS as NonNullable<HttpClientOptions["TLS"]>)({
					...callbacks, host: url.host,
					secure: { serverName: url.host, ...(certificate ? { certificate } : {}) },
				})
				: new TCP(callbacks);
		} catch (error) {
			throw new WebSocketError(url.secure ? "tls" : "connect", `cannot connect to ${url.host}:${url.port}: ${messageOf(error)}`);
		}
	}

	// ---- socket events ----

	#onWritable(count: number): void {
		if (this.#state === "closed") return;
		this.#writable = count;
		this.#connected = true;
		this.#pump();
	}

	#onReadable(): void {
		for (;;) {
			const socket = this.#socket;
			if (!socket || this.#state === "closed") return;
			const buffer = socket.read();
			if (!buffer || !buffer.byteLength) return;
			if (this.#failure) continue; // failing: the rest of the input is ignored
			const bytes = new Uint8Array(buffer);
			if (this.#state === "connecting") this.#handshakeBytes(bytes);
			else this.#parser.feed(bytes);
		}
	}

	#onSocketError(message?: string, stage?: SocketStage): void {
		if (this.#state === "closed") return;
		const url = this.#url as ParsedUrl;
		const detail = message ? `: ${message}` : "";
		if (this.#failure) return this.#finish({ code: this.#failure.closeCode ?? 1006, reason: "", clean: false, error: this.#failure });
		if (this.#sentClose && this.#receivedClose) return this.#finish({ ...this.#receivedClose, clean: true });
		if (this.#state === "connecting") {
			if (!this.#connected) {
				const { kind, text } = connectFailure(url.host, url.port, url.secure, message, stage);
				throw new WebSocketError(kind, text);
			}
			throw new WebSocketError("handshake", `the server closed the connection before answering the WebSocket upgrade${detail}`);
		}
		throw new WebSocketError("closed", `the WebSocket connection to ${url.host}:${url.port} dropped without a close frame${detail}`);
	}

	#handshakeBytes(bytes: Uint8Array): void {
		const head = this.#head ??= new ByteBuffer(512, WS_HANDSHAKE_HEAD_MAX_BYTES + 4, () => {
			throw new WebSocketError("handshake", `the server's answer to the WebSocket upgrade has a head over ${WS_HANDSHAKE_HEAD_MAX_BYTES} bytes`);
		});
		// Take bytes up to the end of the head (CR LF CR LF) only; what follows is frames.
		let end = -1;
		for (let i = 0; i < bytes.length; i++) {
			head.appendByte(bytes[i]);
			const v = head.view(), n = v.length;
			if (n >= 4 && v[n - 1] === 10 && v[n - 2] === 13 && v[n - 3] === 10 && v[n - 4] === 13) {
				end = i + 1;
				break;
			}
		}
		if (end < 0) return;
		const text = decodeUtf8(head.view(), 0, head.length - 4);
		this.#head = undefined;
		checkAnswer(text, this.#key);
		this.#clearTimer("handshake");
		this.#state = "open";
		this.#resolveOpened();
		if (end < bytes.length) this.#parser.feed(bytes.subarray(end));
	}

	// ---- frames in ----

	#onMessage(opcode: Opcode.Text | Opcode.Binary, bytes: Uint8Array): void {
		if (this.#state !== "open") return; // after our close, data is dropped (§5.5.1)
		const onMessage = this.#options.onMessage;
		if (!onMessage) return;
		onMessage(opcode === Opcode.Text ? decodeUtf8(bytes) : bytes);
	}

	#onControl(opcode: Opcode.Close | Opcode.Ping | Opcode.Pong, payload: Uint8Array): void {
		if (opcode === Opcode.Ping) {
			if (this.#state !== "open") return;
			this.#checkRoom(payload.length + 6);
			this.#enqueue(encodeFrame(Opcode.Pong, payload, true, this.#mask()));
			return this.#pump();
		}
		if (opcode === Opcode.Pong) {
			this.#options.onPong?.(payload);
			return;
		}
		let code = 1005, reason = "";
		if (payload.length === 1) throw new WebSocketError("protocol", "WebSocket protocol error from the server: a close frame with a 1-byte payload", 1002);
		if (payload.length >= 2) {
			code = (payload[0] << 8) | payload[1];
			if (!isValidCloseCode(code)) throw new WebSocketError("protocol", `WebSocket protocol error from the server: close code ${code} is not allowed`, 1002);
			if (!isValidUtf8(payload, 2)) throw new WebSocketError("protocol", "the server's close reason is not valid UTF-8", 1007);
			reason = decodeUtf8(payload, 2);
		}
		this.#receivedClose = { code, reason };
		if (!this.#sentClose) this.#sendClose(code === 1005 ? undefined : code, "");
		else this.#closeWhenFlushed();
	}

	// ---- frames out ----

	#sendClose(code: number | undefined, reason: string): void {
		let payload = new Uint8Array(0);
		if (code !== undefined) {
			const text = encodeUtf8(reason);
			const cut = utf8Boundary(text, WS_CLOSE_REASON_MAX_BYTES);
			payload = new Uint8Array(2 + cut);
			payload[0] = code >> 8;
			payload[1] = code & 0xFF;
			payload.set(text.subarray(0, cut), 2);
			reason = decodeUtf8(text, 0, cut);
		}
		this.#sentClose = { code: code ?? 1005, reason };
		this.#state = "closing";
		this.#enqueue(encodeFrame(Opcode.Close, payload, true, this.#mask()), true);
		const ms = this.#options.closeWaitMs ?? WS_CLOSE_WAIT_MS;
		this.#closeTimer = this.#options.Timer.set(() => this.#guard(() => {
			this.#closeTimer = undefined;
			if (this.#receivedClose && !this.#failure) return this.#finish({ ...this.#receivedClose, clean: true });
			const error = this.#failure ?? new WebSocketError("timeout", `the server did not answer our close within ${ms} ms`);
			this.#finish({ code: this.#sentClose?.code ?? 1006, reason: this.#sentClose?.reason ?? "", clean: false, error });
		}), ms);
		this.#pump();
		if (this.#receivedClose) this.#closeWhenFlushed();
	}

	#closeWhenFlushed(): void {
		if (!this.#queue.length && this.#receivedClose && this.#sentClose && !this.#failure) {
			this.#finish({ ...this.#receivedClose, clean: true });
		}
	}

	#mask(): Uint8Array {
		const mask = new Uint8Array(4);
		this.#random(mask);
		return mask;
	}

	#checkRoom(bytes: number): void {
		if (this.#queued + bytes > WS_SEND_QUEUE_MAX_BYTES) {
			throw new WebSocketError("too_large", `the WebSocket send queue is full (${this.#queued} bytes waiting, cap ${WS_SEND_QUEUE_MAX_BYTES}): wait for it to drain`);
		}
	}

	#enqueue(bytes: Uint8Array, control = false): void {
		if (!control) this.#checkRoom(bytes.length);
		this.#queue.push(bytes);
		this.#queued += bytes.length;
	}

	#pump(): void {
		const socket = this.#socket;
		if (!socket || !this.#connected || this.#state === "closed") return;
		while (this.#queue.length && this.#writable > 0) {
			const piece = this.#queue[0];
			const count = Math.min(piece.length - this.#queueOffset, this.#writable);
			socket.write(piece.subarray(this.#queueOffset, this.#queueOffset + count));
			this.#writable -= count;
			this.#queued -= count;
			this.#queueOffset += count;
			if (this.#queueOffset === piece.length) {
				this.#queue.shift();
				this.#queueOffset = 0;
			}
		}
		if (!this.#queue.length) this.#closeWhenFlushed();
	}

	// ---- failure and the one exit ----

	#guard(fn: () => void): void {
		try {
			fn();
		} catch (error) {
			this.#fail(toError(error));
		}
	}

	/** Fails the connection: with a close code and an open socket, tell the server and wait (bounded); else close now. */
	#fail(error: WebSocketError): void {
		if (this.#state === "closed") return;
		if (this.#failure) return this.#finish({ code: this.#failure.closeCode ?? 1006, reason: "", clean: false, error: this.#failure });
		if (error.closeCode !== undefined && (this.#state === "open" || this.#state === "closing") && !this.#sentClose) {
			this.#failure = error;
			try {
				this.#sendClose(error.closeCode, "");
				return;
			} catch {
				// could not even queue the close: close the socket below
			}
		}
		this.#finish({ code: error.closeCode ?? 1006, reason: "", clean: false, error });
	}

	#finish(close: WebSocketClose): void {
		if (this.#state === "closed") return;
		const wasOpen = this.#state !== "connecting";
		this.#state = "closed";
		this.#clearTimer("handshake");
		this.#clearTimer("close");
		this.#removeAbortListener?.();
		this.#removeAbortListener = undefined;
		const socket = this.#socket;
		this.#socket = undefined;
		try {
			socket?.close();
		} catch {
			// closing a socket the peer already dropped may throw; it is closed either way
		}
		this.#queue = [];
		this.#queued = 0;
		this.#parser.release();
		if (!wasOpen) this.#rejectOpened(close.error ?? new WebSocketError("closed", "the WebSocket closed before it opened"));
		this.#resolveClosed(close);
	}

	#clearTimer(which: "handshake" | "close"): void {
		const timer = which === "handshake" ? this.#handshakeTimer : this.#closeTimer;
		if (timer === undefined) return;
		this.#options.Timer.clear(timer);
		if (which === "handshake") this.#handshakeTimer = undefined;
		else this.#closeTimer = undefined;
	}
}
