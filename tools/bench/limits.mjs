// The largest reply and tool arguments that complete (issue 25), on the 32-bit
// host (the board's word size) at the manifest's creation sizes: the firmware
// with the mock LLM on loopback (OpenAI protocol, streamed), its module map the
// app's but for budgets, whose LLM_REPLY_MAX_BYTES and AGENT_PORT_REPLY_MAX_CHARS
// are raised to SEARCH_MAX_BYTES so that the heap, not the cap, decides.
//   limits.reply_bytes.board32      the largest text reply (bytes of text) the
//                                   console printed whole, the agent machine
//                                   never restarted
//   limits.tool_args_bytes.board32  the largest arguments, in all, of three tool
//                                   calls in one reply that ran and were answered
// Each is found by growing from the cap (x1.5) until one fails or SEARCH_MAX_BYTES
// completes, then bisecting to STEP_BYTES: at most PROBES_MAX probes each. A
// failure (out of memory) restarts the agent machine, or the firmware when the
// main machine stopped; the next probe starts on a new firmware either way.
// Each figure is reported with the cap beside it (limits.*_cap_bytes): the
// figure at least the cap is the claim `npm run bench` shows.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { APP_MAP, BUILD } from "../build.mjs";
import { startMockLLM } from "../mock-llm/index.mjs";
import { setSettings, startFirmware } from "../../test/e2e/firmware.mjs";

export const title = "limits: the largest reply and tool arguments that complete on the 32-bit host at the board's creation sizes";

const SEARCH_MAX_BYTES = 1024 * 1024;
const STEP_BYTES = 16 * 1024;
const PROBES_MAX = 10;
const PROBE_MS = 600_000;   // one probe under qemu-user, at most
const FRAMING_BYTES = 8 * 1024; // what the mock's frames (16 KiB pieces) add to a text reply, at most

/** The app's module map with a budgets module whose reply caps are `bytes`. */
function raisedMap(dir, bytes) {
	const budgets = join(BUILD, "js", "modules", "budgets.js");
	let source = readFileSync(budgets, "utf8");
	for (const name of ["LLM_REPLY_MAX_BYTES", "AGENT_PORT_REPLY_MAX_CHARS"]) {
		const line = new RegExp(`^export const ${name} = [^;]+;`, "m");
		if (!line.test(source)) throw new Error(`bench limits: ${name} not found in ${budgets}`);
		source = source.replace(line, `export const ${name} = ${bytes};`);
	}
	const raised = join(dir, "budgets.js");
	writeFileSync(raised, source);
	const map = readFileSync(APP_MAP, "utf8").replace(/^budgets\t.*$/m, `budgets\t${raised}`);
	const path = join(dir, "app.map");
	writeFileSync(path, map);
	return path;
}

/** One probe on a new firmware: whether `ask` of the scripted reply completes, the agent never restarted. */
async function probe(variant, map, llm, kind, bytes) {
	const data = mkdtempSync(join(tmpdir(), "xsclaw-bench-limits-"));
	const fw = startFirmware(["--modules", map, "--data", data], variant, { limitMs: PROBE_MS });
	try {
		await fw.until(/type help for the commands/, { timeoutMs: 120_000 });
		await setSettings(fw, ["config set llm.provider custom", `config set llm.base_url ${llm.url}/v1`, "config set llm.model gpt-mock", "config set llm.api_key sk-bench-limits"]);
		const from = fw.stdout.length;
		if (kind === "reply") {
			llm.script({ type: "text", fault: "huge", bytes: bytes + FRAMING_BYTES });
			fw.send("ask tell me everything");
			const count = (text) => text.split("x").length - 1;
			await fw.until({ test: (text) => count(text) >= bytes || /^error: |^agent: /m.test(text) }, { from, timeoutMs: PROBE_MS });
		} else {
			const each = Math.floor(bytes / 3);
			llm.script({ type: "tool_calls", chunk: 16 * 1024, calls: [1, 2, 3].map((i) => ({ name: "get_time", arguments: { pad: String(i).repeat(each - 12) } })) });
			llm.script({ type: "text", text: "three calls done" });
			fw.send("ask call three tools");
			await fw.until(/^(three calls done|error: .*|agent: .*)$/m, { from, timeoutMs: PROBE_MS });
		}
		fw.send("status");
		await fw.until(/^agent machine: .*$/m, { from, timeoutMs: 60_000 });
		const printed = fw.printed(from);
		const ok = /^agent machine: running \(0 restarts\)/m.test(printed) && !/^error: |out of memory/m.test(printed) && (kind === "reply" || /^three calls done$/m.test(printed));
		return { ok, why: ok ? "" : why(printed, fw.stderr) };
	} catch (error) {
		// the firmware stopped (the main machine out of memory) or did not answer in time
		return { ok: false, why: why("", fw.stderr) || String(error.message ?? error).split("\n")[0] };
	} finally {
		await fw.kill();
		rmSync(data, { recursive: true, force: true });
	}
}

