// Helpers for the socket tests (test/peer/tcp.ts, tls.ts): open a stream socket
// and await its first onWritable, round-trip text through an echo server, and
// stream a large pseudo-random pattern paced by onWritable, verified byte for
// byte as it comes back without holding it in the (1 MiB) XS heap.

export interface StreamSocket {
	read(arg?: any): any;
	write(value: any): number;
	close(): void;
}
export type StreamClass = new (options: any) => StreamSocket;

// One socket whose callbacks are routed to replaceable handlers.
export class Link {
	socket!: StreamSocket;
	firstWritable = 0;
	error: string | undefined;
	onReadable: (bytes: number) => void = () => {};
	onWritable: (bytes: number) => void = () => {};
	onError: (message: string) => void = () => {};
}

// Resolves once the socket is ready (its first onWritable); rejects with onError's message.
export function connect(Socket: StreamClass, options: object): Promise<Link> {
	return new Promise((resolve, reject) => {
		const link = new Link();
		let opened = false;
		link.socket = new Socket({
			...options,
			onReadable(bytes: number) { link.onReadable(bytes); },
			onWritable(bytes: number) {
				if (opened) return link.onWritable(bytes);
				opened = true;
				link.firstWritable = bytes;
				resolve(link);
			},
			onError(message: string) {
				link.error = message;
				if (opened) return link.onError(message);
				opened = true;
				reject(new Error(message));
			},
		});
	});
}

// Resolves with onError's message, rejecting if the socket becomes ready instead.
export function connectError(Socket: StreamClass, options: object): Promise<string> {
	return connect(Socket, options).then(
		(link) => { link.socket.close(); throw new Error("connected, expected an error"); },
		(error: Error) => error.message,
	);
}

function concat(parts: ArrayBuffer[]): ArrayBuffer {
	const total = parts.reduce((n, p) => n + p.byteLength, 0);
	const out = new Uint8Array(total);
	let at = 0;
	for (const p of parts) {
		out.set(new Uint8Array(p), at);
		at += p.byteLength;
	}
	return out.buffer;
}

// Writes text and resolves with as many bytes echoed back, as text.
export function roundTrip(link: Link, text: string): Promise<string> {
	return new Promise((resolve, reject) => {
		const bytes = ArrayBuffer.fromString(text);
		const parts: ArrayBuffer[] = [];
		let received = 0;
		link.onReadable = () => {
			const part = link.socket.read() as ArrayBuffer | undefined;
			if (!part) return;
			parts.push(part);
			received += part.byteLength;
			if (received >= bytes.byteLength) resolve(String.fromArrayBuffer(concat(parts)));
		};
		link.onError = (message) => reject(new Error(message));
		link.socket.write(bytes);
	});
}

// Byte i of the test stream: a multiplicative hash, so misplaced blocks show.
// Exact in doubles for i < 2^21; not Math.imul, whose XS 13.3 version
// overflows a signed int (UBSan reports it).
export function patternByte(i: number): number {
	return (i * 2654435761) >>> 24;
}

export interface PumpResult { writableCallbacks: number; largestWrite: number }

// Sends total pattern bytes, writing what each onWritable reports as writable,
// and checks every byte echoed back.
export function pumpPattern(link: Link, total: number): Promise<PumpResult> {
	return new Promise((resolve, reject) => {
		const chunk = new Uint8Array(link.firstWritable);
		const incoming = new Uint8Array(8192);
		let sent = 0, received = 0, writableCallbacks = 0, largestWrite = 0, done = false;
		const fail = (message: string) => {
			if (!done) { done = true; reject(new Error(message)); }
		};
		// One write per onWritable: each write must wait for the queue to drain.
		const send = (writable: number) => {
			const n = Math.min(writable, total - sent, chunk.length);
			if (n <= 0) return;
			for (let i = 0; i < n; i++) chunk[i] = patternByte(sent + i);
			link.socket.write(chunk.subarray(0, n));
			sent += n;
			largestWrite = Math.max(largestWrite, n);
		};
		link.onWritable = (bytes) => {
			writableCallbacks++;
			send(bytes);
		};
		link.onReadable = () => {
			for (let n = link.socket.read(incoming); n; n = link.socket.read(incoming)) {
				for (let i = 0; i < n; i++) {
					if (incoming[i] !== patternByte(received + i))
						return fail(`byte ${received + i} differs: ${incoming[i]} instead of ${patternByte(received + i)}`);
				}
				received += n;
			}
			if (received === total && !done) {
				done = true;
				resolve({ writableCallbacks, largestWrite });
			}
		};
		link.onError = (message) => fail(`${message} after ${sent} bytes sent, ${received} received`);
		send(link.firstWritable);
	});
}

// Writes the pieces in one turn (the lin host sends small writes together at
// the end of the turn, larger ones at once after what waits before them) and
// resolves with the bytes echoed back once as many came, checked in order.
export function echoPieces(link: Link, sizes: number[]): Promise<string> {
	return new Promise((resolve, reject) => {
		const total = sizes.reduce((n, size) => n + size, 0);
		let received = 0, problem = "";
		link.onReadable = () => {
			const part = link.socket.read() as ArrayBuffer | undefined;
			if (!part) return;
			const bytes = new Uint8Array(part);
			for (let i = 0; i < bytes.length && !problem; i++)
				if (bytes[i] !== patternByte(received + i)) problem = `byte ${received + i} is ${bytes[i]}, not ${patternByte(received + i)}`;
			received += bytes.length;
			if (problem || received >= total) resolve(problem || `${received} bytes in order`);
		};
		link.onError = (message) => reject(new Error(message));
		let at = 0;
		for (const size of sizes) {
			const piece = new Uint8Array(size);
			for (let i = 0; i < size; i++) piece[i] = patternByte(at + i);
			link.socket.write(piece);
			at += size;
		}
	});
}
