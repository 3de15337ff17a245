// "psram": our native buffers module, on both targets with one API: host
// buffers from the "psram" and "internal" pools. The lin host emulates the pools
// (hosts/lin/src/buffers.c); the device calls heap_caps_malloc with the matching
// caps (hosts/esp32/psram.c). test/unit/psram.test.ts checks this declaration
// against what the lin C returns; test/e2e/psram-device.test.mjs runs the
// device C against a stand-in of heap_caps.

declare module "psram" {
	export type Pool = "psram" | "internal";
	export interface PoolStats {
		used: number;    // bytes in live buffers
		peak: number;    // highest `used` since start or resetPeak()
		size: number;    // pool capacity (lin: --psram-bytes / --internal-bytes, else budgets.ts)
		count: number;   // live buffers
		/** "psram" pool: buffers asked of it that internal RAM had to hold (device:
		 * PSRAM was full; counted in "internal"'s used). Always 0 on lin, where
		 * a full pool throws. */
		fallbacks: number;
	}
	/** A zero-filled host buffer of byteLength bytes from the pool; view it with
	 * Uint8Array or DataView. Throws RangeError("psram: <pool> pool exhausted:
	 * asked N bytes, M free") when it does not fit. The garbage collector frees
	 * an unreferenced buffer; free() does it at once. */
	export function allocate(byteLength: number, pool: Pool): HostBuffer;
	/** Releases the buffer now; it becomes detached (length 0). Freeing twice is harmless. */
	export function free(buffer: HostBuffer): void;
	/** Changes the length in place, keeping the content (new bytes are zero);
	 * counted against the buffer's pool. Existing views re-check their bounds. */
	export function resize(buffer: HostBuffer, byteLength: number): void;
	export function stats(): Record<Pool, PoolStats>;
	/** Sets each pool's peak to its current use. */
	export function resetPeak(): void;
}
