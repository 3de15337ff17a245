// The README and docs/ say only what is true of the tree: the README stays short,
// every page of docs/ is there, docs/configuration.md is what tools/docs.mjs makes
// of the settings table, every `npm run` script, file and link the pages name
// exists, every console command they name is one `help` lists, and every bench
// figure they quote is one tools/bench prints (on a page that names npm run bench).
// Quick: one run of the release host for `help`, the rest is reading files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { APP_MAP, ROOT, hostBinary } from "../../tools/build.mjs";
import { CONFIGURATION_PAGE, configurationPage, settingNames } from "../../tools/docs.mjs";

const README_MAX_LINES = 350;
const PAGES = ["device", "channels", "tools", "configuration", "performance", "security", "development"].map((name) => `docs/${name}.md`);
const ALL = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const text = Object.fromEntries(ALL.map((page) => [page, readFileSync(join(ROOT, page), "utf8")]));

/** A page split into its prose (code blocks blanked out) and its code blocks' lines. */
function split(page) {
	const prose = [], code = [];
	let inCode = false;
	for (const line of text[page].split("\n")) {
		if (/^\s*```/.test(line)) { inCode = !inCode; prose.push(""); continue; }
		(inCode ? code : prose).push(line);
	}
	return { prose: prose.join("\n"), code };
}

/** The `code spans` of a piece of prose. */
const spans = (prose) => [...prose.matchAll(/(?<!`)`([^`\n]+)`(?!`)/g)].map((m) => m[1]);

/** Every place a page runs a shell command: code spans and code-block lines. */
function shellCommands(page) {
	const { prose, code } = split(page);
	return [...spans(prose), ...code.map((l) => l.replace(/^\s*\$\s+/, "").replace(/\s+#.*$/, "").trim())];
}

test(`README.md has at most ${README_MAX_LINES} lines`, () => {
	const lines = text["README.md"].split("\n").length - 1;
	assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; move detail into docs/`);
});

test("every page of docs/ is there and has a title", () => {
	for (const page of PAGES) {
		assert.ok(text[page], `${page} is missing`);
		assert.match(text[page], /^# \S/, `${page} starts with a # title`);
	}
});

test("docs/configuration.md is what tools/docs.mjs makes of modules/shared/config/settings.ts", async () => {
	assert.ok(existsSync(APP_MAP), "build first: node tools/build.mjs");
	const page = await configurationPage();
	assert.ok(page === readFileSync(CONFIGURATION_PAGE, "utf8"), "docs/configuration.md is out of date: run node tools/build.mjs && node tools/docs.mjs");
	for (const name of await settingNames()) assert.ok(page.includes(`| \`${name}\``), `${name} has a row`);
});

test("every npm script the pages name exists, and every file they name", () => {
	const scripts = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts;
	const problems = [];
	for (const page of ALL) {
		for (const command of shellCommands(page)) {
			for (const m of command.matchAll(/\bnpm (?:run )?(start|test|(?<=run )[\w:-]+)\b/g))
				if (!Object.hasOwn(scripts, m[1])) problems.push(`${page}: ${m[0]}: no such script in package.json`);
		}
		for (const span of spans(split(page).prose)) {
			for (const word of span.split(/\s+/)) {
				const path = word.replace(/[,;:)]+$/, "");
				if (!/^(tools|modules|hosts|test|typings|docs)\/[\w./-]+$/.test(path) || /[*<>]|\b[A-Z]{2,}\b/.test(path)) continue;
				if (!existsSync(join(ROOT, path))) problems.push(`${page}: ${path} does not exist`);
			}
		}
		for (const name of ["ARCHITECTURE.md", "manifest.json", "partitions.csv", "main.ts"])
			if (text[page].includes(`\`${name}\``) && !existsSync(join(ROOT, name))) problems.push(`${page}: ${name} does not exist`);
	}
	assert.deepEqual(problems, []);
});

/** GitHub's anchor of a heading. */
const anchor = (heading) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-");

test("every link between the pages points at a file and a heading that exist", () => {
	const problems = [];
	for (const page of ALL) {
		for (const m of split(page).prose.matchAll(/\]\(([^)\s]+)\)/g)) {
			const target = m[1];
			if (/^[a-z]+:/.test(target)) continue;
			const [file, hash] = target.split("#");
			const path = file ? resolve(dirname(join(ROOT, page)), file) : join(ROOT, page);
			if (!existsSync(path)) { problems.push(`${page}: link to ${target}: no such file`); continue; }
			if (!hash) continue;
			const headings = readFileSync(path, "utf8").split("\n").filter((l) => /^#{1,6} /.test(l)).map((l) => anchor(l.replace(/^#+ /, "")));
			if (!headings.includes(hash)) problems.push(`${page}: link to ${target}: no heading #${hash} in ${relative(ROOT, path)}`);
		}
	}
	assert.deepEqual(problems, []);
});

