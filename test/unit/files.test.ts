// embedded:storage/files on the lin host (hosts/lin/src/files.c): file IO at
// positions, directories, atomic move, path confinement, argument and receiver
// checks, and the shapes typings/lin/storage.d.ts declares. Every run gets a
// fresh --data directory, so paths here need only be unique within this file.
import files from "embedded:storage/files";
import type { Directory, File } from "embedded:storage/files";
import { assert, test } from "testing";

const bytes = (text: string) => ArrayBuffer.fromString(text);
const text = (buffer: ArrayBuffer) => String.fromArrayBuffer(buffer);

function writeFile(path: string, content: string, directory: Directory = files): void {
	const file = directory.openFile({ path, mode: "w" });
	file.write(bytes(content), 0);
	file.close();
}

function readFile(path: string, directory: Directory = files): string {
	const file = directory.openFile({ path });
	try {
		return text(file.read(file.status().size, 0));
	} finally {
		file.close();
	}
}

test("writes at positions read back, and a write past the end extends the file with zeros", () => {
	const file = files.openFile({ path: "positions.bin", mode: "w+" });
	file.write(bytes("hello"), 0);
	file.write(bytes("J"), 0);
	file.write(new Uint8Array([0x41, 0x42]), 8);
	assert.equal(file.status().size, 10);
	assert.deepEqual(new Uint8Array(file.read(10, 0)), new Uint8Array([0x4A, 0x65, 0x6C, 0x6C, 0x6F, 0, 0, 0, 0x41, 0x42]));
	assert.equal(text(file.read(3, 1)), "ell");
	file.close();
});

test("read into a buffer fills it and returns the count, short at the end of the file", () => {
	writeFile("into.txt", "abcdef");
	const file = files.openFile({ path: "into.txt" });
	const buffer = new Uint8Array(4);
	assert.equal(file.read(buffer, 1), 4);
	assert.equal(text(buffer.buffer), "bcde");
	const view = new DataView(new ArrayBuffer(8), 2, 4);
	assert.equal(file.read(view, 4), 2);
	assert.equal(view.getUint8(0), 0x65);
	assert.equal(view.getUint8(1), 0x66);
	assert.equal(file.read(new ArrayBuffer(4), 6), 0);
	file.close();
});

test("reading at or past the end returns an empty ArrayBuffer, and a big count allocates only what is there", () => {
	writeFile("short.txt", "xyz");
	const file = files.openFile({ path: "short.txt" });
	assert.equal(file.read(10, 3).byteLength, 0);
	assert.equal(file.read(10, 100).byteLength, 0);
	assert.equal(file.read(2_000_000_000, 0).byteLength, 3);
	file.close();
});

test("setSize grows the file with zeros and shrinks it", () => {
	const file = files.openFile({ path: "size.bin", mode: "w+" });
	file.write(bytes("abc"), 0);
	file.setSize(6);
	assert.deepEqual(new Uint8Array(file.read(6, 0)), new Uint8Array([0x61, 0x62, 0x63, 0, 0, 0]));
	file.setSize(1);
	assert.equal(file.status().size, 1);
	assert.equal(text(file.read(6, 0)), "a");
	file.close();
});

test("status reports the size and the kind of files and directories", () => {
	writeFile("status.txt", "12345");
	files.createDirectory("status-dir");
	const file = files.status("status.txt");
	assert.equal(file.size, 5);
	assert.equal(typeof file.mode, "number");
	assert.deepEqual([file.isFile(), file.isDirectory(), file.isSymbolicLink()], [true, false, false]);
	const directory = files.status("status-dir/");
	assert.deepEqual([directory.isFile(), directory.isDirectory()], [false, true]);
	const opened = files.openFile({ path: "status.txt" });
	assert.equal(opened.status().size, 5);
	assert.ok(opened.status().isFile());
	opened.close();
	assert.throws(() => files.status("status-missing"), "files: not found: status-missing");
});

