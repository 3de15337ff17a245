// The lin host's TLS socket (hosts/lin/src/tls.c) against Node TLS servers on
// 127.0.0.1 with the test CA of tools/testca.mjs, started by
// test/e2e/net-native.test.mjs:
//   --trusted-port  echo server, certificate for localhost from the test CA
//   --closer-port   same certificate, sends "goodbye" and closes
//   --wrong-port    echo server, certificate for wrong.example from the test CA
//   --other-port    echo server, certificate for localhost from an untrusted CA
//   --ca-der-hex    the test CA, DER, in hex
//   --mode          which run: "default" (system CA bundle), "ca" (--ca is the
//                   test CA), "bad-ca" (--ca names a file that holds no
//                   certificate; a missing one stops the host at start, exit 64)
import TLS from "embedded:io/socket/tcp/tls";
import TCP from "embedded:io/socket/tcp";
import Timer from "timer";
import { collectGarbage, heap, option } from "host/platform";
import { NET_OUTPUT_BYTES } from "budgets";
import { derOption } from "./der";
import { assert, test } from "testing";
import { connect, connectError, echoPieces, pumpPattern, roundTrip, type StreamClass } from "./stream";

const port = (name: string) => Number(option(name));
const TRUSTED = port("trusted-port"), CLOSER = port("closer-port"), WRONG = port("wrong-port"), OTHER = port("other-port");
const MODE = option("mode");
const Socket = TLS as unknown as StreamClass;
const delay = (ms: number) => new Promise((resolve) => Timer.set(resolve, ms));

const CA_DER = derOption("ca-der-hex");

const at = (p: number, more: object = {}) => ({ address: "127.0.0.1", port: p, host: "localhost", ...more });
const withCA = (p: number, more: object = {}) => at(p, { secure: { certificate: CA_DER }, ...more });
const NOT_TRUSTED = /^TLS: certificate not trusted: 127\.0\.0\.1 port \d+ presented a certificate that no trusted CA vouches for \(.*\); if you trust this server, start xsclaw with --ca FILE naming its CA$/;

