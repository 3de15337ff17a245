// test/channel/all: channels/all for the test channel's firmware
// (test/channel/manifest.json maps channels/all here): the firmware's lines,
// and the test channel's one line. channel.test.mjs checks that this file is
// modules/main/channels/all.ts with one line added.
export { serialConsole } from "console/channel";
export { telegram } from "channels/telegram/setup";
export { qq } from "channels/qq/setup";
export { web } from "channels/web/setup";
export { testChannel } from "test/channel/setup";
