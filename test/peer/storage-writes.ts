// Peer for test/e2e/storage.test.mjs: writes --writes K chunks of --chunk
// bytes to log.bin, chunk i filled with the byte i + 1 at position i * chunk,
// one write each. Run with --crash-after N to lose power part-way.
import files from "embedded:storage/files";
import { option } from "host/platform";

const writes = Number(option("writes") ?? "10");
const chunk = Number(option("chunk") ?? "100");
const file = files.openFile({ path: "log.bin", mode: "w" });
for (let i = 0; i < writes; i++) file.write(new Uint8Array(chunk).fill(i + 1), i * chunk);
file.close();
trace("storage-writes: done\n");
