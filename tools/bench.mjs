#!/usr/bin/env node
// Benchmarks (SPEC §11): runs every tools/bench/*.mjs, prints one JSON line per
// figure, {"name","unit","median","p99","min","max","runs"}, then a short table
// and how long it took; a whole run fails if a figure SPEC §11 names is missing.
// Benchmarks report; they assert nothing. Run after a build: `npm run bench`.
//
//   node tools/bench.mjs [--only <file stem>] [--variant release|asan|m32] [--json]
//
// A bench file exports `title` (one line) and `async run(ctx)` returning
// figures `{name, unit, values: number[], p99?: false}` (p99: false where a
// 99th percentile means nothing). ctx.runXs(specifier, options) runs an XS
// module of test/peer as the host's main and returns the `BENCH {json}` lines
// it traced, parsed (on another variant with a third argument, {variant});
// ctx.board32 is the 32-bit host's variant when it is built (a bench measuring
// heap bytes adds its figures from it, named *.board32). Adding a figure is
// adding a file.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { arch, cpus, tmpdir } from "node:os";
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { MBEDTLS4_HOW, OPTIONAL_HOSTS, REQUIRE_ALL, ROOT, TEST_MAP, hostBinary, hostCommand } from "./build.mjs";

const argv = process.argv.slice(2);
const flag = (name) => {
	const at = argv.indexOf(`--${name}`);
	return at >= 0 ? argv[at + 1] : undefined;
};
const VARIANT = flag("variant") ?? "release";
const ONLY = flag("only");
const JSON_ONLY = argv.includes("--json");

/** Nearest-rank percentile of sorted values. */
function percentile(sorted, p) {
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const round = (x) => (x === null ? null : Math.round(x * 1000) / 1000);

/**
 * The 32-bit host (node tools/build.mjs --m32): the board's word size. The heap
 * figures are measured on it too, named *.board32 (ctx.board32), when it is built.
 */
const BOARD32 = "m32";

/** The figures SPEC §11 and the open issues name: a whole run (no --only) that misses one fails. */
export const REQUIRED_FIGURES = [
	"http.requests_per_handshake", "http.abort_to_close_ms", "http.psram_peak_per_body_byte",
	"core.iteration_overhead_ms", "core.interrupt_to_abort_ms", "core.prompt_prefix_stable_ratio", "core.peak_heap_per_body_byte",
	"store.append_ms", "store.read_last24_ms_10k", "store.read_last24_ms_150k", "store.compact_150k_ms",
	"boot.to_prompt_ms", "app.bytecode_bytes",
	"peer.cpu_per_turn_ratio", "peer.peak_rss_ratio",
	// issue 13: the heap a request needs, on this host and with the board's word size
	"core.heap_headroom_48k_bytes", "core.gc_per_request",
	"core.peak_heap_per_body_byte.board32", "core.heap_headroom_48k_bytes.board32", "core.gc_per_request.board32",
	// issue 28: what the script sandbox's bounds cost, and a GPIO edge to its automation's first step
	"script.meter_overhead_ratio", "automation.trigger_to_run_ms",
	// issue 30: the web console's status page over keep-alive, and what a connection holds
	"web.page_ms", "web.heap_per_connection_bytes",
	// issue 25: the largest reply and tool arguments that complete at the board's word size and creation sizes (at least the cap)
	"limits.reply_bytes.board32", "limits.tool_args_bytes.board32",
	// issue 26: the agent Worker's deepest C stack (a TLS handshake and a tool turn), which the manifest's nativeStack must exceed
	"agent.c_stack_peak_bytes.board32",
];

export function summarise({ name, unit, values, p99 = true }) {
	if (!values.length) throw new Error(`bench ${name}: no values`);
	const sorted = [...values].sort((a, b) => a - b);
	const mid = sorted.length >> 1;
	const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
	return {
		name, unit,
		median: round(median),
		p99: p99 ? round(percentile(sorted, 99)) : null,
		min: round(sorted[0]),
		max: round(sorted[sorted.length - 1]),
		runs: sorted.length,
	};
}

/** Runs an XS module as the host's main; resolves with its BENCH lines, parsed. */
export function runXs(specifier, options = {}, { variant = VARIANT, timeoutMs = 300_000 } = {}) {
	const data = mkdtempSync(join(tmpdir(), "xsclaw-bench-"));
	const host = hostCommand(variant);
	const args = [...host.args, "--modules", TEST_MAP, "--main", specifier, "--data", data];
	for (const [name, value] of Object.entries(options)) args.push(`--${name}`, String(value));
	return new Promise((resolve, reject) => {
		const child = spawn(host.command, args, { stdio: ["ignore", "pipe", "pipe"] });
		let stderr = "";
		child.stdout.on("data", () => {});
		child.stderr.on("data", (d) => (stderr += d));
		const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
		child.on("error", reject);
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			rmSync(data, { recursive: true, force: true });
			if (code !== 0) return reject(new Error(`${specifier} exited ${code ?? signal}:\n${stderr.slice(-3000)}`));
			resolve(stderr.split("\n").filter((l) => l.startsWith("BENCH ")).map((l) => JSON.parse(l.slice(6))));
		});
	});
}

