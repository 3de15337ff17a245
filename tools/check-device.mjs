#!/usr/bin/env node
// npm run check:device — the device build through the Moddable SDK 8.2.3's own
// tools, as far as this machine can take it (no ESP-IDF, no Xtensa compiler):
// mcconfig reads manifest.json for esp32/esp32s3 (and plain esp32), TypeScript
// 6 compiles every module against the SDK's typings (tsc runs once per module,
// as the SDK's makefile does), xsc compiles them, xsl links and preloads them
// into mc.xs.c. Then it checks:
//   - tsc clean and every module of the manifest compiled to bytecode;
//   - xsl linked the image, running every preload;
//   - no import of a compiled module resolves to nothing in the image;
//   - the merged sdkconfig has 16 MB flash, octal PSRAM and malloc in PSRAM,
//     and the project's partitions.csv is the one the build uses.
// It prints one summary line per platform, or fails with the first error.
//
//   node tools/check-device.mjs [--platform esp32/esp32s3|esp32 ...] [--root DIR] [--broken-copies]
//
// --broken-copies (CI) then checks the check: on copies of the tree with a
// module missing from the manifest, and with a type error in a device-only
// file, it must fail, naming the cause.
//
// The SDK comes from $MODDABLE when set, else from the tarball in
// shared/moddable-sdk/ beside the tree or any folder above it (or
// $XSCLAW_SDK_TARBALL), extracted into a cache
// outside the tree ($XDG_CACHE_HOME/xsclaw or ~/.cache/xsclaw, under the
// tarball's SHA-256) where its Linux tools (xsc, xsl, mcconfig, ...) are built
// once (libglib2.0-dev needed). mcconfig insists that $IDF_PATH is a git
// repository whose `git describe` says v6.0 (the SDK's EXPECTED_ESP_IDF), so
// the cache also holds a STAND-IN for ESP-IDF: an empty git repository with an
// annotated tag v6.0 and nothing else. Nothing here calls the IDF; a board
// image needs the real one (docs/device.md).
// The build output stays in the cache too (per checked tree), so a second run
// recompiles only what changed.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { IMPORT_RE, REQUIRE_ALL, resolveSpecifier } from "./build.mjs";
import { sharedFolders } from "./mbedtls4.mjs";

const TOOLS = dirname(fileURLToPath(import.meta.url));
const DEFAULT_ROOT = resolve(TOOLS, "..");
const EXPECTED_IDF = "v6.0";
const JOBS = "2";   // CI and this machine have two cores

export const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "xsclaw");

function fail(message) {
	const error = new Error(message);
	error.checkDevice = true;
	throw error;
}

function log(line) {
	process.stderr.write(`check:device: ${line}\n`);
}

function run(command, args, options = {}) {
	const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, ...options });
	if (result.error) fail(`${command} could not run: ${result.error.message}`);
	return result;
}

// The SDK tarball: $XSCLAW_SDK_TARBALL, else shared/moddable-sdk/ beside the
// tree or beside any folder above it, or above the main worktree (as
// tools/mbedtls4.mjs looks for Mbed TLS). None anywhere: the command line says
// the check was not run and how to add an SDK (exit 0), or fails under
// XSCLAW_REQUIRE_ALL=1 (CI); checkDevice() itself always fails.
function tarballPath(root) {
	if (process.env.XSCLAW_SDK_TARBALL) {
		if (!existsSync(process.env.XSCLAW_SDK_TARBALL)) fail(`no Moddable SDK: XSCLAW_SDK_TARBALL names ${process.env.XSCLAW_SDK_TARBALL}, which does not exist`);
		return process.env.XSCLAW_SDK_TARBALL;
	}
	const folders = sharedFolders("moddable-sdk", root);
	for (const dir of folders) {
		if (!existsSync(dir)) continue;
		const name = readdirSync(dir).find((f) => /^moddable-.*\.tar\.gz$/.test(f));
		if (name) return join(dir, name);
	}
	fail(`no Moddable SDK: set MODDABLE to an SDK checkout, or put moddable-8.2.3-subset.tar.gz in shared/moddable-sdk/ beside the clone (looked in ${folders.join(", ")})`);
}

