// The 32-bit host (node tools/build.mjs --m32: the board's word size, 16-byte XS
// slots and 4-byte pointers), when it is built (npm test builds it): it is an
// i386 program, every test/unit/*.test.ts module passes on it, and a file over
// 2 GiB opens on it (64-bit off_t). A file of its own, so node --test runs it
// beside unit.test.mjs (the host may run under qemu-i386, a few times slower).
// The e2e tests keep to the 64-bit hosts, but for one: the agent Worker's C stack
// (the whole firmware, one TLS turn) against the manifest's nativeStack.
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MBEDTLS4_HOW, REQUIRE_ALL, TEST_MAP, hostBinary } from "../../tools/build.mjs";
import { UNIT_MODULES, assertClean, runHost, runXsTests } from "./xs.mjs";
import { checkNativeStack, measureAgentStack } from "../../tools/bench/stack.mjs";

// What the heap figures measured on it rest on: npm test built it, an i386 ELF program.
// Where the build left it out (no Mbed TLS 4.0 tarball, gcc-multilib or qemu-user: the
// build's NOTICE said which), its tests are skipped; CI (XSCLAW_REQUIRE_ALL=1) builds it.
const skip = !REQUIRE_ALL && !existsSync(hostBinary("m32")) && `the 32-bit host is not built (see the build's NOTICE; to add it: ${MBEDTLS4_HOW}, apt-get install -y gcc-multilib qemu-user)`;
test("the m32 host was built by npm test, and is a 32-bit x86 program", { skip }, () => {
	assert.ok(existsSync(hostBinary("m32")), `no ${hostBinary("m32")}: npm test builds it (node tools/build.mjs --m32)`);
	const header = Buffer.alloc(20);
	const fd = openSync(hostBinary("m32"), "r");
	try {
		readSync(fd, header, 0, header.length, 0);
	} finally {
		closeSync(fd);
	}
	assert.equal(header.toString("latin1", 0, 4), "\x7fELF");
	assert.equal(header[4], 1, "ELFCLASS32");
	assert.equal(header.readUInt16LE(18), 3, "EM_386");
});

if (existsSync(hostBinary("m32"))) {
	// The sizes and positions of files are 64-bit (-D_FILE_OFFSET_BITS=64): open()
	// and fstat() of a file over 2 GiB would fail with EOVERFLOW otherwise.
	test("a file over 2 GiB opens on the m32 host and reports its size", async () => {
		const data = mkdtempSync(join(tmpdir(), "xsclaw-m32-"));
		try {
			const size = 3 * 1024 ** 3;
			mkdirSync(join(data, "files"));   // the files root (hosts/lin/src/files.c)
			writeFileSync(join(data, "files", "large.bin"), "XSCLAW32");
			truncateSync(join(data, "files", "large.bin"), size);
			const result = await runHost(["--modules", TEST_MAP, "--main", "test/peer/large-file", "--data", data], { variant: "m32" });
			assertClean(result);
			const line = result.stderr.split("\n").find((l) => l.startsWith("large-file: "));
			assert.deepEqual(JSON.parse(line.slice("large-file: ".length)), { size, head: "XSCLAW32" });
		} finally {
			rmSync(data, { recursive: true, force: true });
		}
	});
	// The agent Worker's C stack on the board is manifest.json's nativeStack: the
	// deepest this host's agent Worker takes for a TLS handshake and a tool turn
	// (the whole firmware, --native-stack-report), times AGENT_NATIVE_STACK_MARGIN,
	// must fit in it (npm run bench reports the figure, agent.c_stack_peak_bytes.board32).
	test("the agent Worker's deepest C stack (a TLS handshake and a tool turn) fits the manifest's nativeStack with its margin", async () => {
		const peak = await measureAgentStack("m32");
		assert.ok(peak > 4096 && peak < 256 * 1024, `a plausible figure: ${peak}`);
		assert.equal(await checkNativeStack(peak), undefined);
		assert.match(await checkNativeStack(peak, peak), /nativeStack \(\d+\) is below \d+ bytes/);
	});
	for (const specifier of UNIT_MODULES)
		test(`${specifier} [m32]`, (t) => runXsTests(t, specifier, { variant: "m32" }));
}
