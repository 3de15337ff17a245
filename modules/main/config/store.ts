// config/store: the firmware's settings (llm.model, llm.api_key, telegram.bot_token,
// ...), persisted in a key-value store (NVS namespace "config" on the device, a file
// under the data directory on lin). Every other module reads settings through a
// Config instance and may listen for changes to apply them without a restart.
//
// Names are dotted lowercase words ("llm.api_key"), up to CONFIG_NAME_MAX_CHARS, but
// NVS keys are at most 15 characters. So each entry is stored under a hashed key,
//   "c" + FNV-1a-32 of the name in 8 hex digits + probe digit   (10 characters)
// with the probe 0..CONFIG_KEY_PROBES-1 taken in order when two names collide, and
// the stored value (UTF-8 JSON) carries the name itself:
//   {"name": "llm.model", "value": "gpt-4o-mini"}
// Every entry is read once at open (a few dozen small reads), so get() is
// synchronous and cheap. An entry that cannot be read or parsed is reported by
// problems() and left as it is: its key stays taken, nothing else is lost.
//
// Limits: values are strings up to CONFIG_VALUE_MAX_BYTES of UTF-8, at most
// CONFIG_MAX_ENTRIES entries. This store keeps any valid name: which names exist,
// their rules and which are secret is config/settings' table, checked by the
// console's `config set`. Values are never put into an error message here.
import { CONFIG_KEY_PROBES, CONFIG_MAX_ENTRIES, CONFIG_NAME_MAX_CHARS, CONFIG_VALUE_MAX_BYTES } from "budgets";
import { messageOf } from "util/errors";
import { logLine } from "util/log";

/** The part of an `embedded:storage/key-value` store (format "buffer") that config uses. */
export interface KeyValueStore {
	/** The stored bytes (a string only if someone else wrote one), or undefined when absent. */
	read(key: string): ArrayBuffer | string | undefined;
	/** Stores and commits; throws when the store cannot. */
	write(key: string, value: ArrayBuffer): void;
	/** Removes and commits; an absent key is not an error. */
	delete(key: string): void;
	/** The keys present. */
	[Symbol.iterator](): Iterator<string>;
}

/** Called after a value changed; value is undefined when the name was unset. Must not throw. */
export type ConfigListener = (name: string, value: string | undefined) => void;

const NAME_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/;

/** Throws an Error that says what a valid name looks like, when name is not one. */
export function checkName(name: string): void {
	if (name.length > CONFIG_NAME_MAX_CHARS)
		throw new RangeError(`config name "${name.slice(0, CONFIG_NAME_MAX_CHARS)}…" is too long: use at most ${CONFIG_NAME_MAX_CHARS} characters.`);
	if (!NAME_PATTERN.test(name))
		throw new RangeError(`"${name}" is not a valid config name: use lowercase letters, digits, "_" and "-" in words joined by dots, e.g. llm.api_key.`);
}

function fnv1a(text: string): number {
	let hash = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) {
		hash ^= text.charCodeAt(i);
		hash = Math.imul(hash, 0x01000193) >>> 0;
	}
	return hash;
}

/** The NVS keys a name may be stored under, in probe order. */
export function storageKeys(name: string): string[] {
	const base = "c" + fnv1a(name).toString(16).padStart(8, "0");
	return Array.from({ length: CONFIG_KEY_PROBES }, (_, probe) => base + probe);
}

// The reason given never quotes the stored text: it may hold a secret.
function parseRecord(bytes: ArrayBuffer): { name: string; value: string } {
	let record: { name?: unknown; value?: unknown } | null;
	try {
		record = JSON.parse(String.fromArrayBuffer(bytes));
	} catch {
		throw new TypeError("it is not UTF-8 JSON");
	}
	const name = record?.name, value = record?.value;
	if (typeof name !== "string" || typeof value !== "string") throw new TypeError("it is not a {name, value} record");
	checkName(name);
	return { name, value };
}

