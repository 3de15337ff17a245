// psram on the ESP32-S3 (declaration: typings/shared/psram.d.ts): host buffers
// from PSRAM or internal RAM through heap_caps (hosts/esp32/psram.c over
// psram_core.c). A "psram" buffer PSRAM cannot hold comes from internal RAM and
// is counted in stats().psram.fallbacks.
import type { Pool, PoolStats } from "psram";

class PsramBuffer extends Native("xs_psram_buffer_destructor") {
	constructor(byteLength: number, pool: Pool) {
		super();
		native("xs_psram_buffer").call(this, byteLength, pool);
	}
	get byteLength(): number { return native("xs_psram_buffer_get_byteLength").call(this); }
}

export function allocate(byteLength: number, pool: Pool): HostBuffer { return new PsramBuffer(byteLength, pool) as HostBuffer; }
export function free(buffer: HostBuffer): void { native("xs_psram_free")(buffer); }
export function resize(buffer: HostBuffer, byteLength: number): void { native("xs_psram_resize")(buffer, byteLength); }
export function stats(): Record<Pool, PoolStats> { return native("xs_psram_stats")(); }
export function resetPeak(): void { native("xs_psram_resetPeak")(); }
