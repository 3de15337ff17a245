#!/usr/bin/env node
// npm test: builds the hosts (release, ASan/UBSan, Mbed TLS 4.0, 32-bit; in CI
// also the two with the board's TLS glue, boardtls and boardtls-asan), runs
// every test file of test/e2e (node --test, two at a time), and ends with the
// wall time and, when something could not run here, one line saying what and how
// to add it. On a clone with nothing beside it (no ../shared, no $MODDABLE) the
// Mbed TLS 4.0 and 32-bit hosts and the SDK check are left out; CI has them all
// and sets XSCLAW_REQUIRE_ALL=1, which makes leaving one out an error.
//
//   node tools/test.mjs [node --test arguments ...]
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { existsSync } from "node:fs";
import { BOARD_TLS_HOSTS, OPTIONAL_HOSTS, REQUIRE_ALL, ROOT, build, hostBinary } from "./build.mjs";
import { SDK_HOW, sdkMissing } from "./check-device.mjs";

const started = Date.now();
let notBuilt;
try {
	// The hosts with the board's TLS glue (tls-openssl.test.mjs runs the matrix on
	// them): in CI, and wherever they were built before (so the tests never run a
	// stale one); about 40 s more of build on two cores, mostly the release one's
	// link-time optimization (hosts/lin/boardtls/README.md).
	const boardTls = REQUIRE_ALL || BOARD_TLS_HOSTS.some((host) => existsSync(hostBinary(host)));
	({ notBuilt } = await build({ asan: true, mbedtls4: true, m32: true, boardTls }));
} catch (error) {
	process.stderr.write(`${error.message}\n`);
	process.exit(1);
}
const built = Date.now();
const TIMES = join(ROOT, "build", "test-output", "test-times.txt");
mkdirSync(join(ROOT, "build", "test-output"), { recursive: true });
const reporters = ["--test-reporter=tap", "--test-reporter-destination=stdout", `--test-reporter=${join(ROOT, "tools", "test-times.mjs")}`, `--test-reporter-destination=${TIMES}`];
const code = await new Promise((resolve) => {
	const child = spawn(process.execPath, ["--test", "--test-concurrency=2", ...reporters, ...process.argv.slice(2), "test/e2e/"], { cwd: ROOT, stdio: "inherit" });
	child.on("close", (status, signal) => resolve(status ?? (signal ? 1 : 0)));
});
const seconds = Math.round((Date.now() - started) / 1000);
process.stdout.write(`npm test: the slowest files (seconds of their tests, two files at a time): ${slowest(TIMES, 8)}\n`);
process.stdout.write(`npm test: ${code === 0 ? "passed" : "FAILED"} in ${Math.floor(seconds / 60)} min ${seconds % 60} s (the hosts built in ${Math.round((built - started) / 1000)} s)\n`);
const notRun = notBuilt.map(({ host, how }) => ({ what: OPTIONAL_HOSTS[host], how }));
const sdk = REQUIRE_ALL ? undefined : sdkMissing(ROOT);
if (sdk) notRun.push({ what: "the checks that read the Moddable SDK (bytes-device.test.mjs; manifest-check.test.mjs for esp32/*)", how: SDK_HOW });
if (notRun.length) {
	const hows = [...new Set(notRun.map((n) => n.how))];
	process.stdout.write(`npm test: not run here: ${notRun.map((n) => n.what).join("; ")}. To add them: ${hows.join("; ")}.\n`);
}
process.exit(code);

// The files whose top-level tests took longest, summed from the times reporter's lines.
function slowest(path, count) {
	const byFile = new Map();
	let text = "";
	try { text = readFileSync(path, "utf8"); } catch { return "none recorded"; }
	for (const line of text.split("\n")) {
		const [seconds, file] = line.split(" ");
		if (file) byFile.set(file, (byFile.get(file) ?? 0) + Number(seconds));
	}
	return [...byFile].sort((a, b) => b[1] - a[1]).slice(0, count).map(([file, s]) => `${file.replace(/^test\/e2e\//, "")} ${Math.round(s)}`).join(", ");
}
