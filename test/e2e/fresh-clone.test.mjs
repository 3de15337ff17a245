// A clone with nothing beside it (no ../shared, no $MODDABLE) runs what it can and
// says what it did not: here npm run check:device, pointed at a folder with no SDK
// beside or above it, says so in one line and passes, and fails when every check
// must run (XSCLAW_REQUIRE_ALL=1, as .ci/run sets). The build's and npm test's
// side is tried on a real clone (docs/development.md, "What a fresh clone runs").
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../tools/build.mjs";

function checkDevice(root, env) {
	const clean = { ...process.env, ...env };
	delete clean.MODDABLE;
	delete clean.XSCLAW_SDK_TARBALL;
	if (!env.XSCLAW_REQUIRE_ALL) delete clean.XSCLAW_REQUIRE_ALL;
	return spawnSync(process.execPath, [join(ROOT, "tools", "check-device.mjs"), "--root", root], { encoding: "utf8", env: clean, timeout: 60_000 });
}

test("check:device with no SDK anywhere says it did not run and how to add one, and passes", (t) => {
	const root = mkdtempSync(join(tmpdir(), "xsclaw-fresh-"));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const result = checkDevice(root, {});
	assert.equal(result.status, 0, result.stderr);
	const lines = result.stdout.trim().split("\n");
	assert.equal(lines.length, 1, result.stdout);
	assert.match(lines[0], /^check:device: not run: no Moddable SDK .*; to add it: set MODDABLE to your Moddable SDK 8\.x .* or put moddable-8\.2\.3-subset\.tar\.gz in \.\.\/shared\/moddable-sdk\/$/);
});

test("check:device with no SDK fails when every check must run (XSCLAW_REQUIRE_ALL=1, CI)", (t) => {
	const root = mkdtempSync(join(tmpdir(), "xsclaw-fresh-"));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const result = checkDevice(root, { XSCLAW_REQUIRE_ALL: "1" });
	assert.equal(result.status, 1);
	assert.match(result.stderr, /check:device: FAILED: no Moddable SDK/);
});
