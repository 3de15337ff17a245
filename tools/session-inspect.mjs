#!/usr/bin/env node
// Session inspector for people debugging a board's storage copied to a
// directory (the littlefs "storage" partition's contents under DIR/files/):
//
//   node tools/session-inspect.mjs DIR [--session ID] [--records N]
//
// Prints each session's records and what the firmware would repair when it
// opens it (torn tail, damaged records, index out of date, leftovers of a cut
// compaction). It does not parse the format itself: it runs the firmware's own
// reader (modules/agent/store/inspect.ts) on the lin host, read-only. Needs a build
// (node tools/build.mjs). Exit code: 0 clean, 1 findings, 2 nothing to inspect.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { APP_MAP, hostBinary } from "./build.mjs";

const [dir, ...rest] = process.argv.slice(2);
if (!dir || dir.startsWith("--")) {
	console.error("usage: node tools/session-inspect.mjs DIR [--session ID] [--records N]\n  DIR holds files/sessions/ (a copy of the board's storage)");
	process.exit(2);
}
if (!existsSync(hostBinary("release")) || !existsSync(APP_MAP)) {
	console.error("session-inspect: no lin build yet: run node tools/build.mjs first");
	process.exit(2);
}
const result = spawnSync(hostBinary("release"), ["--modules", APP_MAP, "--main", "store/inspect", "--data", dir, ...rest], { encoding: "utf8" });
process.stdout.write(result.stderr ?? "");
process.exit(result.status ?? 2);
