// Peer for test/e2e/storage.test.mjs: the symbolic links the test planted below
// the files root (hosts/lin/src/files.c never follows one). Each operation's
// outcome is printed as one JSON line "storage-links: {...}": "ok ..." or the
// error's message.
import files from "embedded:storage/files";
import { exit } from "host/platform";

function attempt(what: () => unknown): string {
	try {
		const result = what();
		return `ok ${JSON.stringify(result ?? null)}`;
	} catch (error) {
		return (error as Error).message;
	}
}

const readText = (path: string) => {
	const file = files.openFile({ path });
	try {
		return String.fromArrayBuffer(file.read(4096, 0) as ArrayBuffer);
	} finally {
		file.close();
	}
};

const outcome: Record<string, string> = {
	// workspace/config.kv -> ../../nvs/config.kv (a file outside the root)
	readFileLink: attempt(() => readText("workspace/config.kv")),
	writeFileLink: attempt(() => files.openFile({ path: "workspace/config.kv", mode: "r+" }).close()),
	truncateFileLink: attempt(() => files.openFile({ path: "workspace/config.kv", mode: "w" }).close()),
	// workspace/nvs -> ../../nvs (a directory outside the root), and a path through it
	readThroughDirectoryLink: attempt(() => readText("workspace/nvs/config.kv")),
	createThroughDirectoryLink: attempt(() => files.openFile({ path: "workspace/nvs/new.txt", mode: "w" }).close()),
	scanDirectoryLink: attempt(() => [...files.scan("workspace/nvs")]),
	openDirectoryLink: attempt(() => files.openDirectory({ path: "workspace/nvs" }).close()),
	statusThroughDirectoryLink: attempt(() => files.status("workspace/nvs/config.kv").size),
	moveIntoDirectoryLink: attempt(() => files.move("workspace/plain.txt", "workspace/nvs/moved.txt")),
	mkdirThroughDirectoryLink: attempt(() => files.createDirectory("workspace/nvs/made")),
	// What a link itself answers: its own status, deleted itself.
	linkStatus: attempt(() => { const s = files.status("workspace/config.kv"); return [s.isSymbolicLink(), s.isFile()]; }),
	scanWorkspace: attempt(() => [...files.scan("workspace")]),
	plainRead: attempt(() => readText("workspace/plain.txt")),
	deleteFileLink: attempt(() => files.delete("workspace/config.kv")),
};
trace(`storage-links: ${JSON.stringify(outcome)}\n`);
exit(0);
