// host/sandbox on the device: hosts/common/sandbox/sandbox.c, the lin host's
// own C, compiled into the board's image (manifest.json's esp32 "*"), with the
// SDK's XS built with mxMetering and mxLockdown (manifest.json's
// build.C_FLAGS_SUBPLATFORM, hosts/common/sandbox/xsclaw_metering.h;
// sandbox.c does not compile without them, and npm run check:device compiles
// it with the real headers). So scripts run bounded here as on lin, and
// caps/script offers run_script. install() defines XS's lockdown() and
// harden() as globals of this machine (agent/worker locks its machine down
// at boot, before a script can run). Declarations: typings/shared/platform.d.ts.
type Run = <T, R = T>(fn: () => T, steps: number, chunkBytes: number, slots: number, then?: (result: T) => R) => R;

native("xs_sandbox_install")();
export const metered: boolean = native("xs_sandbox_metered")();
export const run: Run = native("xs_sandbox_run");
export const stopped: () => "steps" | "memory" | "stack" | "keys" | undefined = native("xs_sandbox_stopped");
