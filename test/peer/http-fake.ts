// test/peer/http-fake: scripted fake sockets, resolver and allocator for the
// HTTP client's unit tests (test/unit/http*.test.ts). No network: a FakeServer
// plays the server side of each connection the client opens. Callbacks are
// delivered from timers, as real sockets deliver them from the event loop.
import Timer from "timer";
import type { ResolveRequest, TcpOptions, TcpSocketLike, TlsOptions } from "net/types";
import type { BufferPool } from "util/buffers";

export const later = (fn: () => void, ms = 0) => { Timer.set(fn, ms); };
export const sleep = (ms: number) => new Promise<void>((resolve) => Timer.set(() => resolve(), ms));

export function bytesOf(text: string): Uint8Array {
	return new Uint8Array(ArrayBuffer.fromString(text));
}
export function textOf(bytes: Uint8Array): string {
	let s = "";
	for (const b of bytes) s += String.fromCharCode(b);
	return s;
}

/** What the client sent on one connection, split into requests once complete. */
export interface FakeRequest { head: string; body: Uint8Array; method: string; target: string; headers: Record<string, string> }

export interface ServerBehaviour {
	/** Refuse the connection with this error message instead of accepting it. */
	refuse?: string;
	/** The stage onError gives with refuse (as the hosts' sockets do); none by default (as the SDK's TCP). */
	refuseIn?: "connect" | "handshake";
	/** Never complete the connection (a TLS handshake that hangs). */
	hang?: boolean;
	/** Bytes the client may write per onWritable. */
	writable?: number;
	/** Called for each complete request on a connection. */
	respond?: (request: FakeRequest, socket: FakeSocket, index: number) => void;
}

export class FakeSocket implements TcpSocketLike {
	readonly options: TcpOptions | TlsOptions;
	readonly server: FakeServer;
	readonly id: number;
	closed = false;
	closedByPeer = false;
	written: number[] = [];          // every byte the client wrote
	requests: FakeRequest[] = [];
	#parsed = 0;                     // bytes of written already split into requests
	#inbox: Uint8Array[] = [];
	#writable: number;
	#eofPending = false;

