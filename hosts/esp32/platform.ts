// host/platform on the ESP32-S3. NOT YET COMPLETE: the device issue fills in
// heap figures from instrumentation and a native monotonic clock; this keeps
// the firmware's imports resolvable on the device build meanwhile.
import type { ConsoleKind, HeapFigures } from "host/platform";
import Instrumentation from "instrumentation";

export const name = "esp32";
export const consoleKind: ConsoleKind = "uart";
export function exit(_code: number): void { reboot(); }
export function reboot(): void { (globalThis as any).device?.restart?.(); }
export function option(_name: string): string | undefined { return undefined; }
export function now(): number { return Date.now(); }
export function heap(): HeapFigures {
	const get = (name: string) => Instrumentation.get(Instrumentation.map(name as any)) ?? 0;
	const chunkUsed = get("XS Chunk Heap Used"), slotUsed = get("XS Slot Heap Used");
	return { chunkUsed, chunkPeak: chunkUsed, chunkSize: 0, slotUsed, slotPeak: slotUsed, slotSize: 0, sockets: get("Network Sockets") };
}
export function collectGarbage(): void {}
export function resetPeak(): void {}
