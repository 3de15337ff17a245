// The lin host itself: exit codes, out of memory, module resolution, the
// build's manifest checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_MAP, hostBinary, readManifest, checkImports } from "../../tools/build.mjs";
import { VARIANTS, runHost, withTempDir } from "./xs.mjs";

const main = (specifier, data) => ["--modules", TEST_MAP, "--main", specifier, "--data", data];
const inTempDir = withTempDir("xsclaw-host-");

for (const variant of VARIANTS) {
	test(`running out of XS heap exits 2 with a clear message [${variant}]`, inTempDir(async (data) => {
		const r = await runHost(main("test/peer/oom", data), { variant, env: { ASAN_OPTIONS: "detect_leaks=0" } });
		assert.equal(r.code, 2, r.stderr);
		assert.match(r.stderr, /out of memory: the XS heap .* is exhausted/);
		assert.doesNotMatch(r.stderr, /unreachable|Segmentation|AddressSanitizer/);
	}));

	test(`an unhandled rejection exits 1 naming the error [${variant}]`, inTempDir(async (data) => {
		const r = await runHost(main("test/peer/reject", data), { variant });
		assert.equal(r.code, 1);
		assert.match(r.stderr, /unhandled rejection: Error: nobody handles this/);
	}));

	test(`importing a specifier missing from the manifest names it [${variant}]`, inTempDir(async (data) => {
		const r = await runHost(main("test/peer/missing-import", data), { variant });
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stderr, /caught: module not found: no\/such\/module/);
	}));
}

test("a missing --modules map is a usage error (exit 64)", async () => {
	const r = await runHost(["--modules", "/nonexistent/app.map"]);
	assert.equal(r.code, 64);
	assert.match(r.stderr, /cannot open module map/);
});

test("an unknown main module fails the boot with its name", inTempDir(async (data) => {
	const r = await runHost(main("no-such-main", data));
	assert.equal(r.code, 1);
	assert.match(r.stderr, /no-such-main/);
}));

test("the build refuses an import that resolves nowhere, naming it", () => {
	const map = new Map([["app", "/x/app"]]);
	const problems = checkImports(map, "app", 'import a from "net/nowhere";\nexport { b } from "./sibling";');
	assert.deepEqual(problems, [
		'app imports "net/nowhere", which resolves nowhere in the manifest for lin',
		'app imports "sibling", which resolves nowhere in the manifest for lin',
	]);
	assert.deepEqual(checkImports(new Map([["net/a", "/a"], ["net/b", "/b"]]), "net/a", 'import b from "./b";'), []);
});

test("the manifest's platform sections: lin modules are used, esp32 ones are not", () => {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-manifest-"));
	try {
		mkdirSync(join(dir, "sub"));
		writeFileSync(join(dir, "sub", "m.json"), JSON.stringify({ modules: { extra: "./extra" } }));
		writeFileSync(join(dir, "manifest.json"), JSON.stringify({
			include: ["./sub/m.json", "$(MODDABLE)/examples/manifest_base.json"],
			creation: { stack: 100 },
			modules: { "*": ["./main"] },
			platforms: {
				"esp32/*": { modules: { dev: "./esp" } },
				lin: { modules: { dev: "./lin" }, creation: { stack: 200 } },
			},
		}));
		const { modules, creation } = readManifest(join(dir, "manifest.json"));
		const specifiers = Object.fromEntries(modules.map(([s, p]) => [s, p.slice(dir.length)]));
		assert.deepEqual(specifiers, { extra: "/sub/extra", main: "/main", dev: "/lin" });
		assert.equal(creation.stack, 200);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("both host variants were built by npm test", () => {
	assert.ok(VARIANTS.includes("release") && VARIANTS.includes("asan"), `built: ${VARIANTS}`);
	assert.ok(hostBinary("asan").endsWith("asan/xsclaw"));
});
