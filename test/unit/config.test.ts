// The config store: names, hashed NVS keys, persistence through a key-value
// store, masking, listeners, and what happens to damaged stored entries.
import { CONFIG_KEY_MAX_CHARS, CONFIG_MAX_ENTRIES, CONFIG_NAME_MAX_CHARS, CONFIG_VALUE_MAX_BYTES } from "budgets";
import { Config, checkName, display, isSecretName, mask, storageKeys, type KeyValueStore } from "config/store";
import { assert, test } from "testing";

// An in-memory key-value store with the shape of embedded:storage/key-value.
class MemoryStore implements KeyValueStore {
	entries = new Map<string, ArrayBuffer>();
	writes = 0;
	read(key: string): ArrayBuffer | undefined {
		const value = this.entries.get(key);
		return value && value.slice(0);
	}
	write(key: string, value: ArrayBuffer): void {
		if (key.length > CONFIG_KEY_MAX_CHARS) throw new RangeError(`key too long: ${key}`);
		this.writes++;
		this.entries.set(key, value.slice(0));
	}
	delete(key: string): void {
		this.entries.delete(key);
	}
	[Symbol.iterator](): Iterator<string> {
		return this.entries.keys();
	}
}

test("a setting survives reopening the store and comes back by name", () => {
	const store = new MemoryStore();
	new Config(store).set("llm.model", "gpt-4o-mini");
	const again = new Config(store);
	assert.equal(again.get("llm.model"), "gpt-4o-mini");
	assert.deepEqual(again.entries(), [["llm.model", "gpt-4o-mini"]]);
	assert.deepEqual(again.problems(), []);
});

test("names longer than an NVS key are stored under a hashed key that fits", () => {
	const store = new MemoryStore();
	const name = "telegram.bot_token.for_the_second_bot";
	assert.ok(name.length > CONFIG_KEY_MAX_CHARS);
	new Config(store).set(name, "123:abc");
	const [key] = [...store.entries.keys()];
	assert.ok(key.length <= CONFIG_KEY_MAX_CHARS, `key ${key} fits NVS`);
	assert.equal(key, storageKeys(name)[0]);
	assert.equal(new Config(store).get(name), "123:abc");
});

test("every probe key of a maximal name fits NVS, and probes are distinct", () => {
	const keys = storageKeys("a".repeat(CONFIG_NAME_MAX_CHARS));
	assert.ok(keys.every((k) => k.length <= CONFIG_KEY_MAX_CHARS), "keys fit");
	assert.equal(new Set(keys).size, keys.length);
});

test("two names with the same hash both survive: the second takes the next probe key", () => {
	const [a, b] = ["test.k229599", "test.k432382"];   // FNV-1a 32 collision, found offline
	assert.equal(storageKeys(a)[0], storageKeys(b)[0]);
	const store = new MemoryStore();
	const config = new Config(store);
	config.set(a, "first");
	config.set(b, "second");
	assert.ok(store.entries.has(storageKeys(b)[1]), "second probe used");
	const reopened = new Config(store);
	assert.equal(reopened.get(a), "first");
	assert.equal(reopened.get(b), "second");
	reopened.unset(a);
	assert.equal(new Config(store).get(b), "second", "unsetting one keeps the other");
});

test("a damaged entry in a name's first slot is skipped, never overwritten", () => {
	const store = new MemoryStore();
	const [first, second] = storageKeys("llm.model");
	store.entries.set(first, ArrayBuffer.fromString("damaged"));
	new Config(store).set("llm.model", "new");
	assert.ok(store.entries.has(second), "second probe used");
	assert.equal(new Config(store).get("llm.model"), "new");
	assert.equal(String.fromArrayBuffer(store.entries.get(first)!), "damaged", "left as it was");
});

test("names are validated: charset, dots, length", () => {
	for (const good of ["llm.api_key", "wifi.ssid", "a", "x1.y-2.z_3", "a".repeat(CONFIG_NAME_MAX_CHARS)]) checkName(good);
	for (const bad of ["", "LLM.model", "llm..model", ".llm", "llm.", "llm model", "1llm", "llm/model", "llm.modèle"])
		assert.throws(() => checkName(bad), "not a valid config name");
	assert.throws(() => checkName("a".repeat(CONFIG_NAME_MAX_CHARS + 1)), "too long");
	assert.throws(() => new Config(new MemoryStore()).set("Bad Name", "x"), "not a valid config name");
});

