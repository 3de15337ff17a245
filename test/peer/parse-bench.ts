// The XS side of tools/bench/parse.mjs, run as the host's main: the response
// path of a streamed reply without the socket — the wire bytes of one reply
// (status line, headers, chunked SSE body, as the mock LLM sends them, given
// as hex options) through ResponseParser -> SseParser -> the protocol's stream
// assembler (llm/scan), many times, tracing one `BENCH {json}` line per
// protocol with the microseconds of this thread's CPU time per KiB of wire
// bytes of each repetition (lin's __xsclaw.threadCpuMs: other processes on a
// loaded machine do not count).
import { collectGarbage, exit, heap, option, resetPeak } from "host/platform";
import { ResponseParser } from "net/response";
import { SseParser } from "net/sse";
import { OpenAIStreamAssembler } from "llm/openai";
import { AnthropicStreamAssembler } from "llm/anthropic";

function fromHex(hex: string): Uint8Array {
	const out = new Uint8Array(hex.length >> 1);
	for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
	return out;
}

const REPEATS = Number(option("repeats") ?? 30);
const ROUNDS = Number(option("rounds") ?? 20);

// As a backend keeps them: one SSE parser and one assembler per protocol, reset per reply.
// The deltas are heard (as a chat that streams the answer hears them), unless --hears 0 (as the console's ask: no listener of deltas).
const HEARS = option("hears") !== "0";
let deltas = 0;
const sink = { hearsDeltas: () => HEARS, delta: () => { deltas++; } };
const sse = new SseParser(() => {});
const assemblers: Record<string, OpenAIStreamAssembler | AnthropicStreamAssembler> = { openai: new OpenAIStreamAssembler(), anthropic: new AnthropicStreamAssembler() };

function once(wire: Uint8Array, protocol: string): void {
	const assembler = assemblers[protocol];
	assembler.reset(sink);
	sse.reset(assembler);
	const parser = new ResponseParser({ onHead() {}, onBody: (bytes) => sse.push(bytes) });
	parser.feed(wire);
	if (!parser.complete) throw new Error("parse-bench: the reply did not complete");
	sse.end();
	assembler.finish();
	assembler.release();
	sse.release();
}

for (const protocol of ["openai", "anthropic"]) {
	const wires = (option(`${protocol}-hex`) ?? "").split(",").filter((h) => h).map(fromHex);
	if (!wires.length) continue;
	const bytes = wires.reduce((n, w) => n + w.length, 0);
	const values: number[] = [];
	for (let r = 0; r < REPEATS; r++) {
		const started = __xsclaw.threadCpuMs();
		for (let k = 0; k < ROUNDS; k++) for (const wire of wires) once(wire, protocol);
		values.push(((__xsclaw.threadCpuMs() - started) * 1000) / ROUNDS / (bytes / 1024));
	}
	trace(`BENCH ${JSON.stringify({ protocol, bytes, values })}\n`);
	// The XS heap one turn's replies allocate (chunks + slots, garbage included: the peak over the start after a collection).
	const heapValues: number[] = [];
	for (let r = 0; r < 5; r++) {
		collectGarbage();
		const h = heap(), start = h.chunkUsed + h.slotUsed;
		resetPeak();
		for (const wire of wires) once(wire, protocol);
		const p = heap();
		heapValues.push(p.chunkPeak + p.slotPeak - start);
	}
	trace(`BENCH ${JSON.stringify({ protocol, bytes, heap: heapValues })}\n`);
}
exit(0);
