// util/files exists() and readWhole(): a missing file is told from a failing one
// by listing its directory, never by the error's text, so the lin host's POSIX
// wording and both of littlefs's (debug "No directory entry", release
// "LFS ERR -2") give the same answer, and a real IO error still throws.
import files from "embedded:storage/files";
import type { Directory } from "embedded:storage/files";
import { test, assert } from "testing";
import { exists, readWhole, writeAtomically } from "util/files";
import { replacing } from "./files_fakes";

const ROOT = "util-files-test";
try { files.createDirectory(ROOT); } catch { /* there from an earlier run */ }
const directory = files.openDirectory({ path: ROOT });

/** directory, with status() throwing `message` for every path (as the target's filesystem words it). */
function statusThrowing(message: string): Directory {
	return replacing(directory, (key, real) => key !== "status" ? real : () => { throw new Error(message); });
}

const WORDINGS = [
	"No directory entry",                   // littlefs, debug build
	"LFS ERR -2",                           // littlefs, release build
	"files: status x: not found",           // the lin host's shape
	"something nobody wrote a pattern for", // any other wording
];

test("on the real filesystem a missing file is false and a present one true", () => {
	writeAtomically(directory, "present.txt", ArrayBuffer.fromString("x"));
	assert.equal(exists(directory, "present.txt"), true);
	assert.equal(exists(directory, "absent.txt"), false);
	assert.equal(exists(directory, "no-such-dir/absent.txt"), false, "a missing parent means missing");
	assert.equal(readWhole(directory, "absent.txt", 10).kind, "missing");
});

for (const wording of WORDINGS) {
	test(`a file missing from its directory is missing whatever status() says: "${wording}"`, () => {
		const fake = statusThrowing(wording);
		assert.equal(exists(fake, "absent.txt"), false);
		assert.equal(readWhole(fake, "absent.txt", 10).kind, "missing");
	});

	test(`a listed file whose status() fails is an IO error that throws: "${wording}"`, () => {
		writeAtomically(directory, "listed.txt", ArrayBuffer.fromString("x"));
		const fake = statusThrowing(wording);
		assert.throws(() => exists(fake, "listed.txt"), wording);
	});
}

test("a directory that exists but cannot be listed makes a failing status() an IO error", () => {
	files.createDirectory(`${ROOT}/sub`) || true;
	const fake = replacing(directory, (key, real) =>
		key === "status" ? (path: string) => { if (path !== "sub") throw new Error("LFS ERR -5"); return (real as Directory["status"])(path); }
		: key === "scan" ? () => { throw new Error("LFS ERR -5"); }
		: real);
	assert.throws(() => exists(fake, "sub/file.txt"), "LFS ERR -5");
});
