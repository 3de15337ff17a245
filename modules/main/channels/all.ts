// channels/all: every chat channel of the firmware, one line each (a channel is
// a folder under channels/ whose setup exports a ChannelDefinition: channels/types).
// The console is a channel too (console/channel). main.ts opens them in the order
// of the names exported here (a module namespace lists its names sorted).
export { serialConsole } from "console/channel";
export { telegram } from "channels/telegram/setup";
export { qq } from "channels/qq/setup";
export { web } from "channels/web/setup";
