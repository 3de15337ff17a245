#!/usr/bin/env node
// Builds the lin host from the manifest, as mcconfig would for a device:
// tsc -> module maps from manifest.json (build/lin/app.map, and build/lin/test.map
// from test/manifest.json) -> make (hosts/lin).
//
//   node tools/build.mjs [--asan] [--tsan] [--mbedtls4] [--m32] [--board-tls] [--no-make] [--lax]
//
// --mbedtls4 also builds build/lin/mbedtls4/xsclaw against Mbed TLS 4.0 (the
// board's version, from ../shared/mbedtls; tools/mbedtls4.mjs), or says why not.
//
// --m32 also builds build/lin/m32/xsclaw, a 32-bit host (the board's word size,
// for the heap figures: npm run bench's *.board32), against a 32-bit Mbed TLS
// 4.0 built like --mbedtls4's; needs gcc-multilib, and qemu-user where the
// kernel runs no 32-bit programs (hostCommand).
//
// --board-tls also builds build/lin/boardtls/xsclaw and (when the ASan host is
// built) build/lin/boardtls-asan/xsclaw: the board's TLS glue
// (hosts/esp32/tls/tls_esp32.c) over hosts/lin/boardtls' shims, against Mbed TLS
// 4.0, for tls-openssl.test.mjs; npm test builds them in CI and where they exist.
//
// --tsan also builds build/lin/tsan/xsclaw (ThreadSanitizer): test/e2e/worker.test.mjs
// runs the worker tests on it when it exists. Not part of npm test (a third XS build).
//
// What --mbedtls4 and --m32 need beyond the registries (the Mbed TLS 4.0 tarball)
// or beyond the release host's packages (cmake, gcc-multilib, qemu-user) may be
// missing on a user's machine: that host is then left out with one NOTICE line
// saying why and how to add it, and build() returns the list (notBuilt), so npm
// test and npm run bench run the rest. With XSCLAW_REQUIRE_ALL=1 (.ci/run sets
// it) a host left out is an error instead.
//
// The module maps list every specifier the lin platform provides; a compiled
// module importing a specifier that resolves nowhere fails the build, naming it.
//
// Builds beside each other and beside running tests (two `npm test` in one tree):
// one build at a time per tree (a lock, build/.lock, that others wait on); tsc
// emits into a folder of its own and only files whose bytes changed are renamed
// into build/js, so a host reading a module never sees one half written and a
// build that changes nothing writes nothing; the maps, mc/config and budgets.h
// likewise; make links each host to a temporary name and renames it into place,
// so a running host keeps its own file and a starting one gets a whole one.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, basename } from "node:path";
import { availableParallelism } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { M32_CFLAGS, mbedtls4Prefix } from "./mbedtls4.mjs";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const BUILD = join(ROOT, "build");
const JS_OUT = join(BUILD, "js");
const PLATFORM = "lin";

/** XSCLAW_REQUIRE_ALL=1 (CI): every host and check must run; nothing is left out with a notice. */
export const REQUIRE_ALL = process.env.XSCLAW_REQUIRE_ALL === "1";

/** How to give the build the Mbed TLS 4.0 tarball (docs/development.md, "Mbed TLS 4.0"). */
export const MBEDTLS4_HOW = "put mbedtls-4.0.0.tar.bz2 (attached to Mbed TLS's v4.0.0 release on GitHub: docs/development.md, \"Mbed TLS 4.0\") in ../shared/mbedtls/, or set XSCLAW_MBEDTLS_TARBALL to it";

/** What each optional host gives the tests and the bench (said when it is left out). */
export const OPTIONAL_HOSTS = Object.freeze({
	mbedtls4: "the Mbed TLS 4.0 host (the TLS tests on the board's TLS version, its tls.* figures)",
	m32: "the 32-bit host (m32.test.mjs, the *.board32 heap figures)",
	boardtls: "the hosts with the board's TLS glue (tls-openssl.test.mjs on hosts/esp32/tls/tls_esp32.c)",
});

