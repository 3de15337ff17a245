// host/platform on the lin host: thin over the native system functions.
import type { ConsoleKind, HeapFigures } from "host/platform";

const native = __xsclaw;

export const name = "lin";
export const consoleKind: ConsoleKind = native.stdinIsTerminal() ? "tty" : "pipe";
export function exit(code: number): void { native.exit(code); }
export function reboot(): void { native.reboot(); }
export function option(name: string): string | undefined { return native.option(name); }
export function now(): number { return native.now(); }
export function heap(): HeapFigures { return native.heap(); }
export function collectGarbage(): void { native.gc(); }
export function resetPeak(): void { native.resetPeak(); }
/** The lin host's resolver asks the system (getaddrinfo): no servers or socket to give. */
export function resolverOptions(): { servers?: string[]; socket?: unknown } { return {}; }
