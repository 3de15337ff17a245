// The response path of a streamed reply, without the socket: the wire bytes of
// one tool turn as the mock LLM sends them (the peer conversation's first turn:
// the tool-call reply and the answer, status line, headers and chunked SSE
// body) through ResponseParser -> SseParser -> the protocol's stream assembler
// (llm/scan), inside the lin host (test/peer/parse-bench.ts).
//   parse.us_per_kb.openai / .anthropic   microseconds of the XS thread's CPU time
//                                        per KiB of wire bytes, per repetition
//                                        (20 rounds each)
// This is the JavaScript-over-bytes part of peer.cpu_per_turn_ms.xsclaw, apart
// from the sockets, the agent loop and persistence.
import net from "node:net";
import { startMockLLM } from "../mock-llm/index.mjs";
import { CREATED, conversation } from "./peer/check.mjs";

export const title = "parse: one tool turn's reply bytes through the HTTP, SSE and JSON readers (XS), per KiB";

/** The raw response bytes of each of a turn's two replies. */
async function wireOf(protocol) {
	const mock = await startMockLLM({ created: CREATED });
	try {
		const turn = conversation(protocol)[0];
		mock.script(turn.scenarios);
		const path = protocol === "openai" ? "/v1/chat/completions" : "/v1/messages";
		const body = JSON.stringify({ model: "bench-model", stream: true, max_tokens: 100, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] });
		const wires = [];
		for (let k = 0; k < turn.scenarios.length; k++) {
			wires.push(await new Promise((resolve, reject) => {
				const socket = net.connect(mock.port, "127.0.0.1", () => {
					socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
						`Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
				});
				const parts = [];
				socket.on("data", (d) => parts.push(d));
				socket.on("error", reject);
				socket.on("end", () => resolve(Buffer.concat(parts)));
			}));
		}
		return wires;
	} finally {
		await mock.close();
	}
}

export async function run({ runXs }) {
	const options = {};
	for (const protocol of ["openai", "anthropic"]) options[`${protocol}-hex`] = (await wireOf(protocol)).map((w) => w.toString("hex")).join(",");
	const lines = await runXs("test/peer/parse-bench", options);
	return lines.map((l) => l.heap
		? { name: `parse.heap_bytes.${l.protocol}`, unit: `XS heap bytes a turn (${l.bytes} bytes of reply)`, values: l.heap, p99: false }
		: { name: `parse.us_per_kb.${l.protocol}`, unit: `µs CPU per KiB of reply (${l.bytes} bytes a turn)`, values: l.values });
}