test("flush after writes succeeds and keeps the bytes", () => {
	const file = files.openFile({ path: "flush.txt", mode: "w" });
	file.write(bytes("durable"), 0);
	assert.equal(file.flush(), undefined);
	file.close();
	assert.equal(readFile("flush.txt"), "durable");
});

test("modes: r refuses writes, r+ needs the file, w empties it, w+ reads back", () => {
	writeFile("modes.txt", "original");
	const reader = files.openFile({ path: "modes.txt", mode: "r" });
	assert.throws(() => reader.write(bytes("x"), 0), "files: read-only (opened with mode \"r\"): modes.txt");
	assert.throws(() => reader.setSize(0), "read-only");
	reader.close();
	assert.throws(() => files.openFile({ path: "modes-missing.txt", mode: "r+" }), "files: not found: modes-missing.txt");
	const updater = files.openFile({ path: "modes.txt", mode: "r+" });
	updater.write(bytes("O"), 0);
	updater.close();
	assert.equal(readFile("modes.txt"), "Original");
	const writer = files.openFile({ path: "modes.txt", mode: "w" });
	assert.equal(writer.status().size, 0, "w empties the file");
	assert.throws(() => writer.read(1, 0), "files: not open for reading");
	writer.close();
	const both = files.openFile({ path: "modes.txt", mode: "w+" });
	both.write(bytes("again"), 0);
	assert.equal(text(both.read(5, 0)), "again");
	both.close();
	files.createDirectory("modes-dir");
	assert.throws(() => files.openFile({ path: "modes-dir", mode: "w" }), "files: not a file: modes-dir");
});

test("move replaces an existing target atomically: the source is gone, a reader sees the old or the new file", () => {
	writeFile("move-target.txt", "old content");
	writeFile("move-source.txt", "new");
	const before = files.openFile({ path: "move-target.txt" });
	files.move("move-source.txt", "move-target.txt");
	assert.equal(files.delete("move-source.txt"), false, "source is gone");
	assert.equal(text(before.read(100, 0)), "old content", "an open reader keeps the old file whole");
	before.close();
	assert.equal(readFile("move-target.txt"), "new", "a new reader sees the new file whole");
	assert.throws(() => files.move("move-missing.txt", "x.txt"), "files: not found: move-missing.txt -> x.txt");
});

test("move into another directory takes it as the third argument", () => {
	files.createDirectory("move-into");
	const into = files.openDirectory({ path: "move-into" });
	writeFile("moved.txt", "travels");
	files.move("moved.txt", "arrived.txt", into);
	assert.equal(readFile("move-into/arrived.txt"), "travels");
	assert.equal(readFile("arrived.txt", into), "travels");
	into.move("arrived.txt", "back.txt", files);
	assert.equal(readFile("back.txt"), "travels");
	files.move("back.txt", "still-here.txt", undefined);
	assert.equal(readFile("still-here.txt"), "travels", "an undefined third argument is no target");
	files.move("still-here.txt", "back.txt");
	into.close();
	assert.throws(() => files.move("back.txt", "x.txt", into), "files: move target directory is closed");
	assert.throws(() => files.move("back.txt", "x.txt", {} as Directory), "files: move target must be a directory", TypeError);
});

test("delete removes files and empty directories and reports a missing path as false", () => {
	writeFile("gone.txt", "x");
	assert.equal(files.delete("gone.txt"), true);
	assert.equal(files.delete("gone.txt"), false);
	files.createDirectory("full-dir");
	writeFile("full-dir/a.txt", "x");
	assert.throws(() => files.delete("full-dir"), "files: directory not empty: full-dir");
	assert.equal(files.delete("full-dir/a.txt"), true);
	assert.equal(files.delete("full-dir"), true);
	assert.throws(() => files.status("full-dir"), "not found");
});

