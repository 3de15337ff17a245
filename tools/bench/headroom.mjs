// Heap headroom of a request (issue 13), measured with test/peer/core-bench.ts
// --headroom inside the lin host: the root Core over the real Llm, HTTP client,
// TLS and session store, against the mock LLM on 127.0.0.1 (OpenAI protocol,
// streamed), one request of two rounds (get_time, then the answer) over a
// session of SESSION_KIB, so its history window is full (48 KiB).
//   core.heap_headroom_48k_bytes  the smallest fixed chunk heap (--chunk-bytes,
//                                 found by bisection to STEP bytes) in which that
//                                 request completes, minus the chunk heap in use
//                                 at the prompt (after a collection): what the
//                                 board must keep free for a request, whenever
//                                 the collector happens to run
//   core.gc_per_request           garbage collections during that request with the
//                                 manifest's chunk heap (1 MiB), started right
//                                 after a collection
// Each probe runs on a copy of one filled data directory, so every probe sees
// the same session.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_MAP, hostCommand } from "../build.mjs";
import { withMockOverTLS } from "../peers.mjs";

export const title = "agent core: chunk heap headroom of a request over a full 48 KiB history, collections per request";

const SESSION_KIB = 64;
const BISECTIONS = 3;
const GC_RUNS = 5;
const STEP = 1024;

/** Runs the headroom peer on dataDir; resolves {code, lines, stderr}. */
function probe(variant, dataDir, options) {
	const host = hostCommand(variant);
	const args = [...host.args, "--modules", TEST_MAP, "--main", "test/peer/core-bench", "--data", dataDir, "--headroom", "1", "--session-kib", String(SESSION_KIB)];
	for (const [name, value] of Object.entries(options)) args.push(`--${name}`, String(value));
	return new Promise((resolve, reject) => {
		const child = spawn(host.command, args, { stdio: ["ignore", "ignore", "pipe"] });
		let stderr = "";
		child.stderr.on("data", (d) => (stderr += d));
		const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
		child.on("error", reject);
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			const lines = stderr.split("\n").filter((l) => l.startsWith("BENCH ")).map((l) => JSON.parse(l.slice(6)));
			resolve({ code: code ?? signal, lines, stderr });
		});
	});
}

// The same two figures, named *.board32, measured on the 32-bit host (ctx.board32:
// the board's word size, 16-byte slots and 4-byte pointers).
export async function run({ variant = "release", board32 }) {
	const figures = await measure(variant);
	if (!board32) return figures;
	const board = await measure(board32);
	return [...figures, ...board.map((f) => ({ ...f, name: `${f.name}.board32`, unit: `${f.unit}, 32-bit host` }))];
}

function measure(variant) {
	return withMockOverTLS("xsclaw-bench-headroom-", async ({ ca, mock, control }) => {
		const base = mkdtempSync(join(tmpdir(), "xsclaw-bench-headroom-data-"));
		const scratch = [];
		const options = { "mock-url": `https://localhost:${mock.port}`, "control-url": control.url, ca: ca.paths.ca };
		const onCopy = async (extra) => {
			const dir = mkdtempSync(join(tmpdir(), "xsclaw-bench-headroom-probe-"));
			scratch.push(dir);
			cpSync(base, dir, { recursive: true });
			try {
				return await probe(variant, dir, { ...options, ...extra });
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
		};
		try {
			// Fill the session once (and run one request on it) with the manifest's heap.
			const first = await probe(variant, base, options);
			if (first.code !== 0) throw new Error(`bench headroom: the filling run failed (${first.code}):\n${first.stderr.slice(-2000)}`);
			const size = first.lines.find((l) => l.figure === "prompt").chunkSize;
			const collections = [];
			for (let i = 0; i < GC_RUNS; i++) {
				const r = await onCopy({});
				if (r.code !== 0) throw new Error(`bench headroom: a request with the manifest's heap failed (${r.code}):\n${r.stderr.slice(-2000)}`);
				collections.push(r.lines.find((l) => l.figure === "request").collections);
			}
			const headrooms = [];
			for (let b = 0; b < BISECTIONS; b++) {
				// lo: fails (the heap in use at the prompt leaves nothing for a request); hi: completes.
				let lo = first.lines.find((l) => l.figure === "prompt").chunkUsed;
				let hi = size;
				let prompt = undefined;
				while (hi - lo > STEP) {
					const mid = Math.floor((lo + hi) / 2 / STEP) * STEP;
					const r = await onCopy({ "chunk-bytes": mid });
					if (r.code === 0) {
						hi = mid;
						prompt = r.lines.find((l) => l.figure === "prompt").chunkUsed;
					} else if (r.code === 2 && /out of memory/.test(r.stderr)) {
						lo = mid;
					} else {
						throw new Error(`bench headroom: a probe with a ${mid}-byte chunk heap failed otherwise (${r.code}):\n${r.stderr.slice(-2000)}`);
					}
				}
				if (prompt === undefined) {
					const r = await onCopy({ "chunk-bytes": hi });
					prompt = r.lines.find((l) => l.figure === "prompt").chunkUsed;
				}
				console.error(`bench headroom: smallest chunk heap ${hi} bytes, ${prompt} in use at the prompt`);
				headrooms.push(hi - prompt);
			}
			return [
				{ name: "core.heap_headroom_48k_bytes", unit: "bytes of chunk heap free at the prompt", values: headrooms, p99: false },
				{ name: "core.gc_per_request", unit: "collections (1 MiB chunk heap)", values: collections, p99: false },
			];
		} finally {
			rmSync(base, { recursive: true, force: true });
			for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
		}
	});
}