/** How to give the check a Moddable SDK (said when there is none). */
export const SDK_HOW = "set MODDABLE to your Moddable SDK 8.x (npx xs-dev setup: docs/device.md) or put moddable-8.2.3-subset.tar.gz in ../shared/moddable-sdk/";

/** Whether an SDK is there to check with: undefined when it is, else why not (nothing is extracted or built). */
export function sdkMissing(root = DEFAULT_ROOT) {
	if (process.env.MODDABLE) return existsSync(process.env.MODDABLE) ? undefined : `MODDABLE names ${process.env.MODDABLE}, which does not exist`;
	try {
		tarballPath(root);
		return undefined;
	} catch (error) {
		if (!error.checkDevice) throw error;
		return "no Moddable SDK ($MODDABLE is unset and no SDK tarball is in shared/moddable-sdk/ beside the clone or above it)";
	}
}

/** The SDK's sources: $MODDABLE, or the tarball extracted in the cache (once per tarball). */
export function sdkSources(root = DEFAULT_ROOT) {
	let dir = process.env.MODDABLE;
	if (!dir) {
		const tarball = tarballPath(root);
		const hash = createHash("sha256").update(readFileSync(tarball)).digest("hex").slice(0, 16);
		dir = join(CACHE, `sdk-${hash}`);
		if (!existsSync(join(dir, ".extracted"))) {
			log(`extracting ${basename(tarball)} into ${dir}`);
			rmSync(dir, { recursive: true, force: true });
			mkdirSync(dir, { recursive: true });
			execFileSync("tar", ["xzf", tarball, "-C", dir]);
			writeFileSync(join(dir, ".extracted"), `${tarball}\n`);
		}
	}
	return dir;
}

/** The SDK folder with its Linux tools built (once). */
export function sdk(root = DEFAULT_ROOT) {
	const dir = sdkSources(root);
	const bin = join(dir, "build", "bin", "lin", "release");
	if (!["xsc", "xsl", "mcconfig"].every((tool) => existsSync(join(bin, tool)))) {
		log("building the SDK's Linux tools (once; about two minutes on two cores)");
		const env = { ...process.env, MODDABLE: dir, XS_DIR: join(dir, "xs"), BUILD_DIR: join(dir, "build") };
		const makefiles = ["xsc.mk", "xsid.mk", "xsl.mk"].map((f) => join(dir, "xs", "makefiles", "lin", f)).concat("tools.mk");
		for (const makefile of makefiles) {
			const result = run("make", ["GOAL=release", `-j${JOBS}`, "-f", makefile], { cwd: join(dir, "build", "makefiles", "lin"), env });
			if (result.status !== 0) fail(`building the SDK tools failed (${basename(makefile)}; is libglib2.0-dev installed?):\n${tail(result.stdout + result.stderr, 30)}`);
		}
	}
	return { dir, bin };
}

/** The ESP-IDF stand-in: a git repository with only an annotated tag v6.0 (see the header). */
function idfStandIn() {
	const dir = join(CACHE, `idf-stand-in-${EXPECTED_IDF}`);
	const describe = () => run("git", ["-C", dir, "describe"]).stdout.trim();
	if (existsSync(join(dir, ".git")) && describe() === EXPECTED_IDF) return dir;
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
	const env = { ...process.env, GIT_AUTHOR_NAME: "xsclaw", GIT_AUTHOR_EMAIL: "xsclaw@localhost", GIT_COMMITTER_NAME: "xsclaw", GIT_COMMITTER_EMAIL: "xsclaw@localhost" };
	writeFileSync(join(dir, "README"), "Not ESP-IDF: a stand-in whose `git describe` satisfies mcconfig's version check (tools/check-device.mjs).\n");
	for (const args of [["init", "-q"], ["add", "README"], ["commit", "-q", "-m", "ESP-IDF stand-in"], ["tag", "-a", EXPECTED_IDF, "-m", EXPECTED_IDF]]) {
		const result = run("git", ["-C", dir, ...args], { env });
		if (result.status !== 0) fail(`cannot make the ESP-IDF stand-in (git ${args[0]}): ${result.stderr}`);
	}
	if (describe() !== EXPECTED_IDF) fail("the ESP-IDF stand-in does not describe as " + EXPECTED_IDF);
	return dir;
}

