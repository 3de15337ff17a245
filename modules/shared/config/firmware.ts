// config/firmware: the firmware's name and version, as manifest.json's `config`
// section states them (mc/config on the device). The lin host has no mc/config,
// so they are repeated here; test/e2e/firmware.test.mjs fails when the two differ.
export const FIRMWARE_NAME = "xsclaw";
export const FIRMWARE_VERSION = "0.1.0";