	constructor(server: FakeServer, options: TcpOptions | TlsOptions) {
		this.server = server;
		this.options = options;
		this.id = server.sockets.length;
		this.#writable = server.behaviour.writable ?? 65536;
		server.sockets.push(this);
		const behaviour = server.behaviour;
		later(() => {
			if (this.closed) return;
			if (behaviour.refuse !== undefined) {
				this.closed = true;
				this.options.onError?.call(this, behaviour.refuse, behaviour.refuseIn);
			} else if (!behaviour.hang) this.options.onWritable?.call(this, this.#writable);
		});
	}

	read(count?: number): ArrayBuffer | undefined;
	read(buffer: Uint8Array): number | undefined;
	read(what?: number | Uint8Array): ArrayBuffer | number | undefined {
		if (this.closed) throw new Error("read on a closed socket");
		if (!this.#inbox.length) return undefined;
		if (what instanceof Uint8Array) {
			// As the SDK's lwIP TCP: a buffer larger than the bytes available is refused. As
			// the TLS sockets (the lin host's, the board's): what is available fills its start.
			if (what.length > this.available && !("host" in this.options)) throw new Error(`read of ${what.length} bytes, only ${this.available} available`);
			let at = 0;
			while (at < what.length && this.#inbox.length) {
				const first = this.#inbox[0];
				const n = Math.min(what.length - at, first.length);
				what.set(first.subarray(0, n), at);
				at += n;
				if (n === first.length) this.#inbox.shift();
				else this.#inbox[0] = first.subarray(n);
			}
			return at;
		}
		const first = this.#inbox[0];
		const n = what === undefined ? first.length : Math.min(what, first.length);
		const out = first.slice(0, n);
		if (n === first.length) this.#inbox.shift();
		else this.#inbox[0] = first.subarray(n);
		return out.buffer;
	}

	/** Bytes sent and not yet read (what onReadable reports). */
	get available(): number { return this.#inbox.reduce((n, b) => n + b.length, 0); }

	write(bytes: ArrayBuffer | ArrayBufferView): void {
		if (this.closed) throw new Error("write on a closed socket");
		const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
		if (view.length > this.#writable) throw new Error(`write of ${view.length} bytes, only ${this.#writable} writable`);
		this.#writable -= view.length;
		for (const b of view) this.written.push(b);
		later(() => {
			if (this.closed) return;
			this.#writable = this.server.behaviour.writable ?? 65536;
			this.options.onWritable?.call(this, this.#writable);
		});
		this.#split();
	}

	close(): void {
		if (this.closed) return;
		this.closed = true;
		this.server.closes.push({ socket: this.id, at: Date.now() });
	}

	// ---- the server side ----

	/** Sends bytes to the client (one onReadable per call). */
	send(data: string | Uint8Array): void {
		if (this.closed || this.#eofPending) return;
		const bytes = typeof data === "string" ? bytesOf(data) : data.slice();
		this.#inbox.push(bytes);
		later(() => {
			if (!this.closed && this.#inbox.length) this.options.onReadable?.call(this, this.available);
		});
	}

	/** Sends data split into pieces of `size` bytes, each `ms` apart. */
	trickle(data: string | Uint8Array, size: number, ms: number): Promise<void> {
		const bytes = typeof data === "string" ? bytesOf(data) : data;
		return new Promise((resolve) => {
			let at = 0;
			const next = () => {
				if (this.closed || at >= bytes.length) return resolve();
				this.send(bytes.subarray(at, at + size));
				at += size;
				Timer.set(next, ms);
			};
			next();
		});
	}

	/** The server closes the connection (after delivering what was sent). */
	end(message?: string): void {
		if (this.closed || this.#eofPending) return;
		this.#eofPending = true;
		later(() => {
			if (this.closed) return;
			if (this.#inbox.length) this.options.onReadable?.call(this, this.available);
			if (this.closed) return;
			this.closed = true;
			this.closedByPeer = true;
			this.options.onError?.call(this, message);
		}, 1);
	}

	#split(): void {
		for (;;) {
			const text = textOf(Uint8Array.from(this.written.slice(this.#parsed)));
			const headEnd = text.indexOf("\r\n\r\n");
			if (headEnd < 0) return;
			const head = text.slice(0, headEnd);
			const lines = head.split("\r\n");
			const [method, target] = lines[0].split(" ");
			const headers: Record<string, string> = {};
			for (const line of lines.slice(1)) {
				const colon = line.indexOf(":");
				headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
			}
			const length = Number(headers["content-length"] ?? 0);
			const start = this.#parsed + headEnd + 4;
			if (this.written.length < start + length) return;
			const request = { head, body: Uint8Array.from(this.written.slice(start, start + length)), method, target, headers };
			this.requests.push(request);
			this.server.requests.push(request);
			this.#parsed = start + length;
			const index = this.requests.length - 1;
			const respond = this.server.behaviour.respond;
			if (respond) later(() => { if (!this.closed) respond(request, this, index); });
		}
	}
}

export class FakeServer {
	behaviour: ServerBehaviour;
	sockets: FakeSocket[] = [];
	requests: FakeRequest[] = [];
	closes: { socket: number; at: number }[] = [];
	constructor(behaviour: ServerBehaviour = {}) { this.behaviour = behaviour; }

	/** A TCP (and TLS) class whose sockets this server answers. */
	get TCP(): new (options: TcpOptions) => FakeSocket {
		const server = this;
		return class extends FakeSocket {
			constructor(options: TcpOptions) { super(server, options); }
		};
	}
	/** The same sockets, but a read(buffer) fills what it can of a larger buffer (as TLS sockets do; see read()). */
	get TLS(): new (options: TlsOptions) => FakeSocket { return this.TCP as new (options: TlsOptions) => FakeSocket; }

	get openSockets(): number { return this.sockets.filter((s) => !s.closed).length; }
}

/** A resolver that answers from a table (after `delayMs`), or never when delayMs < 0. */
export function fakeResolver(table: Record<string, string>, delayMs = 1, log: string[] = []) {
	return class {
		constructor(_options: object) {}
		resolve(request: ResolveRequest): void {
			log.push(request.host);
			if (delayMs < 0) return;
			later(() => {
				const address = table[request.host];
				if (address) request.onResolved(request.host, address);
				else request.onError(request.host);
			}, delayMs);
		}
	};
}

/**
 * A BufferPool that counts live buffers and bytes, like the psram pool's
 * stats. Given a backing size it has a resize that emulates psram's in-place
 * resize: buffers are really `backing` bytes long, and only their logical size
 * is counted. Without one it has no resize, so the client grows by copying.
 */
export class CountingAllocator implements BufferPool {
	live = new Map<ArrayBufferLike, number>();
	used = 0;
	peak = 0;
	sizes: number[] = [];
	resizes: number[] = [];
	failAbove = Infinity;
	readonly #backing: number;
	readonly resize?: (buffer: ArrayBufferLike, byteLength: number) => void;
	constructor(backing?: number) {
		this.#backing = backing ?? 0;
		if (backing !== undefined) this.resize = this.#resizeInPlace;
	}
	allocate = (byteLength: number): ArrayBuffer => {
		if (byteLength > this.failAbove) throw new Error("pool exhausted");
		const buffer = new ArrayBuffer(Math.max(byteLength, this.#backing));
		this.live.set(buffer, byteLength);
		this.sizes.push(byteLength);
		this.#count(byteLength);
		return buffer;
	};
	free = (buffer: ArrayBufferLike): void => {
		const size = this.live.get(buffer);
		if (size === undefined) throw new Error("free of a buffer not allocated here (or freed twice)");
		this.live.delete(buffer);
		this.used -= size;
	};
	#resizeInPlace = (buffer: ArrayBufferLike, byteLength: number): void => {
		const size = this.live.get(buffer);
		if (size === undefined) throw new Error("resize of a buffer not allocated here");
		if (byteLength > buffer.byteLength || byteLength > this.failAbove) throw new Error("pool exhausted");
		this.live.set(buffer, byteLength);
		this.resizes.push(byteLength);
		this.#count(byteLength - size);
	};
	#count(delta: number): void {
		this.used += delta;
		this.peak = Math.max(this.peak, this.used);
	}
}

/** An HTTP/1.1 response as text. */
export function response(status: number, body = "", headers: Record<string, string> = {}, reason = "OK"): string {
	let head = `HTTP/1.1 ${status} ${reason}\r\n`;
	const all: Record<string, string> = { "Content-Length": String(bytesOf(body).length), ...headers };
	for (const name in all) if (all[name] !== "") head += `${name}: ${all[name]}\r\n`;
	return `${head}\r\n${body}`;
}

/** A chunked body of the given pieces (with an extension and a trailer, as servers may send). */
export function chunked(pieces: string[], trailer = ""): string {
	let out = "";
	for (const piece of pieces) out += `${bytesOf(piece).length.toString(16)}\r\n${piece}\r\n`;
	return `${out}0\r\n${trailer}\r\n`;
}
