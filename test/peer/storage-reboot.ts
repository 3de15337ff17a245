// Peer for test/e2e/storage.test.mjs: storage across reboot() in one process,
// where the XS machine and the native classes are created anew. The first boot
// writes and reboots; the second reads back, prints the result and exits.
import files from "embedded:storage/files";
import keyValue from "embedded:storage/key-value";
import { exit, reboot } from "host/platform";

const store = keyValue.open({ path: "boots", format: "string" });
const boots = Number(store.read("count") ?? "0") + 1;
store.write("count", String(boots));
store.close();
if (boots === 1) {
	const file = files.openFile({ path: "before-reboot.txt", mode: "w" });
	file.write(ArrayBuffer.fromString("first boot"), 0);
	file.close();
	reboot();
} else {
	const file = files.openFile({ path: "before-reboot.txt" });
	trace(`storage-reboot: boot ${boots} read "${String.fromArrayBuffer(file.read(100, 0))}" scan ${[...files].join(",")} status ${files.status("before-reboot.txt").isFile()}\n`);
	file.close();
	exit(0);
}
