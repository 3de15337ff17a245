// psram on the lin host: host buffers from the emulated "psram" and "internal"
// pools of hosts/lin/src/buffers.c. Declarations: typings/lin-io.d.ts.
import type { Pool, PoolStats } from "psram";

const native = __xsclaw.Psram;

export function allocate(byteLength: number, pool: Pool): HostBuffer { return new native.Buffer(byteLength, pool); }
export function free(buffer: HostBuffer): void { native.free(buffer); }
export function resize(buffer: HostBuffer, byteLength: number): void { native.resize(buffer, byteLength); }
export function stats(): Record<Pool, PoolStats> { return native.stats(); }
export function resetPeak(): void { native.resetPeak(); }
