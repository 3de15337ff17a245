// host/sandbox on the lin host: hosts/common/sandbox/sandbox.c (shared with the
// board), installed by hosts/lin/src/sandbox_lin.c. Declarations: typings/shared/platform.d.ts.
import type { SandboxLimit } from "host/sandbox";

const native = __xsclaw.Sandbox;

export const metered: boolean = native.metered;
export function stopped(): SandboxLimit | undefined {
	return native.stopped();
}
export function run<T, R = T>(fn: () => T, steps: number, chunkBytes: number, slots: number, then?: (result: T) => R): R {
	return then ? native.run(fn, steps, chunkBytes, slots, then) : native.run(fn, steps, chunkBytes, slots);
}
