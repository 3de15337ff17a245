// util/buffers: where big buffers come from. The HTTP client (response bodies),
// the LLM runtime (image files) and the LLM backends (request bodies with an
// image) take one BufferPool; main.ts builds it once over the board's "psram"
// module and gives the same object to all of them. Without one they use
// heapBuffers, plain ArrayBuffers on the JS heap.
import type * as Psram from "psram";

/**
 * A source of big buffers. A buffer may be a host buffer, which is no
 * ArrayBuffer instance: view it with Uint8Array or DataView.
 */
export interface BufferPool {
	/** A zero-filled buffer of byteLength bytes; throws when the pool cannot give it. */
	allocate(byteLength: number): ArrayBufferLike;
	/** Gives a buffer from this pool's allocate back at once (not at the next GC). */
	free(buffer: ArrayBufferLike): void;
	/** Changes a buffer from allocate to byteLength bytes in place, keeping its
	 * content; throws when it cannot. Without it, growing means allocate and copy. */
	resize?(buffer: ArrayBufferLike, byteLength: number): void;
}

/** Plain ArrayBuffers; the garbage collector frees them. The default when no pool is given. */
export const heapBuffers: BufferPool = Object.freeze({
	allocate: (byteLength: number) => new ArrayBuffer(byteLength),
	free: () => {},
});

/**
 * The "psram" pool of the board's psram module, with its in-place resize.
 * psram's free and resize take only its own host buffers (a TypeError
 * otherwise), as BufferPool's contract says; TypeScript checks method
 * parameters bivariantly, so they fit BufferPool without a cast.
 */
export function psramBuffers(psram: Pick<typeof Psram, "allocate" | "free" | "resize">): BufferPool {
	return Object.freeze({
		allocate: (byteLength: number) => psram.allocate(byteLength, "psram"),
		free: psram.free,
		resize: psram.resize,
	});
}

/**
 * Bytes gathered into one buffer of a pool (a response body, a WebSocket
 * message): it starts at startBytes and doubles, in place when the pool can
 * resize, up to maxBytes. noMemory(size, error) makes the error thrown when the
 * pool cannot give a buffer of size bytes. release() gives the buffer back.
 *
 * Invariant: bytes[0, length) holds the data; the capacity never exceeds maxBytes.
 */
export class GrowableBuffer {
	#buffer: ArrayBufferLike | undefined;
	#bytes: Uint8Array | undefined;
	#length = 0;
	readonly max: number;
	readonly #start: number;
	readonly #pool: BufferPool;
	readonly #noMemory: (size: number, error: unknown) => Error;

	constructor(pool: BufferPool, startBytes: number, maxBytes: number, noMemory: (size: number, error: unknown) => Error) {
		this.#pool = pool;
		this.#start = startBytes;
		this.max = maxBytes;
		this.#noMemory = noMemory;
	}

	get length(): number { return this.#length; }

	/** The data, as a view valid until the next append, reserve or release. */
	view(): Uint8Array { return this.#bytes ? this.#bytes.subarray(0, this.#length) : new Uint8Array(0); }

	/** Makes room for a total of byteLength bytes, doubling; false when over max. */
	reserve(byteLength: number): boolean {
		if (byteLength > this.max) return false;
		const capacity = this.#bytes?.length ?? 0;
		if (byteLength <= capacity) return true;
		let size = Math.max(capacity * 2, this.#start);
		while (size < byteLength) size *= 2;
		this.#resize(Math.min(size, this.max));
		return true;
	}

	/** Makes room for exactly byteLength bytes (a size announced ahead); false when over max. */
	reserveExactly(byteLength: number): boolean {
		if (byteLength > this.max) return false;
		if (byteLength > (this.#bytes?.length ?? 0)) this.#resize(byteLength);
		return true;
	}

	/** Appends data; false (and nothing appended) when it would pass max. */
	append(data: Uint8Array): boolean {
		if (!this.reserve(this.#length + data.length)) return false;
		(this.#bytes as Uint8Array).set(data, this.#length);
		this.#length += data.length;
		return true;
	}

	/** Appends what fits under max; false when something was cut. */
	appendTruncating(data: Uint8Array): boolean {
		const room = this.max - this.#length;
		if (data.length <= room) return this.append(data);
		this.append(data.subarray(0, room));
		return false;
	}

	/** Forgets the data and keeps the buffer. */
	clear(): void { this.#length = 0; }

	/** Forgets the data and gives the buffer back to its pool. */
	release(): void {
		const buffer = this.#buffer;
		this.#buffer = undefined;
		this.#bytes = undefined;
		this.#length = 0;
		if (buffer) this.#pool.free(buffer);
	}

	#resize(size: number): void {
		let buffer: ArrayBufferLike;
		try {
			if (this.#buffer && this.#pool.resize) {
				this.#pool.resize(this.#buffer, size);
				this.#bytes = new Uint8Array(this.#buffer, 0, size);
				return;
			}
			buffer = this.#pool.allocate(size);
		} catch (error) {
			throw this.#noMemory(size, error);
		}
		const bytes = new Uint8Array(buffer, 0, size);
		if (this.#bytes) bytes.set(this.#bytes.subarray(0, this.#length));
		const old = this.#buffer;
		this.#buffer = buffer;
		this.#bytes = bytes;
		if (old) this.#pool.free(old);
	}
}
