// Secret random values (issue 25): pairing codes (and every other secret
// value) come from host/random — getrandom(2) on the lin host, the hardware
// RNG on the board — never from Math.random, which XS seeds the same way on
// every start of the lin host (two fresh data folders printed the same codes).
// Here: two fresh starts print different pairing codes; no module calls
// Math.random; the board's random.c compiles against the XS headers and a
// stand-in of ESP-IDF's esp_random.h, warnings as errors. (The device JS,
// hosts/esp32/random.ts, is type-checked and linked by npm run check:device.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APP_MAP, ROOT } from "../../tools/build.mjs";
import { startFirmware } from "./firmware.mjs";

const CODE = /pairing code ([A-Z0-9]{8})/g;

/** The pairing codes a fresh firmware prints for three `telegram pair` and one `qq pair`. */
async function freshCodes() {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-random-"));
	const fw = startFirmware(["--modules", APP_MAP, "--data", dir], "release");
	try {
		await fw.until(/type help for the commands/);
		for (const line of ["telegram pair", "telegram pair", "telegram pair", "qq pair"]) {
			const from = fw.stdout.length;
			fw.send(line);
			await fw.until(/pairing code [A-Z0-9]{8}/, { from });
		}
		return [...fw.stdout.matchAll(CODE)].map((m) => m[1]);
	} finally {
		await fw.end();
		rmSync(dir, { recursive: true, force: true });
	}
}

test("two fresh starts of the lin host print different pairing codes", async () => {
	const first = await freshCodes();
	const second = await freshCodes();
	assert.equal(first.length, 4, first.join(" "));
	assert.equal(second.length, 4, second.join(" "));
	assert.equal(new Set([...first, ...second]).size, 8, `every code differs: ${first.join(" ")} / ${second.join(" ")}`);
});

function sourcesUnder(dir) {
	const out = [];
	for (const name of readdirSync(dir)) {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) out.push(...sourcesUnder(path));
		else if (/\.ts$/.test(name)) out.push(path);
	}
	return out;
}

test("no module of the firmware (modules/, main.ts, the hosts' modules) calls Math.random", () => {
	const files = [...sourcesUnder(join(ROOT, "modules")), ...sourcesUnder(join(ROOT, "hosts")), join(ROOT, "main.ts")];
	const callers = files.filter((file) => /\bMath\.random\s*\(/.test(readFileSync(file, "utf8").replace(/\/\/.*$/gm, "")));
	assert.ok(files.length > 50, `${files.length} files read`);
	assert.deepEqual(callers.map((f) => f.slice(ROOT.length + 1)), [], "secret values come from util/random (host/random)");
});

test("the board's host/random C compiles against the XS headers and ESP-IDF's esp_random.h (stand-in), warnings as errors", (t) => {
	const out = mkdtempSync(join(tmpdir(), "xsclaw-random-c-"));
	t.after(() => rmSync(out, { recursive: true, force: true }));
	const XS = join(ROOT, "node_modules", "@agoric", "xsnap", "moddable", "xs");
	for (const file of ["hosts/esp32/random_esp32.c", "hosts/common/random/random.c"]) {
		execFileSync("gcc", ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-Wno-sequence-point", "-Ihosts/common/random", "-Itest/standin/esp32",
			`-I${XS}/includes`, `-I${XS}/platforms`, "-c", "-o", join(out, file.replace(/\W/g, "_") + ".o"), file], { cwd: ROOT, stdio: "pipe" });
	}
});
