// Peer for test/e2e/memory.test.mjs: opens long-term memory (--mode full|light)
// in the files root, prints what it found as one JSON line, then saves --writes K
// facts "fact <n>" one by one, printing a line after each one is saved. Run with
// --crash-after N to lose power part-way through the saves.
import files from "embedded:storage/files";
import { option } from "host/platform";
import { openMemory } from "memory/setup";

const mode = option("mode") ?? "full";
const setup = openMemory({
	config: { get: (name) => (name === "memory.mode" ? mode : undefined) },
	files,
	log: (line) => trace(`memory-writes: log ${line}\n`),
});
const found = setup.memory.list().map((entry) => entry.text);
trace(`memory-writes: found ${JSON.stringify(found)}\n`);
const writes = Number(option("writes") ?? "0");
for (let i = 0; i < writes; i++) {
	setup.memory.write(`fact ${found.length + i}`);
	trace(`memory-writes: saved fact ${found.length + i}\n`);
}
