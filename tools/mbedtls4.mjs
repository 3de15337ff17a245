#!/usr/bin/env node
// Builds Mbed TLS 4.0 (the version ESP-IDF v6.0 ships) for the lin host's
// `mbedtls4` variant, from the tarball the environment lays beside the clone
// (../shared/mbedtls/mbedtls-4.0.0.tar.gz; see its README), or the release archive
// Mbed TLS attaches to its v4.0.0 release (mbedtls-4.0.0.tar.bz2: the source
// with its submodules under mbedtls-4.0.0/; GitHub's generated "Source code"
// archives lack the submodules and do not build). The tarball is
// extracted and built with cmake in a cache outside the tree, keyed by the
// tarball's and our config's hashes, so it builds once (~20-60 s), then costs
// nothing.
//
//   node tools/mbedtls4.mjs [--m32]   prints the install prefix, building it if needed
//                                     (--m32: the 32-bit build for the m32 host)
//
// Where the tarball is looked for, in order: $XSCLAW_MBEDTLS_TARBALL; the folder
// shared/mbedtls/ beside the repository or beside any folder above it (a CI
// clone at X/repo finds X/shared, a worktree at /work/wt/name finds
// /work/shared); the same beside the main worktree of a git worktree.
// Cache: $XSCLAW_CACHE, else $XDG_CACHE_HOME/xsclaw, else ~/.cache/xsclaw.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The names looked for, in each folder: the shared tarball, then Mbed TLS's release archive. */
const TARBALLS = ["mbedtls-4.0.0.tar.gz", "mbedtls-4.0.0.tar.bz2"];
/** The lin host's m32 variant (hosts/lin/Makefile, M32: the same flags): its Mbed TLS is built with the same word size and type sizes. */
export const M32_CFLAGS = "-m32 -msse2 -mfpmath=sse -D_FILE_OFFSET_BITS=64 -D_TIME_BITS=64";
export const MBEDTLS4_USER_CONFIG = join(ROOT, "hosts", "lin", "mbedtls4", "crypto_user_config.h");

function ancestors(dir) {
	const list = [];
	for (let d = resolve(dir); ; d = dirname(d)) {
		list.push(d);
		if (dirname(d) === d) return list;
	}
}

/**
 * The folders shared/<sub>/ may be in, in the order looked at: beside the
 * repository at root or beside any folder above it, then the same above the main
 * worktree of a git worktree. tools/check-device.mjs looks for the SDK this way too.
 */
export function sharedFolders(sub, root = ROOT) {
	const roots = [root];
	try {
		const common = execFileSync("git", ["-C", root, "rev-parse", "--path-format=absolute", "--git-common-dir"], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
		if (common) roots.push(dirname(common));
	} catch { /* not a git checkout: the folders above root are enough */ }
	const folders = [];
	for (const r of roots)
		for (const dir of ancestors(dirname(r))) folders.push(join(dir, "shared", sub));
	return [...new Set(folders)];
}

/** The tarball's path, or null with the places looked at in `looked`. */
export function findMbedtls4Tarball(looked = []) {
	const candidates = [];
	if (process.env.XSCLAW_MBEDTLS_TARBALL) candidates.push(process.env.XSCLAW_MBEDTLS_TARBALL);
	for (const dir of sharedFolders("mbedtls")) for (const name of TARBALLS) candidates.push(join(dir, name));
	for (const path of new Set(candidates)) {
		looked.push(path);
		if (existsSync(path)) return path;
	}
	return null;
}

function cacheRoot() {
	if (process.env.XSCLAW_CACHE) return process.env.XSCLAW_CACHE;
	return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "xsclaw");
}

const sha256 = (data) => createHash("sha256").update(data).digest("hex");

/**
 * Returns the install prefix of Mbed TLS 4.0 ({include, lib}), building it once
 * per tarball and config; null when the tarball is nowhere (reason in `looked`).
 */
export function mbedtls4Prefix({ log = (m) => process.stderr.write(m + "\n"), looked = [], m32 = false } = {}) {
	const tarball = findMbedtls4Tarball(looked);
	if (!tarball) return null;
	const key = sha256(readFileSync(tarball)).slice(0, 16) + "-" + sha256(readFileSync(MBEDTLS4_USER_CONFIG)).slice(0, 8);
	const base = join(cacheRoot(), `mbedtls-4.0.0-${key}${m32 ? `-m32-${sha256(M32_CFLAGS).slice(0, 8)}` : ""}`);
	const prefix = join(base, "install");
	const done = join(prefix, "built.stamp");
	if (existsSync(done)) return prefix;
	for (const tool of ["cmake", "make"]) {
		try { execFileSync(tool, ["--version"], { stdio: "ignore" }); } catch {
			throw new Error(`build error: Mbed TLS 4.0 needs ${tool}: apt-get install -y ${tool}`);
		}
	}
	log(`build: Mbed TLS 4.0 from ${tarball} into ${base} (once)`);
	// Built in a folder of its own, then renamed into place: a build cut short
	// or two builds at once never leave a half-built prefix (nothing in the
	// headers or libraries names the folder).
	const work = `${base}.tmp-${process.pid}`;
	rmSync(work, { recursive: true, force: true });
	const src = join(work, "src"), install = join(work, "install");
	mkdirSync(src, { recursive: true });
	mkdirSync(install, { recursive: true });
	try {
		// tar finds the compression (gzip, bzip2) itself.
		execFileSync("tar", ["-xf", tarball, "-C", src], { stdio: "inherit" });
		// The release archive holds everything under mbedtls-4.0.0/, the shared tarball at its top.
		const entries = readdirSync(src);
		const top = !entries.includes("CMakeLists.txt") && entries.length === 1 ? join(src, entries[0]) : src;
		// The user config is kept beside the install, so the headers our C sees
		// and the libraries always agree, whatever happens to the tree later.
		const config = join(install, "crypto_user_config.h");
		writeFileSync(config, readFileSync(MBEDTLS4_USER_CONFIG));
		const quiet = { stdio: ["ignore", "ignore", "inherit"] };
		execFileSync("cmake", ["-S", top, "-B", join(src, "build"), "-DENABLE_TESTING=OFF", "-DENABLE_PROGRAMS=OFF",
			"-DCMAKE_BUILD_TYPE=Release", `-DCMAKE_INSTALL_PREFIX=${install}`,
			`-DTF_PSA_CRYPTO_USER_CONFIG_FILE=${config}`, ...(m32 ? [`-DCMAKE_C_FLAGS=${M32_CFLAGS}`] : [])], quiet);
		execFileSync("make", ["-C", join(src, "build"), "-j2"], quiet);
		execFileSync("make", ["-C", join(src, "build"), "install"], quiet);
		rmSync(src, { recursive: true, force: true });
		writeFileSync(join(install, "built.stamp"), new Date().toISOString() + "\n");
		rmSync(base, { recursive: true, force: true });
		renameSync(work, base);
	} catch (error) {
		rmSync(work, { recursive: true, force: true });
		if (existsSync(done)) return prefix;   // another build finished first
		throw error;
	}
	return prefix;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const looked = [];
	try {
		const prefix = mbedtls4Prefix({ looked, m32: process.argv.includes("--m32") });
		if (!prefix) {
			process.stderr.write(`Mbed TLS 4.0 tarball not found; looked at:\n  ${looked.join("\n  ")}\n`);
			process.exit(2);
		}
		process.stdout.write(prefix + "\n");
	} catch (error) {
		process.stderr.write(`${error.message}\n`);
		process.exit(1);
	}
}
