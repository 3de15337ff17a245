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