test("createDirectory, openDirectory and scan: names sorted, nested paths, the directory iterates", () => {
	assert.equal(files.createDirectory("tree"), true);
	assert.equal(files.createDirectory("tree"), false, "already there");
	assert.equal(files.createDirectory("tree/sub"), true);
	writeFile("tree/b.txt", "b");
	writeFile("tree/a.txt", "a");
	writeFile("tree/sub/c.txt", "c");
	assert.deepEqual([...files.scan("tree")], ["a.txt", "b.txt", "sub"]);
	const tree = files.openDirectory({ path: "tree" });
	assert.deepEqual([...tree.scan()], ["a.txt", "b.txt", "sub"]);
	assert.deepEqual([...tree], ["a.txt", "b.txt", "sub"]);
	assert.deepEqual([...tree.scan("sub")], ["c.txt"]);
	assert.equal(readFile("sub/c.txt", tree), "c");
	const sub = tree.openDirectory({ path: "sub" });
	assert.throws(() => sub.openFile({ path: "missing.txt" }), "files: not found: tree/sub/missing.txt");
	sub.close();
	tree.close();
	assert.ok([...files].includes("tree"), "the root iterates too");
	assert.throws(() => files.scan("tree/a.txt"), "files: not a directory: tree/a.txt");
	assert.throws(() => files.openDirectory({ path: "tree/a.txt" }), "files: not a directory: tree/a.txt");
	assert.throws(() => files.openDirectory({ path: "no-such-dir" }), "files: not found: no-such-dir");
	assert.throws(() => files.createDirectory("no-such-dir/x"), "files: not found: no-such-dir/x");
});

test("paths that escape the storage root are refused, from the root and from a sub-directory", () => {
	files.createDirectory("jail");
	const jail = files.openDirectory({ path: "jail" });
	const escapes = ["/etc/passwd", "..", "../x", "a/../../x", "a/..", "a\u0000b", "/"];
	for (const path of escapes) {
		assert.throws(() => files.openFile({ path, mode: "w" }), "files: path escapes the storage root", RangeError);
		assert.throws(() => jail.openFile({ path }), "files: path escapes the storage root", RangeError);
		assert.throws(() => files.status(path), "path escapes the storage root");
		assert.throws(() => files.delete(path), "path escapes the storage root");
		assert.throws(() => files.createDirectory(path), "path escapes the storage root");
		assert.throws(() => files.scan(path), "path escapes the storage root");
		assert.throws(() => jail.openDirectory({ path }), "path escapes the storage root");
		assert.throws(() => files.move(path, "x"), "path escapes the storage root");
		assert.throws(() => files.move("x", path), "path escapes the storage root");
	}
	jail.close();
});

test("an error names a long path in full, past XS's 127-byte message limit", () => {
	files.createDirectory("deep");
	const path = `deep/${"n".repeat(200)}.txt`;
	assert.throws(() => files.openFile({ path }), `files: not found: ${path}`);
	const error = (() => { try { files.status(path); } catch (e) { return e as Error; } })();
	assert.equal(error?.message, `files: not found: ${path}`);
	assert.ok(error instanceof Error && !(error instanceof TypeError), "an Error, not a TypeError");
});

test("empty, \".\" and over-long paths are refused with specific errors", () => {
	assert.throws(() => files.status(""), "files: path must not be empty", RangeError);
	assert.throws(() => files.status("a//b"), "files: invalid path (empty or \".\" part): a//b", RangeError);
	assert.throws(() => files.status("./a"), "invalid path", RangeError);
	assert.throws(() => files.status("a/."), "invalid path", RangeError);
	assert.throws(() => files.status("x".repeat(512)), "files: path too long", RangeError);
	files.createDirectory("long");
	const long = files.openDirectory({ path: "long" });
	assert.throws(() => long.status("y".repeat(508)), "files: path too long (at most 511 bytes below the root)", RangeError);
	long.close();
});

