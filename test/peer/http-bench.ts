// The XS side of tools/bench/http.mjs, run as the host's main: measures the
// HTTP client on the real TLS socket and PSRAM pool and traces one
// `BENCH {json}` line per sample. Options: see tools/bench/http.mjs.
import Timer from "timer";
import TCP from "embedded:io/socket/tcp";
import TLS from "embedded:io/socket/tcp/tls";
import * as psram from "psram";
import { exit, now, option } from "host/platform";
import { derOption } from "./der";
import { Aborter } from "net/abort";
import { HttpClient } from "net/http";
import { HttpError, type HttpClientOptions } from "net/types";
import { psramBuffers } from "util/buffers";

const MOCK = option("mock-url") ?? "";
const STREAM = option("stream-url") ?? "";
const CONTROL = option("control-url") ?? "";
const count = (name: string) => Number(option(name) ?? 1);


const buffers = psramBuffers(psram); // as main.ts wires it
const makeClient = () => new HttpClient({
	TCP: TCP as unknown as HttpClientOptions["TCP"],
	TLS: TLS as unknown as HttpClientOptions["TLS"],
	Timer,
	now,
	certificate: derOption("ca-der-hex"),
	buffers,
});

const report = (sample: object) => trace(`BENCH ${JSON.stringify(sample)}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => Timer.set(() => resolve(), ms));
const control = makeClient();
const handshakes = async () => (JSON.parse((await control.request({ method: "GET", url: `${CONTROL}/state` })).body) as { connections: number }).connections;
const script = (scenario: object) => control.request({ method: "POST", url: `${CONTROL}/script`, body: JSON.stringify([scenario]) });

const chat = (stream: boolean) => ({
	method: "POST" as const,
	url: `${MOCK}/v1/chat/completions`,
	headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
	body: JSON.stringify({ model: "gpt-mock", stream, messages: [{ role: "user", content: "bench" }] }),
});

async function requestsPerHandshake(): Promise<void> {
	for (let run = 0; run < count("conversations"); run++) {
		const http = makeClient();
		const before = await handshakes();
		for (let i = 0; i < 10; i++) await http.request(chat(false));
		const opened = (await handshakes()) - before;
		report({ figure: "requests_per_handshake", value: 10 / opened });
		http.close();
	}
}

async function abortToClose(): Promise<void> {
	const http = makeClient();
	for (let run = 0; run < count("abort-runs"); run++) {
		const aborter = new Aborter();
		let chunks = 0, abortAt = 0, callMs = 0;
		try {
			await http.request({
				method: "GET", url: `${STREAM}/stream?id=${run}`, signal: aborter.signal,
				onChunk: () => {
					if (++chunks !== 3) return;
					abortAt = now();
					aborter.abort();
					callMs = now() - abortAt;
				},
			});
			throw new Error("the endless stream ended");
		} catch (error) {
			if (!(error instanceof HttpError) || error.kind !== "aborted") throw error;
		}
		report({ figure: "abort", id: run, abortAt, callMs });
		await sleep(20);
	}
	http.close();
}

/** Peak PSRAM above the starting level during one buffered request, per body byte. */
async function psramPerBodyByte(figure: string, bodyBytes: number, prepare: () => Promise<unknown>, request: () => Promise<{ body: string }>): Promise<void> {
	for (let run = 0; run < count("body-runs"); run++) {
		await prepare();
		const start = psram.stats().psram.used;
		psram.resetPeak();
		const res = await request();
		const peak = psram.stats().psram.peak - start;
		if (res.body.length !== bodyBytes) throw new Error(`${figure}: body of ${res.body.length} bytes, expected ${bodyBytes}`);
		if (psram.stats().psram.used !== start) throw new Error(`${figure}: PSRAM not back to its starting level`);
		report({ figure, value: peak / bodyBytes });
	}
}

try {
	await requestsPerHandshake();
	await abortToClose();
	const bodyBytes = count("body-bytes");
	const http = makeClient();
	await http.request({ method: "GET", url: `${CONTROL}/state` }); // the client's read buffer, taken at its first read, is not the body's
	await psramPerBodyByte("psram_sized", bodyBytes,
		() => script({ type: "text", fault: "huge", bytes: bodyBytes }),
		() => http.request(chat(false)));
	await psramPerBodyByte("psram_chunked", bodyBytes,
		async () => {},
		() => http.request({ method: "GET", url: `${STREAM}/chunked?bytes=${bodyBytes}` }));
	http.close();
	control.close();
	exit(0);
} catch (error) {
	trace(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
	exit(1);
}
