// host/platform on the ESP32-S3 (declaration: typings/shared/platform.d.ts).
// The board's wiring in one place: restart through the SDK's System (the
// `system` module, preloaded by $(MODDABLE)/modules/io/manifest.json), a
// monotonic clock (Time.ticks: milliseconds since boot, unaffected by SNTP
// setting the wall clock), heap figures read from the machine by a native
// (platform.c: the SDK's instrumentation is there only in an instrumented
// build, and 0 in a release one; the open sockets are still its figure), and
// the DNS servers and UDP socket the resolver needs (DHCP's servers, else
// budgets').
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

function figure(key: Parameters<typeof Instrumentation.map>[0]): number {
	return Instrumentation.get(Instrumentation.map(key)) ?? 0;
}
type MachineHeap = Omit<HeapFigures, "sockets">;
const machineHeap: () => MachineHeap = native("xs_platform_heap");
export function heap(): HeapFigures {
	const figures = machineHeap();
	return {
		...figures,
		chunkSize: figures.chunkSize || sizes.xsChunkBytes,
		slotSize: figures.slotSize || sizes.xsSlots * SLOT_BYTES,
		sockets: figure("Network Sockets"),
	};
}
/** A collection now (platform.c): util/heap keeps room for the next port message with it. */
export function collectGarbage(): void { native("xs_platform_gc")(); }
export function resetPeak(): void { native("xs_platform_reset_peak")(); }
export function resolverOptions(): { servers: string[]; socket: { io: typeof UDP } } {
	const servers = Net.get("DNS");
	return { servers: servers?.length ? servers : [...DNS_FALLBACK_SERVERS], socket: { io: UDP } };
}