if (MODE === "default") {
	test("the system bundle does not trust the test CA: certificate not trusted", async () => {
		assert.match(await connectError(Socket, at(TRUSTED)), NOT_TRUSTED);
	});

	test("a CA given as secure.certificate (DER) is trusted: echo round trip after the handshake", async () => {
		const link = await connect(Socket, withCA(TRUSTED));
		assert.equal(link.firstWritable, NET_OUTPUT_BYTES, "onWritable after the handshake");
		assert.equal(await roundTrip(link, "hello over TLS"), "hello over TLS");
		const socket = link.socket as TLS;
		// The shapes typings/lin/net.d.ts declares.
		assert.equal(typeof socket.write(new Uint8Array(0)), "number");
		assert.equal(socket.read(), undefined);
		assert.equal(socket.remoteAddress, "127.0.0.1");
		assert.equal(socket.remotePort, TRUSTED);
		assert.equal(socket.format, "buffer");
		socket.close();
	});

	test("small and large writes of one turn come back whole and in order", async () => {
		const link = await connect(Socket, withCA(TRUSTED));
		assert.equal(await echoPieces(link, [1, 700, 15000, 3, 1000, 5]), "16709 bytes in order");
		assert.equal(await echoPieces(link, [1500, NET_OUTPUT_BYTES - 1000]), `${NET_OUTPUT_BYTES + 500} bytes in order`);
		link.socket.close();
	});

	test("a server certified by an unconfigured CA is refused", async () => {
		assert.match(await connectError(Socket, withCA(OTHER)), NOT_TRUSTED);
	});

	test("a certificate for another host name is refused with a clear error", async () => {
		assert.match(await connectError(Socket, withCA(WRONG)),
			/^TLS: host name mismatch: the certificate of 127\.0\.0\.1 port \d+ is not for "localhost"; connect with a host name the certificate lists$/);
		assert.match(await connectError(Socket, withCA(TRUSTED, { host: "other.example" })), /^TLS: host name mismatch: .* is not for "other\.example"/);
	});

	test("an IP address as host is checked against the certificate's IP addresses", async () => {
		// The test CA's server certificate lists DNS:localhost and IP:127.0.0.1.
		const link = await connect(Socket, withCA(TRUSTED, { host: "127.0.0.1" }));
		assert.equal(await roundTrip(link, "by address"), "by address");
		link.socket.close();
		assert.match(await connectError(Socket, withCA(TRUSTED, { host: "127.0.0.2" })),
			/^TLS: host name mismatch: the certificate of 127\.0\.0\.1 port \d+ is not for "127\.0\.0\.2"; /);
		assert.match(await connectError(Socket, withCA(WRONG, { host: "127.0.0.1" })),
			/^TLS: host name mismatch: the certificate of 127\.0\.0\.1 port \d+ is not for "127\.0\.0\.1"; /);
	});

	test("error messages name no internal API field: an untrusted server says what a person does", async () => {
		const message = await connectError(Socket, at(TRUSTED));
		assert.ok(!/secure\.|serverName/.test(message), `no API field in: ${message}`);
		assert.match(message, /--ca FILE/);
	});

	test("secure.serverName overrides host as the name sent and verified", async () => {
		const link = await connect(Socket, at(TRUSTED, { host: "wrong.example", secure: { certificate: CA_DER, serverName: "localhost" } }));
		assert.equal(await roundTrip(link, "named"), "named");
		link.socket.close();
	});

	test("verify: false is an explicit opt-out, with or without a host", async () => {
		const link = await connect(Socket, { address: "127.0.0.1", port: OTHER, secure: { verify: false } });
		assert.equal(await roundTrip(link, "unverified"), "unverified");
		link.socket.close();
	});

	test("a 1 MiB write over TLS paced by onWritable comes back byte for byte", async () => {
		const link = await connect(Socket, withCA(TRUSTED));
		const result = await pumpPattern(link, 1024 * 1024);
		assert.ok(result.writableCallbacks >= 1024 * 1024 / NET_OUTPUT_BYTES - 1, `paced by onWritable (${result.writableCallbacks} callbacks)`);
		link.socket.close();
	}, 60_000);

	test("data sent before the peer closes is read before onError", async () => {
		const events: string[] = [];
		const socket = await new Promise<TLS>((resolve) => {
			const tls: TLS = new TLS(withCA(CLOSER, {
				onReadable(bytes: number) {
					events.push(`readable ${bytes}`);
					events.push(String.fromArrayBuffer(tls.read() as ArrayBuffer));
				},
				onError(message: string) {
					events.push(message);
					resolve(tls);
				},
			}));
		});
		assert.deepEqual(events, ["readable 7", "goodbye", "TLS: connection closed by peer"]);
		assert.throws(() => socket.write(new ArrayBuffer(1)), "TLS: cannot write after an error: connection closed by peer");
		socket.close();
	});

	test("callbacks that option getters create survive a collection while the options are read", async () => {
		const churn = () => { const kept = []; for (let i = 0; i < 2000; i++) kept.push({ i }); return kept.length; };
		const writable = await new Promise<number>((resolve) => {
			const socket = new TLS({
				...at(TRUSTED),
				get onWritable() { collectGarbage(); return (bytes: number) => { socket.close(); resolve(bytes); }; },
				get secure() { collectGarbage(); churn(); return { certificate: CA_DER }; },
			});
		});
		assert.equal(writable, NET_OUTPUT_BYTES);
	});

	test("write() before the handshake completes throws", () => {
		const socket = new TLS(withCA(TRUSTED));
		assert.throws(() => socket.write(new ArrayBuffer(1)), "TLS: not connected yet: write after onWritable");
		socket.close();
	});

	test("open TLS sockets are counted until closed, and close() is idempotent", async () => {
		const before = heap().sockets;
		const link = await connect(Socket, withCA(TRUSTED));
		assert.equal(heap().sockets, before + 1);
		link.socket.close();
		link.socket.close();
		assert.equal(heap().sockets, before);
		assert.throws(() => link.socket.read(), "TLS: closed");
		await delay(50);
	});

	test("the constructor checks the TLS options and the TCP ones", () => {
		const T = TLS as any;
		assert.throws(() => new T({ address: "127.0.0.1", port: TRUSTED }), "TLS: host required to verify the server's certificate", TypeError);
		assert.throws(() => new T(at(TRUSTED, { host: 42 })), "TLS: host must be a string", TypeError);
		assert.throws(() => new T(at(TRUSTED, { secure: 5 })), "TLS: secure must be an object", TypeError);
		assert.throws(() => new T(at(TRUSTED, { secure: { certificate: "PEM text" } })), "TLS: secure.certificate: expected a buffer", TypeError);
		assert.throws(() => new T(at(TRUSTED, { secure: { certificate: new Uint8Array([48, 3, 1, 2, 3]) } })), "TLS: secure.certificate is not a DER certificate", TypeError);
		assert.throws(() => new T(at(TRUSTED, { secure: { serverName: 7 } })), "TLS: serverName must be a string", TypeError);
		assert.throws(() => new T(), "TLS: options object required", TypeError);
		assert.throws(() => new T({ ...at(TRUSTED), address: "localhost" }), "TLS: address must be an IP address", TypeError);
		assert.throws(() => new T(at(0)), "TLS: invalid port", RangeError);
		assert.throws(() => new T(withCA(TRUSTED, { onError: 1 })), "TLS: onError must be a function", TypeError);
		assert.throws(() => new T(withCA(TRUSTED, { format: "words" })), "TLS: invalid format", RangeError);
	});

	test("every method checks its receiver: TCP and TLS sockets are not interchangeable", () => {
		const tls = new TLS(withCA(TRUSTED));
		const tcp = new TCP({ address: "127.0.0.1", port: TRUSTED });
		const proto = TLS.prototype as any;
		const accessor = (name: string) => Object.getOwnPropertyDescriptor(proto, name)!;
		for (const receiver of [{}, undefined, tcp]) {
			assert.throws(() => proto.read.call(receiver), "TLS: invalid receiver", TypeError);
			assert.throws(() => proto.write.call(receiver, new ArrayBuffer(1)), "TLS: invalid receiver", TypeError);
			assert.throws(() => proto.close.call(receiver), "TLS: invalid receiver", TypeError);
			assert.throws(() => accessor("remoteAddress").get!.call(receiver), "TLS: invalid receiver", TypeError);
			assert.throws(() => accessor("remotePort").get!.call(receiver), "TLS: invalid receiver", TypeError);
			assert.throws(() => accessor("format").get!.call(receiver), "TLS: invalid receiver", TypeError);
			assert.throws(() => accessor("format").set!.call(receiver, "buffer"), "TLS: invalid receiver", TypeError);
		}
		assert.throws(() => (TCP.prototype as any).read.call(tls), "TCP: invalid receiver", TypeError);
		assert.throws(() => (tls as any).read(0), "TLS: invalid read size", RangeError);
		assert.throws(() => (tls as any).write("text"), "TLS: expected a buffer", TypeError);
		tls.close();
		tcp.close();
	});
}

if (MODE === "ca") {
	test("--ca FILE makes the test CA trusted without secure.certificate", async () => {
		const link = await connect(Socket, at(TRUSTED));
		assert.equal(await roundTrip(link, "trusted by --ca"), "trusted by --ca");
		link.socket.close();
	});

	test("--ca FILE still refuses a server from another CA and a wrong host name", async () => {
		assert.match(await connectError(Socket, at(OTHER)), NOT_TRUSTED);
		assert.match(await connectError(Socket, at(WRONG)), /^TLS: host name mismatch: /);
	});
}

if (MODE === "bad-ca") {
	test("a --ca file that holds no certificate is a constructor error saying what to fix", async () => {
		for (let attempt = 0; attempt < 2; attempt++)
			assert.throws(() => new TLS(at(TRUSTED)), /^TLS: --ca needs a PEM or DER certificate: .*not-a-certificate\.pem: /);
		const link = await connect(Socket, withCA(TRUSTED));
		assert.equal(await roundTrip(link, "own CA"), "own CA", "secure.certificate does not need --ca");
		link.socket.close();
	});
}