/** A folder whose `tsc` is TypeScript 6 (the SDK's tsconfig asks for es2025). */
function tscFolder(root) {
	const tsc = join(root, "node_modules", "typescript6", "bin", "tsc");
	if (!existsSync(tsc)) fail("node_modules/typescript6 is missing: run npm ci (TypeScript 6 is a devDependency under that alias)");
	const version = JSON.parse(readFileSync(join(root, "node_modules", "typescript6", "package.json"), "utf8")).version;
	const dir = join(CACHE, `tsc-${version}-${createHash("sha256").update(tsc).digest("hex").slice(0, 8)}`);
	if (!existsSync(join(dir, "tsc"))) {
		mkdirSync(dir, { recursive: true });
		symlinkSync(tsc, join(dir, "tsc"));
	}
	return dir;
}

/** A tsc message with its file path (relative to dir) made absolute. */
function absolute(dir, message) {
	return message.replace(/^([^(]+)\(/, (all, path) => resolve(dir, path) + "(");
}

function findFiles(dir, wanted) {
	const found = [];
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) found.push(...findFiles(path, wanted));
		else if (wanted(entry.name)) found.push(path);
	}
	return found;
}

function tail(text, lines) {
	return text.trimEnd().split("\n").slice(-lines).join("\n");
}

// ---- reading what the build made ----

