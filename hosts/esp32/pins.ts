// host/pins on the device (declaration: typings/shared/pins.d.ts): the board's
// pins are driven by what is wired to them, not by a command, so there is no
// simulated world here: count is 0 (the `pins` console command is not offered)
// and every function says so.
import type { Level } from "host/pins";

const NONE = "the board's pins are driven by what is wired to them; only the lin host simulates them";
export const count = 0;
export function drive(_pin: number, _value: Level): void { throw new Error(NONE); }
export function release(_pin: number): void { throw new Error(NONE); }
export function level(_pin: number): Level { throw new Error(NONE); }
export function mode(_pin: number): number | undefined { throw new Error(NONE); }
