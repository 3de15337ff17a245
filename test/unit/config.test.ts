// The config store: names, hashed NVS keys, persistence through a key-value
// store, masking, listeners, and what happens to damaged stored entries.
import { CONFIG_KEY_MAX_CHARS, CONFIG_MAX_ENTRIES, CONFIG_NAME_MAX_CHARS, CONFIG_VALUE_MAX_BYTES } from "budgets";
import { Config, checkName, storageKeys, type KeyValueStore } from "config/store";
import { SETTINGS, isSecret } from "config/settings";
import { configCommands, shownValue } from "config/commands";
import { PRESETS } from "llm/profiles";
import { maskSecret, maskedJson } from "util/secrets";
import files from "embedded:storage/files";
import type { Directory } from "embedded:storage/files";
import { factoryResetCommand } from "console/reset";
import { exists, writeAtomically, type WipeResult } from "util/files";
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

test("settings declared secret are masked to their last four characters, short ones fully; others are shown", () => {
	for (const name of ["llm.api_key", "wifi.password"]) assert.ok(isSecret(name), name);
	for (const name of ["llm.model", "wifi.ssid", "llm.max_tokens", "llm.tokens_per_day", "llm.max_tokens_field"]) assert.ok(!isSecret(name), name);
	assert.equal(maskSecret("sk-secret-1234"), "****1234");
	assert.equal(maskSecret("short"), "********");
	assert.equal(shownValue("llm.api_key", "sk-secret-1234"), "****1234");
	assert.equal(shownValue("llm.model", "gpt-4o"), "gpt-4o");
	assert.equal(shownValue("llm.max_tokens", "4096"), "4096", "a count whose name says token is no secret");
	assert.equal(shownValue("some.old_setting", "abc"), "********", "an undeclared name is masked: nothing says it is not a secret");
});

test("entries are sorted by name", () => {
	const config = new Config(new MemoryStore());
	config.set("wifi.ssid", "home");
	config.set("llm.model", "x");
	config.set("llm.base_url", "http://127.0.0.1");
	assert.deepEqual(config.entries().map(([name]) => name), ["llm.base_url", "llm.model", "wifi.ssid"]);
});

// ---- the declared settings through the console's config commands ----

function configConsole(preset: Record<string, string> = {}) {
	const config = new Config(new MemoryStore());
	for (const [name, value] of Object.entries(preset)) config.set(name, value);
	const commands = configCommands(config);
	const run = (line: string): string => {
		const [group, verb] = line.split(" ", 2);
		const command = commands.find((c) => c.name === `${group} ${verb}`)!;
		let out = "";
		try {
			command.run(line.slice(group.length + verb.length + 2).trim(), { line: (text) => void (out += text + "\n") });
		} catch (error) {
			out += `error: ${(error as Error).message}\n`;
		}
		return out;
	};
	return { config, run };
}

test("config set refuses an unknown name, suggesting the nearest known one, and stores nothing", () => {
	const { config, run } = configConsole();
	assert.equal(run("config set llm.modle gpt"), "error: there is no setting \"llm.modle\": did you mean llm.model? (config describe lists them all)\n");
	assert.deepEqual(config.entries(), []);
});