/** When, on what and of which commit the figures were taken: quote it with them (docs/performance.md). */
function provenance() {
	let commit = "unknown commit";
	try {
		commit = execFileSync("git", ["-C", ROOT, "describe", "--always", "--dirty"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
	} catch {
		// not a git checkout: the date and machine still say enough
	}
	const cpu = cpus();
	return `measured ${new Date().toISOString().slice(0, 10)}, ${VARIANT} host, commit ${commit}, ${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"} (${arch()})`;
}

function table(rows) {
	const cols = ["name", "unit", "median", "p99", "min", "max", "runs"];
	const cells = rows.map((r) => cols.map((c) => (r[c] === null ? "-" : String(r[c]))));
	const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
	const line = (values) => values.map((v, i) => (i < 2 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join("  ");
	return [line(cols), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

async function main() {
	const started = process.hrtime.bigint();
	if (!existsSync(hostBinary(VARIANT))) throw new Error(`no ${VARIANT} host: run node tools/build.mjs first`);
	const board32 = existsSync(hostBinary(BOARD32)) ? BOARD32 : undefined;
	if (!board32 && !JSON_ONLY) console.error(`bench: NOTICE: no ${BOARD32} host (node tools/build.mjs --m32): the *.board32 heap figures are not measured`);
	const dir = join(ROOT, "tools", "bench");
	const files = readdirSync(dir).filter((f) => f.endsWith(".mjs") && (!ONLY || f === `${ONLY}.mjs`)).sort();
	if (!files.length) throw new Error(`no bench files${ONLY ? ` named ${ONLY}.mjs` : ""} in tools/bench`);
	const rows = [];
	for (const file of files) {
		const bench = await import(join(dir, file));
		if (!JSON_ONLY) console.error(`bench: ${file}: ${bench.title ?? ""}`);
		for (const figure of await bench.run({ runXs, variant: VARIANT, board32 })) {
			const row = summarise(figure);
			rows.push(row);
			console.log(JSON.stringify(row));
		}
	}
	const seconds = Math.round(Number(process.hrtime.bigint() - started) / 1e9);
	if (!JSON_ONLY) console.log(`\n${table(rows)}\n\n${provenance()}; the benchmarks took ${seconds} s`);
	// The optional hosts the build left out (a clone without ../shared): their
	// figures are not required, and one line says what was not measured and how
	// to add it. CI (XSCLAW_REQUIRE_ALL=1) has them all.
	const absent = REQUIRE_ALL ? [] : Object.keys(OPTIONAL_HOSTS).filter((host) => !existsSync(hostBinary(host)));
	const optional = (name) => absent.includes("m32") && name.endsWith(".board32");
	const missing = ONLY ? [] : REQUIRED_FIGURES.filter((name) => !optional(name) && !rows.some((r) => r.name === name));
	if (absent.length && !JSON_ONLY)
		console.log(`bench: not measured here: the figures of ${absent.map((host) => OPTIONAL_HOSTS[host]).join(" and of ")}; to add them: ${MBEDTLS4_HOW}, then npm run bench again`);
	if (missing.length) throw new Error(`these figures (SPEC §11, open issues) were not measured: ${missing.join(", ")}`);
}

if (process.argv[1] && process.argv[1].endsWith("bench.mjs")) {
	main().catch((error) => {
		console.error(`bench: ${error.stack ?? error}`);
		process.exit(1);
	});
}
