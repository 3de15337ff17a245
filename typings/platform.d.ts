// host/platform: what the firmware asks of the board it runs on. The lin host
// implements it in hosts/lin/modules/platform.ts, the device in hosts/esp32/.
declare module "host/platform" {
	export interface HeapFigures {
		chunkUsed: number;   // XS chunk heap bytes in use
		chunkPeak: number;
		chunkSize: number;   // chunk heap capacity
		slotUsed: number;    // XS slot heap bytes in use
		slotPeak: number;
		slotSize: number;
		sockets: number;     // open sockets
	}
	/** Ends the program with an exit code (lin) or restarts the board (device). */
	export function exit(code: number): void;
	/** A clean restart: the JS machine is torn down and created again. */
	export function reboot(): void;
	/** A --name value option from the command line (lin), undefined on the device. */
	export function option(name: string): string | undefined;
	/** Monotonic milliseconds since an arbitrary origin. */
	export function now(): number;
	export function heap(): HeapFigures;
	export function collectGarbage(): void;
	/** Resets the peak heap figures to the current use. */
	export function resetPeak(): void;
	export const name: string;
}
