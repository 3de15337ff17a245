// The C half of npm run check:device (tools/check-device.mjs calls it after
// mcconfig): the board's C compiled against ESP-IDF v6.0's and the Moddable
// SDK 8.2.3's own headers, and the board's sdkconfig checked against the code.
//
// It uses the ESP-IDF kit in shared/esp-idf/ beside the tree or above it
// (esp-idf-v6.0.2-kit.tar.xz, extracted once into the cache; its README): IDF's
// sources and headers for esp32s3, IDF's own kconfgen (gen-sdkconfig.sh) and a
// compile driver (cc-esp32s3.sh) with two recipes:
//   sdk  the include dirs, defines and flags the SDK's make.esp32.mk gives an
//        app's C, after the folders mcconfig's makefile names (DIRECTORIES:
//        the manifest's C folders and the include folders it adds), with the
//        makefile's own C_FLAGS_SUBPLATFORM;
//   idf  those IDF's CMake gives an esp32s3 component (-Wall -Werror ...).
// Both add -Werror=implicit-function-declaration (the SDK's flags hide an
// undeclared call with -Wno-implicit-function-declaration until the link).
//
// What it checks:
//   - every C file the makefile compiles from hosts/esp32 and hosts/common
//     compiles with both recipes against sdkconfig.h, which the kit's kconfgen
//     generates from the sdkconfig.mc mcconfig merged (the SDK's esp32s3
//     defaults, then hosts/esp32/sdkconfig.defaults);
//   - the XS sources get mxMetering and mxLockdown (their make rule's flags,
//     preprocessed), and so does sandbox.c (it has an #error without them);
//   - sdkconfig agrees with the code (sdkconfigAgreement below).
// Nothing links: undefined symbols and link errors are not seen (no binary
// libraries, no Espressif linker), and no image boots.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { sharedFolders } from "./mbedtls4.mjs";

export const KIT_TARBALL = "esp-idf-v6.0.2-kit.tar.xz";
const KIT_FOLDER = "esp-idf-v6.0.2-kit";
/** The ESP-IDF version mcconfig insists on (the SDK's EXPECTED_ESP_IDF): the kit's esp-idf folder is made a git repository that describes as this. */
export const EXPECTED_IDF = "v6.0";
/** Compiles at once (CI and this machine have two cores). */
const JOBS = 2;

function fail(message) {
	const error = new Error(message);
	error.checkDevice = true;
	throw error;
}

/** Where the kit tarball is, or undefined; `looked` gets the places tried. */
export function kitTarball(root, looked = []) {
	if (process.env.XSCLAW_IDF_KIT) {
		looked.push(process.env.XSCLAW_IDF_KIT);
		return existsSync(process.env.XSCLAW_IDF_KIT) ? process.env.XSCLAW_IDF_KIT : undefined;
	}
	for (const dir of sharedFolders("esp-idf", root)) {
		const path = join(dir, KIT_TARBALL);
		looked.push(path);
		if (existsSync(path)) return path;
	}
	return undefined;
}

/**
 * The kit extracted in cache (once per tarball), its esp-idf folder a git
 * repository with one empty commit tagged v6.0, so that mcconfig's version
 * check passes with IDF_PATH naming it (nothing of IDF is added to git).
 * Made in a temporary folder and renamed into place: two checks at once
 * never see half a kit.
 */