test("config set refuses a value that breaks the setting's rule, stating the rule", () => {
	const { config, run } = configConsole();
	assert.match(run("config set llm.provider bogus"), /^error: llm\.provider must be one of openai, anthropic, deepseek, openrouter, ollama, custom \(not "bogus"\)\.\n$/);
	assert.match(run("config set llm.stream maybe"), /^error: llm\.stream must be true or false/);
	assert.match(run("config set llm.timeout_ms -5"), /^error: llm\.timeout_ms must be a whole number from 1000 to 600000 \(not "-5"\)/);
	assert.match(run("config set llm.base_url ftp://x"), /^error: llm\.base_url must be a URL starting with http:\/\/ or https:\/\//);
	assert.deepEqual(config.entries(), []);
	assert.equal(run("config set llm.stream NO"), "ok: llm.stream = false\n", "booleans are stored as true/false");
	assert.equal(run("config set llm.timeout_ms 90_000"), "ok: llm.timeout_ms = 90000\n");
});

test("config set checks a time zone, a pin list and the script grants as their readers would, and stores nothing bad", () => {
	const { config, run } = configConsole();
	assert.match(run("config set time.timezone Mars/Olympus"), /^error: time\.timezone: "Mars\/Olympus" is not a time zone this firmware knows: use UTC, an offset like \+08:00/);
	assert.match(run("config set time.timezone +15:00"), /^error: time\.timezone: the time zone "\+15:00" is more than 14 hours from UTC/);
	assert.match(run("config set gpio.allow 2,4,99"), /^error: gpio\.allow must be comma-separated GPIO numbers from 0 to 48, e\.g\. 2,4,5 \(not "2,4,99"\)/);
	for (const [setting, pin, why] of [["gpio.allow", 19, "the USB port's D-"], ["gpio.allow", 30, "the flash's SPI bus"], ["pwm.allow", 35, "the octal PSRAM's bus"], ["gpio.allow", 44, "the console's UART0 RX"]] as const)
		assert.match(run(`config set ${setting} 2,${pin}`), new RegExp(`^error: ${setting.replace(".", "\\.")}: pin ${pin} is ${why}.*never allowed`));
	assert.match(run("config set gpio.allow 2,,4"), /^error: gpio\.allow must be/);
	assert.match(run("config set script.grants time,net"), /^error: script\.grants must be a comma-separated list of time, gpio, math \(not "time,net"\)/);
	assert.deepEqual(config.entries(), [], "nothing stored");
	assert.equal(run("config set time.timezone Europe/Berlin"), "ok: time.timezone = Europe/Berlin\n");
	assert.equal(run("config set time.timezone CET-1CEST,M3.5.0,M10.5.0/3"), "ok: time.timezone = CET-1CEST,M3.5.0,M10.5.0/3\n");
	assert.equal(run("config set gpio.allow 5, 2,2"), "ok: gpio.allow = 2,5\n", "pins sorted, each once");
	assert.equal(run("config set script.grants GPIO, time"), "ok: script.grants = gpio,time\n");
	assert.equal(run("config describe time.timezone").split("\n")[1], "  a time zone: UTC, an offset like +08:00, a POSIX rule like CET-1CEST,M3.5.0,M10.5.0/3, or a name like Europe/Berlin; default UTC");
});

test("config get and show give the effective value and its origin: set, preset or default", () => {
	const { run } = configConsole({ "llm.provider": "anthropic", "llm.max_tokens": "1000" });
	assert.equal(run("config get llm.max_tokens"), "llm.max_tokens = 1000 (set)\n");
	assert.equal(run("config get llm.base_url"), "llm.base_url = https://api.anthropic.com/v1 (preset)\n");
	assert.equal(run("config get llm.auth"), "llm.auth = api-key (preset)\n");
	assert.equal(run("config get llm.timeout_ms"), "llm.timeout_ms = 120000 (default)\n");
	assert.equal(run("config get llm.model"), "llm.model is not set: config set llm.model VALUE sets it.\n");
	assert.match(run("config get llm.modle"), /did you mean llm\.model\?/);
	const show = run("config show");
	assert.match(show, /^llm\.provider = anthropic \(set\)\n/);
	assert.match(show, /\nllm\.tokens_per_day = 2000000 \(default\)\n/);
	assert.match(show, /\nllm\.max_tokens_field = max_tokens \(preset\)\n/);
});

test("config show marks a stored value that breaks its rule, and masks an undeclared leftover", () => {
	const { run } = configConsole({ "llm.stream": "maybe", "old.thing": "value-1234567890" });
	const show = run("config show");
	assert.match(show, /\nllm\.stream = maybe \(set, but llm\.stream must be true or false .*: config set llm\.stream fixes it\)\n/);
	assert.match(show, /\nold\.thing = \*\*\*\*7890 \(set, but not a setting of this firmware: config unset old\.thing removes it\)\n/);
});

test("config describe lists every setting with its rule and default, or one", () => {
	const { run } = configConsole();
	const all = run("config describe");
	for (const name of ["llm.provider", "llm.api_key", "llm.allow_insecure", "memory.mode", "wifi.password"]) assert.match(all, new RegExp(`(^|\\n)${name.replace(/\./g, "\\.")}: `));
	assert.equal(run("config describe llm.timeout_ms"), "llm.timeout_ms: one HTTP attempt, in milliseconds\n  a whole number from 1000 to 600000; default 120000\n");
	assert.match(run("config describe llm.api_key"), /secret: shown masked/);
});

test("the declared llm.provider choices are the presets plus custom", () => {
	const spec = SETTINGS.find((s) => s.name === "llm.provider")!;
	assert.deepEqual(spec.choices, [...Object.keys(PRESETS), "custom"]);
});

test("tool arguments are masked by field name with the one masking function; counts named like tokens are not", () => {
	assert.equal(maskedJson('{"ssid":"home","password":"hunter22","api_key":"sk-abcdefghijkl","max_tokens":50}'), '{"ssid":"home","password":"********","api_key":"****ijkl","max_tokens":50}');
	assert.equal(maskedJson('{"password": "x"'), "(16 characters of invalid JSON)");
});

// factory-reset: each machine wipes what it owns. A running agent wipes its own
// directories (the main machine only reports them); a down one holds no file,
// so the main machine wipes them itself.
function resetDirectory(): Directory {
	const root = "factory-reset-test";
	try { files.createDirectory(root); } catch { /* there from an earlier run */ }
	const directory = files.openDirectory({ path: root });
	for (const dir of ["sessions", "memory", "telegram"]) {
		try { directory.createDirectory(dir); } catch { /* there */ }
		writeAtomically(directory, `${dir}/a.txt`, ArrayBuffer.fromString("x"));
	}
	return directory;
}

async function runReset(directory: Directory, wipeAgent: () => Promise<WipeResult> | undefined) {
	const config = new Config(new MemoryStore());
	config.set("llm.model", "m");
	const lines: string[] = [];
	let restarts = 0;
	await factoryResetCommand({ config, files: directory, directories: [{ path: "telegram", what: "Telegram pairing" }], wipeAgent, restart: () => void restarts++ }).run("confirm", { line: (text) => void lines.push(text) });
	return { lines, restarts, model: config.get("llm.model") };
}

test("factory-reset has a running agent wipe its own directories, then wipes the config and the pairing", async () => {
	const directory = resetDirectory();
	const r = await runReset(directory, () => Promise.resolve({ wiped: ["sessions (9 files)"], errors: ["memory and profile could not be wiped completely (busy)"] }));
	assert.deepEqual(r.lines, [
		"error: memory and profile could not be wiped completely (busy); the rest was wiped, run factory-reset confirm again after the restart.",
		"factory reset: wiped 1 setting, sessions (9 files), Telegram pairing (1 file); restarting…",
	]);
	assert.equal(r.restarts, 1);
	assert.equal(r.model, undefined);
	assert.equal(exists(directory, "sessions/a.txt"), true, "the agent's directories are the agent's to wipe");
	assert.equal(exists(directory, "telegram"), false);
});

test("factory-reset on a storage that could not be mounted erases it instead of wiping directories, then the settings; an erase that fails wipes nothing", async () => {
	const directory = resetDirectory();
	const config = new Config(new MemoryStore());
	config.set("llm.model", "m");
	const lines: string[] = [];
	let erased = 0, restarts = 0, agentAsked = 0;
	const reset = (erase: () => void) => factoryResetCommand({
		config, files: directory, directories: [{ path: "telegram", what: "Telegram pairing" }],
		wipeAgent: () => { agentAsked++; return undefined; }, restart: () => void restarts++,
		storage: { refused: "littlefs cannot mount the \"storage\" partition (error -84, corrupt)", erase },
	}).run("confirm", { line: (text) => void lines.push(text) });
	await reset(() => { throw new Error("storage: erasing the \"storage\" partition's first blocks failed (ESP-IDF error 258)"); });
	assert.deepEqual(lines, ["error: storage: erasing the \"storage\" partition's first blocks failed (ESP-IDF error 258); nothing was wiped."]);
	assert.equal(config.get("llm.model"), "m", "the settings stay when the erase failed");
	assert.equal(restarts, 0);
	lines.length = 0;
	await reset(() => void erased++);
	assert.deepEqual(lines, ["factory reset: erased the storage (it could not be mounted), wiped 1 setting; restarting…"]);
	assert.equal(erased, 1);
	assert.equal(restarts, 1);
	assert.equal(agentAsked, 0, "an agent holds no file of a storage that is not mounted");
	assert.equal(config.get("llm.model"), undefined);
	assert.equal(exists(directory, "telegram"), true, "no directory is touched: the erase is the whole wipe");
});

test("factory-reset with no agent machine running wipes the agent's directories itself; an agent that fails is reported", async () => {
	const directory = resetDirectory();
	const r = await runReset(directory, () => undefined);
	assert.deepEqual(r.lines, ["factory reset: wiped 1 setting, sessions (1 file), memory and profile (1 file), Telegram pairing (1 file); restarting…"]);
	assert.equal(exists(directory, "sessions") || exists(directory, "memory"), false);
	const failing = await runReset(resetDirectory(), () => Promise.reject(new Error("the agent is restarting")));
	assert.equal(failing.lines[0], "error: the agent could not wipe its files (the agent is restarting); the rest was wiped, run factory-reset confirm again after the restart.");
	assert.equal(failing.restarts, 1, "it still restarts");
});