/** The hosts --board-tls builds: the board's TLS glue on the release host's objects, and on the ASan host's (when that is built). */
export const BOARD_TLS_HOSTS = Object.freeze(["boardtls", "boardtls-asan"]);

export function hostBinary(variant = "release") {
	return join(BUILD, "lin", variant, "xsclaw");
}

let m32RunnerFound;
/**
 * How the m32 host (a 32-bit program) is run here: [] where the kernel runs it
 * (it answers a call without arguments with its usage), ["qemu-i386"] where the
 * kernel has no ia32 emulation (this project's machines); undefined when
 * neither works. Decided once per process, on the built host.
 */
export function m32Runner() {
	if (m32RunnerFound !== undefined) return m32RunnerFound ?? undefined;
	const answers = (command, args) => /--modules is required/.test(spawnSync(command, args, { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] }).stderr ?? "");
	const binary = hostBinary("m32");
	// Tried through bash's exec: where the kernel refuses the program (ENOEXEC),
	// execvp (node's spawn) would hand it to /bin/sh as a script; bash says
	// "cannot execute binary file" instead.
	m32RunnerFound = answers("bash", ["-c", 'exec "$0"', binary]) ? [] : answers("qemu-i386", [binary]) ? ["qemu-i386"] : null;
	return m32RunnerFound ?? undefined;
}

/**
 * The command that runs a host variant: {command, args} with args to put
 * before the host's own. Only the m32 host may need a runner (m32Runner).
 */
export function hostCommand(variant = "release") {
	const binary = hostBinary(variant);
	if (variant !== "m32") return { command: binary, args: [] };
	const runner = m32Runner();
	if (!runner) throw new Error(`the m32 host at ${binary} cannot be run here: the kernel runs no 32-bit programs and qemu-i386 is missing (apt-get install -y qemu-user), or the host is not built (node tools/build.mjs --m32)`);
	return runner.length ? { command: runner[0], args: [...runner.slice(1), binary] } : { command: binary, args: [] };
}
export const APP_MAP = join(BUILD, "lin", "app.map");
export const BUDGETS_HEADER = join(BUILD, "lin", "budgets.h");
/** The same header for the board's C: manifest.json names its folder for esp32 (mcconfig puts it on the include path). */
export const DEVICE_BUDGETS_HEADER = join(BUILD, "esp32", "budgets.h");
/** Touched at the end of every successful build: npm start rebuilds when a source is newer. */
export const BUILD_STAMP = join(BUILD, "lin", "build.stamp");
const LOCK = join(BUILD, ".lock");
/** How long a build waits for another build of the same tree before giving up. */
const LOCK_WAIT_MS = 30 * 60_000;
/** A lock folder this old with no owner written into it was left by a build killed at its start. */
const LOCK_UNOWNED_MS = 10_000;
export const TEST_MAP = join(BUILD, "lin", "test.map");
/** test.map with the device's creation sizes (manifest.json's esp32/* section): the unit tests run once with them. */
export const TEST_DEVICE_MAP = join(BUILD, "lin", "test-device.map");
export const DEVICE_PLATFORM_KEY = "esp32/*";
/** The firmware with the test channel (test/channel: channels/all plus its one line), for channel.test.mjs. */
export const CHANNEL_TEST_MAP = join(BUILD, "lin", "channel-test.map");

// Moddable's platform matching: exact, "prefix/*", "*/suffix", then "...".
function platformSections(platforms = {}) {
	const exact = [], wild = [];
	for (const [key, section] of Object.entries(platforms)) {
		if (key === PLATFORM) exact.push(section);
		else if (key.endsWith("/*") && PLATFORM.startsWith(key.slice(0, -1))) wild.push(section);
		else if (key.startsWith("*/") && PLATFORM.endsWith(key.slice(1))) wild.push(section);
	}
	const found = [...wild, ...exact];
	if (!found.length && platforms["..."]) found.push(platforms["..."]);
	return found;
}

