// host/bytes' C (hosts/common/bytes/bytes.c) is one file for both targets: the
// lin host builds and runs it (test/unit/bytes*.test.ts, also under ASan), and
// here it compiles against the Moddable SDK 8.2.3's own XS headers (the
// device build's), warnings as errors. (Its device JavaScript,
// hosts/esp32/bytes.ts, is type-checked and linked by npm run check:device.)
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REQUIRE_ALL, ROOT } from "../../tools/build.mjs";
import { SDK_HOW, sdkMissing, sdkSources } from "../../tools/check-device.mjs";

// Without an SDK (a fresh clone, no $MODDABLE) the test is skipped, saying how to
// add one; CI (XSCLAW_REQUIRE_ALL=1) always has it.
const missing = REQUIRE_ALL ? undefined : sdkMissing(ROOT);

test("hosts/common/bytes/bytes.c compiles against the SDK's XS headers, warnings as errors", { skip: missing && `${missing}; to add it: ${SDK_HOW}` }, (t) => {
	const sdk = sdkSources(ROOT);
	const out = mkdtempSync(join(tmpdir(), "xsclaw-bytes-"));
	t.after(() => rmSync(out, { recursive: true, force: true }));
	execFileSync("gcc", ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", `-I${join(sdk, "xs", "includes")}`, `-I${join(sdk, "xs", "platforms")}`,
		"-c", "-o", join(out, "bytes.o"), "hosts/common/bytes/bytes.c"], { cwd: ROOT, stdio: "pipe" });
});
