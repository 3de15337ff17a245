// Declarations for the lin host's "host/pins", which @moddable/typings lacks
// (test/unit/digital.test.ts checks them against what the C returns), and what
// the lin host's serial and digital do differently from the device.
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
