// The profile (memory/profile): its tools and provider, its limits and damaged
// files; and the memory/profile console commands (memory/console).
import { PROFILE_NOTES_MAX_BYTES, PROFILE_PERSONA_MAX_BYTES } from "budgets";
import { UsageError } from "console/types";
import { ProviderFlag } from "core/types";
import { Registry } from "caps/registry";
import { Aborter } from "net/abort";
import { DEFAULT_PERSONA, Profile } from "memory/profile";
import { profileProvider } from "memory/providers";
import { openMemory } from "memory/setup";
import { profileTools } from "memory/tools";
import { assert, test } from "testing";
import { Lines, callTool, freshDirectory, logLines, names, readText, request, settings, writeRaw } from "./memory_fakes";

test("profile: profile_read shows the built-in persona and no user notes at first", async () => {
	const tools = profileTools(new Profile(freshDirectory("pfresh"), () => {}));
	assert.equal(await callTool(tools, "profile_read", {}), `persona (built-in):\n${DEFAULT_PERSONA}\n\nuser_notes:\n(none)`);
});

test("profile: profile_update appends and replaces user notes, and they survive reopening", async () => {
	const directory = freshDirectory("pnotes");
	const tools = profileTools(new Profile(directory, () => {}));
	assert.equal(await callTool(tools, "profile_update", { field: "user_notes", text: "Name: Ada.", mode: "append" }), "user_notes appended to (10 characters now).");
	await callTool(tools, "profile_update", { field: "user_notes", text: "Lives in Lyon.", mode: "append" });
	assert.equal(new Profile(directory, () => {}).userNotes, "Name: Ada.\nLives in Lyon.");
	assert.equal(await callTool(tools, "profile_update", { field: "user_notes", text: "Prefers short answers." }), "user_notes replaced (22 characters now).");
	assert.equal(readText(directory, "user_notes.md"), "Prefers short answers.\n");
	assert.equal(await callTool(tools, "profile_update", { field: "user_notes", text: "" }), "user_notes cleared.");
	assert.ok(!names(directory).includes("user_notes.md"), "clearing removes the file");
});

test("profile: a replaced persona is used, and an empty one goes back to the built-in persona", async () => {
	const directory = freshDirectory("ppersona");
	const profile = new Profile(directory, () => {});
	const tools = profileTools(profile);
	await callTool(tools, "profile_update", { field: "persona", text: "You are Pip, a cheerful gardener's helper." });
	assert.equal(new Profile(directory, () => {}).persona, "You are Pip, a cheerful gardener's helper.");
	assert.equal(await callTool(tools, "profile_update", { field: "persona", text: " ", mode: "replace" }), "persona cleared: the built-in persona is used again.");
	assert.equal(profile.persona, DEFAULT_PERSONA);
	assert.ok(profile.personaIsDefault);
});

test("profile: text over a field's limit is refused with a sentence and the field is unchanged", async () => {
	const profile = new Profile(freshDirectory("plimit"), () => {});
	const tools = profileTools(profile);
	await callTool(tools, "profile_update", { field: "user_notes", text: "n".repeat(PROFILE_NOTES_MAX_BYTES - 5) });
	const error = await assert.rejects(callTool(tools, "profile_update", { field: "user_notes", text: "more words", mode: "append" }), `at most ${PROFILE_NOTES_MAX_BYTES} fit`);
	assert.match(error.message, /shorten the text, or replace the user notes instead of appending/);
	await assert.rejects(callTool(tools, "profile_update", { field: "persona", text: "p".repeat(PROFILE_PERSONA_MAX_BYTES + 1) }), `at most ${PROFILE_PERSONA_MAX_BYTES} fit`);
	await assert.rejects(callTool(tools, "profile_update", { field: "mood", text: "happy" }), "\"mood\" is not a profile field");
	await assert.rejects(callTool(tools, "profile_update", { field: "persona", text: "x", mode: "merge" }), "\"merge\" is not a mode");
	assert.equal(profile.userNotes.length, PROFILE_NOTES_MAX_BYTES - 5);
	assert.ok(profile.personaIsDefault);
});

test("profile: a damaged user_notes.md is kept aside as .bad and the notes start empty", () => {
	const directory = freshDirectory("pbad");
	writeRaw(directory, "user_notes.md", new Uint8Array([0x41, 0x00, 0xFE]).buffer);
	const { log, lines } = logLines();
	const profile = new Profile(directory, log);
	assert.equal(profile.userNotes, "");
	assert.match(lines[0] ?? "", /profile: user_notes\.md is damaged \(it is not UTF-8 text\); it was kept as user_notes\.md\.bad and the user notes start empty\./);
	assert.ok(names(directory).includes("user_notes.md.bad"));
});

test("profile provider: a REQUEST_START_ONLY section with the persona, and the user notes when there are some", async () => {
	const profile = new Profile(freshDirectory("pprovider"), () => {});
	const provider = profileProvider(profile);
	assert.equal(provider.name, "profile");
	assert.equal(provider.flags, ProviderFlag.REQUEST_START_ONLY);
	assert.deepEqual(await provider.collect(request("hi")), { kind: "system_prompt", content: DEFAULT_PERSONA });
	profile.update("user_notes", "Name: Ada.");
	assert.deepEqual(await provider.collect(request("hi")), { kind: "system_prompt", content: `${DEFAULT_PERSONA}\n\nWhat the user told you about themselves (user notes):\nName: Ada.` });
	// The section is kept until the profile changes: every change shows at the next request.
	profile.update("user_notes", "Likes tea.", "append");
	assert.deepEqual(await provider.collect(request("hi")), { kind: "system_prompt", content: `${DEFAULT_PERSONA}\n\nWhat the user told you about themselves (user notes):\nName: Ada.\nLikes tea.` });
	profile.update("persona", "Be terse.");
	assert.deepEqual(await provider.collect(request("hi")), { kind: "system_prompt", content: "Be terse.\n\nWhat the user told you about themselves (user notes):\nName: Ada.\nLikes tea." });
	profile.update("user_notes", "");
	assert.deepEqual(await provider.collect(request("hi")), { kind: "system_prompt", content: "Be terse." });
	profile.update("persona", "");
	assert.deepEqual(await provider.collect(request("hi")), { kind: "system_prompt", content: DEFAULT_PERSONA });
});