// Reads a manifest and its includes (SDK includes, $(MODDABLE)/..., belong to the
// device build and are skipped here). Returns {modules: [[specifier, sourceNoExt]],
// creation, config}; config is what mcconfig puts into mc/config on the device.
export function readManifest(path, seen = new Set()) {
	const file = resolve(path);
	if (seen.has(file)) return { modules: [], creation: {}, config: {} };
	seen.add(file);
	const manifest = JSON.parse(readFileSync(file, "utf8"));
	const base = dirname(file);
	const result = { modules: [], creation: {}, config: {} };
	const merge = (section) => {
		if (section.error) throw new Error(`build error: ${section.error}`);
		for (const include of [].concat(section.include ?? [])) {
			if (include.startsWith("$(")) continue;
			const sub = readManifest(join(base, include), seen);
			result.modules.push(...sub.modules);
			Object.assign(result.creation, sub.creation);
			Object.assign(result.config, sub.config);
		}
		Object.assign(result.creation, section.creation ?? {});
		Object.assign(result.config, section.config ?? {});
		for (const [key, value] of Object.entries(section.modules ?? {})) {
			for (const source of [].concat(value)) {
				if (source.startsWith("$(")) throw new Error(`build error: ${key} -> ${source} is SDK code, not available on lin`);
				result.modules.push(...expandModule(base, key, source));
			}
		}
	};
	merge(manifest);
	for (const section of platformSections(manifest.platforms)) merge(section);
	return result;
}

function expandModule(base, key, source) {
	const path = resolve(base, source);
	if (!path.endsWith("*")) {
		const specifier = key === "*" ? basename(path) : key;
		return [[specifier, path]];
	}
	const folder = dirname(path);
	const prefix = basename(path).slice(0, -1);
	if (!existsSync(folder)) return [];
	return readdirSync(folder)
		.filter((name) => name.startsWith(prefix) && /\.(ts|js)$/.test(name) && !name.endsWith(".d.ts"))
		.map((name) => {
			const stem = name.replace(/\.(ts|js)$/, "");
			const specifier = key === "*" ? stem : key.replace("*", stem.slice(prefix.length));
			return [specifier, join(folder, stem)];
		});
}

function sourceFile(pathNoExt) {
	for (const ext of [".ts", ".js"]) if (existsSync(pathNoExt + ext)) return pathNoExt + ext;
	throw new Error(`build error: module source ${relative(ROOT, pathNoExt)}.ts not found`);
}

function compiledFile(pathNoExt) {
	return join(JS_OUT, relative(ROOT, pathNoExt) + ".js");
}

function creationLine(c) {
	const v = [
		c.chunk?.initial ?? 32768, c.chunk?.incremental ?? 0,
		c.heap?.initial ?? 2048, c.heap?.incremental ?? 0,
		c.stack ?? 512,
		c.keys?.available ?? 256, 0, c.keys?.name ?? 127, c.keys?.symbol ?? 127,
		c.parser?.buffer ?? 32768, c.parser?.table ?? 1993,
		c.static ?? 0,
	];
	return "@creation " + v.join(" ");
}

