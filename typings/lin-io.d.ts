// Declarations for the IO specifiers @moddable/typings lacks: our native "psram"
// module (hosts/lin/src/buffers.c on lin, heap_caps_malloc on the device) and the
// lin host's "host/pins". test/unit/psram.test.ts and digital.test.ts check them
// against what the C returns.
//
// "embedded:io/serial" and "embedded:io/digital" keep @moddable/typings'
// declarations. What the lin host adds or does differently:
// - Serial is the console: stdin/stdout, port 0 only, one open at a time.
//   baud, port, receive and transmit are checked but ignored, and all are optional.
//   Default format is "number", as on the device.
//   onError(error) is called once, with error.message "end of input", when stdin
//   has ended and every byte has been read: a console exits 0 on it. (The SDK
//   typings have no onError option: pass it in an object typed loosely.)
//   Unread input survives reboot(): the next Serial's onReadable fires on the
//   first loop turn with the rest. onWritable always reports 4096 bytes.
//   flush() discards unread input. When stdin is a terminal (host/platform's
//   consoleKind "tty"), the open Serial holds it in character mode: keys arrive
//   one by one, unechoed (Ctrl-D is byte 4; Ctrl-C still raises SIGINT). The
//   terminal's mode is put back when the Serial closes or the program ends.
// - Digital simulates pins 0..48: mode constants Input 0, InputPullUp 1,
//   InputPullDown 2, InputPullUpDown 3, Output 8, OutputOpenDrain 9; edges
//   Rising 1, Falling 2 (the SDK's values). onReadable is called with no
//   argument. write() accepts only 0 or 1, and only in an output mode.

declare module "psram" {
	export type Pool = "psram" | "internal";
	export interface PoolStats {
		used: number;    // bytes in live buffers
		peak: number;    // highest `used` since start or resetPeak()
		size: number;    // pool capacity (lin: --psram-bytes / --internal-bytes, else budgets.ts)
		count: number;   // live buffers
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

// host/pins (lin only): the outside world of the simulated pin bank.
declare module "host/pins" {
	export type Level = 0 | 1;
	/** Pins 0..count-1 exist. */
	export const count: number;
	/** Drives an input from outside; an owner with onReadable is called on the
	 * next loop turn when the level changes along its edge. */
	export function drive(pin: number, value: Level): void;
	/** Stops driving: the pin falls back to its pull resistor (pull-up 1, else 0). */
	export function release(pin: number): void;
	/** The pin's level now: what an Output wrote, or an input's driven/pulled level. */
	export function level(pin: number): Level;
	/** The owner's Digital mode constant, or undefined when no Digital holds the pin. */
	export function mode(pin: number): number | undefined;
}