export function kit(root, cache) {
	const looked = [];
	const tarball = kitTarball(root, looked);
	if (!tarball) fail(`no ESP-IDF kit: put ${KIT_TARBALL} in shared/esp-idf/ beside the clone (looked in ${looked.join(", ")})`);
	const hash = createHash("sha256").update(readFileSync(tarball)).digest("hex").slice(0, 16);
	const dir = join(cache, `esp-idf-kit-${hash}`);
	const ready = join(dir, ".ready");
	if (!existsSync(ready)) {
		const temporary = `${dir}.tmp-${process.pid}`;
		rmSync(temporary, { recursive: true, force: true });
		mkdirSync(temporary, { recursive: true });
		process.stderr.write(`check:device: extracting ${basename(tarball)} (once)\n`);
		execFileSync("tar", ["xJf", tarball, "-C", temporary]);
		const idf = join(temporary, KIT_FOLDER, "esp-idf");
		const env = { ...process.env, GIT_AUTHOR_NAME: "xsclaw", GIT_AUTHOR_EMAIL: "xsclaw@localhost", GIT_COMMITTER_NAME: "xsclaw", GIT_COMMITTER_EMAIL: "xsclaw@localhost" };
		for (const args of [["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "ESP-IDF v6.0.2 kit (files not added)"], ["tag", "-a", EXPECTED_IDF, "-m", EXPECTED_IDF]])
			execFileSync("git", ["-C", idf, ...args], { env, stdio: "pipe" });
		writeFileSync(join(temporary, ".ready"), `${tarball}\n`);
		try {
			renameSync(temporary, dir);
		} catch (error) {
			// Another check put it there first: use theirs.
			rmSync(temporary, { recursive: true, force: true });
			if (!existsSync(ready)) throw error;
		}
	}
	const folder = join(dir, KIT_FOLDER);
	return { folder, idf: join(folder, "esp-idf") };
}

/** A python3 that imports pyparsing and rich (kconfgen's needs), or fails saying what to install. */
function python() {
	for (const candidate of [process.env.PYTHON, "python3", "/usr/bin/python3"].filter(Boolean)) {
		const probe = spawnSync(candidate, ["-c", "import pyparsing, rich"], { stdio: "ignore" });
		if (!probe.error && probe.status === 0) return candidate;
	}
	fail("kconfgen needs python3 with pyparsing and rich: apt-get install -y python3-pyparsing python3-rich");
}

/**
 * sdkconfig.h for the board, generated by the kit's kconfgen from the
 * sdkconfig.mc mcconfig merged (what the SDK hands idf.py), into out; reused
 * while that input is unchanged. Returns the folder of sdkconfig.h.
 */
export function generateSdkconfig(kitFolder, sdkconfigMc, out) {
	const input = readFileSync(sdkconfigMc);
	const stamp = join(out, "input.sha256");
	const hash = createHash("sha256").update(input).update(kitFolder).digest("hex");
	if (existsSync(join(out, "sdkconfig.h")) && existsSync(stamp) && readFileSync(stamp, "utf8") === hash) return out;
	rmSync(out, { recursive: true, force: true });
	mkdirSync(out, { recursive: true });
	const result = spawnSync("sh", [join(kitFolder, "gen-sdkconfig.sh"), sdkconfigMc, out], { encoding: "utf8", env: { ...process.env, PYTHON: python() } });
	if (result.status !== 0 || !existsSync(join(out, "sdkconfig.h")))
		fail(`kconfgen could not generate sdkconfig.h from ${sdkconfigMc}:\n${(result.stdout + result.stderr).trim().split("\n").slice(-12).join("\n")}`);
	writeFileSync(stamp, hash);
	return out;
}

/** The #defines of an sdkconfig.h: name -> value text. */
export function sdkconfigDefines(text) {
	const defines = new Map();
	for (const match of text.matchAll(/^#define (CONFIG_\w+) (.*)$/gm)) defines.set(match[1], match[2].trim());
	return defines;
}

/**
 * Where sdkconfig and the code disagree (an empty list when they agree):
 *   - lwIP's socket table covers every socket our budgets allow open at once
 *     (budgets.SOCKETS_MAX: LLM calls and keep-alives, Telegram, QQ, DNS, SNTP);
 *   - TLS 1.3 is on (the LLM providers' servers prefer it; tls_core offers it
 *     when the library has it) and certificates' dates are checked
 *     (MBEDTLS_HAVE_TIME_DATE: without it an expired certificate passes);
 *   - Mbed TLS allocates in PSRAM from boot through sdkconfig
 *     (MBEDTLS_EXTERNAL_MEM_ALLOC), not through an allocator installed later;
 *   - the task watchdog is on (a stuck task resets the board; host/sandbox
 *     feeds it between meter checks).
 */
export function sdkconfigAgreement(defines, budgets) {
	const problems = [];
	const sockets = Number(defines.get("CONFIG_LWIP_MAX_SOCKETS"));
	if (!(sockets >= budgets.SOCKETS_MAX))
		problems.push(`CONFIG_LWIP_MAX_SOCKETS is ${defines.get("CONFIG_LWIP_MAX_SOCKETS") ?? "not set"}, but modules/budgets.ts allows ${budgets.SOCKETS_MAX} sockets open at once (SOCKETS_MAX: LLM ${budgets.SOCKETS_LLM_MAX}, Telegram ${budgets.SOCKETS_TELEGRAM_MAX}, QQ ${budgets.SOCKETS_QQ_MAX}, DNS ${budgets.SOCKETS_DNS_MAX}, SNTP ${budgets.SOCKETS_SNTP_MAX}, web ${budgets.SOCKETS_WEB_MAX}, MCP ${budgets.SOCKETS_MCP_MAX}): set CONFIG_LWIP_MAX_SOCKETS=${budgets.SOCKETS_MAX} or more in hosts/esp32/sdkconfig.defaults`);
	const tcp = Number(defines.get("CONFIG_LWIP_MAX_ACTIVE_TCP"));
	if (!(tcp >= budgets.SOCKETS_TCP_MAX))
		problems.push(`CONFIG_LWIP_MAX_ACTIVE_TCP is ${defines.get("CONFIG_LWIP_MAX_ACTIVE_TCP") ?? "not set"}, but modules/budgets.ts allows ${budgets.SOCKETS_TCP_MAX} TCP connections at once (SOCKETS_TCP_MAX): set CONFIG_LWIP_MAX_ACTIVE_TCP=${budgets.SOCKETS_TCP_MAX} or more in hosts/esp32/sdkconfig.defaults`);
	const wanted = [
		["CONFIG_MBEDTLS_SSL_PROTO_TLS1_3", "TLS 1.3 is off: set CONFIG_MBEDTLS_SSL_PROTO_TLS1_3=y"],
		["CONFIG_MBEDTLS_HAVE_TIME_DATE", "Mbed TLS does not check certificates' dates (an expired certificate would pass): set CONFIG_MBEDTLS_HAVE_TIME_DATE=y"],
		["CONFIG_MBEDTLS_EXTERNAL_MEM_ALLOC", "Mbed TLS does not allocate in PSRAM from boot: set CONFIG_MBEDTLS_EXTERNAL_MEM_ALLOC=y (and CONFIG_MBEDTLS_INTERNAL_MEM_ALLOC=n)"],
		["CONFIG_ESP_TASK_WDT_EN", "the task watchdog is off: set CONFIG_ESP_TASK_WDT_EN=y and CONFIG_ESP_TASK_WDT_INIT=y"],
		["CONFIG_ESP_TASK_WDT_INIT", "the task watchdog is not started at boot: set CONFIG_ESP_TASK_WDT_INIT=y"],
	];
	for (const [name, sentence] of wanted) if (defines.get(name) !== "1") problems.push(`sdkconfig: ${sentence} in hosts/esp32/sdkconfig.defaults`);
	return problems;
}

// ---- reading mcconfig's makefile ----

/** The makefile's -I folders (DIRECTORIES: the manifest's C folders and the include folders it names). */
export function makefileDirectories(makefile) {
	const match = /^DIRECTORIES =((?:\\\n\t[^\\\n]*)*)/m.exec(makefile);
	return match ? [...match[1].matchAll(/-I([^\s\\]+)/g)].map((m) => m[1]) : [];
}

/** The C files the makefile compiles (each object rule's source). */
export function makefileCFiles(makefile) {
	return [...new Set([...makefile.matchAll(/^\$\(TMP_DIR\)\/\S+\.c\.o: (\S+\.c)\b/gm)].map((m) => m[1]))];
}

/** The value of a one-line make variable, as mcconfig wrote it. */
export function makefileValue(makefile, name) {
	return new RegExp(`^${name} = (.*)$`, "m").exec(makefile)?.[1].trim() ?? "";
}

// ---- compiling ----

/** The compiler the kit's driver uses: Debian's Xtensa GCC when installed, else gcc -m32. */
function compilerKind() {
	const probe = spawnSync("xtensa-lx106-elf-gcc", ["--version"], { stdio: "ignore" });
	return !probe.error && probe.status === 0 ? "lx106" : "m32";
}

function runAsync(command, args, options) {
	return new Promise((resolvePromise) => {
		const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
		let output = "";
		child.stdout.on("data", (chunk) => { output += chunk; });
		child.stderr.on("data", (chunk) => { output += chunk; });
		child.on("error", (error) => resolvePromise({ status: -1, output: String(error) }));
		child.on("close", (status) => resolvePromise({ status, output }));
	});
}

/** Runs jobs (functions returning promises), JOBS at a time; resolves to their results in order. */
async function pool(jobs) {
	const results = new Array(jobs.length);
	let next = 0;
	async function worker() {
		while (next < jobs.length) {
			const index = next++;
			results[index] = await jobs[index]();
		}
	}
	await Promise.all(Array.from({ length: Math.min(JOBS, jobs.length) }, worker));
	return results;
}

/** The first error lines of a compiler's output. */
function firstErrors(output, lines = 6) {
	const errors = output.split("\n").filter((line) => /\berror\b/.test(line));
	return (errors.length ? errors : output.trim().split("\n")).slice(0, lines).join("\n");
}

export const RECIPES = [
	{ name: "sdk", kit: "moddable", what: "the Moddable SDK's make.esp32.mk" },
	{ name: "idf", kit: "idf", what: "ESP-IDF's CMake" },
];

/**
 * Compiles the device C (files: absolute paths) with each recipe. Returns
 * { counts: {sdk, idf}, failures: [{recipe, file, output}] }.
 */
export async function compileDeviceC({ kitFolder, moddable, tmp, sdkconfigDir, makefile, files }) {
	const cc = compilerKind();
	const directories = makefileDirectories(makefile);
	const subplatform = makefileValue(makefile, "C_FLAGS_SUBPLATFORM").split(/\s+/).filter(Boolean);
	const driver = join(kitFolder, "cc-esp32s3.sh");
	const jobs = [];
	for (const recipe of RECIPES)
		for (const file of files)
			jobs.push(async () => {
				const args = [driver, "--recipe", recipe.kit, "--sdkconfig", sdkconfigDir, "--moddable", moddable, "--tmp", tmp, "--cc", cc,
					...directories.flatMap((dir) => ["-I", dir]), ...subplatform, file];
				const result = await runAsync("bash", args, { cwd: tmp });
				return { recipe: recipe.name, file, ok: result.status === 0, output: result.output };
			});
	const results = await pool(jobs);
	const counts = Object.fromEntries(RECIPES.map((recipe) => [recipe.name, results.filter((r) => r.recipe === recipe.name && r.ok).length]));
	return { counts, total: files.length, compiler: cc, failures: results.filter((r) => !r.ok) };
}

/** The failures as one message (the first few files, their first errors). */
export function compileFailureMessage(failures) {
	const shown = failures.slice(0, 4).map((f) => `(${f.recipe} recipe) ${f.file}:\n${firstErrors(f.output)}`);
	const first = firstErrors(failures[0].output, 1).trim();
	return `device C does not compile against ESP-IDF's and the SDK's headers: ${first} (${failures[0].recipe} recipe; ${failures.length} compiles failed)\n${shown.join("\n")}`;
}

/**
 * The macros the SDK's make rule for the XS sources gives them: xsAll.c
 * preprocessed (-dM) with the sdk recipe and the makefile's C_FLAGS_SUBPLATFORM,
 * which make.esp32.mk appends to the C_FLAGS of its $(LIB_DIR)/xs%.c.o rule.
 * Returns the names of the ones host/sandbox needs that are missing.
 */
export function xsMeteringMissing({ kitFolder, moddable, tmp, sdkconfigDir, makefile }) {
	const fragment = readFileSync(join(moddable, "tools", "mcconfig", "make.esp32.mk"), "utf8");
	// The rule and the flags it uses, as the SDK wrote them: a change there must be seen.
	if (!/^\$\(LIB_DIR\)\/xs%\.c\.o: xs%\.c\n\t.*\n\t\$\(CC\) \$\(C_DEFINES\) \$\(C_INCLUDES\) \$\(C_FLAGS\) /m.test(fragment))
		fail("the SDK's make.esp32.mk no longer compiles the XS sources with $(C_FLAGS) in its $(LIB_DIR)/xs%.c.o rule: check how its XS gets C_FLAGS_SUBPLATFORM");
	if (!/^C_FLAGS \?= [^\n]*(?:\\\n[^\n]*)*\$\(C_FLAGS_SUBPLATFORM\)/m.test(fragment))
		fail("the SDK's make.esp32.mk no longer appends $(C_FLAGS_SUBPLATFORM) to C_FLAGS");
	if (/^C_FLAGS = /m.test(makefile)) fail("the makefile sets C_FLAGS itself (a build.C_FLAGS in a manifest), replacing the SDK's: use build.C_FLAGS_SUBPLATFORM");
	const subplatform = makefileValue(makefile, "C_FLAGS_SUBPLATFORM").split(/\s+/).filter(Boolean);
	const directories = makefileDirectories(makefile);
	const result = spawnSync("bash", [join(kitFolder, "cc-esp32s3.sh"), "--recipe", "moddable", "--sdkconfig", sdkconfigDir, "--moddable", moddable, "--tmp", tmp, "--cc", compilerKind(),
		...directories.flatMap((dir) => ["-I", dir]), ...subplatform, "-E", "-dM", "-o", "-", join(moddable, "xs", "sources", "xsAll.c")], { encoding: "utf8", cwd: tmp, maxBuffer: 64 * 1024 * 1024 });
	if (result.status !== 0) fail(`preprocessing the SDK's xsAll.c as its makefile compiles it failed:\n${firstErrors(result.stdout + result.stderr)}`);
	return ["mxMetering", "mxLockdown"].filter((name) => !new RegExp(`^#define ${name}\\b`, "m").test(result.stdout));
}

/**
 * Natives the image's JS names (native("xs_...") and Native("xs_...")) that
 * no C file the makefile compiles defines: each would be a link error, or an
 * undefined function on the board. jsSources: text of every compiled JS
 * module; cFiles: every C file of the makefile.
 */
export function undefinedNatives(jsSources, cFiles, readText = (path) => readFileSync(path, "utf8")) {
	const wanted = new Map();
	for (const [module, text] of jsSources)
		for (const match of text.matchAll(/\bnative\s*\(\s*"(\w+)"\s*\)|\bNative\s*\(\s*"(\w+)"\s*\)/gi))
			if (!wanted.has(match[1] ?? match[2])) wanted.set(match[1] ?? match[2], module);
	const defined = new Set();
	const files = [...cFiles];
	for (let i = 0; i < files.length && i < 4 * cFiles.length; i++) {
		const file = files[i];
		let text;
		try { text = readText(file); } catch { continue; }
		// A C file may include another (the SDK's esp32 spi.c is #include "../esp/spi.c").
		for (const match of text.matchAll(/^\s*#include\s+"([^"]+\.c)"/gm)) files.push(resolve(dirname(file), match[1]));
		for (const match of text.matchAll(/^\s*void\s+(\w+)\s*\(\s*(?:xsMachine|txMachine)\s*\*\s*\w*\s*\)/gm)) defined.add(match[1]);
		for (const match of text.matchAll(/^\s*void\s+(\w+)\s*\(\s*void\s*\*\s*\w*\s*\)/gm)) defined.add(match[1]);
	}
	return [...wanted].filter(([name]) => !defined.has(name)).map(([name, module]) => `${module} names the native ${name}, which no C file of the image defines`);
}

/** The device C files of the tree at root that the makefile compiles (hosts/esp32 and hosts/common). */
export function treeCFiles(makefile, root) {
	const ours = [join(root, "hosts", "esp32") + "/", join(root, "hosts", "common") + "/"];
	return makefileCFiles(makefile).map((file) => resolve(file)).filter((file) => ours.some((dir) => file.startsWith(dir))).sort();
}