/** The console's commands: first word -> the second words `help` lists (empty: none). */
function consoleCommands() {
	const data = mkdtempSync(join(tmpdir(), "xsclaw-docs-"));
	try {
		const result = spawnSync(hostBinary("release"), ["--modules", APP_MAP, "--data", data], { input: "help\n", encoding: "utf8", timeout: 120_000 });
		assert.equal(result.status, 0, `the firmware's help: exit ${result.status}\n${result.stderr?.slice(-2000)}`);
		const commands = new Map();
		for (const line of result.stdout.split("\n")) {
			const usage = /^\s+(\S.*?)(?:\s{2,}|$)/.exec(line)?.[1];
			if (!usage) continue;
			const [first, second] = usage.split(/\s+/);
			if (!commands.has(first)) commands.set(first, new Set());
			if (second && /^[a-z][a-z-]*$/.test(second)) commands.get(first).add(second);
		}
		assert.ok(commands.has("help") && commands.has("session"), `help listed no commands:\n${result.stdout}`);
		return commands;
	} finally {
		rmSync(data, { recursive: true, force: true });
	}
}

test("every console command the pages name is one the firmware's help lists", () => {
	const commands = consoleCommands();
	const problems = [];
	const check = (page, usage, strict) => {
		const [first, second] = usage.trim().split(/\s+/);
		if (!commands.has(first)) {
			if (strict) problems.push(`${page}: \`${usage}\`: help lists no command ${first}`);
			return;
		}
		const subcommands = commands.get(first);
		if (subcommands.size && second && /^[a-z][a-z-]*$/.test(second) && !subcommands.has(second))
			problems.push(`${page}: \`${usage}\`: help lists no ${first} ${second} (only ${[...subcommands].join(", ")})`);
	};
	for (const page of ALL) {
		const { prose, code } = split(page);
		// Tables of console commands: every code span of the first column is one.
		let commandTable = false;
		for (const line of prose.split("\n")) {
			if (!line.startsWith("|")) { commandTable = false; continue; }
			const cells = line.split(/(?<!\\)\|/).slice(1, -1);
			if (/^\s*(console )?command\s*$/.test(cells[0] ?? "")) { commandTable = true; continue; }
			if (!commandTable || /^\s*-+\s*$/.test(cells[0] ?? "")) continue;
			for (const usage of spans(cells[0])) if (!/^(npm|node) /.test(usage)) check(page, usage.replace(/\\\|/g, "|"), true);
		}
		// What is typed at the prompt in examples.
		for (const line of code) {
			const typed = /^xsclaw> (.+)$/.exec(line)?.[1];
			if (typed) check(page, typed, true);
		}
		// Any other span that starts with a command word and a subcommand.
		for (const span of spans(prose)) check(page, span, false);
	}
	assert.deepEqual(problems, []);
});

test("every bench figure the pages quote is one tools/bench prints, on a page that names npm run bench", async () => {
	const sources = [
		...readdirSync(join(ROOT, "tools", "bench")).filter((f) => f.endsWith(".mjs")).map((f) => join(ROOT, "tools", "bench", f)),
		...readdirSync(join(ROOT, "tools", "bench")).filter((f) => !f.includes(".")).flatMap((d) => readdirSync(join(ROOT, "tools", "bench", d)).map((f) => join(ROOT, "tools", "bench", d, f))),
		...readdirSync(join(ROOT, "test", "peer")).map((f) => join(ROOT, "test", "peer", f)),
	].filter((f) => /\.(mjs|ts|js)$/.test(f)).map((f) => readFileSync(f, "utf8")).join("\n");
	const settings = new Set(await settingNames());
	const problems = [];
	for (const page of ALL) {
		const figures = spans(split(page).prose).filter((s) => /^(http|core|store|caps|app|boot|worker|qq|llm|parse|peer|tls)\.[a-z0-9_]+(\.[\w*-]+)*$/.test(s) && !settings.has(s));
		if (figures.length && !text[page].includes("npm run bench")) problems.push(`${page} quotes ${figures[0]} but names no npm run bench`);
		for (const figure of figures) {
			const key = figure.split(".")[1];
			if (!sources.includes(key)) problems.push(`${page}: ${figure}: no bench prints ${key}`);
		}
	}
	assert.deepEqual(problems, []);
});
