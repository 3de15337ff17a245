// TLS figures, measured with test/peer/tls-bench.ts inside the lin host against
// `openssl s_server` on 127.0.0.1 (test CA of tools/testca.mjs, given as --ca),
// for each Mbed TLS the host is built with: `mbedtls2` (Debian's 2.28, the
// release host; TLS 1.2 only) and `mbedtls4` (4.0, ESP-IDF v6.0's version;
// built by `npm run bench` when the tarball is there, see docs/development.md, "Mbed TLS 4.0").
//   tls.handshake_ms.<tls12|tls13>_<ecdsa|rsa>.<lib>   constructor -> onWritable,
//                                       a full handshake (ECDSA P-256 / RSA 2048)
//   tls.resumed_handshake_ms.<tls12|tls13>.<lib>     the same, resuming the
//                                       session of the connection before
//   tls.memory_per_connection_bytes.<...>.<lib>      what mbedtls holds for one
//                                       connection once its handshake is done
//                                       (record buffers, session, peer chain),
//                                       counted through our allocator
//   tls.memory_handshake_peak_bytes.<...>.<lib>      the most it held during it
// On lin a handshake costs crypto at x86 speed; the board's hardware AES, SHA
// and ECC make it slower in wall time but not in memory, which is why the
// memory figures are the board's cost (docs/device.md, "TLS on the board").
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostBinary } from "../build.mjs";
import { startOpenSSLServer } from "../peers.mjs";
import { makeMatrixPKI } from "../testca.mjs";

export const title = "TLS: full and resumed handshakes, mbedtls memory per connection, on Mbed TLS 2.28 and 4.0";

const RUNS = 15;
const LIBRARIES = [["release", "mbedtls2"], ["mbedtls4", "mbedtls4"]];

export async function run({ runXs }) {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-bench-tls-"));
	const stops = [];
	try {
		const pki = await makeMatrixPKI(dir);
		const P = pki.paths;
		const ec = { cert: P.server, key: P.serverKey }, rsa = { cert: P.rsaServer, key: P.rsaServerKey };
		const serve = async (label, options) => {
			const server = await startOpenSSLServer(options);
			stops.push(server.close);
			return `${label}:${server.port}`;
		};
		const full12 = [await serve("tls12_ecdsa", { ...ec, version: "1.2" }), await serve("tls12_rsa", { ...rsa, version: "1.2" })];
		const full13 = [await serve("tls13_ecdsa", { ...ec, version: "1.3" }), await serve("tls13_rsa", { ...rsa, version: "1.3" })];
		const resume12 = [await serve("tls12", { ...ec, version: "1.2" })];
		const resume13 = [await serve("tls13", { ...ec, version: "1.3" })];
		const figures = [];
		for (const [variant, lib] of LIBRARIES) {
			if (!existsSync(hostBinary(variant))) {
				console.error(`bench tls: NOTICE: no ${variant} host (${lib}): its figures are left out`);
				continue;
			}
			const v13 = variant === "mbedtls4";
			const lines = await runXs("test/peer/tls-bench", {
				ca: P.ca, runs: RUNS,
				servers: [...full12, ...(v13 ? full13 : [])].join(","),
				resume: [...resume12, ...(v13 ? resume13 : [])].join(","),
			}, { variant });
			const groups = new Map();
			for (const line of lines) {
				if (line.figure === "library") continue;
				const key = `tls.${line.figure}.${line.server}.${lib}`;
				if (!groups.has(key)) groups.set(key, { figure: line.figure, values: [] });
				groups.get(key).values.push(line.value);
			}
			for (const [name, { figure, values }] of groups) {
				const bytes = figure.endsWith("_bytes");
				figures.push({ name, unit: bytes ? "bytes" : "ms", values, p99: !bytes });
			}
		}
		return figures;
	} finally {
		for (const stop of stops.reverse()) await stop();
		rmSync(dir, { recursive: true, force: true });
	}
}