/** Static and dynamic imports in module text (shared by the build and the device checks). */
export const IMPORT_RE = /(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|(?:^|[;\s])import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** A relative specifier resolved against the importing module's specifier. */
export function resolveSpecifier(from, specifier) {
	if (!specifier.startsWith("./") && !specifier.startsWith("../")) return specifier.replace(/\.js$/, "");
	const parts = from.split("/").slice(0, -1);
	for (const part of specifier.split("/")) {
		if (part === ".") continue;
		if (part === "..") parts.pop();
		else parts.push(part);
	}
	return parts.join("/").replace(/\.js$/, "");
}

// Returns one message per import in a module's compiled text that no map entry provides.
export function checkImports(map, specifier, text) {
	const problems = [];
	for (const match of text.matchAll(IMPORT_RE)) {
		const imported = resolveSpecifier(specifier, match[1] ?? match[2] ?? match[3]);
		if (!map.has(imported)) problems.push(`${specifier} imports "${imported}", which resolves nowhere in the manifest for ${PLATFORM}`);
	}
	return problems;
}

/**
 * The modules a machine loads from its main module: every specifier reachable
 * through the imports of the compiled modules of a module map (build/lin/app.map),
 * as a Map specifier -> the specifier that first imported it ("" for root).
 * Type-only imports are gone from compiled text, so this is what XS loads.
 */
export function importClosure(mapPath, root) {
	const paths = new Map();
	for (const line of readFileSync(mapPath, "utf8").split("\n")) {
		const [specifier, path] = line.split("\t");
		if (path) paths.set(specifier, path);
	}
	const found = new Map([[root, ""]]);
	const queue = [root];
	while (queue.length) {
		const specifier = queue.shift();
		const path = paths.get(specifier);
		if (!path) continue; // a host module (the lin host's own)
		for (const match of readFileSync(path, "utf8").matchAll(IMPORT_RE)) {
			const imported = resolveSpecifier(specifier, match[1] ?? match[2] ?? match[3]);
			if (!found.has(imported)) {
				found.set(imported, specifier);
				queue.push(imported);
			}
		}
	}
	return found;
}

// mc/config, as mcconfig generates it on the device: the manifest's config section.
const MC_CONFIG = join(JS_OUT, "mc", "config");

/**
 * Writes text to path only when its bytes differ, through a temporary file renamed
 * into place: a reader sees the old file or the new one, never a part. Returns
 * whether it wrote.
 */
export function writeIfChanged(path, text) {
	const bytes = Buffer.from(text);
	if (existsSync(path) && readFileSync(path).equals(bytes)) return false;
	mkdirSync(dirname(path), { recursive: true });
	const temporary = `${path}.tmp-${process.pid}`;
	writeFileSync(temporary, bytes);
	renameSync(temporary, path);
	return true;
}

/** Moves every file under `from` whose bytes differ into `to` (writeIfChanged); returns how many changed. */
function syncTree(from, to) {
	let changed = 0;
	for (const name of readdirSync(from)) {
		const source = join(from, name), target = join(to, name);
		if (statSync(source).isDirectory()) changed += syncTree(source, target);
		else if (writeIfChanged(target, readFileSync(source))) changed++;
	}
	return changed;
}

function isAlive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === "EPERM";
	}
}

const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Runs fn holding the lock `lock` (a folder, made atomically, with the owner's pid
 * in it; build/.lock for a build). Waits while another process holds it, saying
 * so once; a lock whose owner is gone is taken over.
 */
export async function withLock(lock, fn, { log = () => {}, waitMs = LOCK_WAIT_MS, pollMs = 250 } = {}) {
	mkdirSync(dirname(lock), { recursive: true });
	const owner = join(lock, "pid");
	const start = Date.now();
	let said = false;
	for (;;) {
		try {
			mkdirSync(lock);
			writeFileSync(owner, `${process.pid}\n`);
			break;
		} catch (error) {
			if (error.code !== "EEXIST") throw error;
		}
		let pid = NaN, age = 0;
		try { pid = Number(readFileSync(owner, "utf8")); } catch { /* being made, or left unowned */ }
		try { age = Date.now() - statSync(lock).mtimeMs; } catch { continue; }
		if (Number.isInteger(pid) && pid > 0 ? !isAlive(pid) : age > LOCK_UNOWNED_MS) {
			// Renamed away first: of two builds taking over, one rename wins.
			const stale = `${lock}.stale-${process.pid}`;
			try { renameSync(lock, stale); } catch { continue; }
			rmSync(stale, { recursive: true, force: true });
			continue;
		}
		if (Date.now() - start > waitMs)
			throw new Error(`build error: another build of this tree (pid ${pid}) has held ${lock} for over ${Math.ceil(waitMs / 1000)} s; if no build is running, remove that folder`);
		if (!said) log(`build: waiting for another build of this tree (pid ${Number.isInteger(pid) && pid > 0 ? pid : "starting"}) to finish`);
		said = true;
		sleepSync(pollMs);
	}
	try {
		return await fn();
	} finally {
		rmSync(lock, { recursive: true, force: true });
	}
}

