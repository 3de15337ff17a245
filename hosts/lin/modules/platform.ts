// host/platform on the lin host: thin over the native system functions.
import type { ConsoleKind, HeapFigures } from "host/platform";

const native = __xsclaw;

export const name = "lin";
export const consoleKind: ConsoleKind = native.stdinIsTerminal() ? "tty" : "pipe";
export function exit(code: number): void { native.exit(code); }
export function reboot(): void { native.reboot(); }
export function option(name: string): string | undefined { return native.option(name); }
export function now(): number { return native.now(); }
// Math.random: XS on lin has no cryptographic generator exposed; used for WebSocket masks, where RFC 6455 asks only for unpredictability to a page script.
export function randomBytes(bytes: Uint8Array): void {
	for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256) & 0xFF;
}
export function heap(): HeapFigures { return native.heap(); }
export function collectGarbage(): void { native.gc(); }
export function resetPeak(): void { native.resetPeak(); }
/** The lin host's resolver asks the system (getaddrinfo): no servers or socket to give. */
export function resolverOptions(): { servers?: string[]; socket?: unknown } { return {}; }
