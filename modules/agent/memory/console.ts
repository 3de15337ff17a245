// memory/console: the `memory ...` and `profile ...` console commands as table
// entries. They act on the same memory and profile objects as the tools, so what a
// person adds on the console the model sees on its next request, and the other way
// round. Errors are the memory's own sentences.
import { MEMORY_PREVIEW_CHARS } from "budgets";
import { UsageError, words, type Command, type Output } from "console/types";
import type { Profile, ProfileField } from "memory/profile";
import { preview } from "memory/text";
import { describe } from "memory/tools";
import type { LongTermMemory, MemoryEntry } from "memory/types";

const SEARCH_RESULTS_SHOWN = 20;   // console search: more than the model gets, still one screen

function listLine(entry: MemoryEntry): string {
	const tags = entry.tags.length ? "  " + entry.tags.map((t) => "#" + t).join(" ") : "";
	const date = entry.updated ? new Date(entry.updated).toISOString().slice(0, 10) + "  " : "";
	return `${entry.id.padStart(4)}  ${date}${preview(entry.text, MEMORY_PREVIEW_CHARS)}${tags}`;
}

function lines(out: Output, text: string): void {
	for (const line of text.split("\n")) out.line(line ? "  " + line : "");
}

/** Splits "text #a #b" into the text and its trailing tags. */
function textAndTags(args: string): { text: string; tags: string[] } {
	const parts = args.trim().split(/\s+/);
	const tags: string[] = [];
	while (parts.length && /^#[^#]/.test(parts[parts.length - 1])) tags.unshift(parts.pop()!.slice(1));
	return { text: parts.join(" "), tags };
}

function usageLine(memory: LongTermMemory): string {
	const u = memory.usage();
	const count = u.maxEntries ? `${u.entries} of ${u.maxEntries} memories` : `${u.entries} ${u.entries === 1 ? "memory" : "memories"}`;
	return `${count}, ${u.bytes} of ${u.maxBytes} bytes`;
}

export function memoryCommands(memory: LongTermMemory, profile: Profile, modeNote?: string): Command[] {
	return [
		{
			name: "memory list",
			usage: "",
			help: "list long-term memories (id, date, text, tags)",
			run(args, out) {
				if (args) throw new UsageError();
				const entries = memory.list();
				if (!entries.length) {
					out.line("long-term memory is empty: add one with memory add <text> [#tag ...].");
					return;
				}
				for (const entry of entries) out.line(listLine(entry));
				out.line(`(${usageLine(memory)})`);
			},
		},
		{
			name: "memory show",
			usage: "ID",
			help: "show one memory in full",
			run(args, out) {
				if (words(args).length !== 1) throw new UsageError();
				out.line(describe(memory.read(args)));
			},
		},
		{
			name: "memory add",
			usage: "TEXT [#tag ...]",
			help: "save a memory; trailing #words become its tags",
			run(args, out) {
				const { text, tags } = textAndTags(args);
				if (!text) throw new UsageError();
				const entry = memory.write(text, tags);
				out.line(`saved as ${entry.id}`);
			},
		},
		{
			name: "memory search",
			usage: "WORDS [#tag]",
			help: "search memories by words and/or one #tag, best first",
			run(args, out) {
				const all = words(args);
				const tags = all.filter((w) => w.startsWith("#"));
				if (!all.length || tags.length > 1) throw new UsageError();
				const query = all.filter((w) => !w.startsWith("#")).join(" ");
				const found = memory.search(query, tags[0], SEARCH_RESULTS_SHOWN);
				if (!found.length) out.line("no memory matches that search.");
				for (const entry of found) out.line(listLine(entry));
			},
		},
		{
			name: "memory forget",
			usage: memory.mode === "full" ? "ID" : "LINE|TEXT",
			help: "delete one memory",
			run(args, out) {
				if (!args) throw new UsageError();
				const entry = memory.forget(args);
				out.line(`forgot ${entry.id}: ${preview(entry.text, MEMORY_PREVIEW_CHARS)}`);
			},
		},
		{
			name: "memory mode",
			usage: "",
			help: "show the memory mode (full or light) and how full it is",
			run(args, out) {
				if (args) throw new UsageError();
				out.line(`memory mode: ${memory.mode} (${usageLine(memory)})`);
				if (modeNote) out.line(modeNote);
				out.line(`to change it: config set memory.mode ${memory.mode === "full" ? "light" : "full"}, then reboot (the mode is read at start; each mode keeps its own file).`);
			},
		},
		{
			name: "profile show",
			usage: "",
			help: "show the persona and the user notes",
			run(args, out) {
				if (args) throw new UsageError();
				out.line(`persona${profile.personaIsDefault ? " (built-in)" : ""}:`);
				lines(out, profile.persona);
				out.line("user notes:");
				if (profile.userNotes) lines(out, profile.userNotes);
				else out.line("  (none: add some with profile set notes <text>)");
			},
		},
		{
			name: "profile set",
			usage: "persona|notes TEXT",
			help: "replace the persona or the user notes",
			run(args, out) {
				const match = /^(persona|notes)\s+(\S[\s\S]*)$/.exec(args);
				if (!match) throw new UsageError();
				const field: ProfileField = match[1] === "notes" ? "user_notes" : "persona";
				profile.update(field, match[2], "replace");
				out.line(`${match[1] === "notes" ? "user notes" : "persona"} saved.`);
			},
		},
		{
			name: "profile clear",
			usage: "notes|persona",
			help: "clear the user notes, or go back to the built-in persona",
			run(args, out) {
				if (args !== "notes" && args !== "persona") throw new UsageError();
				profile.update(args === "notes" ? "user_notes" : "persona", "", "replace");
				out.line(args === "notes" ? "user notes cleared." : "persona reset: the built-in persona is used.");
			},
		},
	];
}
