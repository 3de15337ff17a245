// host/sandbox on the device: the Moddable SDK builds XS for the ESP32 without
// mxMetering (tools/mcconfig/make.esp32.mk defines no such flag), so nothing can
// bound a script's steps or memory there yet, and a loop would trip the task
// watchdog and reset the board. metered is false, and the script tool is not
// offered on such a build (caps/script). Adding -DmxMetering=1 to the XS build
// and a native run() like hosts/lin/src/sandbox.c is the way to offer it.
export const metered = false;
export function run<T>(_fn: () => T, _steps: number, _chunkBytes: number, _slots: number): T {
	throw new Error("scripts cannot be bounded on this build (XS without metering), so they do not run");
}
