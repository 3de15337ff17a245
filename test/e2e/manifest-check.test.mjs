// tools/check-manifest.mjs: passes on the tree, and fails, naming the cause, on
// a copy of manifest.json with an imported specifier left unmapped for the
// device, one unmapped for lin, and on partitions.csv copies with overlapping,
// misaligned, oversized or too-small partitions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REQUIRE_ALL, ROOT } from "../../tools/build.mjs";
import { SDK_HOW, sdkMissing, sdkSources } from "../../tools/check-device.mjs";
import { checkManifest, deviceSpecifiers, importedSpecifiers, partitionProblems } from "../../tools/check-manifest.mjs";

// The device platforms' checks need the SDK's manifests: without one (a fresh clone,
// no $MODDABLE) the test of them is skipped, saying how to add one; CI always has it.
const noSdk = REQUIRE_ALL ? undefined : sdkMissing(ROOT);

const manifest = () => JSON.parse(readFileSync(join(ROOT, "manifest.json"), "utf8"));
const partitions = readFileSync(join(ROOT, "partitions.csv"), "utf8");

/** broken, its relative paths made absolute so a copy elsewhere still reaches the tree. */
function rooted(broken) {
	const copy = JSON.parse(JSON.stringify(broken).replaceAll("\"./", `"${ROOT}/`));
	copy.platforms["esp32/*"].build.PARTITIONS_FILE = "./partitions.csv";
	return copy;
}

function withCopy(t, name, text) {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-manifest-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	const path = join(dir, name);
	writeFileSync(path, typeof text === "string" ? text : JSON.stringify(text, null, 2));
	return path;
}

test("the tree's manifest.json and partitions.csv pass", () => {
	const { problems, imported } = checkManifest();
	assert.deepEqual(problems, []);
	assert.ok(imported > 50, `${imported} specifiers found in modules/ and main.ts`);
});

test("a specifier imported by main.ts but unmapped for esp32/* fails, naming it", { skip: noSdk && `${noSdk}; to add it: ${SDK_HOW}` }, (t) => {
	const broken = manifest();
	delete broken.platforms["esp32/*"].modules["host/network"];
	const copy = withCopy(t, "manifest.json", rooted(broken));
	const { problems } = checkManifest({ manifest: copy });
	assert.ok(problems.some((p) => /^esp32\/esp32s3: "host\/network" \(imported by main\.ts\) is not mapped$/.test(p)), problems.join("\n"));
	assert.deepEqual(problems.filter((p) => !p.startsWith("esp32/esp32s3: \"host/network\"")), [], "nothing else");
});

// The board's storage root is host/files (the mount guard in front of the SDK's
// files.js, issue 26), so the image has no embedded:storage/files module: util/io
// imports only its types, which the SDK's declaration gives tsc. A value import
// of it would need the module, and is told apart.
test("a specifier imported only for its types may have only the SDK's declaration on the device; a value import needs a module", { skip: noSdk && `${noSdk}; to add it: ${SDK_HOW}` }, (t) => {
	const root = mkdtempSync(join(tmpdir(), "xsclaw-imports-"));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	mkdirSync(join(root, "modules"));
	writeFileSync(join(root, "main.ts"), 'import type { Directory } from "embedded:storage/files";\nexport type { File } from "embedded:storage/files";\n');
	writeFileSync(join(root, "modules", "a.ts"), 'import type { KeyValueStore } from "embedded:storage/key-value";\nimport { type Status } from "embedded:storage/flash";\nimport keyValue from "embedded:storage/key-value";\n');
	const typeOnly = new Set();
	const imported = importedSpecifiers(root, typeOnly);
	assert.deepEqual([...imported.keys()].sort(), ["embedded:storage/files", "embedded:storage/flash", "embedded:storage/key-value"]);
	assert.deepEqual([...typeOnly], ["embedded:storage/files"], "an inline type in braces, or any value import, makes it a value import");
	const { provided, typings } = deviceSpecifiers(join(ROOT, "manifest.json"), "esp32/esp32s3", sdkSources(ROOT));
	assert.equal(provided.has("embedded:storage/files"), false, "the image holds no embedded:storage/files module");
	assert.equal(typings.has("embedded:storage/files"), true, "the SDK declares it");
	assert.equal(provided.has("host/files"), true);
	assert.deepEqual(checkManifest().problems, [], "util/io's type-only import passes");
});

test("a specifier unmapped for lin fails, naming it", (t) => {
	const broken = manifest();
	delete broken.platforms.lin.modules["embedded:storage/key-value"];
	const copy = withCopy(t, "manifest.json", rooted(broken));
	const { problems } = checkManifest({ manifest: copy });
	assert.deepEqual(problems, ['lin: "embedded:storage/key-value" (imported by modules/shared/util/io.ts) is not mapped']);
});

test("overlapping partitions fail, naming both", (t) => {
	const broken = partitions.replace(/^ota_1,(\s*)app,(\s*)ota_1,(\s*)0x320000/m, "ota_1,$1app,$2ota_1,$30x310000");
	assert.notEqual(broken, partitions);
	const problems = checkManifest({ partitions: withCopy(t, "partitions.csv", broken) }).problems;
	assert.ok(problems.some((p) => /partitions ota_0 and ota_1 overlap/.test(p)), problems.join("\n"));
});

test("misaligned, oversized, missing-storage and small-storage tables fail", () => {
	assert.match(partitionProblems("ota_0, app, ota_0, 0x21000, 0x100000\nstorage, data, spiffs, 0x800000, 0x800000\n").join("\n"), /ota_0: offset 0x21000 is not aligned to 0x10000/);
	assert.match(partitionProblems("ota_0, app, ota_0, 0x20000, 0x100000\nstorage, data, spiffs, 0x800000, 0x900000\n").join("\n"), /storage: ends at 0x1100000, past the 16 MB flash/);
	assert.match(partitionProblems("ota_0, app, ota_0, 0x20000, 0x100000\n").join("\n"), /no storage partition/);
	assert.match(partitionProblems("ota_0, app, ota_0, 0x20000, 0x100000\nstorage, data, spiffs, 0x200000, 0x400000\n").join("\n"), /at least 8 MB/);
	assert.match(partitionProblems("nvs, data, nvs, 0x8000, 0x6000\nota_0, app, ota_0, 0x20000, 0x100000\nstorage, data, spiffs, 0x800000, 0x800000\n").join("\n"), /overlaps the bootloader and partition table/);
	assert.deepEqual(partitionProblems(partitions), []);
});
