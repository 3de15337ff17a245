// The source tree's shape, read from the sources (test/e2e/tree.test.mjs checks
// it; `node tools/tree.mjs` prints what breaks it). modules/NOTES.md says why.
//
// - Machines: a module under modules/main runs in the main machine, one under
//   modules/agent in the agent machine; modules/shared (and budgets.ts) is
//   what both may import. main/ never imports agent/, nor agent/ main/, and
//   shared/ imports only shared/.
// - Layers: every module has a role. base (budgets, util/*) imports only base;
//   a contract (a types.ts, the agent port's protocol and settings, the
//   settings table) imports only base and contracts; code imports base,
//   contracts and code; an assembler (a setup.ts, channels/all, agent/machine, agent/worker,
//   main.ts) may import anything. No import runs up a layer.
// - No circles: between modules, nor between areas of one role ("core code"
//   importing "caps code" and back is a circle even through other modules).
// - The lin host's C: no circle between its files (a file that calls a host*
//   function another file defines depends on it).
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT, readManifest } from "./build.mjs";

const ROLES = ["base", "contract", "code", "assembler"];
const CONTRACTS = new Set(["agent/protocol", "agent/settings", "config/settings"]);
const ASSEMBLERS = new Set(["main", "agent/machine", "agent/worker", "channels/all"]);

function tsFiles(dir, out = []) {
	for (const name of readdirSync(dir)) {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) tsFiles(path, out);
		else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
	}
	return out;
}

/** Every import of a module's source, type-only ones too (they shape the tree as much). */
export function sourceImports(text) {
	const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
	const found = new Set();
	for (const m of code.matchAll(/(?:^|[;\s])(?:import|export)\s[^;'"]*?from\s*["']([^"']+)["']|(?:^|[;\s])import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.add(m[1] ?? m[2] ?? m[3]);
	return [...found];
}

/** The firmware's modules: specifier -> {file, machine, area, role, imports}. */
export function readTree(root = ROOT) {
	const byPath = new Map();
	for (const [specifier, pathNoExt] of readManifest(join(root, "manifest.json")).modules) {
		const file = pathNoExt + ".ts";
		if (existsSync(file)) byPath.set(file, specifier);
	}
	const modules = new Map();
	for (const file of [join(root, "main.ts"), ...tsFiles(join(root, "modules"))]) {
		const specifier = byPath.get(file);
		if (!specifier) continue;
		const path = relative(root, file);
		const top = path.split("/")[1];
		const machine = path === "main.ts" ? "main" : path === "modules/budgets.ts" ? "shared" : top;
		const area = specifier.includes("/") ? specifier.slice(0, specifier.lastIndexOf("/")) : specifier;
		const role = specifier === "budgets" || area === "util" ? "base"
			: CONTRACTS.has(specifier) || basename(file) === "types.ts" ? "contract"
			: ASSEMBLERS.has(specifier) || basename(file) === "setup.ts" ? "assembler"
			: "code";
		modules.set(specifier, { specifier, path, machine, area, role, imports: sourceImports(readFileSync(file, "utf8")) });
	}
	return modules;
}

function circles(edges) {
	const found = [];
	const state = new Map();
	const stack = [];
	const visit = (node) => {
		state.set(node, 1);
		stack.push(node);
		for (const next of edges.get(node) ?? []) {
			if (state.get(next) === 1) found.push([...stack.slice(stack.indexOf(next)), next].join(" -> "));
			else if (!state.has(next)) visit(next);
		}
		stack.pop();
		state.set(node, 2);
	};
	for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
	return found;
}

/** Sentences naming every import that breaks the tree's rules (empty: none). */
export function treeProblems(modules = readTree()) {
	const problems = [];
	const moduleEdges = new Map();
	const areaEdges = new Map();
	for (const m of modules.values()) {
		moduleEdges.set(m.specifier, new Set());
		for (const imported of m.imports) {
			const target = modules.get(imported);
			if (!target) continue; // host/*, embedded:*, timer, psram: the platform's
			moduleEdges.get(m.specifier).add(imported);
			if (m.machine !== "shared" && target.machine !== "shared" && target.machine !== m.machine)
				problems.push(`${m.path} (${m.machine} machine) imports ${imported} (${target.path}), which runs in the ${target.machine} machine`);
			if (m.machine === "shared" && target.machine !== "shared")
				problems.push(`${m.path} (shared by both machines) imports ${imported} (${target.path}), which runs in the ${target.machine} machine only`);
			if (ROLES.indexOf(target.role) > ROLES.indexOf(m.role) && m.role !== "assembler")
				problems.push(`${m.path} (${m.role}) imports ${imported} (${target.role}): an import running back up`);
			const from = `${m.area} ${m.role}`, to = `${target.area} ${target.role}`;
			if (from !== to) {
				if (!areaEdges.has(from)) areaEdges.set(from, new Set());
				areaEdges.get(from).add(to);
			}
		}
	}
	for (const circle of circles(moduleEdges)) problems.push(`a circle of modules: ${circle}`);
	for (const circle of circles(areaEdges)) problems.push(`a circle of areas: ${circle}`);
	return problems;
}

/** The lin host's C files: which host* functions each defines and calls; sentences for every circle. */
export function hostProblems(root = ROOT) {
	const dir = join(root, "hosts", "lin", "src");
	const files = readdirSync(dir).filter((n) => n.endsWith(".c"));
	const text = new Map(files.map((n) => [n, readFileSync(join(dir, n), "utf8").replace(/\/\*[\s\S]*?\*\//g, "")]));
	const definer = new Map();
	for (const [name, t] of text)
		for (const m of t.matchAll(/^[A-Za-z][\w \t*]*?\b(host[A-Z]\w*)\s*\([^;{]*\)\s*(?:__attribute__\(\([^)]*\)\)\s*)?\{/gm)) definer.set(m[1], name);
	for (const [name, t] of text) for (const m of t.matchAll(/^int (host[A-Z]\w*)\s*=/gm)) definer.set(m[1], name);
	const edges = new Map();
	for (const [name, t] of text) {
		const uses = new Set();
		for (const m of t.matchAll(/\b(host[A-Z]\w*)\b/g)) {
			const owner = definer.get(m[1]);
			if (owner && owner !== name) uses.add(owner);
		}
		edges.set(name, uses);
	}
	return { edges, problems: circles(edges).map((c) => `a circle of the lin host's C files: ${c}`) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const problems = [...treeProblems(), ...hostProblems().problems];
	for (const p of problems) console.log(p);
	console.log(`${problems.length} problems`);
}
