// The TLS socket (hosts/common/tls + the lin glue) against `openssl s_server`
// on 127.0.0.1, started by test/e2e/tls-openssl.test.mjs with the PKI of
// tools/testca.mjs makeMatrixPKI. Every server sends each line back reversed.
//   --ecdsa12 --ecdsa13 --rsa12 --rsa13   P-256 / RSA 2048 certificates from the test CA,
//                                         TLS 1.2 only / TLS 1.3 only
//   --chain      a server certificate under an intermediate under a 4096-bit root
//   --wrong      a certificate for wrong.example      --expired  one that ended in 2020
//   --untrusted  a certificate from another CA        --stall    a proxy that stops mid-handshake
//   --resume12 --resume13   servers only the resumption tests use
//   --ca-der-hex, --root-der-hex   the test CA and the 4096-bit root, DER in hex
//   --tls13      "1" when this build speaks TLS 1.3 (Mbed TLS 4.0), "0" for 2.28
//   --board      "1" when the TLS is the board's glue (hosts/esp32/tls/tls_esp32.c over
//                hosts/lin/boardtls): its trust hint, and its certificate bundle (--ca)
import TLS, { forgetSessions } from "embedded:io/socket/tcp/tls";
import { option } from "host/platform";
import { derOption } from "./der";
import { assert, test } from "testing";
import { connect, connectError, roundTrip, type StreamClass } from "./stream";

const port = (name: string) => Number(option(name));
const TLS13 = option("tls13") === "1";
const BOARD = option("board") === "1";
const Socket = TLS as unknown as StreamClass;

const CA = derOption("ca-der-hex");
const ROOT = derOption("root-der-hex");

const at = (server: string, more: object = {}) =>
	({ address: "127.0.0.1", port: port(server), host: "localhost", secure: { certificate: CA }, ...more });
const HINT = BOARD ? "the firmware trusts ESP-IDF's certificate bundle: use a server whose certificate a public CA issued" : "if you trust this server, start xsclaw with --ca FILE naming its CA";
const NOT_TRUSTED = new RegExp(`^TLS: certificate not trusted: 127\\.0\\.0\\.1 port \\d+ presented a certificate that no trusted CA vouches for \\(.*\\); ${HINT.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
const NO_TLS13 = /^TLS: 127\.0\.0\.1 port \d+ refused the handshake \(alert 70, protocol version: no TLS version in common\); this build speaks TLS 1\.2 only/;

// Connects, checks the protocol, sends a line and reads it back reversed.
async function talk(options: object, protocol: string): Promise<TLS> {
	const link = await connect(Socket, options);
	const socket = link.socket as unknown as TLS;
	assert.equal(socket.protocol, protocol, "negotiated protocol");
	assert.equal(await roundTrip(link, "hello tls\n"), "slt olleh\n");
	return socket;
}

for (const [server, kind, version] of [["ecdsa12", "ECDSA P-256", "1.2"], ["rsa12", "RSA 2048", "1.2"], ["ecdsa13", "ECDSA P-256", "1.3"], ["rsa13", "RSA 2048", "1.3"]]) {
	test(`${kind} over TLS ${version}-only: ${version === "1.3" && !TLS13 ? "a clear error naming the version" : "connected, a line each way"}`, async () => {
		if (version === "1.3" && !TLS13) {
			assert.match(await connectError(Socket, at(server)), NO_TLS13);
			return;
		}
		(await talk(at(server), `TLSv${version}`)).close();
	});
}

test("a three-level chain under a 4096-bit root: trusted through the root alone", async () => {
	(await talk(at("chain", { secure: { certificate: ROOT } }), TLS13 ? "TLSv1.3" : "TLSv1.2")).close();
	assert.match(await connectError(Socket, at("chain")), NOT_TRUSTED);
});

test("a certificate for another host name: host name mismatch", async () => {
	assert.match(await connectError(Socket, at("wrong")),
		/^TLS: host name mismatch: the certificate of 127\.0\.0\.1 port \d+ is not for "localhost"; connect with a host name the certificate lists$/);
});

test("an expired certificate: certificate expired", async () => {
	assert.match(await connectError(Socket, at("expired")),
		/^TLS: certificate expired: the certificate of 127\.0\.0\.1 port \d+ is past its end date; the server must renew it/);
});

test("a certificate from a root nobody trusts: certificate not trusted", async () => {
	assert.match(await connectError(Socket, at("untrusted")), NOT_TRUSTED);
});

test("a server that stalls mid-handshake: the handshake deadline ends it", async () => {
	const message = await connectError(Socket, at("stall", { secure: { certificate: CA, handshakeTimeout: 1000 } }));
	assert.match(message, /^TLS: 127\.0\.0\.1 port \d+ did not complete the TLS handshake within 1000 ms; the server stalled or is not a TLS server$/);
});

for (const [server, version] of [["resume12", "1.2"], ["resume13", "1.3"]]) {
	test(`session resumption over TLS ${version}: the second connection resumes`, async () => {
		if (version === "1.3" && !TLS13) {
			assert.match(await connectError(Socket, at(server)), NO_TLS13);
			return;
		}
		forgetSessions();
		const first = await talk(at(server), `TLSv${version}`);
		assert.equal(first.resumed, false, "the first connection is a full handshake");
		first.close();
		const second = await talk(at(server), `TLSv${version}`);
		assert.equal(second.resumed, true, "the second connection resumed the first's session");
		second.close();
		// Another trust (the 4096-bit root instead of the test CA) does not
		// reuse the session, and the handshake then fails verification.
		assert.match(await connectError(Socket, at(server, { secure: { certificate: ROOT } })), NOT_TRUSTED);
		forgetSessions();
		const third = await talk(at(server), `TLSv${version}`);
		assert.equal(third.resumed, false, "after forgetSessions, a full handshake");
		third.close();
	});
}

// The board's glue trusts ESP-IDF's certificate bundle when a connection brings
// no CA (here the shim's bundle is --ca, the test CA): esp_crt_bundle_attach
// installs a verify callback of its own, which the core chains to, so the
// certificate's IP address is still checked and resumption still reported.
if (BOARD) {
	const bundled = (server: string, host: string) => ({ address: "127.0.0.1", port: port(server), host });
	test("the board's certificate bundle: trusted through it, an IP address still checked, resumption still reported", async () => {
		forgetSessions();
		const first = await talk(bundled("resume12", "localhost"), "TLSv1.2");
		assert.equal(first.resumed, false, "the first connection is a full handshake");
		first.close();
		const second = await talk(bundled("resume12", "localhost"), "TLSv1.2");
		assert.equal(second.resumed, true, "the second connection resumed the first's session");
		second.close();
		(await talk(bundled("ecdsa12", "127.0.0.1"), "TLSv1.2")).close();
		assert.match(await connectError(Socket, bundled("wrong", "127.0.0.1")),
			/^TLS: host name mismatch: the certificate of 127\.0\.0\.1 port \d+ is not for "127\.0\.0\.1"/);
		assert.match(await connectError(Socket, bundled("untrusted", "localhost")), NOT_TRUSTED);
		forgetSessions();
	});
}
