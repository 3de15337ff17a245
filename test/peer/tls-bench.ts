// The XS side of tools/bench/tls.mjs, run as the host's main (with --ca, the
// test CA): full and resumed TLS handshakes against openssl s_server, and what
// mbedtls holds per connection, counted through the TLS core's allocator.
// Traces one `BENCH {json}` line per sample. Options:
//   --servers  "name:port,..."  full handshakes to each
//   --resume   "name:port,..."  resumed handshakes to each
//   --runs     samples per server
import TLS, { forgetSessions, memory } from "embedded:io/socket/tcp/tls";
import Timer from "timer";
import { exit, now, option } from "host/platform";

const RUNS = Number(option("runs") ?? 10);
const servers = (name: string) => (option(name) ?? "").split(",").filter(Boolean).map((s) => {
	const [label, port] = s.split(":");
	return { label, port: Number(port) };
});
// A closed socket is freed once its callback has returned: measure after that.
const settle = () => new Promise<void>((resolve) => Timer.set(() => resolve(), 1));
const report = (sample: object) => trace(`BENCH ${JSON.stringify(sample)}\n`);

interface Sample { ms: number; heldBytes: number; peakBytes: number; resumed: boolean; protocol: string }

// One connection: the handshake's time (constructor -> onWritable), what mbedtls
// holds then and at most during it (from `base`), then a line each way (a TLS
// 1.3 server's ticket arrives with it) and close.
function connectOnce(port: number, base: number): Promise<Sample> {
	return new Promise((resolve, reject) => {
		let sample: Sample;
		const start = now();
		const socket: TLS = new TLS({
			address: "127.0.0.1", port, host: "localhost",
			onWritable() {
				if (sample) return;
				const counted = memory();
				sample = { ms: now() - start, heldBytes: counted.bytes - base, peakBytes: counted.peakBytes - base, resumed: socket.resumed, protocol: socket.protocol };
				socket.write(ArrayBuffer.fromString("bench\n"));
			},
			onReadable() {
				socket.read();
				socket.close();
				resolve(sample);
			},
			onError(message: string) {
				socket.close();
				reject(new Error(message));
			},
		});
	});
}

async function main(): Promise<void> {
	const full = servers("servers"), resume = servers("resume");
	// Warm-up: the library started, the CA file parsed, before anything is counted.
	await connectOnce((full[0] ?? resume[0]).port, 0);
	forgetSessions();
	for (const { label, port } of full) {
		for (let i = 0; i < RUNS; i++) {
			forgetSessions();
			await settle();
			const base = memory(true).bytes;
			const s = await connectOnce(port, base);
			if (s.resumed) throw new Error(`${label}: a full handshake resumed`);
			report({ figure: "handshake_ms", server: label, protocol: s.protocol, value: s.ms });
			report({ figure: "memory_per_connection_bytes", server: label, value: s.heldBytes });
			report({ figure: "memory_handshake_peak_bytes", server: label, value: s.peakBytes });
		}
	}
	for (const { label, port } of resume) {
		forgetSessions();
		await connectOnce(port, 0);
		for (let i = 0; i < RUNS; i++) {
			await settle();
			const s = await connectOnce(port, memory(true).bytes);
			if (!s.resumed) throw new Error(`${label}: the handshake did not resume`);
			report({ figure: "resumed_handshake_ms", server: label, protocol: s.protocol, value: s.ms });
		}
	}
	report({ figure: "library", value: memory().library });
}

main().then(() => exit(0), (error) => {
	trace(`tls-bench: ${error}\n`);
	exit(1);
});