/** specifier -> source of every module rule of the generated makefile. */
function moduleRules(makefile) {
	const rules = new Map();
	// mcconfig files "scheme:rest" as "~.scheme/rest" (mcmanifest.js resolvePrefix).
	for (const match of makefile.matchAll(/^\$\(MODULES_DIR\)\/(\S+)\.xsb\s*:\s*(\S+)/gm))
		rules.set(match[1].replace(/^~\.([^/]+)\//, "$1:"), match[2]);
	return rules;
}

function makeVariable(makefile, name) {
	const match = new RegExp(`^${name} = (.*)$`, "m").exec(makefile);
	return match ? match[1].trim() : "";
}

/** text without its comments (strings and template text kept as they are). */
export function stripComments(text) {
	let out = "", i = 0;
	while (i < text.length) {
		const c = text[i], next = text[i + 1];
		if (c === "/" && next === "/") { while (i < text.length && text[i] !== "\n") i++; continue; }
		if (c === "/" && next === "*") { const end = text.indexOf("*/", i + 2); i = end < 0 ? text.length : end + 2; out += " "; continue; }
		if (c === "\"" || c === "'" || c === "`") {
			const start = i++;
			while (i < text.length && text[i] !== c) i += text[i] === "\\" ? 2 : 1;
			out += text.slice(start, ++i);
			continue;
		}
		out += c;
		i++;
	}
	return out;
}

/** Imports of compiled modules that no module of the image provides. */
export function unresolvedImports(rules, readSource) {
	const problems = [];
	for (const [specifier, source] of rules) {
		if (!source.endsWith(".js")) continue;
		const text = readSource(source);
		if (text === undefined) continue;
		for (const match of stripComments(text).matchAll(IMPORT_RE)) {
			const imported = resolveSpecifier(specifier, match[1] ?? match[2] ?? match[3]);
			if (!rules.has(imported)) problems.push(`${specifier} imports "${imported}", which no module of the image provides`);
		}
	}
	return problems;
}

/** What the merged sdkconfig must say (16 MB flash, octal PSRAM, malloc in PSRAM). */
export function sdkconfigProblems(text) {
	const has = (line) => new RegExp(`^${line}$`, "m").test(text);
	const problems = [];
	for (const line of ["CONFIG_ESPTOOLPY_FLASHSIZE_16MB=y", "CONFIG_SPIRAM=y", "CONFIG_SPIRAM_MODE_OCT=y", "CONFIG_SPIRAM_USE_MALLOC=y"])
		if (!has(line)) problems.push(`the merged sdkconfig lacks ${line} (is build.SDKCONFIGPATH set to hosts/esp32?)`);
	for (const line of ["CONFIG_ESPTOOLPY_FLASHSIZE_4MB=y", "CONFIG_SPIRAM_USE_CAPS_ALLOC=y"])
		if (has(line)) problems.push(`the merged sdkconfig still has ${line}`);
	return problems;
}

/** Figures of the linked image, from xsl's mc.xs.c: the preloaded instances
 * (slots) and the code of preloaded functions, both in flash; the bytecode of
 * the modules not preloaded (loaded from flash when imported); the keys. */
export function imageFigures(text) {
	const define = (name) => Number(new RegExp(`#define ${name} (\\d+)`).exec(text)?.[1] ?? NaN);
	let moduleCode = 0, preloadedCode = 0;
	for (const match of text.matchAll(/^static const txU1 gxCode\d+\[(\d+)\];$/gm)) moduleCode += Number(match[1]);
	for (const match of text.matchAll(/XS_CODE_X_KIND\}, \.value = \{ \.code = \{ \(txByte\*\)"((?:[^"\\]|\\.)*)"/g))
		preloadedCode += (match[1].match(/\\x[0-9a-f]{2}|\\.|[^\\]/gi) ?? []).length;
	return { slots: define("mxHeapCount"), keys: define("mxKeysCount"), moduleCode, preloadedCode };
}

/** Bytes of a slot on the ESP32 (32-bit pointers). */
export const DEVICE_SLOT_BYTES = 16;

// ---- the check ----

/** Where the build of the tree at root goes (in the cache, one per tree). */
function outputFolder(root) {
	return join(CACHE, "device-build", `${basename(root)}-${createHash("sha256").update(root).digest("hex").slice(0, 12)}`);
}

/** The image (mc.xs.c) the last check of root built for platform, or undefined. */
export function deviceImage(root = DEFAULT_ROOT, platform = "esp32/esp32s3") {
	const [main, sub] = platform.split("/");
	const path = join(outputFolder(resolve(root)), "tmp", main, ...(sub ? [sub] : []), "debug", basename(resolve(root)), "mc.xs.c");
	return existsSync(path) ? path : undefined;
}

// sdkRoot is where the SDK is looked for: the tree itself, except for the
// broken copies in the cache, which take the SDK their original found.
export function checkDevice({ root = DEFAULT_ROOT, platform = "esp32/esp32s3", sdkRoot = root } = {}) {
	root = resolve(root);
	const started = Date.now();
	const { dir: moddable, bin } = sdk(resolve(sdkRoot));
	const env = {
		...process.env,
		MODDABLE: moddable,
		IDF_PATH: idfStandIn(),
		PATH: [tscFolder(root), bin, process.env.PATH].join(":"),
	};
	const out = outputFolder(root);
	mkdirSync(out, { recursive: true });

	log(`mcconfig -d -p ${platform}`);
	const config = run(join(bin, "mcconfig"), ["-d", "-p", platform, "-o", out, join(root, "manifest.json")], { cwd: root, env });
	const configText = config.stdout + config.stderr;
	// A platform manifest.json refuses on purpose (its "..." section) is reported, not failed.
	const refusal = JSON.parse(readFileSync(join(root, "manifest.json"), "utf8")).platforms?.["..."]?.error;
	if (config.status !== 0 && refusal && configText.includes(refusal)) return { platform, refused: refusal };
	if (config.status !== 0) fail(`mcconfig failed for ${platform}:\n${tail(configText, 20)}`);
	const warning = /^# warning: (no modules match: .*)$/m.exec(configText);
	if (warning) fail(`mcconfig: ${warning[1]} (a module named in manifest.json has no source)`);

	const subplatform = platform.includes("/") ? platform.split("/")[1] : "esp32";
	const tmp = join(out, "tmp", "esp32", ...(platform.includes("/") ? [subplatform] : []), "debug", basename(root));
	const makefilePath = join(tmp, "makefile");
	if (!existsSync(makefilePath)) fail(`mcconfig wrote no makefile at ${makefilePath}`);
	const makefile = readFileSync(makefilePath, "utf8");
	// The IDF would generate sdkconfig.h; mc.xs.c only needs it to exist.
	const projectDir = join(tmp, `xsProj-${subplatform}`);
	mkdirSync(join(projectDir, "build", "config"), { recursive: true });
	if (!existsSync(join(projectDir, "build", "config", "sdkconfig.h"))) writeFileSync(join(projectDir, "build", "config", "sdkconfig.h"), "");

	// One tsc over every module first, with the generated options: the first
	// type error comes in seconds, and a change to a declaration is checked
	// against every module that uses it (make recompiles only changed files).
	// A module since removed from the tree leaves its tsconfig in a reused
	// output folder: those are deleted, not checked.
	const perModule = findFiles(join(tmp, "modules"), (name) => name.endsWith("-tsconfig.json")).filter((path) => {
		const stale = (JSON.parse(readFileSync(path, "utf8")).files ?? []).some((file) => !existsSync(resolve(dirname(path), file)));
		if (stale) rmSync(path);
		return !stale;
	});
	const files = perModule.flatMap((path) => JSON.parse(readFileSync(path, "utf8")).files ?? []);
	const whole = join(tmp, "tsconfig-check.json");
	writeFileSync(whole, JSON.stringify({ extends: join(tmp, "modules", "tsconfig-base.json"), compilerOptions: { noEmit: true, rootDir: "/" }, files }, null, "\t"));
	log(`tsc over all ${files.length} TypeScript modules`);
	const check = run("tsc", ["-p", whole], { cwd: tmp, env });
	if (check.status !== 0) {
		const first = /^(.*error TS\d+:.*)$/m.exec(check.stdout + check.stderr)?.[1] ?? tail(check.stdout + check.stderr, 5);
		fail(`tsc: ${absolute(tmp, first)}`);
	}

	log(`tsc per module, xsc, xsl`);
	const make = run("make", [`-j${JOBS}`, "-f", makefilePath, join(tmp, "mc.xs.c")], { cwd: tmp, env });
	const makeText = make.stdout + make.stderr;
	const tsError = /^(.*error TS\d+:.*)$/m.exec(makeText);
	if (tsError) fail(`tsc: ${absolute(tmp, tsError[1])}\n${tail(makeText, 12)}`);
	if (make.status !== 0) fail(`building mc.xs.c failed:\n${tail(makeText, 25)}`);

	const rules = moduleRules(makefile);
	const missing = [...rules.keys()].filter((specifier) => !existsSync(join(tmp, "modules", `${specifier.replace(/^([^/:]+):/, "~.$1/")}.xsb`)));
	if (missing.length) fail(`not compiled: ${missing.join(", ")}`);
	const image = join(tmp, "mc.xs.c");
	if (!existsSync(image)) fail("xsl wrote no mc.xs.c");
	const xslError = /^(.*(?:xsl|preload).*(?:error|exception|throw).*)$/im.exec(makeText);
	if (xslError) fail(`xsl: ${xslError[1]}`);

	const sources = (source) => {
		const path = source.replaceAll("$(TMP_DIR)", tmp).replaceAll("$(MODULES_DIR)", join(tmp, "modules"));
		return existsSync(path) ? readFileSync(path, "utf8") : undefined;
	};
	// A .ts module's rule names its tsc output; read that JS.
	const unresolved = unresolvedImports(rules, sources);
	if (unresolved.length) fail(`unresolved imports in the image:\n  ${unresolved.join("\n  ")}`);

	const problems = sdkconfigProblems(readFileSync(join(projectDir, "sdkconfig.mc"), "utf8"));
	if (problems.length) fail(problems[0]);
	const partitions = join(projectDir, "partitions.csv");
	if (!existsSync(partitions) || readFileSync(partitions, "utf8") !== readFileSync(join(root, "partitions.csv"), "utf8"))
		fail("the build does not use partitions.csv (build.PARTITIONS_FILE)");

	const preloads = (makeVariable(makefile, "PRELOADS") + makefile.slice(makefile.indexOf("PRELOADS =")).split("\n\n")[0]).match(/-p \S+\.xsb/g)?.length ?? 0;
	const figures = imageFigures(readFileSync(image, "utf8"));
	const seconds = ((Date.now() - started) / 1000).toFixed(0);
	return { platform, modules: rules.size, preloads, figures, seconds, tmp, image };
}

export function summary(result) {
	if (result.refused) return `check:device ${result.platform}: not built: manifest.json refuses it ("${result.refused}")`;
	const f = result.figures;
	return `check:device ${result.platform}: ok: ${result.modules} modules compiled, ${result.preloads} preloaded; image: ${f.slots} instances (${f.slots * DEVICE_SLOT_BYTES} bytes) and ${f.preloadedCode} bytes of code preloaded, ${f.moduleCode} bytes of bytecode of the other modules, ${f.keys} keys; ${result.seconds} s`;
}

// ---- the check checked: purpose-broken copies must fail ----

const BROKEN = [
	{
		name: "a module missing from the manifest",
		change(root) {
			const manifest = JSON.parse(readFileSync(join(root, "manifest.json"), "utf8"));
			delete manifest.modules["wifi/*"];
			writeFileSync(join(root, "manifest.json"), JSON.stringify(manifest, null, 2));
		},
		expect: /tsc: .*main\.ts.*Cannot find module 'wifi\/(station|console)'/,
	},
	{
		name: "a type error in a device-only file",
		change(root) {
			const file = join(root, "hosts", "esp32", "network.ts");
			writeFileSync(file, readFileSync(file, "utf8") + "\nexport const broken: number = \"not a number\";\n");
		},
		expect: /tsc: .*hosts\/esp32\/network\.ts.*error TS2322/,
	},
];

/** Runs the check on copies of root broken on purpose; throws when one passes or fails for another reason. */
export function checkBrokenCopies(root = DEFAULT_ROOT, platform = "esp32/esp32s3") {
	const lines = [];
	for (const [index, broken] of BROKEN.entries()) {
		const copy = join(CACHE, "broken", String(index), "xsclaw");
		rmSync(dirname(copy), { recursive: true, force: true });
		mkdirSync(copy, { recursive: true });
		for (const entry of ["manifest.json", "main.ts", "partitions.csv", "modules", "hosts", "typings"])
			execFileSync("cp", ["-r", join(root, entry), join(copy, entry)]);
		symlinkSync(join(root, "node_modules"), join(copy, "node_modules"));
		broken.change(copy);
		let message;
		try {
			checkDevice({ root: copy, platform, sdkRoot: root });
		} catch (error) {
			if (!error.checkDevice) throw error;
			message = error.message;
		}
		if (message === undefined) fail(`the check passed on a copy with ${broken.name}`);
		if (!broken.expect.test(message)) fail(`the check failed on a copy with ${broken.name}, but not as expected:\n${message}`);
		lines.push(`check:device: fails as it should on a copy with ${broken.name}: ${message.split("\n")[0].slice(0, 160)}`);
	}
	return lines;
}

function parseArgs(argv) {
	const options = { platforms: [], root: DEFAULT_ROOT, brokenCopies: false };
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--platform") options.platforms.push(argv[++i]);
		else if (argv[i] === "--broken-copies") options.brokenCopies = true;
		else if (argv[i] === "--root") options.root = argv[++i];
		else fail(`unknown argument ${argv[i]} (use --platform P, --root DIR, --broken-copies)`);
	}
	if (!options.platforms.length) options.platforms = ["esp32/esp32s3", "esp32"];
	return options;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	try {
		const options = parseArgs(process.argv.slice(2));
		// No SDK anywhere (a fresh clone, no $MODDABLE): one line saying so, not a
		// failure, unless every check must run (XSCLAW_REQUIRE_ALL=1, as in CI).
		const missing = REQUIRE_ALL ? undefined : sdkMissing(options.root);
		if (missing) {
			console.log(`check:device: not run: ${missing}; to add it: ${SDK_HOW}`);
			process.exit(0);
		}
		for (const platform of options.platforms) console.log(summary(checkDevice({ root: options.root, platform })));
		if (options.brokenCopies) for (const line of checkBrokenCopies(options.root)) console.log(line);
	} catch (error) {
		process.stderr.write(`check:device: FAILED: ${error.checkDevice ? error.message : error.stack}\n`);
		process.exit(1);
	}
}
