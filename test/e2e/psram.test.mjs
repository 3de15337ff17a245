// The psram unit tests again with pool sizes from the command line
// (--internal-bytes, --psram-bytes), and a malformed size refused at boot.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TEST_MAP } from "../../tools/build.mjs";
import { VARIANTS, runHost, runXsTests } from "./xs.mjs";

for (const variant of VARIANTS) {
	test(`psram pools take their sizes from --internal-bytes and --psram-bytes [${variant}]`, (t) =>
		runXsTests(t, "test/unit/psram.test", { variant, options: { "internal-bytes": 65536, "psram-bytes": 1048576 } }));

	test(`a malformed pool size stops the boot with a message naming the option [${variant}]`, async () => {
		const result = await runHost(["--modules", TEST_MAP, "--main", "test/run", "--test", "test/unit/psram.test", "--psram-bytes", "8M"], { variant });
		assert.equal(result.code, 1);
		assert.match(result.stderr, /psram: --psram-bytes must be a byte count/);
	});
}
