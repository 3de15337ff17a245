// Every test/unit/*.test.ts module, inside XS, on each built host variant
// (release, and asan when npm test built it).
import { test } from "node:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../tools/build.mjs";
import { VARIANTS, runXsTests } from "./xs.mjs";

const files = readdirSync(join(ROOT, "test", "unit")).filter((f) => f.endsWith(".test.ts")).sort();

for (const variant of VARIANTS) {
	for (const file of files) {
		const specifier = `test/unit/${file.replace(/\.ts$/, "")}`;
		test(`${specifier} [${variant}]`, (t) => runXsTests(t, specifier, { variant }));
	}
}
