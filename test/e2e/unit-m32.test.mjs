// Every test/unit/*.test.ts module on the 32-bit host (node tools/build.mjs
// --m32: the board's word size, 16-byte XS slots and 4-byte pointers), when it
// is built (npm test builds it): the host C and XS exercised at the board's
// word size. A file of its own, so node --test runs it beside unit.test.mjs
// (the host may run under qemu-i386, a few times slower). The e2e tests keep
// to the 64-bit hosts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { hostBinary } from "../../tools/build.mjs";
import { UNIT_MODULES, runXsTests } from "./xs.mjs";

if (existsSync(hostBinary("m32"))) {
	// What the heap figures measured on it rest on: it is an i386 ELF program.
	test("the m32 host is a 32-bit x86 program", () => {
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
	for (const specifier of UNIT_MODULES)
		test(`${specifier} [m32]`, (t) => runXsTests(t, specifier, { variant: "m32" }));
}
