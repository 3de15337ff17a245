// caps/scripts: the owner's stored scripts (issue 28), the store only: a named
// script (source, what it is for, its grants, its triggers besides schedules,
// the chat that owns it) kept in caps/scripts.json, at most SCRIPTS_MAX. What
// runs them is caps/automations; the tools and the `script` command are
// caps/script_tools.
//
// A script's state: "proposed" (saved by the model, not run until the owner
// confirms it), "enabled", or "disabled" (by the owner, or after
// SCRIPT_FAILURES_DISABLE failures in a row, with the reason in note).
// Triggers kept here: "boot", "router" (a router rule may run it) and
// "gpio PIN rising|falling|both"; a schedule that runs a script is a scheduler
// entry naming it (sched/scheduler), so that one place holds every schedule.
//
// Durability, as caps/macros.json and the scheduler's file: every change writes
// the whole file atomically (util/files writeAtomically: temp, flush, rename),
// so after a power loss the file is the old or the new version, never a mix; a
// damaged file is kept aside and the board starts without scripts (logged).
import type { Directory } from "util/io";
import { GPIO_PIN_MAX, SCRIPTS_FILE_MAX_BYTES, SCRIPTS_MAX, SCRIPT_DESCRIPTION_MAX_CHARS, SCRIPT_NAME_MAX_CHARS, SCRIPT_SOURCE_MAX_CHARS, SCRIPT_TRIGGERS_MAX } from "budgets";
import { EDGES, type Edge } from "caps/gpio";
import { GRANTS, type Grant } from "caps/script";
import { loadFile, refuseIfUnreadable, textFile } from "memory/flash";
import { utf8, writeAtomically } from "util/files";
import { messageOf } from "util/errors";

export type ScriptState = "proposed" | "enabled" | "disabled";
export type Trigger = { kind: "boot" } | { kind: "router" } | { kind: "gpio"; pin: number; edge: Edge };

export interface ChatRef {
	channel: string;
	chat_id: string;
}

export interface StoredScript {
	name: string;
	description: string;
	source: string;
	grants: Grant[];
	/** Triggers besides schedules (scheduler entries name the script). */
	on: Trigger[];
	/** The chat that owns it: notify() and failure reports go there. */
	chat: ChatRef;
	state: ScriptState;
	/** Why it is disabled ("" otherwise). */
	note: string;
	created_ms: number;
}

const FILE = "scripts.json";
const NAME = new RegExp(`^[a-z][a-z0-9_]{2,${SCRIPT_NAME_MAX_CHARS - 1}}$`);

interface FileShape {
	version: 1;
	scripts: StoredScript[];
}

/** A trigger as people and the model write it: "boot", "router", "gpio 5 rising". */
export function parseTrigger(text: string): Trigger {
	const words = text.trim().toLowerCase().split(/\s+/);
	if (words.length === 1 && (words[0] === "boot" || words[0] === "router")) return { kind: words[0] };
	if (words[0] === "gpio" && words.length === 3 && /^\d{1,2}$/.test(words[1]) && Number(words[1]) <= GPIO_PIN_MAX && (EDGES as readonly string[]).includes(words[2]))
		return { kind: "gpio", pin: Number(words[1]), edge: words[2] as Edge };
	throw new Error(`"${text}" is not a trigger: use boot, router, or gpio PIN rising|falling|both (a schedule is made with cron)`);
}

export function triggerText(trigger: Trigger): string {
	return trigger.kind === "gpio" ? `gpio ${trigger.pin} ${trigger.edge}` : trigger.kind;
}

function isTrigger(value: unknown): value is Trigger {
	const t = value as Trigger;
	if (typeof t !== "object" || t === null) return false;
	if (t.kind === "boot" || t.kind === "router") return true;
	return t.kind === "gpio" && Number.isInteger(t.pin) && t.pin >= 0 && t.pin <= GPIO_PIN_MAX && (EDGES as readonly string[]).includes(t.edge);
}

function isScript(value: unknown): value is StoredScript {
	const s = value as StoredScript;
	return typeof s === "object" && s !== null && typeof s.name === "string" && NAME.test(s.name) && typeof s.description === "string" &&
		typeof s.source === "string" && Array.isArray(s.grants) && s.grants.every((g) => (GRANTS as readonly string[]).includes(g)) &&
		Array.isArray(s.on) && s.on.every(isTrigger) && typeof s.chat === "object" && s.chat !== null &&
		typeof s.chat.channel === "string" && typeof s.chat.chat_id === "string" &&
		(s.state === "proposed" || s.state === "enabled" || s.state === "disabled") && typeof s.note === "string" && typeof s.created_ms === "number";
}

/** What a new or replaced script is made of (checked by save). */
export interface NewScript {
	name: string;
	description: string;
	source: string;
	grants: readonly Grant[];
	on: readonly Trigger[];
	chat: ChatRef;
	state: ScriptState;
}

