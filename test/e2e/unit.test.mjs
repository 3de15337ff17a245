// Every test/unit/*.test.ts module, inside XS, on each built host variant
// (release, and asan when npm test built it), and once more on the release
// host with the device's creation sizes from manifest.json (esp32/*: stack,
// chunk and slot counts), so a test that only fits lin's larger budgets fails.
// The 32-bit host runs them too, in m32.test.mjs.
import { test } from "node:test";
import { TEST_DEVICE_MAP } from "../../tools/build.mjs";
import { UNIT_MODULES, VARIANTS, runXsTests } from "./xs.mjs";

for (const variant of VARIANTS) {
	for (const specifier of UNIT_MODULES)
		test(`${specifier} [${variant}]`, (t) => runXsTests(t, specifier, { variant }));
}

for (const specifier of UNIT_MODULES)
	test(`${specifier} [release, device creation sizes]`, (t) => runXsTests(t, specifier, { map: TEST_DEVICE_MAP }));
