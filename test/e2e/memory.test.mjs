// Long-term memory under power loss: the host's fault injection (--crash-after,
// --crash-seed; hosts/lin/src/files.c) cuts power at every storage operation of a
// series of memory saves, in both modes; the next start must find the memory "old
// or new, never torn": exactly the saves acknowledged before the cut, or those and
// the one in flight, with no damaged file and no temp file left behind.
// The XS side is test/peer/memory-writes.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { TEST_MAP } from "../../tools/build.mjs";
import { SANITIZER_ERROR, VARIANTS, runHost } from "./xs.mjs";

const POWER_LOSS_EXIT = 86;
const WRITES = 4;

function peer(variant, data, options) {
	const args = ["--modules", TEST_MAP, "--main", "test/peer/memory-writes", "--data", data];
	for (const [key, value] of Object.entries(options)) args.push(`--${key}`, String(value));
	return runHost(args, { variant });
}

function found(r) {
	assert.equal(r.code, 0, r.stderr);
	assert.doesNotMatch(r.stderr, SANITIZER_ERROR);
	const line = r.stderr.split("\n").find((l) => l.startsWith("memory-writes: found "));
	assert.ok(line, r.stderr);
	return JSON.parse(line.slice("memory-writes: found ".length));
}

const facts = (n) => Array.from({ length: n }, (_, i) => `fact ${i}`);

for (const variant of VARIANTS) {
	for (const mode of ["full", "light"]) {
		test(`a power cut at any storage operation of memory saves leaves the saved facts, old or new, never torn [${mode}, ${variant}]`, async () => {
			const root = mkdtempSync(join(tmpdir(), "xsclaw-memory-"));
			try {
				const counted = await peer(variant, join(root, "count"), { mode, writes: WRITES, "count-writes": 1 });
				assert.equal(counted.code, 0, counted.stderr);
				const operations = Number(/storage operations: (\d+)/.exec(counted.stderr)?.[1]);
				assert.ok(operations > WRITES, `each save is several operations (${counted.stderr})`);
				for (let n = 0; n < operations; n++) {
					const data = join(root, `cut-${n}`);
					const cut = await peer(variant, data, { mode, writes: WRITES, "crash-after": n, "crash-seed": n + 1 });
					assert.equal(cut.code, POWER_LOSS_EXIT, `cut after ${n}: ${cut.stderr}`);
					const acknowledged = cut.stderr.split("\n").filter((l) => l.startsWith("memory-writes: saved ")).length;
					const after = await peer(variant, data, { mode, writes: 0 });
					const kept = found(after);
					assert.ok(kept.length === acknowledged || kept.length === acknowledged + 1,
						`cut after ${n}: ${acknowledged} saves acknowledged, ${kept.length} found`);
					assert.deepEqual(kept, facts(kept.length), `cut after ${n}: the facts in order`);
					assert.doesNotMatch(after.stderr, /is damaged/, `cut after ${n}: no file was damaged`);
					const left = readdirSync(join(data, "files", "memory"));
					assert.ok(!left.some((name) => name.endsWith(".tmp") || name.endsWith(".bad")), `cut after ${n}: ${left}`);
				}
				assert.ok(existsSync(join(root, "count", "files", "memory")));
			} finally {
				rmSync(root, { recursive: true, force: true });
			}
		});
	}
}
