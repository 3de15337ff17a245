// caps/macros: tools the owner makes by asking ("make a tool that waters the
// plants"), as zclaw's custom tools: a name, a description and a stored action in
// plain words. Each macro is offered to the model as a tool of its own (group
// "macros", one optional "input" argument); running it hands the stored action
// back to the model to carry out with the built-in tools, whose own policy still
// applies to every call it then makes. At most MACROS_MAX, kept in
// caps/macros.json (written atomically). Creating and deleting are restricted
// (owner only); the tool list changes when a macro is made or deleted.
import type { Directory } from "util/io";
import { MACROS_FILE_MAX_BYTES, MACROS_MAX, MACRO_ACTION_MAX_CHARS, MACRO_DESCRIPTION_MAX_CHARS } from "budgets";
import type { CapSource, Capability } from "caps/types";
import { loadFile, refuseIfUnreadable, textFile } from "memory/flash";
import { utf8, writeAtomically } from "util/files";
import { messageOf } from "util/errors";

export interface Macro {
	name: string;
	description: string;
	action: string;
}

const FILE = "macros.json";
const NAME = /^[a-z][a-z0-9_]{2,31}$/;

export class Macros implements CapSource {
	readonly #directory: Directory;
	readonly #taken: (name: string) => boolean;
	#macros: Macro[] = [];
	#caps: Capability[] = [];
	#unreadable: string | undefined;

	/** taken(name): true when a built-in tool has that name. */
	constructor(directory: Directory, taken: (name: string) => boolean, log: (line: string) => void) {
		this.#directory = directory;
		this.#taken = taken;
		const loaded = loadFile<Macro[]>(directory, {
			path: FILE, maxBytes: MACROS_FILE_MAX_BYTES, area: "macros", fallback: "the board starts without macro tools",
			decode: (bytes) => {
				const text = textFile(bytes);
				if ("problem" in text) return text;
				try {
					const value = JSON.parse(text.value) as Macro[];
					if (!Array.isArray(value) || !value.every((m) => typeof m?.name === "string" && typeof m.description === "string" && typeof m.action === "string")) return { problem: "it is not a list of macros" };
					return { value };
				} catch (error) {
					return { problem: `it is not JSON (${messageOf(error)})` };
				}
			},
			unreadable: (why) => { this.#unreadable = why; },
		}, log);
		this.#set((loaded ?? []).filter((m) => NAME.test(m.name) && !taken(m.name)).slice(0, MACROS_MAX));
	}

	list(): Capability[] {
		return this.#caps;
	}

	macros(): readonly Macro[] {
		return this.#macros;
	}

	create(macro: Macro): void {
		refuseIfUnreadable(`caps/${FILE}`, this.#unreadable);
		if (!NAME.test(macro.name)) throw new Error(`"${macro.name}" is not a macro name: 3-32 lowercase letters, digits and _, starting with a letter`);
		if (this.#taken(macro.name)) throw new Error(`${macro.name} is the name of a built-in tool; choose another`);
		const others = this.#macros.filter((m) => m.name !== macro.name);
		if (others.length >= MACROS_MAX) throw new Error(`there are already ${MACROS_MAX} macro tools, the most the board keeps; delete one first`);
		this.#save([...others, { name: macro.name, description: macro.description.trim(), action: macro.action.trim() }]);
	}

	delete(name: string): boolean {
		refuseIfUnreadable(`caps/${FILE}`, this.#unreadable);
		const others = this.#macros.filter((m) => m.name !== name);
		if (others.length === this.#macros.length) return false;
		this.#save(others);
		return true;
	}

	#save(macros: Macro[]): void {
		writeAtomically(this.#directory, FILE, utf8(JSON.stringify(macros)));
		this.#set(macros);
	}

	#set(macros: Macro[]): void {
		this.#macros = macros;
		this.#caps = macros.map(macroCapability);
	}
}

function macroCapability(macro: Macro): Capability {
	return {
		group: "macros",
		definition: {
			type: "function",
			function: {
				name: macro.name,
				description: `${macro.description} (a macro tool the owner made)`,
				parameters: { type: "object", properties: { input: { type: "string", maxLength: MACRO_ACTION_MAX_CHARS, description: "anything the action needs" } }, additionalProperties: false },
			},
		},
		run(args) {
			const input = typeof args.input === "string" && args.input ? `\nInput: ${args.input}` : "";
			return `Macro ${macro.name}: carry out this stored action now with your tools, then answer the person:\n${macro.action}${input}`;
		},
	};
}

export function macroTools(macros: Macros): Capability[] {
	return [
		{
			group: "macros",
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "macro_create",
					description: `Make (or replace) a tool of your own: a name, a one-line description, and the action in plain words that you will carry out with your tools whenever it is called. At most ${MACROS_MAX}.`,
					parameters: {
						type: "object",
						properties: {
							name: { type: "string", minLength: 3, maxLength: 32, description: "lowercase, e.g. water_plants" },
							description: { type: "string", minLength: 1, maxLength: MACRO_DESCRIPTION_MAX_CHARS },
							action: { type: "string", minLength: 1, maxLength: MACRO_ACTION_MAX_CHARS, description: "what to do, step by step, naming the tools" },
						},
						required: ["name", "description", "action"],
						additionalProperties: false,
					},
				},
			},
			run(args) {
				macros.create({ name: String(args.name), description: String(args.description), action: String(args.action) });
				return `the tool ${args.name} is made; it can be called from the next message on`;
			},
		},
		{
			group: "macros",
			restricted: true,
			definition: {
				type: "function",
				function: {
					name: "macro_delete",
					description: "Delete one of the macro tools you made.",
					parameters: { type: "object", properties: { name: { type: "string", minLength: 3, maxLength: 32 } }, required: ["name"], additionalProperties: false },
				},
			},
			run(args) {
				if (!macros.delete(String(args.name))) throw new Error(`there is no macro tool ${args.name}; macro_list shows them`);
				return `deleted ${args.name}`;
			},
		},
		{
			group: "macros",
			definition: {
				type: "function",
				function: {
					name: "macro_list",
					description: "The macro tools the owner made, with their stored actions.",
					parameters: { type: "object", properties: {}, additionalProperties: false },
				},
			},
			run() {
				const list = macros.macros();
				return list.length ? list.map((m) => `${m.name}: ${m.description}\n  action: ${m.action}`).join("\n") : "no macro tools yet";
			},
		},
	];
}