test("values are bounded in bytes and must not be empty; a refused set stores nothing", () => {
	const store = new MemoryStore();
	const config = new Config(store);
	config.set("notes.text", "é".repeat(CONFIG_VALUE_MAX_BYTES / 2));
	assert.throws(() => config.set("notes.other", "é".repeat(CONFIG_VALUE_MAX_BYTES / 2 + 1)), `at most ${CONFIG_VALUE_MAX_BYTES} bytes`);
	assert.throws(() => config.set("notes.other", ""), "config unset notes.other");
	assert.equal(config.get("notes.other"), undefined);
	assert.equal(store.entries.size, 1);
});

test("an error about a secret's value never contains the value", () => {
	const config = new Config(new MemoryStore());
	const secret = "sk-secret-" + "z".repeat(CONFIG_VALUE_MAX_BYTES);
	const error = (() => {
		try {
			config.set("llm.api_key", secret);
		} catch (e) {
			return e as Error;
		}
	})();
	assert.ok(error, "refused");
	assert.ok(!error!.message.includes("sk-secret"), error!.message);
});

test("the number of settings is bounded with a clear error", () => {
	const config = new Config(new MemoryStore());
	for (let i = 0; i < CONFIG_MAX_ENTRIES; i++) config.set(`n.k${i}`, "v");
	assert.throws(() => config.set("n.one_more", "v"), "config is full");
	config.set("n.k0", "changed");
	assert.equal(config.get("n.k0"), "changed");
});

test("unset removes the entry from the store and reports whether it existed", () => {
	const store = new MemoryStore();
	const config = new Config(store);
	config.set("llm.model", "x");
	assert.equal(config.unset("llm.model"), true);
	assert.equal(config.unset("llm.model"), false);
	assert.equal(store.entries.size, 0);
	assert.equal(new Config(store).get("llm.model"), undefined);
});

test("damaged stored entries are reported once each and lose nothing else", () => {
	const store = new MemoryStore();
	new Config(store).set("llm.model", "keep-me");
	store.entries.set("c0000000a0", new Uint8Array([0xff, 0xfe, 0x00]).buffer);          // not UTF-8
	store.entries.set("c0000000b0", ArrayBuffer.fromString("{\"name\": 4}"));           // wrong shape
	store.entries.set("c0000000c0", ArrayBuffer.fromString(JSON.stringify({ name: "llm.model", value: "sk-secret-9999" }))); // wrong key for its name
	const config = new Config(store);
	assert.equal(config.get("llm.model"), "keep-me");
	const problems = config.problems();
	assert.equal(problems.length, 3, problems.join(" | "));
	for (const key of ["c0000000a0", "c0000000b0", "c0000000c0"]) assert.ok(problems.some((p) => p.includes(key)), `names ${key}`);
	assert.ok(problems.every((p) => !p.includes("sk-secret")), "never quotes stored text");
	config.set("llm.model", "changed");
	assert.equal(store.entries.size, 4, "damaged entries are left in place");
});

test("listeners hear set and unset, not no-op sets, and can stop listening", () => {
	const config = new Config(new MemoryStore());
	const heard: Array<[string, string | undefined]> = [];
	const stop = config.onChange((name, value) => heard.push([name, value]));
	config.onChange(() => { throw new Error("a broken listener"); });
	config.set("llm.model", "a");
	config.set("llm.model", "a");
	config.unset("llm.model");
	stop();
	config.set("llm.model", "b");
	assert.deepEqual(heard, [["llm.model", "a"], ["llm.model", undefined]]);
	assert.equal(config.get("llm.model"), "b", "a throwing listener does not undo the change");
});

test("secret names are masked to their last four characters, short ones fully", () => {
	for (const name of ["llm.api_key", "telegram.bot_token", "qq.app_secret", "wifi.password"]) assert.ok(isSecretName(name), name);
	for (const name of ["llm.model", "wifi.ssid"]) assert.ok(!isSecretName(name), name);
	assert.equal(mask("sk-secret-1234"), "****1234");
	assert.equal(mask("short"), "********");
	assert.equal(display("llm.api_key", "sk-secret-1234"), "****1234");
	assert.equal(display("llm.model", "gpt-4o"), "gpt-4o");
});

test("entries are sorted by name", () => {
	const config = new Config(new MemoryStore());
	config.set("wifi.ssid", "home");
	config.set("llm.model", "x");
	config.set("llm.base_url", "http://127.0.0.1");
	assert.deepEqual(config.entries().map(([name]) => name), ["llm.base_url", "llm.model", "wifi.ssid"]);
});
