#!/usr/bin/env node
// Checks manifest.json and partitions.csv without building anything (npm test
// runs it; test/e2e/manifest-check.test.mjs also runs it on broken copies):
//   - every specifier that modules/ and main.ts import is provided for lin and
//     for esp32/esp32s3 and esp32: by our manifest's modules, or by the SDK
//     manifests it includes (read from the Moddable SDK 8.2.3 sources: the
//     tarball in ../shared/moddable-sdk/, extracted into the cache of
//     tools/check-device.mjs, or $MODDABLE); one imported only for its types
//     (`import type`) may have only the SDK's declaration on the device;
//   - the device's heap capacities in `config` equal its `creation` sizes
//     (hosts/esp32/platform.ts reports them from there);
//   - partitions.csv: offsets aligned (app 64 KiB, data 4 KiB), after the
//     partition table, no overlap, within 16 MB, an app slot, and a `storage`
//     data partition of at least 8 MB.
//
//   node tools/check-manifest.mjs [--manifest FILE] [--partitions FILE]
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { IMPORT_RE, REQUIRE_ALL, readManifest } from "./build.mjs";
import { SDK_HOW, sdkMissing, sdkSources, stripComments } from "./check-device.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FLASH_BYTES = 16 * 1024 * 1024;
const STORAGE_MIN_BYTES = 8 * 1024 * 1024;
const TABLE_END = 0x9000;          // the bootloader and the partition table come first
const APP_ALIGN = 0x10000, DATA_ALIGN = 0x1000;
export const DEVICE_PLATFORMS = ["esp32/esp32s3"];
// Generated from manifest.json's config section by the build on both targets
// (mcconfig on the device, tools/build.mjs on lin), so no manifest maps them.
const GENERATED = new Set(["mc/config"]);

// ---- imports of the firmware's sources ----


function tsFiles(dir) {
	const found = [];
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) found.push(...tsFiles(path));
		else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) found.push(path);
	}
	return found;
}

/**
 * Every non-relative specifier imported by modules/ and main.ts (type-only imports
 * too: they must resolve for tsc). typeOnly: those only ever imported with
 * `import type`/`export type` (erased from the JavaScript: on the device a
 * declaration of the SDK's, manifest_typings.json's, is enough for them).
 */
export function importedSpecifiers(root = ROOT, typeOnly = new Set()) {
	const specifiers = new Map();  // specifier -> first file importing it
	const valued = new Set();
	for (const file of [join(root, "main.ts"), ...tsFiles(join(root, "modules"))]) {
		const text = stripComments(readFileSync(file, "utf8"));
		for (const match of text.matchAll(IMPORT_RE)) {
			const specifier = match[1] ?? match[2] ?? match[3];
			if (specifier.startsWith(".")) continue;
			if (!specifiers.has(specifier)) specifiers.set(specifier, file.slice(root.length + 1));
			if (!/^[;\s]*(import|export)\s+type\s/.test(match[0])) valued.add(specifier);
		}
	}
	for (const specifier of specifiers.keys()) if (!valued.has(specifier)) typeOnly.add(specifier);
	return specifiers;
}

// ---- the modules a device manifest provides, as mcconfig reads it ----

// Platform keys: exact, the platform without its subplatform, "prefix/*", "*/suffix"; "..." when none matched.
function platformSections(platforms = {}, platform) {
	const [main] = platform.split("/");
	const found = [];
	for (const [key, section] of Object.entries(platforms)) {
		if (key === platform || key === main) found.push(section);
		else if (key.endsWith("/*") && platform.startsWith(key.slice(0, -1))) found.push(section);
		else if (key.startsWith("*/") && platform.endsWith(key.slice(1))) found.push(section);
	}
	if (!found.length && platforms["..."]) found.push(platforms["..."]);
	return found;
}

function expand(value, variables) {
	let text = value;
	for (let i = 0; i < 8 && text.includes("$("); i++)
		text = text.replace(/\$\(([A-Z_a-z0-9]+)\)/g, (all, name) => variables[name] ?? all);
	return text;
}

function sourcesMatching(path) {
	const folder = dirname(path), prefix = basename(path).slice(0, -1);
	if (!existsSync(folder)) return [];
	return readdirSync(folder)
		.filter((name) => name.startsWith(prefix) && /\.(js|ts|json)$/.test(name) && !name.endsWith(".d.ts"))
		.map((name) => name.replace(/\.(js|ts|json)$/, ""));
}

