// The device's "psram" C (hosts/esp32/psram.c over psram_core.c) on the host:
// psram.c compiles against the XS headers under -Wall -Wextra -Werror, and
// psram_core.c runs against a stand-in of ESP-IDF's heap_caps (test/native/)
// under ASan/UBSan: where buffers land, the fallback to internal RAM and its
// counter, resize, release, refusal. (Its JS side is type-checked and linked,
// and all the board's C, platform.c included, compiled against the SDK's and
// ESP-IDF's own headers, by npm run check:device.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../tools/build.mjs";

const XS = join(ROOT, "node_modules", "@agoric", "xsnap", "moddable", "xs");
const FLAGS = ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-DPSRAM_HOST_STANDIN", "-Ihosts/esp32", "-Itest/native"];

// The objects go to a folder of this run's own: two test runs in one tree never write one file.
function outDir(t) {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-psram-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	return dir;
}

test("hosts/esp32/psram.c compiles against the XS headers and a heap_caps stand-in, warnings as errors", (t) => {
	const OUT = outDir(t);
	execFileSync("gcc", [...FLAGS, "-Wno-sequence-point", `-I${XS}/includes`, `-I${XS}/platforms`, "-c", "-o", join(OUT, "psram.o"), "hosts/esp32/psram.c"], { cwd: ROOT, stdio: "pipe" });
});

test("psram_core: buffers land in their pool, a full PSRAM falls back to internal RAM and is counted", (t) => {
	const binary = join(outDir(t), "psram_core_test");
	execFileSync("gcc", [...FLAGS, "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-o", binary,
		"test/native/psram_core_test.c", "hosts/esp32/psram_core.c", "test/native/heap_caps_standin.c"], { cwd: ROOT, stdio: "pipe" });
	const output = execFileSync(binary, { encoding: "utf8" });
	assert.match(output, /^ok \d+ checks$/m);
});