test("File methods refuse bad arguments with specific errors", () => {
	const file = files.openFile({ path: "arguments.bin", mode: "w+" });
	const f = file as any;
	assert.throws(() => f.read(), "files: byte count or buffer required", TypeError);
	assert.throws(() => f.read(4), "files: position required", TypeError);
	assert.throws(() => f.read(4, "0"), "files: position must be a number", TypeError);
	assert.throws(() => f.read(4, -1), "files: invalid position", RangeError);
	assert.throws(() => f.read(4, 1.5), "files: invalid position", RangeError);
	assert.throws(() => f.read(4, 2 ** 31), "files: invalid position", RangeError);
	assert.throws(() => f.read(-1, 0), "files: invalid byte count", RangeError);
	assert.throws(() => f.read(NaN, 0), "files: invalid byte count", RangeError);
	assert.throws(() => f.read("4", 0), "files: expected a buffer", TypeError);
	assert.throws(() => f.write(), "files: buffer required", TypeError);
	assert.throws(() => f.write(bytes("x")), "files: position required", TypeError);
	assert.throws(() => f.write("text", 0), "files: expected a buffer", TypeError);
	assert.throws(() => f.write([1, 2], 0), "files: expected a buffer", TypeError);
	assert.throws(() => f.write(bytes("xy"), 2 ** 31 - 1), "files: write would pass", RangeError);
	assert.throws(() => f.setSize(), "files: size required", TypeError);
	assert.throws(() => f.setSize(-2), "files: invalid size", RangeError);
	assert.throws(() => f.setSize("1"), "files: size must be a number", TypeError);
	file.close();
});

test("Directory methods refuse bad arguments with specific errors", () => {
	const d = files as any;
	assert.throws(() => d.openFile(), "files: openFile needs an options object {path}", TypeError);
	assert.throws(() => d.openFile("a.txt"), "files: openFile needs an options object", TypeError);
	assert.throws(() => d.openFile({}), "files: path must be a string", TypeError);
	assert.throws(() => d.openFile({ path: 7 }), "files: path must be a string", TypeError);
	assert.throws(() => d.openFile({ path: "a.txt", mode: "a" }), "files: invalid mode \"a\" (use \"r\", \"r+\", \"w\" or \"w+\")", RangeError);
	assert.throws(() => d.openFile({ path: "a.txt", mode: 1 }), "files: mode must be a string", TypeError);
	assert.throws(() => d.openDirectory(), "files: openDirectory needs an options object", TypeError);
	assert.throws(() => d.openDirectory({ path: null }), "files: path must be a string", TypeError);
	assert.throws(() => d.delete(), "files: path required", TypeError);
	assert.throws(() => d.delete(1), "files: path must be a string", TypeError);
	assert.throws(() => d.move("a"), "files: target path required", TypeError);
	assert.throws(() => d.move(1, "b"), "files: path must be a string", TypeError);
	assert.throws(() => d.move("a", {}), "files: path must be a string", TypeError);
	assert.throws(() => d.status(), "files: path required", TypeError);
	assert.throws(() => d.createDirectory(), "files: path required", TypeError);
	assert.throws(() => d.createDirectory({ path: "x" }), "files: path must be a string", TypeError);
	assert.throws(() => d.scan(5), "files: path must be a string", TypeError);
});

test("every method refuses a wrong receiver", () => {
	const file = files.openFile({ path: "receiver.txt", mode: "w+" });
	const fileMethods = ["read", "write", "status", "setSize", "flush", "close"] as const;
	const directoryMethods = ["openFile", "openDirectory", "delete", "move", "status", "createDirectory", "scan", "close"] as const;
	for (const name of fileMethods) {
		const method = (file as any)[name] as Function;
		for (const receiver of [{}, files, undefined, 42]) {
			assert.throws(() => method.call(receiver, 1, 0), "files: invalid receiver", TypeError);
			assert.throws(() => method.call(receiver), "files: invalid receiver", TypeError);
		}
	}
	for (const name of directoryMethods) {
		const method = (files as any)[name] as Function;
		for (const receiver of [{}, file, undefined, "root"]) {
			assert.throws(() => method.call(receiver, "x", "y"), "files: invalid receiver", TypeError);
			assert.throws(() => method.call(receiver), "files: invalid receiver", TypeError);
		}
	}
	const status = files.status("receiver.txt") as any;
	for (const name of ["isFile", "isDirectory", "isSymbolicLink"])
		assert.throws(() => status[name].call({ mode: 0 }), "files: invalid receiver", TypeError);
	file.close();
});

