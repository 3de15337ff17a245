// host/sandbox on the lin host: a function call bounded in steps and memory
// (hosts/lin/src/sandbox.c, XS built with mxMetering). Declarations: typings/platform.d.ts.
const native = __xsclaw.Sandbox;

export const metered: boolean = native.metered;
export function run<T>(fn: () => T, steps: number, chunkBytes: number, slots: number): T {
	return native.run(fn, steps, chunkBytes, slots);
}
