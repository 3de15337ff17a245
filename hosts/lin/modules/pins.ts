// host/pins on the lin host: drives and observes the simulated pin bank of
// hosts/lin/src/digital.c (for tests and the console). Declarations: typings/lin/io.d.ts.
import type { Level } from "host/pins";

const native = __xsclaw.Pins;

export const count: number = native.count;
export function drive(pin: number, value: Level): void { native.drive(pin, value); }
export function release(pin: number): void { native.release(pin); }
export function level(pin: number): Level { return native.level(pin); }
export function mode(pin: number): number | undefined { return native.mode(pin); }
