// Long-term memory in light mode (memory/light): MEMORY.md as the store, the same
// tools mapped onto its lines, its limit, damaged files, and the provider.
import { MEMORY_CONTEXT_MAX_BYTES, MEMORY_LIGHT_MAX_BYTES, MEMORY_RELEVANT_MAX_BYTES } from "budgets";
import { LIGHT_FILE, LightMemory } from "memory/light";
import { openMemory } from "memory/setup";
import { memoryTools } from "memory/tools";
import { assert, test } from "testing";
import { callTool, freshDirectory, logLines, names, readText, request, settings, writeRaw } from "./memory_fakes";

test("light mode: memory_write appends a line, memory_read and memory_search find it, memory_forget removes it", async () => {
	const directory = freshDirectory("lround");
	const tools = memoryTools(new LightMemory(directory, () => {}));
	assert.equal(await callTool(tools, "memory_write", { text: "The user's cat is called Mochi.", tags: ["pets"] }), "saved as 1");
	assert.equal(await callTool(tools, "memory_write", { text: "Green tea\nin the morning." }), "saved as 2");
	assert.equal(readText(directory, LIGHT_FILE), "- The user's cat is called Mochi. #pets\n- Green tea in the morning.\n");
	assert.equal(await callTool(tools, "memory_read", { id: "2" }), "2: Green tea in the morning.");
	assert.equal(await callTool(tools, "memory_search", { query: "cat" }), "1: The user's cat is called Mochi. #pets [tags: pets]");
	assert.equal(await callTool(tools, "memory_search", { tag: "pets" }), "1: The user's cat is called Mochi. #pets [tags: pets]");
	assert.equal(await callTool(tools, "memory_forget", { id: "1" }), "forgot 1: The user's cat is called Mochi. #pets");
	assert.equal(readText(directory, LIGHT_FILE), "- Green tea in the morning.\n");
	assert.equal(await callTool(tools, "memory_forget", { id: "green TEA" }), "forgot 1: Green tea in the morning.", "by text, any case");
	assert.equal(readText(directory, LIGHT_FILE), "");
});

test("light mode: forgetting by text that several lines contain is refused, naming their line numbers", () => {
	const memory = new LightMemory(freshDirectory("lambig"), () => {});
	memory.write("tea at seven");
	memory.write("coffee at noon");
	memory.write("tea at five");
	assert.throws(() => memory.forget("tea"), "2 lines contain \"tea\" (lines 1, 3): give the line number");
	assert.throws(() => memory.forget("juice"), "no line of MEMORY.md contains \"juice\"");
	assert.throws(() => memory.read("9"), "there is no memory at line \"9\"");
	assert.equal(memory.list().length, 3, "nothing was removed");
});

test("light mode: headings and blank lines a person wrote keep their numbers but are not memories", () => {
	const directory = freshDirectory("lheadings");
	writeRaw(directory, LIGHT_FILE, "# Memory\n\n- likes jazz #music\n");
	const memory = new LightMemory(directory, () => {});
	assert.deepEqual(memory.list().map((e) => [e.id, e.text, e.tags]), [["3", "likes jazz #music", ["music"]]]);
	assert.throws(() => memory.read("1"), "there is no memory at line \"1\"");
	memory.write("likes blues");
	assert.equal(readText(directory, LIGHT_FILE), "# Memory\n\n- likes jazz #music\n- likes blues\n");
});

test("light mode: a write that would take MEMORY.md over its limit is refused with a sentence", () => {
	const directory = freshDirectory("lfull");
	const memory = new LightMemory(directory, () => {});
	const line = "x".repeat(1000);
	let saved = 0;
	let refusal = "";
	for (let i = 0; i < MEMORY_LIGHT_MAX_BYTES / 1000 + 2 && !refusal; i++) {
		try {
			memory.write(line);
			saved++;
		} catch (error) {
			refusal = (error as Error).message;
		}
	}
	assert.match(refusal, new RegExp(`^MEMORY\\.md would grow to \\d+ bytes; it holds at most ${MEMORY_LIGHT_MAX_BYTES}: forget lines`));
	assert.equal(memory.list().length, saved);
	assert.ok(ArrayBuffer.fromString(readText(directory, LIGHT_FILE)).byteLength <= MEMORY_LIGHT_MAX_BYTES);
});

