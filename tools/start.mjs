#!/usr/bin/env node
// npm start: runs the firmware on the lin host, on this terminal.
//
//   npm start [-- --data DIR] [-- --name value ...]
//
// Builds first when the host binary or the module map is missing or a source is
// newer than the last build (quiet when nothing needs building; a build running
// in this tree is waited for, tools/build.mjs), then runs
//   build/lin/release/xsclaw --modules build/lin/app.map --data ./data [--name value ...]
// with this terminal as its console, and exits with the firmware's exit code.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { APP_MAP, BUILD_STAMP, ROOT, build, hostBinary } from "./build.mjs";

// What the build is made from: a source newer than the last build's stamp (or a
// missing output) makes it stale. Only files whose bytes changed are rewritten by
// a build, so the stamp, touched by every build, is what is compared.
const SOURCES = ["main.ts", "manifest.json", "tsconfig.json", "modules", "typings", "hosts/lin/modules", "tools/build.mjs", "hosts/lin/src", "hosts/common", "hosts/lin/Makefile"];
const OUTPUTS = [APP_MAP, hostBinary("release"), BUILD_STAMP];

function newest(sources) {
	let time = 0;
	const visit = (path) => {
		const stat = statSync(path);
		if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
		else time = Math.max(time, stat.mtimeMs);
	};
	for (const source of sources) if (existsSync(join(ROOT, source))) visit(join(ROOT, source));
	return time;
}

function isStale() {
	return OUTPUTS.some((output) => !existsSync(output)) || newest(SOURCES) > statSync(BUILD_STAMP).mtimeMs;
}

function fail(message, code) {
	process.stderr.write(`npm start: ${message}\n`);
	process.exit(code);
}

// The user's --name value pairs; --data is resolved from where npm was started.
function parseArguments(argv) {
	const options = new Map([["data", "data"]]);
	for (let i = 0; i < argv.length; i += 2) {
		const name = argv[i], value = argv[i + 1];
		if (!name.startsWith("--") || name.length < 3 || value === undefined)
			fail(`options are --name value pairs, e.g. npm start -- --data ./mydata (got "${argv.slice(i).join(" ")}")`, 64);
		if (name === "--modules") fail("--modules is chosen by npm start; run build/lin/release/xsclaw directly for another map", 64);
		options.set(name.slice(2), value);
	}
	const base = process.env.INIT_CWD ?? process.cwd();
	options.set("data", resolve(argv.includes("--data") ? base : ROOT, options.get("data")));
	return options;
}

const options = parseArguments(process.argv.slice(2));
const binary = hostBinary("release");
if (isStale()) {
	try {
		await build();
	} catch (error) {
		fail(/^build error: .* missing: install/.test(error.message) ? error.message : `${error.message}\nFix the error above, then run npm start again.`, 1);
	}
}
// The host checks every option at start (one line, exit 64): an unknown name,
// a --data that cannot be a directory (it makes a missing one), an unreadable --ca.

const args = ["--modules", APP_MAP];
for (const [name, value] of options) args.push(`--${name}`, value);
const child = spawn(binary, args, { stdio: "inherit" });
// Ctrl-C reaches the firmware directly (same process group): npm start only waits
// for it to exit. A SIGTERM sent to npm start alone is passed on.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("error", (error) => fail(`cannot run ${binary}: ${error.message}`, 1));
child.on("exit", (code, signal) => {
	if (signal) {
		process.removeAllListeners(signal);
		process.kill(process.pid, signal);
	}
	else process.exit(code ?? 1);
});
