// Checks on the source tree itself: the machines' folders and the layers imports
// run down (modules/NOTES.md), a helper is defined once, every limit in
// budgets.ts is used, channel names are constants, and the agent core's loop
// file holds the loop only (its helpers live in their own modules).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { ROOT } from "../../tools/build.mjs";
import { hostProblems, treeProblems } from "../../tools/tree.mjs";

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

test("one Role type: the roles are core/types Role, and a channel's part of them ChatRole, each declared once", () => {
	for (const name of ["Role", "ChatRole"]) {
		const declaring = files.filter((f) => new RegExp(`^export (type|interface|enum) ${name}\\b`, "m").test(f.text)).map((f) => f.path);
		assert.deepEqual(declaring, ["modules/shared/core/types.ts"], `${name} is declared in ${declaring.join(", ")}`);
	}
	const literal = files.filter((f) => /:\s*"owner" \| "user"/.test(f.text)).map((f) => f.path);
	assert.deepEqual(literal, [], "a role written out as a literal union instead of ChatRole");
});

test("host/sandbox's stops are decided by its reason code, never by the error's message (a script can throw any message)", () => {
	const byText = files.filter((f) => /sandbox: (step|memory|stack|key) limit/.test(f.text)).map((f) => f.path);
	assert.deepEqual(byText, []);
});

test("no stale future tense about what is built: \"channels will\", \"to come\" in modules/, docs/, README.md, ARCHITECTURE.md", () => {
	const docs = ["README.md", "ARCHITECTURE.md", ...readdirSync(join(ROOT, "docs")).map((n) => join("docs", n))].map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
	const notes = [];
	const walk = (dir) => { for (const name of readdirSync(dir)) { const path = join(dir, name); if (statSync(path).isDirectory()) walk(path); else if (name.endsWith(".md")) notes.push({ path: relative(ROOT, path), text: readFileSync(path, "utf8") }); } };
	walk(join(ROOT, "modules"));
	const stale = /\b(channels|channel) will\b|\b(?<!still )to come\b|\bwill be the same message\b/i;
	const found = [...files, ...docs, ...notes].flatMap((f) => f.text.split("\n").map((line, i) => [f.path, i + 1, line]).filter(([, , line]) => stale.test(line)).map(([p, n, line]) => `${p}:${n}: ${line.trim()}`));
	assert.deepEqual(found, []);
});

test("every limit in budgets.ts is used somewhere else", () => {
	const budgets = readFileSync(join(ROOT, "modules", "budgets.ts"), "utf8");
	const names = [...budgets.matchAll(/^export const (\w+)/gm)].map((m) => m[1]);
	assert.ok(names.length > 20);
	const cFolders = [join(ROOT, "hosts", "lin", "src"), join(ROOT, "hosts", "esp32"), join(ROOT, "hosts", "esp32", "tls"), ...readdirSync(join(ROOT, "hosts", "common")).map((n) => join(ROOT, "hosts", "common", n))];
	const cSources = cFolders.flatMap((dir) => readdirSync(dir).filter((n) => /\.[ch]$/.test(n)).map((n) => readFileSync(join(dir, n), "utf8")));
	const elsewhere = [
		...files.filter((f) => f.path !== "modules/budgets.ts").map((f) => f.text),
		...readdirSync(join(ROOT, "test", "unit")).map((n) => readFileSync(join(ROOT, "test", "unit", n), "utf8")),
		// The hosts' C reads them as BUDGET_<NAME> (build/lin/budgets.h, made by tools/build.mjs).
		...cSources.map((text) => text.replace(/\bBUDGET_(\w+)/g, "$1")),
		// The board's own modules (platform, network) read theirs directly.
		...readdirSync(join(ROOT, "hosts", "esp32")).filter((n) => n.endsWith(".ts")).map((n) => readFileSync(join(ROOT, "hosts", "esp32", n), "utf8")),
		// So do the lin host's (host/io's simulated devices).
		...readdirSync(join(ROOT, "hosts", "lin", "modules")).filter((n) => n.endsWith(".ts")).map((n) => readFileSync(join(ROOT, "hosts", "lin", "modules", n), "utf8")),
		// check:device holds the board's sdkconfig to the socket budgets (tools/device-c.mjs).
		readFileSync(join(ROOT, "tools", "device-c.mjs"), "utf8"),
		// The agent Worker's C stack against the manifest's nativeStack (npm run bench).
		readFileSync(join(ROOT, "tools", "bench", "stack.mjs"), "utf8"),
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

// Issue 27: the tree shows the two machines, and imports run one way
// (modules/NOTES.md; tools/tree.mjs reads them from the sources).
test("no module imports the other machine's side, no import runs back up a layer, and no circle", () => {
	assert.deepEqual(treeProblems(), []);
});

test("the lin host's C files form no circle: main.c is the boot, not the helpers' library", () => {
	const { edges, problems } = hostProblems();
	assert.deepEqual(problems, []);
	assert.ok(edges.get("main.c").has("worker.c") && edges.get("files.c").has("natives.c"), "the graph is read");
	for (const [file, uses] of edges) if (file !== "main.c") assert.ok(!uses.has("main.c"), `${file} calls main.c`);
});

test("the tree checks fail on a back-up import, a circle, the other machine's module, and a C circle", (t) => {
	const mod = (specifier, path, machine, area, role, imports) => [specifier, { specifier, path, machine, area, role, imports }];
	const broken = new Map([
		mod("util/a", "modules/shared/util/a.ts", "shared", "util", "base", ["net/types"]),
		mod("net/types", "modules/shared/net/types.ts", "shared", "net", "contract", ["util/a"]),
		mod("core/core", "modules/agent/core/core.ts", "agent", "core", "code", ["router/router"]),
		mod("router/router", "modules/main/router/router.ts", "main", "router", "code", ["core/core"]),
		mod("config/settings", "modules/shared/config/settings.ts", "shared", "config", "contract", ["config/store"]),
		mod("config/store", "modules/main/config/store.ts", "main", "config", "code", []),
	]);
	const problems = treeProblems(broken).join("\n");
	assert.match(problems, /util\/a\.ts \(base\) imports net\/types \(contract\): an import running back up/);
	assert.match(problems, /core\/core\.ts \(agent machine\) imports router\/router .* runs in the main machine/);
	assert.match(problems, /config\/settings\.ts \(shared by both machines\) imports config\/store .* main machine only/);
	assert.match(problems, /config\/settings\.ts \(contract\) imports config\/store \(code\)/);
	assert.match(problems, /a circle of modules: core\/core -> router\/router -> core\/core/);
	assert.match(problems, /a circle of areas: /);
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-tree-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	mkdirSync(join(dir, "hosts", "lin", "src"), { recursive: true });
	writeFileSync(join(dir, "hosts", "lin", "src", "main.c"), "void hostHelp(void)\n{\n}\nint main(void)\n{\n\thostInstallFiles();\n}\n");
	writeFileSync(join(dir, "hosts", "lin", "src", "files.c"), "void hostInstallFiles(void)\n{\n\thostHelp();\n}\n");
	assert.deepEqual(hostProblems(dir).problems, ["a circle of the lin host's C files: files.c -> main.c -> files.c"]);
});
