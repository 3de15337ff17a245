// Long-term memory in full mode (memory/records): the tools' round trip, ranking,
// limits, persistence, damaged files, interrupted writes, and the "memory" provider.
import type { Directory } from "embedded:storage/files";
import { MEMORY_CONTEXT_MAX_BYTES, MEMORY_RECORDS_MAX, MEMORY_RECORD_MAX_BYTES, MEMORY_RELEVANT_MAX_BYTES, MEMORY_TAGS_MAX } from "budgets";
import { ProviderFlag } from "core/types";
import { memoryProvider, relevantMemoryProvider } from "memory/providers";
import { FullMemory, RECORDS_FILE, encodeRecords } from "memory/records";
import { openMemory } from "memory/setup";
import { memoryTools } from "memory/tools";
import { assert, test } from "testing";
import { beforeOpenFile, replacing } from "./files_fakes";
import { callTool, freshDirectory, logLines, names, readRaw, request, settings, writeRaw } from "./memory_fakes";

let clock = 1_700_000_000_000;
const tick = () => (clock += 1000);

function open(directory: Directory, log: (line: string) => void = () => {}): FullMemory {
	return new FullMemory(directory, log, tick);
}

test("full mode: memory_write, memory_read, memory_search and memory_forget round trip", async () => {
	const tools = memoryTools(open(freshDirectory("round")));
	assert.equal(await callTool(tools, "memory_write", { text: "The user's cat is called Mochi.", tags: ["pets", "#Family"] }), "saved as m1");
	assert.equal(await callTool(tools, "memory_write", { text: "The user drinks green tea in the morning." }), "saved as m2");
	assert.match(await callTool(tools, "memory_read", { id: "m1" }), /^m1: The user's cat is called Mochi\. \[tags: pets, family\] \(saved /);
	assert.match(await callTool(tools, "memory_search", { query: "cat" }), /^m1: The user's cat/);
	assert.equal(await callTool(tools, "memory_forget", { id: "m1" }), "forgot m1: The user's cat is called Mochi.");
	assert.equal(await callTool(tools, "memory_search", { query: "cat" }), "no memory matches that search.");
	assert.match(await callTool(tools, "memory_read", { id: "2" }), /^m2: The user drinks green tea/, "a bare number means m<number>");
});

test("full mode: memory_write with an id replaces that memory's text and keeps its tags", async () => {
	const memory = open(freshDirectory("replace"));
	const tools = memoryTools(memory);
	await callTool(tools, "memory_write", { text: "The user lives in Berlin.", tags: ["home"] });
	assert.equal(await callTool(tools, "memory_write", { text: "The user lives in Hamburg.", id: "m1" }), "replaced m1");
	const entry = memory.read("m1");
	assert.equal(entry.text, "The user lives in Hamburg.");
	assert.deepEqual(entry.tags, ["home"]);
	assert.ok(entry.updated > entry.created, "updated moves on");
	assert.equal(memory.list().length, 1);
});

test("full mode: search ranks whole-word and tag hits above substring hits, newer first on a tie", () => {
	const memory = open(freshDirectory("rank"));
	memory.write("A teapot stands on the shelf.");              // m1: "tea" only inside a word
	memory.write("Green tea is the favourite drink.");          // m2: whole word
	memory.write("Coffee after lunch.", ["tea"]);               // m3: tag only
	memory.write("Black tea with milk on Sundays.");            // m4: whole word, newer than m2
	assert.deepEqual(memory.search("tea", undefined, 8).map((e) => e.id), ["m3", "m4", "m2", "m1"]);
	assert.deepEqual(memory.search("tea", undefined, 2).map((e) => e.id), ["m3", "m4"], "limit bounds the results");
	assert.deepEqual(memory.search("green tea", undefined, 8)[0].id, "m2", "more words matched ranks higher");
});

test("full mode: a tag filter keeps only memories with that tag, with or without words", async () => {
	const memory = open(freshDirectory("tag"));
	memory.write("Mochi is a cat.", ["pets"]);
	memory.write("The cat food brand is Felix.", ["shopping"]);
	memory.write("Walk the dog at six.", ["pets"]);
	assert.deepEqual(memory.search("", "#PETS", 8).map((e) => e.id), ["m3", "m1"]);
	assert.deepEqual(memory.search("cat", "pets", 8).map((e) => e.id), ["m1"]);
	await assert.rejects(callTool(memoryTools(memory), "memory_search", {}), "nothing to search for");
});

test("full mode: text over the record limit is refused with a sentence and nothing is stored", async () => {
	const directory = freshDirectory("toolong");
	const memory = open(directory);
	const tools = memoryTools(memory);
	const long = "é".repeat(MEMORY_RECORD_MAX_BYTES / 2 + 1);   // fewer characters than the limit, more bytes
	const error = await assert.rejects(callTool(tools, "memory_write", { text: long }), `one memory holds at most ${MEMORY_RECORD_MAX_BYTES}`);
	assert.match(error.message, /shorten it or split it/);
	await assert.rejects(callTool(tools, "memory_write", { text: "   " }), "nothing to remember");
	await assert.rejects(callTool(tools, "memory_write", { text: "x", tags: Array.from({ length: MEMORY_TAGS_MAX + 1 }, (_, i) => "t" + i) }), `at most ${MEMORY_TAGS_MAX} tags`);
	await assert.rejects(callTool(tools, "memory_write", { text: "x", tags: ["two words"] }), "one word per tag");
	assert.equal(memory.list().length, 0);
	assert.deepEqual(names(directory), [], "no file was written");
});

test("full mode: a full store refuses a new memory with a sentence that says to forget one", () => {
	const memory = open(freshDirectory("full"));
	for (let i = 0; i < MEMORY_RECORDS_MAX; i++) memory.write(`fact ${i}`);
	assert.throws(() => memory.write("one too many"), `long-term memory is full (${MEMORY_RECORDS_MAX} memories): forget one`);
	memory.forget("m1");
	assert.equal(memory.write("now it fits").id, "m" + (MEMORY_RECORDS_MAX + 1));
});

test("full mode: an unknown id is refused with a sentence saying what to do, naming no tool or command", async () => {
	const tools = memoryTools(open(freshDirectory("unknown")));
	await assert.rejects(callTool(tools, "memory_read", { id: "m7" }), /there is no memory with id "m7": search the memories to find the right id\./);
	await assert.rejects(callTool(tools, "memory_forget", { id: "m7" }), /there is no memory with id "m7"/);
	await assert.rejects(callTool(tools, "memory_write", { text: "x", id: "m7" }), /there is no memory with id "m7"/);
});

test("full mode: memories survive reopening, and a forgotten id is never handed out again", () => {
	const directory = freshDirectory("reopen");
	const first = open(directory);
	first.write("one", ["a"]);
	first.write("two");
	first.forget("m2");
	const again = open(directory);
	assert.deepEqual(again.list().map((e) => [e.id, e.text, e.tags]), [["m1", "one", ["a"]]]);
	assert.equal(again.write("three").id, "m3");
});

test("full mode: a records file of random bytes is kept aside as .bad, logged, and memory starts usable", () => {
	const directory = freshDirectory("random");
	const noise = new Uint8Array(300);
	for (let i = 0; i < noise.length; i++) noise[i] = (i * 131 + 7) & 0xFF;
	writeRaw(directory, RECORDS_FILE, noise.buffer);
	const { log, lines } = logLines();
	const memory = open(directory, log);
	assert.equal(memory.list().length, 0);
	assert.equal(lines.length, 1);
	assert.match(lines[0], /records\.dat is damaged \(.+\); it was kept as records\.dat\.bad and long-term memory starts empty\./);
	assert.deepEqual(new Uint8Array(readRaw(directory, RECORDS_FILE + ".bad")), noise, "the damaged bytes are kept");
	assert.equal(memory.write("fresh start").id, "m1");
	assert.equal(open(directory).list().length, 1, "the new file is good");
});

test("full mode: a truncated records file is detected by its header and kept aside", () => {
	const directory = freshDirectory("truncated");
	const good = encodeRecords({ nextId: 3, records: [
		{ id: "m1", text: "first", tags: [], created: 1, updated: 1 },
		{ id: "m2", text: "second", tags: [], created: 2, updated: 2 },
	] });
	writeRaw(directory, RECORDS_FILE, good.slice(0, good.byteLength - 5));
	const { log, lines } = logLines();
	const memory = open(directory, log);
	assert.equal(memory.list().length, 0);
	assert.match(lines[0] ?? "", /torn write/);
	assert.ok(names(directory).includes(RECORDS_FILE + ".bad"));
});

test("full mode: one changed byte in the records file is caught by its checksum", () => {
	const directory = freshDirectory("bitflip");
	const bytes = new Uint8Array(encodeRecords({ nextId: 2, records: [{ id: "m1", text: "the code is 1234", tags: [], created: 1, updated: 1 }] }));
	const at = bytes.lastIndexOf(0x31);   // the last "1" (a date digit): still valid JSON after the change
	bytes[at] = 0x39;
	writeRaw(directory, RECORDS_FILE, bytes.buffer);
	const { log, lines } = logLines();
	assert.equal(open(directory, log).list().length, 0);
	assert.match(lines[0] ?? "", /its checksum does not match/);
});

test("full mode: a records file with a good checksum but an invalid record is kept aside", () => {
	const directory = freshDirectory("badrecord");
	writeRaw(directory, RECORDS_FILE, encodeRecords({ nextId: 2, records: [{ id: "m5", text: "id past next_id", tags: [], created: 1, updated: 1 }] }));
	const { log, lines } = logLines();
	assert.equal(open(directory, log).list().length, 0);
	assert.match(lines[0] ?? "", /record 1 has no valid id/);
});

test("full mode: a stale temp file from an interrupted write is discarded and the saved memories stay", () => {
	const directory = freshDirectory("staletemp");
	open(directory).write("saved before the power cut");
	const half = encodeRecords({ nextId: 3, records: [] });
	writeRaw(directory, RECORDS_FILE + ".tmp", half.slice(0, 20));   // what a cut mid-write leaves
	const { log, lines } = logLines();
	const memory = open(directory, log);
	assert.deepEqual(memory.list().map((e) => e.text), ["saved before the power cut"]);
	assert.match(lines[0] ?? "", /unfinished change to records\.dat was discarded/);
	assert.ok(!names(directory).includes(RECORDS_FILE + ".tmp"), "the temp is gone");
});

test("full mode: a write that fails in the filesystem leaves memory and flash as they were", () => {
	const real = freshDirectory("failing");
	let failMove = false;
	// The real directory, except that move can be made to fail like a full flash.
	const directory = replacing(real, (key, move) => key !== "move" ? move : (from: string, to: string) => {
		if (failMove) throw new Error("files: no space left");
		(move as Directory["move"])(from, to);
	});
	const memory = open(directory);
	memory.write("kept");
	failMove = true;
	assert.throws(() => memory.write("lost"), "no space left");
	assert.throws(() => memory.forget("m1"), "no space left");
	assert.deepEqual(memory.list().map((e) => e.text), ["kept"], "RAM unchanged");
	assert.deepEqual(open(real).list().map((e) => e.text), ["kept"], "flash unchanged");
	assert.ok(!names(real).includes(RECORDS_FILE + ".tmp"), "the temp was removed");
});

test("full mode: a records file that cannot be read at open (an IO error) is not overwritten by the next change", () => {
	const real = freshDirectory("unreadable");
	open(real).write("saved before the reboot");
	const saved = new Uint8Array(readRaw(real, RECORDS_FILE));
	// The real directory, except that opening the records file fails like a bad flash read.
	const directory = beforeOpenFile(real, (path) => {
		if (path === RECORDS_FILE) throw new Error("files: input/output error");
	});
	const { log, lines } = logLines();
	const memory = open(directory, log);
	assert.equal(memory.list().length, 0, "nothing could be read");
	assert.match(lines.join("\n"), /could not be read \(files: input\/output error\).*changes are refused until a restart/);
	assert.throws(() => memory.write("a new fact"), "could not be read when the board started");
	assert.deepEqual(new Uint8Array(readRaw(real, RECORDS_FILE)), saved, "the file on flash is as it was");
	assert.deepEqual(open(real).list().map((e) => e.text), ["saved before the reboot"]);
});

test("memory provider: undefined for an empty memory, a REQUEST_START_ONLY system_prompt section otherwise", async () => {
	const memory = open(freshDirectory("provider"));
	const provider = memoryProvider(memory);
	assert.equal(provider.name, "memory");
	assert.equal(provider.flags, ProviderFlag.REQUEST_START_ONLY);
	assert.equal(await provider.collect(request("hello")), undefined);
	memory.write("The user's name is Ada.", ["name"]);
	const content = await provider.collect(request("hello"));
	assert.ok(content && content.kind === "system_prompt");
	if (content?.kind === "system_prompt") assert.match(content.content, /\n- m1: The user's name is Ada\. #name$/);
});

test("memory provider: over its byte budget it keeps the newest records in stored order, the same whatever the question", async () => {
	const memory = open(freshDirectory("budget"));
	memory.write("The garden gate code is 4711.");
	for (let i = 0; i < 60; i++) memory.write(`Filler fact number ${i} about nothing in particular, long enough to fill the budget quickly.`);
	const content = memory.context(MEMORY_CONTEXT_MAX_BYTES);
	assert.ok(content !== undefined);
	const text = content!;
	assert.ok(ArrayBuffer.fromString(text).byteLength <= MEMORY_CONTEXT_MAX_BYTES, "within the budget");
	assert.match(text, /m61: Filler fact number 59/, "the newest record is in");
	assert.ok(!text.includes("gate code"), "an old record that does not fit stays out, whatever is asked");
	assert.match(text, /\(\d+ more not shown: use memory_search to find them\.\)$/);
	const ids = [...text.matchAll(/^- m(\d+):/gm)].map((m) => Number(m[1]));
	assert.deepEqual(ids, ids.slice().sort((a, b) => a - b), "stored order");
	const stable = memoryProvider(memory);
	const [a, b] = [await stable.collect(request("what is the gate code?")), await stable.collect(request("how warm is it?"))];
	assert.deepEqual(a, b, "two questions get the same stable section");
});

test("relevant memories that the stable section leaves out come from a volatile provider, best first, within their budget", async () => {
	const memory = open(freshDirectory("relevant"));
	memory.write("The garden gate code is 4711.", ["garden"]);
	for (let i = 0; i < 60; i++) memory.write(`Filler fact number ${i} about nothing in particular, long enough to fill the budget quickly.`);
	const provider = relevantMemoryProvider(memory);
	assert.equal(provider.name, "relevant_memory");
	assert.equal(provider.flags, ProviderFlag.REQUEST_START_ONLY | ProviderFlag.VOLATILE);
	const content = await provider.collect(request("what is the gate code?"));
	assert.ok(content && content.kind === "system_prompt");
	const text = content?.kind === "system_prompt" ? content.content : "";
	assert.match(text, /^More saved facts that may matter to this message \(id: text #tags\):\n- m1: The garden gate code is 4711\. #garden$/);
	assert.ok(ArrayBuffer.fromString(text).byteLength <= MEMORY_RELEVANT_MAX_BYTES);
	assert.equal(await provider.collect(request("59?")), undefined, "what the stable section shows is not repeated");
	assert.equal(await provider.collect(request("zebra")), undefined, "nothing relevant, nothing added");
});

test("the prompt sections and the search follow every write and forget (the memory's word and section index is made again)", () => {
	const memory = open(freshDirectory("reindex"));
	assert.equal(memory.relevant("gate code", MEMORY_CONTEXT_MAX_BYTES, MEMORY_RELEVANT_MAX_BYTES), undefined, "empty memory: nothing");
	memory.write("The garden gate code is 4711.", ["garden"]);
	for (let i = 0; i < 60; i++) memory.write(`Filler fact number ${i} about nothing in particular, long enough to fill the budget quickly.`);
	const relevant = (hint: string) => memory.relevant(hint, MEMORY_CONTEXT_MAX_BYTES, MEMORY_RELEVANT_MAX_BYTES) ?? "";
	assert.match(relevant("what is the gate code?"), /- m1: The garden gate code is 4711\. #garden$/);
	assert.match(relevant("gate code"), /- m1: /, "asked again, the same entry");
	memory.write("The garden shed key is under the pot.", undefined, "m1");
	assert.equal(relevant("gate code"), "", "the replaced text's words no longer match");
	assert.match(relevant("where is the shed key?"), /- m1: The garden shed key is under the pot\. #garden$/, "the new text's words do");
	assert.equal(memory.search("shed", undefined, 5)[0]?.id, "m1");
	memory.write("The garage door code is 1234.", undefined, "m2");
	assert.match(relevant("garage door"), /- m2: The garage door code is 1234\.$/);
	memory.forget("m2");
	assert.equal(relevant("garage door"), "", "a forgotten memory is not offered");
	assert.deepEqual(memory.search("garage", undefined, 5), []);
	const before = memory.context(MEMORY_CONTEXT_MAX_BYTES) ?? "";
	assert.ok(!before.includes("m62"));
	memory.write("The newest fact: the user plays the cello.");
	const after = memory.context(MEMORY_CONTEXT_MAX_BYTES) ?? "";
	assert.match(after, /- m62: The newest fact: the user plays the cello\.\n/, "the stable section shows the new record");
	assert.notEqual(after, before);
	assert.equal(relevant("cello"), "", "what the stable section shows is not repeated");
});

test("openMemory: full mode by default, an unknown memory.mode falls back to full with a warning", () => {
	const { log, lines } = logLines();
	const setup = openMemory({ config: settings({ "memory.mode": "huge" }), files: freshDirectory("setup"), log });
	assert.equal(setup.memory.mode, "full");
	assert.match(setup.warning ?? "", /memory\.mode is "huge", which is not a memory mode: full is used/);
	assert.equal(lines.length, 1);
	assert.deepEqual(setup.providers.map((p) => p.name), ["profile", "memory", "relevant_memory"]);
	assert.deepEqual(setup.tools.map((t) => t.definition.function.name),
		["memory_write", "memory_read", "memory_search", "memory_forget", "profile_read", "profile_update"]);
	assert.equal(openMemory({ config: settings({}), files: freshDirectory("setup"), log }).memory.mode, "full");
});