test("the memory and profile tools pass the core's toolbox checks and run through its tool caller", async () => {
	const setup = openMemory({ config: settings({}), files: freshDirectory("ptoolbox"), log: () => {} });
	const box = new Registry(setup.tools);
	const context = { request: request(""), signal: new Aborter().signal, progress() {} };
	const saved = await box.callCap({ id: "c1", name: "memory_write", arguments: JSON.stringify({ text: "likes jazz", tags: ["music"] }) }, context);
	assert.deepEqual(saved, { content: "saved as m1" });
	const unknown = await box.callCap({ id: "c2", name: "memory_forget", arguments: JSON.stringify({ id: "m9" }) }, context);
	assert.equal(unknown.is_error, true);
	assert.match(unknown.content, /there is no memory with id "m9"/);
	const wrongField = await box.callCap({ id: "c3", name: "profile_update", arguments: JSON.stringify({ field: "mood", text: "x" }) }, context);
	assert.equal(wrongField.is_error, true);
});

// ---- console commands ----

function consoleFor(label: string, mode = "full") {
	const setup = openMemory({ config: settings({ "memory.mode": mode }), files: freshDirectory(label), log: () => {}, now: () => Date.UTC(2025, 0, 2) });
	const out = new Lines();
	const run = (line: string): string[] => {
		const [, name, args] = /^(\S+ \S+)\s*([\s\S]*)$/.exec(line)!;
		const command = setup.commands.find((c) => c.name === name);
		if (!command) throw new Error(`no command ${name}`);
		command.run(args.trim(), out);
		return out.take();
	};
	return { setup, run };
}

test("console: memory add with #tags, list, show, search and forget", () => {
	const { run } = consoleFor("cmem");
	assert.deepEqual(run("memory list"), ["long-term memory is empty: add one with memory add <text> [#tag ...]."]);
	assert.deepEqual(run("memory add The gate code is 4711 #home #codes"), ["saved as m1"]);
	assert.deepEqual(run("memory add Buy oat milk"), ["saved as m2"]);
	assert.deepEqual(run("memory list"), [
		"  m1  2025-01-02  The gate code is 4711  #home #codes",
		"  m2  2025-01-02  Buy oat milk",
		"(2 of 200 memories, 33 of 49152 bytes)",
	]);
	assert.deepEqual(run("memory show m1"), ["m1: The gate code is 4711 [tags: home, codes] (saved 2025-01-02 00:00 UTC)"]);
	assert.deepEqual(run("memory search code"), ["  m1  2025-01-02  The gate code is 4711  #home #codes"]);
	assert.deepEqual(run("memory search #codes"), ["  m1  2025-01-02  The gate code is 4711  #home #codes"]);
	assert.deepEqual(run("memory search bicycle"), ["no memory matches that search."]);
	assert.deepEqual(run("memory forget m2"), ["forgot m2: Buy oat milk"]);
	assert.throws(() => run("memory forget m2"), "there is no memory with id \"m2\"");
});

test("console: memory commands with missing or extra arguments throw UsageError", () => {
	const { run } = consoleFor("cusage");
	for (const line of ["memory add", "memory add #only #tags", "memory show", "memory show m1 m2", "memory search", "memory search a #x #y", "memory forget", "memory list now", "memory mode please"])
		assert.throws(() => run(line), undefined, UsageError);
});

test("console: memory mode shows the mode, its use, and how to change it", () => {
	assert.deepEqual(consoleFor("cmode", "light").run("memory mode"), [
		"memory mode: light (0 memories, 0 of 16384 bytes)",
		"to change it: config set memory.mode full, then reboot (the mode is read at start; each mode keeps its own file).",
	]);
});

test("console: profile show, set persona, set notes, clear notes and clear persona", () => {
	const { run, setup } = consoleFor("cprofile");
	const shown = run("profile show");
	assert.deepEqual(shown, ["persona (built-in):", "  " + DEFAULT_PERSONA, "user notes:", "  (none: add some with profile set notes <text>)"]);
	assert.deepEqual(run("profile set persona You are Pip."), ["persona saved."]);
	assert.deepEqual(run("profile set notes Name: Ada."), ["user notes saved."]);
	assert.deepEqual(run("profile show"), ["persona:", "  You are Pip.", "user notes:", "  Name: Ada."]);
	assert.deepEqual(run("profile clear notes"), ["user notes cleared."]);
	assert.equal(setup.profile.userNotes, "");
	assert.deepEqual(run("profile clear persona"), ["persona reset: the built-in persona is used."]);
	assert.ok(setup.profile.personaIsDefault);
	assert.throws(() => run("profile set mood happy"), undefined, UsageError);
	assert.throws(() => run("profile set notes"), undefined, UsageError);
	assert.throws(() => run("profile clear everything"), undefined, UsageError);
});