/** What a failed probe says: out of memory (which machine), else its first error line. */
function why(printed, log) {
	const all = `${printed}\n${log}`;
	if (/out of memory/.test(all)) return /agent machine stopped|the agent stopped/.test(all) ? "the agent out of memory" : "out of memory";
	return (/^error: .*$/m.exec(all)?.[0] ?? "").slice(0, 160);
}

/** The largest size that completes: up from `cap` by half again, then bisected; sizes tried, in order. */
async function largest(test, cap) {
	const tried = [];
	const ok = async (bytes) => {
		const { ok: passed, why: reason } = await test(bytes);
		tried.push(`${Math.round(bytes / 1024)} KiB ${passed ? "ok" : `failed (${reason})`}`);
		return passed;
	};
	if (!(await ok(cap))) return { bytes: 0, tried };
	let good = cap, bad = 0;
	while (tried.length < PROBES_MAX && good < SEARCH_MAX_BYTES) {
		const next = Math.min(SEARCH_MAX_BYTES, Math.ceil((good * 1.5) / STEP_BYTES) * STEP_BYTES);
		if (await ok(next)) good = next;
		else {
			bad = next;
			break;
		}
	}
	while (bad && bad - good > STEP_BYTES && tried.length < PROBES_MAX) {
		const mid = Math.floor((good + bad) / 2 / STEP_BYTES) * STEP_BYTES;
		if (await ok(mid)) good = mid;
		else bad = mid;
	}
	return { bytes: good, tried };
}

export async function run({ board32 }) {
	if (!board32) return [];
	const { LLM_REPLY_MAX_BYTES } = await import(pathToFileURL(join(BUILD, "js", "modules", "budgets.js")).href);
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-bench-limits-map-"));
	const llm = await startMockLLM({});
	try {
		const map = raisedMap(dir, SEARCH_MAX_BYTES);
		const figures = [];
		for (const kind of ["reply", "tool_args"]) {
			const started = Date.now();
			const { bytes, tried } = await largest((n) => probe(board32, map, llm, kind, n), LLM_REPLY_MAX_BYTES);
			console.error(`bench: limits.${kind}_bytes.board32: ${tried.join(", ")} (${Math.round((Date.now() - started) / 1000)} s); ${bytes >= LLM_REPLY_MAX_BYTES ? "at least" : "LESS THAN"} the cap LLM_REPLY_MAX_BYTES (${LLM_REPLY_MAX_BYTES})`);
			figures.push({ name: `limits.${kind}_bytes.${board32 === "m32" ? "board32" : board32}`, unit: "bytes", values: [bytes], p99: false });
		}
		figures.push({ name: "limits.reply_cap_bytes", unit: "bytes", values: [LLM_REPLY_MAX_BYTES], p99: false });
		return figures;
	} finally {
		await llm.close();
		rmSync(dir, { recursive: true, force: true });
	}
}