// The .d.ts stems a "folder/prefix*" entry matches (typings-only entries).
function declarationsMatching(path) {
	const folder = dirname(path), prefix = basename(path).slice(0, -1);
	if (!existsSync(folder)) return [];
	return readdirSync(folder).filter((name) => name.startsWith(prefix) && name.endsWith(".d.ts")).map((name) => name.slice(0, -5));
}

function hasSource(path) {
	return [".js", ".ts", ".json"].some((ext) => existsSync(path + ext));
}

/** Specifiers provided by a manifest for platform, with SDK includes read from moddable. */
export function deviceSpecifiers(manifestPath, platform, moddable) {
	const provided = new Set();
	const typings = new Set();   // specifiers with a declaration only (manifest_typings.json)
	const problems = [];
	const subplatform = platform.split("/")[1];
	const variables = { MODDABLE: moddable, PLATFORM: "esp32", SUBPLATFORM: subplatform ?? "" };
	if (subplatform) {
		variables.SUBPLATFORMDIRECTORY = join(moddable, "build", "devices", "esp32", "targets", subplatform);
		variables.SUBPLATFORMMANIFEST = join(variables.SUBPLATFORMDIRECTORY, "manifest.json");
	}
	const seen = new Set();
	const visit = (file) => {
		file = resolve(file);
		if (seen.has(file)) return;
		seen.add(file);
		if (!existsSync(file)) { problems.push(`included manifest ${file} does not exist`); return; }
		const manifest = JSON.parse(readFileSync(file, "utf8"));
		const base = dirname(file);
		const merge = (section) => {
			for (const [name, value] of Object.entries(section.build ?? {})) if (typeof value === "string") variables[name] = expand(value, variables);
			for (const include of [].concat(section.include ?? [])) visit(resolve(base, expand(include, variables)));
			for (const [key, value] of Object.entries(section.modules ?? {})) {
				for (const raw of [].concat(value)) {
					const path = resolve(base, expand(raw, variables));
					if (key === "*") {
						if (path.endsWith("*")) for (const stem of sourcesMatching(path)) provided.add(stem);
						else if (hasSource(path)) provided.add(basename(path));
					} else if (key.endsWith("*")) {
						const prefix = basename(path).slice(0, -1);
						for (const stem of sourcesMatching(path)) provided.add(key.slice(0, -1) + stem.slice(prefix.length));
						for (const stem of declarationsMatching(path)) typings.add(key.slice(0, -1) + stem.slice(prefix.length));
					} else if (path.endsWith("*") ? sourcesMatching(path).length : hasSource(path)) {
						provided.add(key);
					} else if (existsSync(path + ".d.ts")) {
						typings.add(key);   // a typings-only entry: a declaration, no module
					} else if (!path.endsWith(".c")) {
						problems.push(`"${key}" -> ${raw}: no source there`);
					}
				}
			}
		};
		merge(manifest);
		for (const section of platformSections(manifest.platforms, platform)) {
			if (section.error) problems.push(`the manifest refuses ${platform}: ${section.error}`);
			merge(section);
		}
	};
	visit(manifestPath);
	return { provided, typings, problems };
}

// ---- partitions ----

const number = (text) => /^0x[0-9a-f]+$/i.test(text) ? parseInt(text, 16) : /^\d+[KM]?$/i.test(text) ? parseInt(text) * ({ K: 1024, M: 1048576 }[text.slice(-1).toUpperCase()] ?? 1) : NaN;