export class Config {
	#store: KeyValueStore;
	#values = new Map<string, { key: string; value: string }>();
	#taken = new Set<string>();      // every key in the store, readable or not
	#problems: string[] = [];
	#listeners = new Set<ConfigListener>();

	/** Reads every entry of store. Unreadable entries become problems(), never exceptions. */
	constructor(store: KeyValueStore) {
		this.#store = store;
		for (const key of [...store]) {
			this.#taken.add(key);
			try {
				const bytes = store.read(key);
				if (!(bytes instanceof ArrayBuffer)) throw new Error("it holds no bytes");
				const { name, value } = parseRecord(bytes);
				if (!storageKeys(name).includes(key)) throw new Error(`it names "${name}", which belongs under another key`);
				if (this.#values.has(name)) throw new Error(`"${name}" is already stored under ${this.#values.get(name)!.key}`);
				this.#values.set(name, { key, value });
			} catch (error) {
				const why = messageOf(error);
				this.#problems.push(`stored config entry ${key} is unreadable (${why}); it is left untouched (factory-reset confirm removes it).`);
			}
		}
	}

	get(name: string): string | undefined {
		return this.#values.get(name)?.value;
	}

	/** Validates, persists, then tells listeners. Throws an Error a person can act on. */
	set(name: string, value: string): void {
		checkName(name);
		if (typeof value !== "string" || !value.length)
			throw new TypeError(`a value for ${name} is needed: to remove the setting use config unset ${name}.`);
		const bytes = ArrayBuffer.fromString(JSON.stringify({ name, value }));
		const size = ArrayBuffer.fromString(value).byteLength;
		if (size > CONFIG_VALUE_MAX_BYTES)
			throw new RangeError(`the value for ${name} is ${size} bytes; at most ${CONFIG_VALUE_MAX_BYTES} bytes fit.`);
		const current = this.#values.get(name);
		if (current?.value === value) return;
		const key = current?.key ?? this.#freeKey(name);
		this.#store.write(key, bytes);
		this.#taken.add(key);
		this.#values.set(name, { key, value });
		this.#notify(name, value);
	}

	/** Removes a setting; false when it was not set. */
	unset(name: string): boolean {
		checkName(name);
		const current = this.#values.get(name);
		if (!current) return false;
		this.#store.delete(current.key);
		this.#taken.delete(current.key);
		this.#values.delete(name);
		this.#notify(name, undefined);
		return true;
	}

	/**
	 * Removes every entry, readable or not (factory reset); returns how many
	 * there were. Listeners hear each readable name unset.
	 */
	clear(): number {
		const keys = [...this.#taken];
		for (const key of keys) this.#store.delete(key);
		const names = [...this.#values.keys()];
		this.#taken.clear();
		this.#values.clear();
		this.#problems = [];
		for (const name of names) this.#notify(name, undefined);
		return keys.length;
	}

	/** Every setting as [name, value], sorted by name. Values are raw: mask before showing. */
	entries(): Array<[string, string]> {
		return [...this.#values].map(([name, { value }]): [string, string] => [name, value]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
	}

	/** One sentence per stored entry that could not be read at open. */
	problems(): readonly string[] {
		return this.#problems;
	}

	/** Listens for changes; returns a function that stops listening. */
	onChange(listener: ConfigListener): () => void {
		this.#listeners.add(listener);
		return () => this.#listeners.delete(listener);
	}

	#freeKey(name: string): string {
		if (this.#values.size >= CONFIG_MAX_ENTRIES)
			throw new RangeError(`config is full (${CONFIG_MAX_ENTRIES} settings): unset one you no longer need, then try again.`);
		const key = storageKeys(name).find((k) => !this.#taken.has(k));
		if (!key) throw new RangeError(`no storage slot is free for ${name} (its hashed keys are taken): choose another name.`);
		return key;
	}

	#notify(name: string, value: string | undefined): void {
		for (const listener of this.#listeners) {
			try {
				listener(name, value);
			} catch (error) {
				logLine("warn", `config: a listener for ${name} failed: ${messageOf(error)}`);
			}
		}
	}
}