export class ScriptStore {
	readonly #directory: Directory;
	readonly #wallClockMs: () => number;
	#scripts: StoredScript[] = [];
	#unreadable: string | undefined;
	/** Called after every change (the automations re-arm their triggers). */
	onChange: () => void = () => {};

	constructor(directory: Directory, wallClockMs: () => number, log: (line: string) => void) {
		this.#directory = directory;
		this.#wallClockMs = wallClockMs;
		const loaded = loadFile<FileShape>(directory, {
			path: FILE, maxBytes: SCRIPTS_FILE_MAX_BYTES, area: "scripts", fallback: "the board starts without stored scripts",
			decode: (bytes) => {
				const text = textFile(bytes);
				if ("problem" in text) return text;
				try {
					const value = JSON.parse(text.value) as FileShape;
					if (value?.version !== 1 || !Array.isArray(value.scripts) || !value.scripts.every(isScript)) return { problem: "it is not a scripts file" };
					return { value };
				} catch (error) {
					return { problem: `it is not JSON (${messageOf(error)})` };
				}
			},
			unreadable: (why) => { this.#unreadable = why; },
		}, log);
		if (loaded) this.#scripts = loaded.scripts.slice(0, SCRIPTS_MAX);
	}

	list(): readonly StoredScript[] {
		return this.#scripts;
	}

	get(name: string): StoredScript | undefined {
		return this.#scripts.find((s) => s.name === name);
	}

	/** Saves a new script or replaces one of the same name; throws a sentence when it does not fit. */
	save(script: NewScript): StoredScript {
		refuseIfUnreadable(`caps/${FILE}`, this.#unreadable);
		if (!NAME.test(script.name)) throw new Error(`"${script.name}" is not a script name: 3-${SCRIPT_NAME_MAX_CHARS} lowercase letters, digits and _, starting with a letter`);
		const description = script.description.trim();
		if (!description || description.length > SCRIPT_DESCRIPTION_MAX_CHARS) throw new Error(`a script needs a description of 1-${SCRIPT_DESCRIPTION_MAX_CHARS} characters: what it is for`);
		if (!script.source.trim() || script.source.length > SCRIPT_SOURCE_MAX_CHARS) throw new Error(`a script's source must be 1-${SCRIPT_SOURCE_MAX_CHARS} characters`);
		for (const grant of script.grants) if (!(GRANTS as readonly string[]).includes(grant)) throw new Error(`"${grant}" is not a grant; the grants are ${GRANTS.join(", ")}`);
		if (script.on.length > SCRIPT_TRIGGERS_MAX) throw new Error(`a script has at most ${SCRIPT_TRIGGERS_MAX} triggers besides schedules`);
		const others = this.#scripts.filter((s) => s.name !== script.name);
		if (others.length >= SCRIPTS_MAX) throw new Error(`there are already ${SCRIPTS_MAX} stored scripts, the most the board keeps; delete one first`);
		const before = this.get(script.name);
		const saved: StoredScript = {
			name: script.name, description, source: script.source, grants: [...new Set(script.grants)],
			on: dedupe(script.on), chat: { channel: script.chat.channel, chat_id: script.chat.chat_id },
			state: script.state, note: "", created_ms: before?.created_ms ?? this.#wallClockMs(),
		};
		this.#write(before ? this.#scripts.map((s) => (s.name === script.name ? saved : s)) : [...this.#scripts, saved]);
		return saved;
	}

	/** Sets a script's state (and the reason it is disabled); false when there is no such script. */
	setState(name: string, state: ScriptState, note = ""): boolean {
		refuseIfUnreadable(`caps/${FILE}`, this.#unreadable);
		const script = this.get(name);
		if (!script) return false;
		if (script.state === state && script.note === note) return true;
		this.#write(this.#scripts.map((s) => (s.name === name ? { ...s, state, note } : s)));
		return true;
	}

	/** Deletes a script; false when there is none of that name. */
	remove(name: string): boolean {
		refuseIfUnreadable(`caps/${FILE}`, this.#unreadable);
		const others = this.#scripts.filter((s) => s.name !== name);
		if (others.length === this.#scripts.length) return false;
		this.#write(others);
		return true;
	}

	#write(scripts: StoredScript[]): void {
		const shape: FileShape = { version: 1, scripts };
		writeAtomically(this.#directory, FILE, utf8(JSON.stringify(shape)));
		this.#scripts = scripts;
		this.onChange();
	}
}

function dedupe(triggers: readonly Trigger[]): Trigger[] {
	const seen = new Set<string>();
	const out: Trigger[] = [];
	for (const trigger of triggers) {
		const key = triggerText(trigger);
		if (seen.has(key)) continue;
		seen.add(key);
		out.push(trigger.kind === "gpio" ? { kind: "gpio", pin: trigger.pin, edge: trigger.edge } : { kind: trigger.kind });
	}
	return out;
}