function writeConfigModule(config) {
	writeIfChanged(MC_CONFIG + ".js", `/* generated by tools/build.mjs from manifest.json's config */\nexport default Object.freeze(${JSON.stringify(config, null, "\t")});\n`);
}

/** The device's creation: the manifest's top-level creation with its esp32/* section's over it. */
export function deviceCreation(manifestPath = join(ROOT, "manifest.json")) {
	const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
	return { ...manifest.creation, ...manifest.platforms?.[DEVICE_PLATFORM_KEY]?.creation };
}

function writeMap(mapPath, manifestPath, creationOverride) {
	const { modules, creation: linCreation, config } = readManifest(manifestPath);
	const creation = creationOverride ?? linCreation;
	writeConfigModule(config);
	const map = new Map([...modules, ["mc/config", MC_CONFIG]]);
	const lines = [creationLine(creation)];
	const problems = [];
	for (const [specifier, path] of map) {
		const generated = path === MC_CONFIG;
		if (!generated) sourceFile(path);
		const js = generated ? MC_CONFIG + ".js" : compiledFile(path);
		if (!existsSync(js)) { problems.push(`${specifier}: ${relative(ROOT, js)} was not compiled`); continue; }
		lines.push(`${specifier}\t${js}`);
		problems.push(...checkImports(map, specifier, readFileSync(js, "utf8")));
	}
	if (problems.length) throw new Error("build error:\n  " + problems.join("\n  "));
	writeIfChanged(mapPath, lines.join("\n") + "\n");
	return map.size;
}

// build/lin/budgets.h: every whole-number budget of modules/budgets.ts as
// BUDGET_<NAME>, so the host's C reads the same numbers (one source). Written
// only when it changes, so make rebuilds only on a real change.
async function writeBudgetsHeader() {
	const budgets = await import(pathToFileURL(join(JS_OUT, "modules", "budgets.js")).href + `?t=${Date.now()}`);
	const text = budgetsHeaderText(budgets);
	writeIfChanged(BUDGETS_HEADER, text);
	writeIfChanged(DEVICE_BUDGETS_HEADER, text);
}

/** budgets.h's text from the budgets module's values (every whole number as BUDGET_<NAME>). */
export function budgetsHeaderText(budgets) {
	const lines = ["/* Generated by tools/build.mjs from modules/budgets.ts: do not edit. */", "#ifndef XSCLAW_BUDGETS_H", "#define XSCLAW_BUDGETS_H"];
	for (const [name, value] of Object.entries(budgets)) {
		if (Number.isSafeInteger(value)) lines.push(`#define BUDGET_${name} ${value}`);
	}
	lines.push("#endif", "");
	return lines.join("\n");
}

/** The budgets of the tree at root, read from its modules/budgets.ts (transpiled here, nothing built). */
export async function treeBudgets(root = ROOT) {
	const ts = (await import("typescript")).default;
	const source = readFileSync(join(root, "modules", "budgets.ts"), "utf8");
	const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
	return import(`data:text/javascript;base64,${Buffer.from(js).toString("base64")}`);
}

// What the host's C build needs from the system, by the Debian package that has it.
export const SYSTEM_NEEDS = Object.freeze([
	{ what: "a C compiler", probe: { command: "--version" }, package: "gcc" },
	{ what: "make", probe: { program: "make", command: "--version" }, package: "make" },
	{ what: "mbedtls (the header mbedtls/ssl.h)", probe: { header: "mbedtls/ssl.h" }, package: "libmbedtls-dev" },
]);