/** One sentence per problem of a partitions.csv text. */
export function partitionProblems(text) {
	const problems = [];
	const rows = text.split("\n").map((line) => line.replace(/#.*/, "").trim()).filter(Boolean).map((line) => line.split(",").map((f) => f.trim()));
	const parts = rows.map(([name, type, subtype, offset, size]) => ({ name, type, subtype, offset: number(offset ?? ""), size: number(size ?? "") }));
	for (const p of parts) {
		if (!Number.isFinite(p.offset) || !Number.isFinite(p.size) || p.size <= 0) { problems.push(`partition ${p.name}: offset and size must be given as numbers`); continue; }
		const align = p.type === "app" ? APP_ALIGN : DATA_ALIGN;
		if (p.offset % align) problems.push(`partition ${p.name}: offset 0x${p.offset.toString(16)} is not aligned to 0x${align.toString(16)}`);
		if (p.offset < TABLE_END) problems.push(`partition ${p.name}: offset 0x${p.offset.toString(16)} overlaps the bootloader and partition table (before 0x${TABLE_END.toString(16)})`);
		if (p.offset + p.size > FLASH_BYTES) problems.push(`partition ${p.name}: ends at 0x${(p.offset + p.size).toString(16)}, past the 16 MB flash`);
	}
	const sorted = parts.filter((p) => Number.isFinite(p.offset) && Number.isFinite(p.size)).sort((a, b) => a.offset - b.offset);
	for (let i = 1; i < sorted.length; i++) {
		const before = sorted[i - 1], p = sorted[i];
		if (before.offset + before.size > p.offset) problems.push(`partitions ${before.name} and ${p.name} overlap (0x${before.offset.toString(16)}+0x${before.size.toString(16)} > 0x${p.offset.toString(16)})`);
	}
	const names = new Set();
	for (const p of parts) { if (names.has(p.name)) problems.push(`partition ${p.name} appears twice`); names.add(p.name); }
	if (!parts.some((p) => p.type === "app")) problems.push("no app partition");
	const storage = parts.find((p) => p.name === "storage");
	if (!storage) problems.push("no storage partition (littlefs finds it by that name)");
	else if (storage.type !== "data") problems.push("the storage partition must be of type data");
	else if (storage.size < STORAGE_MIN_BYTES) problems.push(`the storage partition has ${storage.size} bytes; at least 8 MB are needed for sessions and memory`);
	return problems;
}

// ---- the check ----

export function checkManifest({ root = ROOT, manifest = join(root, "manifest.json"), partitions = join(root, "partitions.csv") } = {}) {
	const problems = [];
	const typeOnly = new Set();
	const imported = importedSpecifiers(root, typeOnly);
	const lin = new Set(readManifest(manifest).modules.map(([specifier]) => specifier));
	for (const [specifier, file] of imported) if (!lin.has(specifier) && !GENERATED.has(specifier)) problems.push(`lin: "${specifier}" (imported by ${file}) is not mapped`);
	// What the device platforms provide comes from the SDK's own manifests: with no
	// SDK (a fresh clone, no $MODDABLE) those checks are left out and said so
	// (deviceSkipped); CI (XSCLAW_REQUIRE_ALL=1) always has one.
	const deviceSkipped = REQUIRE_ALL ? undefined : sdkMissing(root);
	const moddable = deviceSkipped ? undefined : sdkSources(root);
	for (const platform of deviceSkipped ? [] : DEVICE_PLATFORMS) {
		const { provided, typings, problems: found } = deviceSpecifiers(manifest, platform, moddable);
		problems.push(...found.map((p) => `${platform}: ${p}`));
		for (const [specifier, file] of imported) {
			if (provided.has(specifier) || GENERATED.has(specifier) || (typeOnly.has(specifier) && typings.has(specifier))) continue;
			problems.push(`${platform}: "${specifier}" (imported by ${file}) is not mapped${typings.has(specifier) ? " (the SDK only declares it: a value import needs a module)" : ""}`);
		}
	}
	const json = JSON.parse(readFileSync(manifest, "utf8"));
	const device = json.platforms?.["esp32/*"] ?? {};
	if (device.config?.xsChunkBytes !== device.creation?.chunk?.initial || device.config?.xsSlots !== device.creation?.heap?.initial)
		problems.push("esp32/*: config.xsChunkBytes and config.xsSlots must equal creation.chunk.initial and creation.heap.initial (hosts/esp32/platform.ts reports them)");
	if (device.build?.PARTITIONS_FILE !== "./partitions.csv") problems.push("esp32/*: build.PARTITIONS_FILE must name ./partitions.csv");
	problems.push(...partitionProblems(readFileSync(partitions, "utf8")).map((p) => `partitions.csv: ${p}`));
	return { problems, imported: imported.size, deviceSkipped };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const args = process.argv.slice(2);
	const option = (name) => { const i = args.indexOf(name); return i >= 0 ? resolve(args[i + 1]) : undefined; };
	try {
		const { problems, imported, deviceSkipped } = checkManifest({ manifest: option("--manifest"), partitions: option("--partitions") });
		if (problems.length) {
			process.stderr.write(`check-manifest: ${problems.length} problem(s):\n  ${problems.join("\n  ")}\n`);
			process.exit(1);
		}
		console.log(`check-manifest: ok: ${imported} specifiers mapped for lin${deviceSkipped ? "" : ` and ${DEVICE_PLATFORMS.join(", ")}`}; partitions.csv fits 16 MB`);
		if (deviceSkipped) console.log(`check-manifest: not checked for ${DEVICE_PLATFORMS.join(", ")}: ${deviceSkipped}; to add it: ${SDK_HOW}`);
	} catch (error) {
		process.stderr.write(`check-manifest: ${error.message}\n`);
		process.exit(1);
	}
}