test("light mode: MEMORY.md survives reopening", () => {
	const directory = freshDirectory("lreopen");
	new LightMemory(directory, () => {}).write("remember the milk", ["shopping"]);
	assert.deepEqual(new LightMemory(directory, () => {}).list().map((e) => e.text), ["remember the milk #shopping"]);
});

test("light mode: a MEMORY.md that is not UTF-8 text is kept aside as .bad and memory starts usable", () => {
	const directory = freshDirectory("lbad");
	writeRaw(directory, LIGHT_FILE, new Uint8Array([0x2D, 0x20, 0xC3, 0x28, 0x00, 0xFF]).buffer);
	const { log, lines } = logLines();
	const memory = new LightMemory(directory, log);
	assert.equal(memory.list().length, 0);
	assert.match(lines[0] ?? "", /MEMORY\.md is damaged \(it is not UTF-8 text\); it was kept as MEMORY\.md\.bad/);
	assert.ok(names(directory).includes("MEMORY.md.bad"));
	memory.write("works again");
	assert.equal(readText(directory, LIGHT_FILE), "- works again\n");
});

test("light mode: a stale MEMORY.md.tmp from an interrupted write is discarded and the saved lines stay", () => {
	const directory = freshDirectory("ltemp");
	new LightMemory(directory, () => {}).write("old line");
	writeRaw(directory, LIGHT_FILE + ".tmp", "- old line\n- half a ne");
	const memory = new LightMemory(directory, () => {});
	assert.deepEqual(memory.list().map((e) => e.text), ["old line"]);
	assert.ok(!names(directory).includes(LIGHT_FILE + ".tmp"));
});

test("light mode: the provider is undefined when MEMORY.md is empty and stays within its budget otherwise", async () => {
	const directory = freshDirectory("lprovider");
	const setup = openMemory({ config: settings({ "memory.mode": "light" }), files: directory, log: () => {} });
	assert.equal(setup.memory.mode, "light");
	const provider = setup.providers.find((p) => p.name === "memory")!;
	assert.equal(await provider.collect(request("hi")), undefined);
	for (let i = 0; i < 40; i++) setup.memory.write(`line ${i} `.padEnd(200, "."));
	const content = await provider.collect(request("hi"));
	assert.ok(content?.kind === "system_prompt");
	const text = content?.kind === "system_prompt" ? content.content : "";
	assert.ok(ArrayBuffer.fromString(text).byteLength <= MEMORY_CONTEXT_MAX_BYTES, "within the budget");
	assert.match(text, /^Notes from MEMORY\.md/);
	assert.match(text, /\n40: line 39 /, "the newest line is in");
	assert.ok(names(directory).includes("memory"), "files live in the memory directory");
});

test("light mode: the prompt sections, list and search follow every write and forget (the index is made again)", () => {
	const memory = new LightMemory(freshDirectory("lreindex"), () => {});
	const relevant = (hint: string) => memory.relevant(hint, 200, MEMORY_RELEVANT_MAX_BYTES) ?? "";
	memory.write("The garden gate code is 4711.");
	for (let i = 0; i < 6; i++) memory.write(`Filler fact number ${i} about nothing in particular.`);
	assert.match(relevant("gate code"), /\n1: The garden gate code is 4711\.$/);
	memory.write("The shed key is under the pot.", undefined, "1");
	assert.equal(relevant("gate code"), "", "the replaced line's words no longer match");
	assert.match(relevant("shed key"), /\n1: The shed key is under the pot\.$/);
	memory.forget("1");
	assert.equal(relevant("shed key"), "", "a forgotten line is not offered");
	assert.deepEqual(memory.search("shed", undefined, 5), []);
	assert.equal(memory.list().length, 6);
	const listed = memory.list();
	listed[0].tags.push("changed");
	listed[0].text = "changed";
	assert.equal(memory.list()[0].text, "Filler fact number 0 about nothing in particular.", "a listed entry is a copy");
	assert.deepEqual(memory.list()[0].tags, []);
	assert.match(memory.context(MEMORY_CONTEXT_MAX_BYTES) ?? "", /\n6: Filler fact number 5 about nothing in particular\.$/);
});