/** What the m32 host (a 32-bit program) needs beyond SYSTEM_NEEDS: gcc -m32's C library and runtime. */
export const M32_NEEDS = Object.freeze([
	{ what: "gcc's 32-bit support (gcc -m32)", probe: { program: "sh", command: "-c", args: [`printf '#include <stdio.h>\\nint main(void) { return 0; }\\n' | \${CC:-cc} ${M32_CFLAGS} -x c -o /dev/null -`] }, package: "gcc-multilib" },
]);
/** Where the kernel runs no 32-bit program (ia32 emulation off, as on this project's machines), qemu-user runs the m32 host. */
export const M32_RUN_NEEDS = Object.freeze([
	{ what: "qemu-i386", probe: { program: "qemu-i386", command: "--version" }, package: "qemu-user" },
]);

/**
 * The sentence saying which Debian packages to install, or undefined when every
 * need is met. A header is probed by preprocessing an #include of it with $CC.
 */
export function missingSystemPackages(needs = SYSTEM_NEEDS, cc = process.env.CC || "cc") {
	const missing = needs.filter(({ probe }) => {
		const result = probe.header
			? spawnSync(cc, ["-E", "-x", "c", "-"], { input: `#include <${probe.header}>\n`, stdio: ["pipe", "ignore", "ignore"] })
			: spawnSync(probe.program ?? cc, [probe.command, ...(probe.args ?? [])], { stdio: "ignore" });
		return result.error || result.status !== 0;
	});
	if (!missing.length) return undefined;
	const packages = missing.map((need) => need.package).join(" ");
	return `build error: ${missing.map((need) => need.what).join(", ")} ${missing.length > 1 ? "are" : "is"} missing: ` +
		`install with \`apt-get install -y ${packages}\` (as root; otherwise \`sudo apt-get install -y ${packages}\`), then run the command again`;
}

// lax: type errors are reported but do not stop the build (tsc still emits), so
// one module under construction does not block work on the others.
export async function build(options = {}) {
	const log = options.quiet ? () => {} : (m) => process.stderr.write(m + "\n");
	return withLock(LOCK, () => buildLocked(options, log), { log });
}