test("closed files and directories throw \"closed\"; close is idempotent; the root cannot be closed", () => {
	const file = files.openFile({ path: "closed.txt", mode: "w+" });
	file.close();
	file.close();
	assert.throws(() => file.read(1, 0), "files: closed");
	assert.throws(() => file.write(bytes("x"), 0), "files: closed");
	assert.throws(() => file.status(), "files: closed");
	assert.throws(() => file.setSize(0), "files: closed");
	assert.throws(() => file.flush(), "files: closed");
	files.createDirectory("closed-dir");
	const directory = files.openDirectory({ path: "closed-dir" });
	directory.close();
	directory.close();
	assert.throws(() => directory.scan(), "files: closed");
	assert.throws(() => directory.openFile({ path: "a" }), "files: closed");
	assert.throws(() => files.close(), "files: the root directory is shared by every module and cannot be closed", TypeError);
	assert.ok([...files].includes("closed.txt"), "the root still works");
});

test("a directory closed by a getter of the options it was given throws \"closed\"", () => {
	files.createDirectory("closed-by-getter");
	const directory = files.openDirectory({ path: "closed-by-getter" });
	assert.throws(() => directory.openFile({ mode: "w", get path() { directory.close(); return "f"; } }), "files: closed");
	const again = files.openDirectory({ path: "closed-by-getter" });
	assert.throws(() => again.openDirectory({ get path() { again.close(); return "sub"; } }), "files: closed");
	assert.equal(files.delete("closed-by-getter"), true, "nothing was created in it");
});

test("the classes cannot be constructed directly; files are opened", () => {
	const file = files.openFile({ path: "construct.txt", mode: "w" });
	const FileClass = (file as any).constructor;
	const DirectoryClass = (files as any).constructor;
	assert.throws(() => new FileClass({ path: "x" }), "files: use files.openFile({path, mode})", TypeError);
	assert.throws(() => new DirectoryClass({ path: "x" }), "files: use files.openDirectory({path})", TypeError);
	file.close();
});

test("the shapes match typings/lin/storage.d.ts", () => {
	assert.ok(Object.isFrozen(files), "the root object is frozen, as the SDK's");
	assert.equal((files as any)[Symbol.iterator], (files as any).scan, "[Symbol.iterator] is scan");
	const file: File = files.openFile({ path: "shapes.txt", mode: "w+" });
	assert.equal(file.write(bytes("abc"), 0), undefined);
	const read: unknown = file.read(3, 0);
	assert.ok(read instanceof ArrayBuffer, "read(count) returns an ArrayBuffer");
	assert.equal(typeof file.read(new Uint8Array(1), 0), "number");
	assert.equal(file.setSize(3), undefined);
	const status = file.status();
	assert.deepEqual(Object.keys(status).sort(), ["mode", "size"]);
	assert.equal(typeof status.size, "number");
	assert.equal(file.close(), undefined);
	assert.equal(typeof files.createDirectory("shapes-dir"), "boolean");
	assert.equal(typeof files.delete("shapes-dir"), "boolean");
	assert.equal(files.move("shapes.txt", "shapes2.txt"), undefined);
	const iterator = files.scan();
	assert.equal(typeof iterator.next, "function");
	assert.ok([...iterator].every((name) => typeof name === "string"));
	const methods = ["openFile", "openDirectory", "delete", "move", "status", "createDirectory", "scan", "close"];
	assert.ok(methods.every((m) => typeof (files as any)[m] === "function"), "Directory methods");
});
