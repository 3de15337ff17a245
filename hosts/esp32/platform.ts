// host/platform on the ESP32-S3 (declaration: typings/shared/platform.d.ts).
// The board's wiring in one place: restart through the SDK's System (the
// `system` module, preloaded by $(MODDABLE)/modules/io/manifest.json), a
// monotonic clock (Time.ticks: milliseconds since boot, unaffected by SNTP
// setting the wall clock), heap figures from instrumentation (the capacities
// from mc/config, which the manifest check keeps equal to `creation`), and the
// DNS servers and UDP socket the resolver needs (DHCP's servers, else budgets').
import type { ConsoleKind, HeapFigures } from "host/platform";
import Instrumentation from "instrumentation";
import config from "mc/config";
import Net from "net";
import Time from "time";
import UDP from "embedded:io/socket/udp";
import { DNS_FALLBACK_SERVERS } from "budgets";

declare const System: typeof import("embedded:io/system").default;

/** Bytes per XS slot on the device (32-bit pointers). */
const SLOT_BYTES = 16;
const sizes = config as unknown as { xsChunkBytes: number; xsSlots: number };

export const name = "esp32";
export const consoleKind: ConsoleKind = "uart";
/** A board has nowhere to exit to: it restarts. */
export function exit(_code: number): void { System.restart(); }
export function reboot(): void { System.restart(); }
export function option(_name: string): string | undefined { return undefined; }
export function now(): number { return Time.ticks; }

let chunkPeak = 0, slotPeak = 0;
function figure(key: Parameters<typeof Instrumentation.map>[0]): number {
	return Instrumentation.get(Instrumentation.map(key)) ?? 0;
}
export function heap(): HeapFigures {
	const chunkUsed = figure("XS Chunk Heap Used"), slotUsed = figure("XS Slot Heap Used");
	chunkPeak = Math.max(chunkPeak, chunkUsed);
	slotPeak = Math.max(slotPeak, slotUsed);
	return {
		chunkUsed, chunkPeak, chunkSize: sizes.xsChunkBytes,
		slotUsed, slotPeak, slotSize: sizes.xsSlots * SLOT_BYTES,
		sockets: figure("Network Sockets"),
	};
}
/** A collection now (platform.c): util/heap keeps room for the next port message with it. */
export function collectGarbage(): void { native("xs_platform_gc")(); }
export function resetPeak(): void {
	chunkPeak = figure("XS Chunk Heap Used");
	slotPeak = figure("XS Slot Heap Used");
}
export function resolverOptions(): { servers: string[]; socket: { io: typeof UDP } } {
	const servers = Net.get("DNS");
	return { servers: servers?.length ? servers : [...DNS_FALLBACK_SERVERS], socket: { io: UDP } };
}
