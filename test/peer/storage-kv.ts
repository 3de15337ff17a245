// Peer for test/e2e/storage.test.mjs, one step per run (--step):
//   write   stores known keys (string and buffer) and a file
//   update  sets "v" to "old", then to "new-value" (two commits)
//   many    sets "keep" to "kept", then "v" to value(1) ... value(--count) (one
//           commit each; the values are long enough that the log fills and the
//           namespace is rewritten every dozen or so)
//   read    prints what is there as one line "storage-kv: {json}", or
//           "storage-kv: error: <message>" when opening or reading throws
import files from "embedded:storage/files";
import keyValue from "embedded:storage/key-value";
import { option } from "host/platform";

const step = option("step");
if (step === "write") {
	const store = keyValue.open({ path: "persist", format: "string" });
	store.write("greeting", "héllo");
	store.format = "buffer";
	store.write("blob", new Uint8Array([1, 2, 3]));
	store.close();
	const file = files.openFile({ path: "keep.txt", mode: "w" });
	file.write(ArrayBuffer.fromString("kept"), 0);
	file.close();
} else if (step === "update") {
	const store = keyValue.open({ path: "persist", format: "string" });
	store.write("v", "old");
	store.write("v", "new-value");
	store.close();
} else if (step === "many") {
	const store = keyValue.open({ path: "persist", format: "string" });
	store.write("keep", "kept");
	for (let i = 1; i <= Number(option("count")); i++) store.write("v", `value-${i}-${"x".repeat(300)}`);
	store.close();
} else if (step === "read") {
	try {
		const store = keyValue.open({ path: "persist", mode: "r", format: "string" });
		const keys = [...store];
		const strings: Record<string, unknown> = {};
		for (const key of keys.filter((k) => k !== "blob")) strings[key] = store.read(key);
		store.format = "buffer";
		const blob = keys.includes("blob") ? [...new Uint8Array(store.read("blob") as ArrayBuffer)] : null;
		store.close();
		let file: string | null = null;
		if ([...files].includes("keep.txt")) {
			const kept = files.openFile({ path: "keep.txt" });
			file = String.fromArrayBuffer(kept.read(100, 0));
			kept.close();
		}
		trace(`storage-kv: ${JSON.stringify({ keys, strings, blob, file })}\n`);
	} catch (error) {
		trace(`storage-kv: error: ${(error as Error).message}\n`);
	}
} else {
	throw new Error(`storage-kv: unknown --step ${step}`);
}