async function buildLocked({ asan = false, tsan = false, mbedtls4 = false, m32 = false, boardTls = false, make = true, quiet = false, lax = false }, log) {
	/** The optional hosts left out: {host, why, how}. */
	const notBuilt = [];
	const leaveOut = (host, why, how) => {
		const line = `build: NOTICE: ${OPTIONAL_HOSTS[host]} is not built: ${why}; to add it: ${how}`;
		if (REQUIRE_ALL) throw new Error(`build error: ${line.replace("build: NOTICE: ", "")} (XSCLAW_REQUIRE_ALL is set)`);
		log(line);
		// Said on stdout too, so a CI log shows it among the results.
		if (quiet) process.stdout.write(line + "\n");
		notBuilt.push({ host, why, how });
		// A host built before (when its tarball was there) is not run in its place.
		for (const variant of host === "boardtls" ? BOARD_TLS_HOSTS : [host]) rmSync(hostBinary(variant), { force: true });
	};
	const mbedtls4Or = (host, options) => {
		const looked = [];
		try {
			const prefix = mbedtls4Prefix({ log, looked, ...options });
			if (!prefix) leaveOut(host, `no Mbed TLS 4.0.0 tarball (looked at ${looked.join(", ")})`, MBEDTLS4_HOW);
			return prefix;
		} catch (error) {
			if (!/needs (cmake|make)/.test(error.message)) throw error;
			leaveOut(host, error.message.replace(/^build error: /, "").replace(/: apt-get.*$/, ""), error.message.replace(/^.*: (apt-get .*)$/, "$1"));
			return null;
		}
	};
	if (!existsSync(join(ROOT, "node_modules", "@agoric", "xsnap", "moddable", "xs"))) {
		throw new Error("build error: node_modules/@agoric/xsnap is missing; run npm install");
	}
	log("build: tsc");
	const emitted = `${JS_OUT}.tmp-${process.pid}`;
	rmSync(emitted, { recursive: true, force: true });
	try {
		try {
			execFileSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "tsconfig.json"), "--outDir", emitted], {
				cwd: ROOT, stdio: "inherit",
			});
		} catch (error) {
			if (!lax) throw new Error("build error: tsc reported type errors (above)");
			log("build: type errors above ignored (--lax)");
		}
		if (existsSync(emitted)) syncTree(emitted, JS_OUT);
	} finally {
		rmSync(emitted, { recursive: true, force: true });
	}
	const appCount = writeMap(APP_MAP, join(ROOT, "manifest.json"));
	const testCount = writeMap(TEST_MAP, join(ROOT, "test", "manifest.json"));
	writeMap(TEST_DEVICE_MAP, join(ROOT, "test", "manifest.json"), deviceCreation());
	writeMap(CHANNEL_TEST_MAP, join(ROOT, "test", "channel", "manifest.json"));
	log(`build: module maps (${appCount} app modules, ${testCount} with tests)`);
	await writeBudgetsHeader();
	if (make) {
		const missing = missingSystemPackages();
		if (missing) throw new Error(missing);
		const jobs = String(Math.min(4, availableParallelism()));
		for (const variant of ["release", ...(asan ? ["asan"] : []), ...(tsan ? ["tsan"] : [])]) {
			log(`build: host (${variant})`);
			execFileSync("make", ["-C", join(ROOT, "hosts", "lin"), `-j${jobs}`, `VARIANT=${variant}`], { stdio: "inherit" });
		}
		if (mbedtls4) {
			const prefix = mbedtls4Or("mbedtls4", {});
			if (prefix) {
				log("build: host (mbedtls4)");
				execFileSync("make", ["-C", join(ROOT, "hosts", "lin"), `-j${jobs}`, "VARIANT=mbedtls4", `MBEDTLS4_PREFIX=${prefix}`], { stdio: "inherit" });
			}
		}
		if (boardTls) {
			// The board's TLS glue over hosts/lin/boardtls, against Mbed TLS 4.0; the
			// release host's XS objects (and the ASan host's, when built) are reused.
			const prefix = mbedtls4Or("boardtls", {});
			if (prefix) {
				for (const variant of BOARD_TLS_HOSTS.filter((host) => host === "boardtls" || asan || existsSync(hostBinary("asan")))) {
					log(`build: host (${variant})`);
					execFileSync("make", ["-C", join(ROOT, "hosts", "lin"), `-j${jobs}`, `VARIANT=${variant}`, `MBEDTLS4_PREFIX=${prefix}`], { stdio: "inherit" });
				}
			}
		}
		if (m32) {
			// Its Mbed TLS is 4.0 built 32-bit: Debian's 2.28 has no 32-bit package without the i386 architecture.
			const missing32 = missingSystemPackages(M32_NEEDS);
			const prefix = missing32 ? leaveOut("m32", "gcc -m32 cannot build a program (gcc-multilib)", "apt-get install -y gcc-multilib") : mbedtls4Or("m32", { m32: true });
			if (prefix) {
				log("build: host (m32)");
				execFileSync("make", ["-C", join(ROOT, "hosts", "lin"), `-j${jobs}`, "VARIANT=m32", `MBEDTLS4_PREFIX=${prefix}`], { stdio: "inherit" });
				if (!m32Runner() && missingSystemPackages(M32_RUN_NEEDS)) {
					// Built but not runnable here: left out (removed), so no test or bench tries it.
					leaveOut("m32", "this kernel runs no 32-bit programs (no ia32 emulation) and qemu-i386 is missing", "apt-get install -y qemu-user");
				}
			}
		}
	}
	if (make) writeFileSync(BUILD_STAMP, new Date().toISOString() + "\n");
	return { notBuilt };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	try {
		await build({ asan: process.argv.includes("--asan"), tsan: process.argv.includes("--tsan"), mbedtls4: process.argv.includes("--mbedtls4"), m32: process.argv.includes("--m32"), boardTls: process.argv.includes("--board-tls"), make: !process.argv.includes("--no-make"), lax: process.argv.includes("--lax") });
	} catch (error) {
		process.stderr.write(`${error.message}\n`);
		process.exit(1);
	}
}
