// Every test/unit/*.test.ts module, inside XS, on each built host variant
// (release, and asan when npm test built it), and once more on the release
// host with the device's creation sizes from manifest.json (esp32/*: stack,
// chunk and slot counts), so a test that only fits lin's larger budgets fails.
import { test } from "node:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT, TEST_DEVICE_MAP } from "../../tools/build.mjs";
import { VARIANTS, runXsTests } from "./xs.mjs";

const files = readdirSync(join(ROOT, "test", "unit")).filter((f) => f.endsWith(".test.ts")).sort();

for (const variant of VARIANTS) {
	for (const file of files) {
		const specifier = `test/unit/${file.replace(/\.ts$/, "")}`;
		test(`${specifier} [${variant}]`, (t) => runXsTests(t, specifier, { variant }));
	}
}

for (const file of files) {
	const specifier = `test/unit/${file.replace(/\.ts$/, "")}`;
	test(`${specifier} [release, device creation sizes]`, (t) => runXsTests(t, specifier, { map: TEST_DEVICE_MAP }));
}
