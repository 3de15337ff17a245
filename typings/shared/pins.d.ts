// host/pins: the outside world of the pins. On the lin host, the simulated pin
// bank's (hosts/lin/src/digital.c; test/unit/digital.test.ts checks these
// declarations against what the C returns): tests and the `pins` console
// command drive its inputs. On the board the world drives the pins itself:
// count is 0 and the functions throw (hosts/esp32/pins.ts).
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
