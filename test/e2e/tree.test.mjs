// Checks on the source tree itself: a helper is defined once, every limit in
// budgets.ts is used, channel names are constants, and the agent core's loop
// file holds the loop only (its helpers live in their own modules).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../../tools/build.mjs";

function sources(dir = join(ROOT, "modules"), out = []) {
	for (const name of readdirSync(dir)) {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) sources(path, out);
		else if (name.endsWith(".ts")) out.push(path);
	}
	return out;
}

const files = [...sources(), join(ROOT, "main.ts")].map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, "utf8") }));

test("isObject, clip, oneLine and the heap-use figure are each defined once, in modules/shared/util", () => {
	for (const name of ["isObject", "clip", "oneLine", "heapUsedBytes"]) {
		const defining = files.filter((f) => new RegExp(`function ${name}\\b`).test(f.text)).map((f) => f.path);
		assert.equal(defining.length, 1, `${name} is defined in ${defining.join(", ")}`);
		assert.match(defining[0], /^modules\/shared\/util\//);
	}
	const inlineSums = files.filter((f) => /chunkUsed \+ \w*\.?slotUsed/.test(f.text) && !f.path.startsWith("modules/shared/util/"));
	assert.deepEqual(inlineSums.map((f) => f.path), [], "chunk + slot sums outside util/heap");
});

test("every limit in budgets.ts is used somewhere else", () => {
	const budgets = readFileSync(join(ROOT, "modules", "budgets.ts"), "utf8");
	const names = [...budgets.matchAll(/^export const (\w+)/gm)].map((m) => m[1]);
	assert.ok(names.length > 20);
	const cSources = readdirSync(join(ROOT, "hosts", "lin", "src")).filter((n) => /\.[ch]$/.test(n)).map((n) => readFileSync(join(ROOT, "hosts", "lin", "src", n), "utf8"));
	const elsewhere = [
		...files.filter((f) => f.path !== "modules/budgets.ts").map((f) => f.text),
		...readdirSync(join(ROOT, "test", "unit")).map((n) => readFileSync(join(ROOT, "test", "unit", n), "utf8")),
		// The host's C reads them as BUDGET_<NAME> (build/lin/budgets.h, made by tools/build.mjs).
		...cSources.map((text) => text.replace(/\bBUDGET_(\w+)/g, "$1")),
		// The board's own modules (platform, network) read theirs directly.
		...readdirSync(join(ROOT, "hosts", "esp32")).filter((n) => n.endsWith(".ts")).map((n) => readFileSync(join(ROOT, "hosts", "esp32", n), "utf8")),
	].join("\n");
	const unused = names.filter((name) => !new RegExp(`\\b${name}\\b`).test(elsewhere));
	assert.deepEqual(unused, [], "limits nothing uses");
});

test("channel names are written as constants (core/types Channel), not string literals", () => {
	const literal = /channel(?:: | === | !== )"(?!string")[a-z]+"/;
	const offenders = files.filter((f) => literal.test(f.text)).map((f) => f.path);
	assert.deepEqual(offenders, []);
});

test("the llm backend registry has no unused register/get wrappers", () => {
	const backends = readFileSync(join(ROOT, "modules", "agent", "llm", "backends.ts"), "utf8");
	assert.doesNotMatch(backends, /export function (register|get)\b/);
});

test("core/core.ts is the loop: queues, prompt layout and formatting live in their own modules", () => {
	const core = readFileSync(join(ROOT, "modules", "agent", "core", "core.ts"), "utf8");
	for (const part of ["mailbox", "context", "format", "request"]) assert.match(core, new RegExp(`from "core/${part}"`));
	assert.doesNotMatch(core, /\[request context\]|METRIC agent=|#parked|#submitWaiters/);
	const loop = /\n\tasync #loop\([^]*?\n\t}\n/.exec(core);
	assert.ok(loop, "the loop method is there");
	assert.ok(loop[0].split("\n").length <= 60, `the loop is ${loop[0].split("\n").length} lines: keep it on one screen`);
});

test("one masking function and one secret-field rule (util/secrets); settings are secret by declaration", () => {
	const patterns = files.filter((f) => /\/[^/\n]*\b(key|token)\|[^/\n]*secret[^/\n]*\/i?/.test(f.text)).map((f) => f.path);
	assert.deepEqual(patterns, ["modules/shared/util/secrets.ts"]);
	const masks = files.filter((f) => /"\*\*\*\*"\s*\+|\? "\*\*\*\*"/.test(f.text)).map((f) => f.path);
	assert.deepEqual(masks, ["modules/shared/util/secrets.ts"]);
});

test("the main machine reaches the agent only through the port: main.ts imports no store, memory, LLM runtime or core module", () => {
	// The import closure of main in the build's module map (what the main machine loads).
	const map = new Map(readFileSync(join(ROOT, "build", "lin", "app.map"), "utf8").split("\n").filter((l) => l.includes("\t")).map((l) => l.split("\t")));
	const seen = new Set();
	const walk = (specifier) => {
		if (seen.has(specifier) || !map.has(specifier)) return;
		seen.add(specifier);
		for (const m of readFileSync(map.get(specifier), "utf8").matchAll(/(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)) walk(m[1] ?? m[2]);
	};
	walk("main");
	assert.ok(seen.has("agent/client") && seen.has("config/store"), `main's closure: ${[...seen].join(", ")}`);
	// config/commands reads the LLM presets (llm/profiles, llm/backends: code and
	// tables, no runtime state); the runtime that owns calls and limits is llm/runtime.
	const agentSide = [...seen].filter((s) => /^(store|memory)\//.test(s) || ["llm/runtime", "llm/setup", "llm/limits"].includes(s) ||
		(/^core\//.test(s) && s !== "core/types") || ["agent/machine", "agent/service", "agent/worker"].includes(s));
	assert.deepEqual(agentSide, [], "modules of the agent machine loaded by the main machine");
});

// Issue 12: errors a person reads named internal API fields ("pass the server's CA
// as secure.certificate") and commands or tools that do not exist ("factory-reset
// clears it", "check the path with the files tool"). Comments may name them.
test("no message in modules/ names an internal API field or a command or tool that does not exist", () => {
	const PHRASES = /secure\.certificate|factory-reset clears|with the files tool/;
	const offenders = [];
	for (const { path, text } of files) {
		const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
		for (const literal of code.matchAll(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g))
			if (PHRASES.test(literal[0])) offenders.push(`${path}: ${literal[0].slice(0, 80)}`);
	}
	assert.deepEqual(offenders, []);
});
