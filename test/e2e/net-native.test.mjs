// The lin host's native network modules against Node servers on 127.0.0.1:
// TCP (test/peer/tcp.ts) and TLS (test/peer/tls.ts, three runs: the default CA
// bundle, --ca FILE, and an unreadable --ca) on every built host variant.
// DNS needs no peer: test/unit/dns.test.ts runs with the unit tests.
import { test } from "node:test";
import net from "node:net";
import tls from "node:tls";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeTestCA } from "../../tools/testca.mjs";
import { VARIANTS, runXsTests } from "./xs.mjs";

function listen(server) {
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve(server.address().port));
	});
}

// Servers keep track of their connections so closing them ends the test promptly.
function track(server) {
	const sockets = new Set();
	server.on(server instanceof tls.Server ? "secureConnection" : "connection", (s) => {
		sockets.add(s);
		s.on("error", () => {});
		s.on("close", () => sockets.delete(s));
	});
	server.on("tlsClientError", () => {});
	return () => new Promise((resolve) => {
		for (const s of sockets) s.destroy();
		server.close(() => resolve());
	});
}

async function start(servers) {
	const ports = {}, stops = [];
	for (const [name, server] of Object.entries(servers)) {
		stops.push(track(server));
		ports[name] = await listen(server);
	}
	return { ports, stop: () => Promise.all(stops.map((stop) => stop())) };
}

// A port nobody listens on: bound once, then released.
async function freePort() {
	const server = net.createServer();
	const port = await listen(server);
	await new Promise((resolve) => server.close(resolve));
	return port;
}

const echoing = (s) => s.pipe(s);

for (const variant of VARIANTS) {
	test(`TCP socket against Node servers [${variant}]`, async (t) => {
		const { ports, stop } = await start({
			echo: net.createServer(echoing),
			closer: net.createServer((s) => s.end("goodbye")),
			reset: net.createServer((s) => s.once("data", () => s.resetAndDestroy())),
			sink: net.createServer((s) => {
				s.pause();
				setTimeout(() => s.resume(), 1500);
			}),
		});
		try {
			await runXsTests(t, "test/peer/tcp", {
				variant,
				options: { "echo-port": ports.echo, "closer-port": ports.closer, "reset-port": ports.reset, "sink-port": ports.sink, "refused-port": await freePort() },
			});
		} finally {
			await stop();
		}
	});

	test(`TLS socket against Node TLS servers [${variant}]`, async (t) => {
		const dir = mkdtempSync(join(tmpdir(), "xsclaw-ca-"));
		try {
			const ca = await makeTestCA(dir);
			const { ports, stop } = await start({
				trusted: tls.createServer(ca.server, echoing),
				closer: tls.createServer(ca.server, (s) => s.end("goodbye")),
				wrong: tls.createServer(ca.wrong, echoing),
				other: tls.createServer(ca.other, echoing),
			});
			const options = {
				"trusted-port": ports.trusted, "closer-port": ports.closer, "wrong-port": ports.wrong, "other-port": ports.other,
				"ca-der-hex": ca.ca.der.toString("hex"),
			};
			try {
				await t.test("default CA bundle", (tt) => runXsTests(tt, "test/peer/tls", { variant, options: { ...options, mode: "default" } }));
				await t.test("--ca FILE", (tt) => runXsTests(tt, "test/peer/tls", { variant, options: { ...options, mode: "ca", ca: ca.paths.ca } }));
				await t.test("--ca FILE that cannot be read", (tt) =>
					runXsTests(tt, "test/peer/tls", { variant, options: { ...options, mode: "bad-ca", ca: join(dir, "missing.pem") } }));
			} finally {
				await stop();
			}
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
}
