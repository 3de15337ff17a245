// Peer for test/e2e/storage.test.mjs: one storage operation of each kind, in
// this order: 1 write, 2 flush, 3 setSize, 4 move, 5 key-value write,
// 6 key-value delete. A run with --crash-after N must leave exactly the first
// N done.
import files from "embedded:storage/files";
import keyValue from "embedded:storage/key-value";

const file = files.openFile({ path: "ops.bin", mode: "w" });
file.write(ArrayBuffer.fromString("12345678"), 0);
file.flush();
file.setSize(4);
file.close();
files.move("ops.bin", "ops-moved.bin");
const store = keyValue.open({ path: "ops", format: "string" });
store.write("a", "1");
store.delete("a");
store.close();
trace("storage-ops: done\n");
