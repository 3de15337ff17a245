// The agent Worker's native (C) stack (issue 26). On the board the Worker is a
// FreeRTOS task whose C stack is manifest.json's config.agent.creation.nativeStack
// bytes (the SDK's default is about 6 KiB); a handshake (Mbed TLS over XS frames)
// and a turn must fit in it, or the board crashes where lin never does.
//   agent.c_stack_peak_bytes          the deepest C stack the firmware's agent
//                                     Worker took on this host: the whole
//                                     firmware asked one tool turn (`ask`) of the
//                                     mock LLM over HTTPS (the TLS handshake in
//                                     the Worker), then ended (the lin host's
//                                     --native-stack-report: hosts/lin/src/worker.c)
//   agent.c_stack_peak_bytes.board32  the same on the 32-bit host (the board's
//                                     word size), which the manifest's value
//                                     must exceed by AGENT_NATIVE_STACK_MARGIN
//                                     (checkNativeStack: the bench fails otherwise)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, treeBudgets } from "../build.mjs";
import { PROTOCOLS, withMockAndFirmware } from "../../test/e2e/firmware.mjs";
import { consoleTurn, conversation } from "./peer/check.mjs";

export const title = "agent Worker: the deepest native C stack of a TLS handshake and a tool turn";

const RUNS = 3;
const TURN_TIMEOUT_MS = 120_000;   // the 32-bit host may run under qemu-i386
const KEY = "sk-bench-not-a-secret-0000";
const PEAK = /xsclaw: worker "agent\/worker" native stack peak (\d+) bytes/;

/** One firmware run: one tool turn over TLS; the agent Worker's deepest C stack, bytes. */
export async function measureAgentStack(variant) {
	let peak;
	await withMockAndFirmware(variant, async ({ fw, mock }) => {
		const [turn] = conversation("openai", 1);
		mock.script(turn.scenarios);
		const printed = await fw.run(`ask ${turn.question}`, /(?:^|\n)(?!… )[^\n]+\n/, { timeoutMs: TURN_TIMEOUT_MS });
		const { answer, tools } = consoleTurn(printed);
		if (answer !== turn.answer || tools.length !== 1) throw new Error(`bench stack: the turn did not complete on ${variant}: ${printed.slice(0, 500)}`);
		const result = await fw.end();
		const found = PEAK.exec(result.stderr);
		if (!found) throw new Error(`bench stack: no native stack report from the agent Worker on ${variant}:\n${result.stderr.slice(-2000)}`);
		peak = Number(found[1]);
	}, { protocol: PROTOCOLS[0], key: KEY, args: ["--native-stack-report", "1"] });
	return peak;
}

/** manifest.json's nativeStack for the agent Worker (config.agent.creation). */
export function manifestNativeStack(manifestPath = join(ROOT, "manifest.json")) {
	return JSON.parse(readFileSync(manifestPath, "utf8")).config?.agent?.creation?.nativeStack;
}

/** The sentence saying why the manifest's nativeStack is too small for a measured peak, or undefined. */
export async function checkNativeStack(peakBytes, nativeStack = manifestNativeStack()) {
	const { AGENT_NATIVE_STACK_MARGIN } = await treeBudgets();
	const needed = Math.ceil(peakBytes * AGENT_NATIVE_STACK_MARGIN);
	if (!Number.isInteger(nativeStack) || nativeStack < needed)
		return `manifest.json's config.agent.creation.nativeStack (${nativeStack}) is below ${needed} bytes: the agent Worker's deepest C stack on the 32-bit host, ${peakBytes} bytes, times AGENT_NATIVE_STACK_MARGIN (${AGENT_NATIVE_STACK_MARGIN}); raise it`;
	return undefined;
}

export async function run({ variant, board32 }) {
	const figures = [];
	for (const [host, suffix] of [[variant, ""], ...(board32 ? [[board32, ".board32"]] : [])]) {
		const values = [];
		for (let i = 0; i < RUNS; i++) values.push(await measureAgentStack(host));
		figures.push({ name: `agent.c_stack_peak_bytes${suffix}`, unit: "bytes", values, p99: false });
		if (suffix) {
			const problem = await checkNativeStack(Math.max(...values));
			if (problem) throw new Error(`bench stack: ${problem}`);
		}
	}
	return figures;
}
