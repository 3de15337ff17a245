// memory/tools: the memory and profile tools as declarative Capability entries
// (caps/types; group "memory"; memory_forget and profile_update are restricted:
// owner only). Each result is a short text for the model; a problem it can fix
// (unknown id, too long, full, bad argument) throws an Error with a sentence,
// which the tool caller turns into an is_error result. The arguments are checked
// here too, not only by the schema, so a caller that skips the schema cannot
// store something the limits forbid.
import { MEMORY_RECORD_MAX_BYTES, MEMORY_SEARCH_MAX_RESULTS, MEMORY_TAGS_MAX, MEMORY_TAG_MAX_CHARS, PROFILE_NOTES_MAX_BYTES } from "budgets";
import type { Capability } from "caps/types";
import type { JsonObject } from "llm/types";
import type { Profile, ProfileField } from "memory/profile";
import type { LongTermMemory, MemoryEntry } from "memory/types";

function optionalString(args: JsonObject, name: string): string | undefined {
	const value = args[name];
	if (value === undefined || value === null) return undefined;
	if (typeof value !== "string") throw new Error(`the argument "${name}" must be text.`);
	return value;
}

function requiredString(args: JsonObject, name: string): string {
	const value = optionalString(args, name);
	if (value === undefined) throw new Error(`the argument "${name}" is required.`);
	return value;
}

function tagsArgument(args: JsonObject): string[] | undefined {
	const value = args.tags;
	if (value === undefined || value === null) return undefined;
	if (!Array.isArray(value) || !value.every((t) => typeof t === "string")) throw new Error("the argument \"tags\" must be a list of words.");
	return value as string[];
}

function idArgument(args: JsonObject): string {
	const value = args.id;
	if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
	return requiredString(args, "id");
}

/** One entry as the model sees it. */
export function describe(entry: MemoryEntry): string {
	const tags = entry.tags.length ? ` [tags: ${entry.tags.join(", ")}]` : "";
	const when = entry.updated ? ` (saved ${new Date(entry.updated).toISOString().slice(0, 16).replace("T", " ")} UTC)` : "";
	return `${entry.id}: ${entry.text}${tags}${when}`;
}

export function memoryTools(memory: LongTermMemory): Capability[] {
	const idWord = memory.mode === "full" ? "the memory's id (e.g. \"m12\")" : "the line number in MEMORY.md";
	return [
		{
			group: "memory",
			definition: {
				type: "function",
				function: {
					name: "memory_write",
					description: "Save a lasting fact to long-term memory (kept across restarts and conversations). With id, replace that memory's text instead. Returns the id.",
					parameters: {
						type: "object",
						properties: {
							text: { type: "string", description: "the fact, one or two sentences", minLength: 1, maxLength: MEMORY_RECORD_MAX_BYTES },
							tags: { type: "array", description: "short topic words, e.g. [\"food\"]", items: { type: "string", minLength: 1, maxLength: MEMORY_TAG_MAX_CHARS }, maxItems: MEMORY_TAGS_MAX },
							id: { type: "string", description: `to replace an existing memory: ${idWord}` },
						},
						required: ["text"],
					},
				},
			},
			run(args) {
				const id = args.id === undefined || args.id === null ? undefined : idArgument(args);
				const entry = memory.write(requiredString(args, "text"), tagsArgument(args), id);
				return id === undefined ? `saved as ${entry.id}` : `replaced ${entry.id}`;
			},
		},
		{
			group: "memory",
			definition: {
				type: "function",
				function: {
					name: "memory_read",
					description: "Read one long-term memory by id.",
					parameters: { type: "object", properties: { id: { type: "string", description: idWord } }, required: ["id"] },
				},
			},
			run(args) {
				return describe(memory.read(idArgument(args)));
			},
		},
		{
			group: "memory",
			definition: {
				type: "function",
				function: {
					name: "memory_search",
					description: "Search long-term memory by words and/or a tag; best matches first.",
					parameters: {
						type: "object",
						properties: {
							query: { type: "string", description: "words to look for" },
							tag: { type: "string", description: "only memories with this tag" },
							limit: { type: "integer", description: `most results (default and at most ${MEMORY_SEARCH_MAX_RESULTS})`, minimum: 1, maximum: MEMORY_SEARCH_MAX_RESULTS },
						},
					},
				},
			},
			run(args) {
				const limitArg = args.limit;
				if (limitArg !== undefined && limitArg !== null && (typeof limitArg !== "number" || !Number.isInteger(limitArg) || limitArg < 1))
					throw new Error(`the argument "limit" must be a whole number from 1 to ${MEMORY_SEARCH_MAX_RESULTS}.`);
				const limit = Math.min(typeof limitArg === "number" ? limitArg : MEMORY_SEARCH_MAX_RESULTS, MEMORY_SEARCH_MAX_RESULTS);
				const query = optionalString(args, "query") ?? "";
				const tag = optionalString(args, "tag");
				const found = memory.search(query, tag, limit);
				if (!found.length) return "no memory matches that search.";
				return found.map(describe).join("\n");
			},
		},
		{
			group: "memory",
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "memory_forget",
					description: memory.mode === "full"
						? "Delete one long-term memory by id."
						: "Delete one line of MEMORY.md, by line number or by some of its text.",
					parameters: { type: "object", properties: { id: { type: "string", description: memory.mode === "full" ? idWord : `${idWord}, or text found in exactly one line` } }, required: ["id"] },
				},
			},
			run(args) {
				const entry = memory.forget(idArgument(args));
				return `forgot ${entry.id}: ${entry.text}`;
			},
		},
	];
}

export function profileTools(profile: Profile): Capability[] {
	return [
		{
			group: "memory",
			definition: {
				type: "function",
				function: {
					name: "profile_read",
					description: "Read the profile: the persona (how you behave) and the user notes (what the user told you about themselves).",
					parameters: { type: "object", properties: {} },
				},
			},
			run() {
				return `persona${profile.personaIsDefault ? " (built-in)" : ""}:\n${profile.persona}\n\nuser_notes:\n${profile.userNotes || "(none)"}`;
			},
		},
		{
			group: "memory",
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "profile_update",
					description: "Change the persona or the user notes. mode append adds a line; replace sets the whole text (empty text clears; an empty persona means the built-in one).",
					parameters: {
						type: "object",
						properties: {
							field: { type: "string", enum: ["persona", "user_notes"] },
							text: { type: "string", maxLength: PROFILE_NOTES_MAX_BYTES },
							mode: { type: "string", enum: ["replace", "append"], description: "default replace" },
						},
						required: ["field", "text"],
					},
				},
			},
			run(args) {
				const field = requiredString(args, "field");
				if (field !== "persona" && field !== "user_notes") throw new Error(`"${field}" is not a profile field: use persona or user_notes.`);
				const mode = optionalString(args, "mode") ?? "replace";
				if (mode !== "replace" && mode !== "append") throw new Error(`"${mode}" is not a mode: use replace or append.`);
				const result = profile.update(field as ProfileField, requiredString(args, "text"), mode);
				if (field === "persona" && profile.personaIsDefault) return "persona cleared: the built-in persona is used again.";
				if (!result) return "user_notes cleared.";
				return `${field} ${mode === "append" ? "appended to" : "replaced"} (${result.length} characters now).`;
			},
		},
	];
}
