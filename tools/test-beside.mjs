#!/usr/bin/env node
// npm run test:beside: `npm test` passes N times in a row (3 by default) while
// another `npm test` runs beside it the whole time.
//
//   node tools/test-beside.mjs [--runs N] [--clone] [--command "npm test"]
//
// The companion runs in this same tree by default: the harder case, as both runs
// share build/ (one build at a time through build/.lock, files replaced whole and
// only when they change, tools/build.mjs) and every test's temporary folders and
// ports must be its own. With --clone it runs in a scratch git worktree of HEAD
// (its own build/, node_modules linked to this tree's), as two engineers' clones
// would; it is removed afterwards. The companion is started again whenever it
// finishes, so each of the N runs has company from start to end.
//
// Prints one line per run (pass/fail counts from node --test's summary, wall time,
// the load average), the companion's runs, and exits 1 when any run failed (a
// companion run failing on its own counts too; one stopped at the end does not).
// Each run's whole output is kept in a temporary folder named at the start.
import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "./build.mjs";

const LOAD_SAMPLE_MS = 15_000;
/** A run that takes longer than this is stopped and counted as failed (npm test takes 5-15 min here). */
const RUN_LIMIT_MS = 60 * 60_000;

const { values } = parseArgs({
	options: {
		runs: { type: "string", default: "3" },
		clone: { type: "boolean", default: false },
		command: { type: "string", default: "npm test" },
	},
});
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) {
	process.stderr.write(`test:beside: --runs takes a whole number of at least 1 (got ${values.runs})\n`);
	process.exit(64);
}

const logs = mkdtempSync(join(tmpdir(), "xsclaw-beside-"));
const say = (line) => process.stdout.write(`${line}\n`);
const minutes = (ms) => `${Math.floor(ms / 60_000)} min ${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")} s`;
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");

/** The counts of node --test's last summary in text: {tests, pass, fail, cancelled, skipped}. */
function summaryOf(text) {
	const count = (name) => {
		const all = [...text.matchAll(new RegExp(`^# ${name} (\\d+)$`, "gm"))];
		return all.length ? Number(all.at(-1)[1]) : undefined;
	};
	return { tests: count("tests"), pass: count("pass"), fail: count("fail"), cancelled: count("cancelled"), skipped: count("skipped") };
}

/**
 * Runs the command in cwd (its own process group, output to file, XSCLAW_BESIDE_ROLE
 * set to role: "run-N" or "companion-N"); resolves {code, signal, ms, text}.
 */
function run(cwd, file, role) {
	const out = createWriteStream(file);
	const started = Date.now();
	const child = spawn("sh", ["-c", values.command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, XSCLAW_BESIDE_ROLE: role } });
	child.stdout.pipe(out, { end: false });
	child.stderr.pipe(out, { end: false });
	const timer = setTimeout(() => stop(child), RUN_LIMIT_MS);
	const done = new Promise((resolve) => child.on("close", (code, signal) => {
		clearTimeout(timer);
		out.end(() => resolve({ code, signal, ms: Date.now() - started, text: readFileSync(file, "utf8") }));
	}));
	return { child, done };
}

function stop(child) {
	try { process.kill(-child.pid, "SIGTERM"); } catch { /* gone already */ }
}

function describe(result) {
	const s = summaryOf(result.text);
	const counts = s.tests === undefined ? "no node --test summary" : `pass ${s.pass}, fail ${s.fail}, cancelled ${s.cancelled}, skipped ${s.skipped} of ${s.tests}`;
	return `${result.code === 0 ? "ok" : `FAILED (exit ${result.code ?? result.signal})`}: ${counts}; ${minutes(result.ms)}`;
}

// The companion's tree.
let companionTree = ROOT;
if (values.clone) {
	companionTree = join(logs, "clone");
	execFileSync("git", ["-C", ROOT, "worktree", "add", "--detach", companionTree, "HEAD"], { stdio: ["ignore", "ignore", "inherit"] });
	symlinkSync(join(ROOT, "node_modules"), join(companionTree, "node_modules"));
}

say(`test:beside: ${RUNS} run(s) of \`${values.command}\` in ${ROOT}, each beside another in ${values.clone ? `a scratch worktree (${companionTree})` : "the same tree"}`);
say(`test:beside: ${cpus().length} cores; load average ${load()}; logs in ${logs}`);

let finishing = false;
let companion;
const companionRuns = [];
let companionFailures = 0;
function startCompanion() {
	const n = companionRuns.length + 1;
	const file = join(logs, `companion-${n}.log`);
	companion = run(companionTree, file, `companion-${n}`);
	const entry = { n, file, result: undefined };
	companionRuns.push(entry);
	companion.done.then((result) => {
		entry.result = result;
		if (finishing) return;
		if (result.code !== 0) companionFailures++;
		say(`  companion run ${n} ${describe(result)} (${file})`);
		startCompanion();
	});
}

const cleanup = () => {
	finishing = true;
	if (companion) stop(companion.child);
	if (current) stop(current.child);
};
let current;
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => { cleanup(); process.exit(130); });

startCompanion();
const results = [];
for (let i = 1; i <= RUNS; i++) {
	const file = join(logs, `run-${i}.log`);
	const samples = [loadavg()[0]];
	const sampler = setInterval(() => samples.push(loadavg()[0]), LOAD_SAMPLE_MS);
	const companionAtStart = companionRuns.length;
	current = run(ROOT, file, `run-${i}`);
	const result = await current.done;
	clearInterval(sampler);
	samples.push(loadavg()[0]);
	results.push(result);
	const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
	say(`run ${i}/${RUNS} ${describe(result)}; 1-min load average mean ${mean.toFixed(1)}, max ${Math.max(...samples).toFixed(1)}; companion run(s) ${companionAtStart}-${companionRuns.length} beside it (${file})`);
}
cleanup();
await companion.done;
const stopped = companionRuns.at(-1);
say(`  companion run ${stopped.n} stopped at the end (${minutes(stopped.result.ms)} in)`);
if (values.clone) {
	try { execFileSync("git", ["-C", ROOT, "worktree", "remove", "--force", companionTree], { stdio: "ignore" }); } catch { /* kept for a look */ }
}

const failed = results.filter((r) => r.code !== 0).length;
say(`test:beside: ${RUNS - failed}/${RUNS} runs passed beside ${companionRuns.length} companion run(s) (${companionFailures} of those that finished failed); load average now ${load()}`);
if (!failed && !companionFailures) rmSync(logs, { recursive: true, force: true });
else say(`test:beside: the logs are kept in ${logs}`);
process.exit(failed || companionFailures ? 1 : 0);
