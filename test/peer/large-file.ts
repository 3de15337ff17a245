// Peer for test/e2e/m32.test.mjs: opens large.bin (made by the test, over 2 GiB,
// sparse), traces its size and its first 8 bytes: a 32-bit host whose off_t
// were 32 bits could not open it (EOVERFLOW).
import files from "embedded:storage/files";

const file = files.openFile({ path: "large.bin" });
const size = file.status().size;
const head = String.fromArrayBuffer(file.read(8, 0));
file.close();
trace(`large-file: ${JSON.stringify({ size, head })}\n`);
