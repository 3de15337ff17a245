// The lin host's TCP socket (hosts/lin/src/tcp.c) against Node servers on
// 127.0.0.1 started by test/e2e/net-native.test.mjs:
//   --echo-port    echoes everything
//   --closer-port  sends "goodbye" and closes
//   --reset-port   resets the connection when data arrives
//   --sink-port    reads nothing for 1.5 s, then discards what comes
//   --refused-port nobody listens
import TCP from "embedded:io/socket/tcp";
import Timer from "timer";
import { collectGarbage, heap, option } from "host/platform";
import { NET_OUTPUT_BYTES } from "budgets";
import { assert, test } from "testing";
import { connect, connectError, echoPieces, pumpPattern, roundTrip, type StreamClass } from "./stream";

const port = (name: string) => Number(option(name));
const ECHO = port("echo-port"), CLOSER = port("closer-port"), RESET = port("reset-port"), SINK = port("sink-port");
const REFUSED = port("refused-port");
const Socket = TCP as unknown as StreamClass;
const echo = { address: "127.0.0.1", port: ECHO };
const delay = (ms: number) => new Promise((resolve) => Timer.set(resolve, ms));

test("small messages round-trip through an echo server", async () => {
	const link = await connect(Socket, { ...echo, nodelay: true });
	assert.equal(link.firstWritable, NET_OUTPUT_BYTES, "first onWritable reports the output buffer");
	assert.equal(await roundTrip(link, "hello"), "hello");
	assert.equal(await roundTrip(link, "ünïcödé and more"), "ünïcödé and more");
	const tcp = link.socket as unknown as TCP;
	assert.equal(tcp.remoteAddress, "127.0.0.1");
	assert.equal(tcp.remotePort, ECHO);
	assert.equal(tcp.format, "buffer");
	link.socket.close();
});

test("small and large writes of one turn come back whole and in order", async () => {
	const link = await connect(Socket, { ...echo, nodelay: true });
	// Small ones wait for the end of the turn; a large one goes at once after them.
	assert.equal(await echoPieces(link, [1, 700, 15000, 3, 1000, 5]), "16709 bytes in order");
	// More than the room the waiting bytes leave: they are sent first, no RangeError.
	assert.equal(await echoPieces(link, [1500, NET_OUTPUT_BYTES - 1000]), `${NET_OUTPUT_BYTES + 500} bytes in order`);
	// Many one-byte writes in one turn.
	assert.equal(await echoPieces(link, Array(64).fill(1)), "64 bytes in order");
	link.socket.close();
});

test("a 1 MiB write paced by onWritable comes back byte for byte", async () => {
	const link = await connect(Socket, echo);
	const result = await pumpPattern(link, 1024 * 1024);
	assert.ok(result.writableCallbacks >= 1024 * 1024 / NET_OUTPUT_BYTES - 1, `paced by onWritable (${result.writableCallbacks} callbacks)`);
	assert.equal(result.largestWrite, NET_OUTPUT_BYTES, "wrote what onWritable reported");
	link.socket.close();
});

test("writes to a peer that stops reading wait in the queue; onWritable comes when it drains", async () => {
	const link = await connect(Socket, { address: "127.0.0.1", port: SINK });
	const zeros = new Uint8Array(NET_OUTPUT_BYTES);
	let writable = link.firstWritable, written = 0;
	while (writable === NET_OUTPUT_BYTES && written < 64 * 1024 * 1024) {
		writable = link.socket.write(zeros);
		written += zeros.length;
	}
	assert.ok(writable < NET_OUTPUT_BYTES, `the kernel buffers filled (after ${written} bytes)`);
	assert.throws(() => link.socket.write(new Uint8Array(writable + 1)), "exceeds the", RangeError);
	const drained = await new Promise<number>((resolve) => { link.onWritable = resolve; });
	assert.equal(drained, NET_OUTPUT_BYTES, "all writable again once drained");
	link.socket.close();
});

test("a refused connection calls onError with the reason, after the constructor returns", async () => {
	let returned = false;
	const message = new Promise<string>((resolve) => {
		new TCP({ address: "127.0.0.1", port: REFUSED, onError(m?: string) { resolve(`${returned} ${m}`); } });
		returned = true;
	});
	assert.match(await message, /^true TCP: cannot connect to 127\.0\.0\.1 port \d+: Connection refused/);
});

// Handlers are given to the constructor: the data may come with the connection.
function closerEvents(Class: any, options: object): Promise<{ events: string[]; socket: any }> {
	return new Promise((resolve) => {
		const events: string[] = [];
		const socket = new Class({
			...options,
			onReadable(bytes: number) {
				events.push(`readable ${bytes}`);
				events.push(String.fromArrayBuffer(this.read()));
			},
			onError(message: string) {
				events.push(message);
				resolve({ events, socket });
			},
		});
	});
}

test("data sent before the peer closes is read before onError", async () => {
	const { events, socket } = await closerEvents(TCP, { address: "127.0.0.1", port: CLOSER });
	assert.deepEqual(events, ["readable 7", "goodbye", "TCP: connection closed by peer"]);
	assert.throws(() => socket.write(new ArrayBuffer(1)), "TCP: cannot write after an error: connection closed by peer");
	assert.equal(socket.read(), undefined, "nothing left to read");
	socket.close();
});

test("onError waits until data received before the failure has been read", async () => {
	let error: string | undefined;
	const arrived = new Promise<TCP>((resolve) => {
		new TCP({
			address: "127.0.0.1", port: CLOSER,
			onReadable() { resolve(this); },
			onError(message?: string) { error = message; },
		});
	});
	const socket = await arrived;
	await delay(50);
	assert.equal(error, undefined, "onError before the data was read");
	assert.equal(String.fromArrayBuffer(socket.read(3) as ArrayBuffer), "goo");
	await delay(20);
	assert.equal(error, undefined, "onError with data left");
	socket.read();
	await delay(50);
	assert.equal(error, "TCP: connection closed by peer");
	socket.close();
});

test("a connection reset by the peer reports it", async () => {
	const link = await connect(Socket, { address: "127.0.0.1", port: RESET });
	const message = new Promise<string>((resolve) => { link.onError = resolve; });
	link.socket.write(ArrayBuffer.fromString("x"));
	assert.match(await message, /^TCP: connection reset by peer/);
	link.socket.close();
});

test("read() returns what is available, read(n) up to n, read(buffer) fills and counts", async () => {
	const link = await connect(Socket, echo);
	const socket = link.socket as unknown as TCP;
	assert.equal(socket.read(), undefined, "nothing yet");
	assert.equal(socket.read(new Uint8Array(4)), undefined, "nothing yet into a buffer");
	const arrived = new Promise<void>((resolve) => {
		link.onReadable = (bytes) => { if (bytes >= 6) resolve(); };
	});
	socket.write(ArrayBuffer.fromString("abcdef"));
	await arrived;
	assert.equal(String.fromArrayBuffer(socket.read(2) as ArrayBuffer), "ab");
	const into = new Uint8Array(3);
	assert.equal(socket.read(into) as unknown, 3);
	assert.equal(String.fromArrayBuffer(into.buffer), "cde");
	assert.equal(String.fromArrayBuffer(socket.read(100) as ArrayBuffer), "f", "read(n) returns what there is");
	assert.equal(socket.read(), undefined);
	socket.close();
});

test("the number format reads and writes single bytes", async () => {
	const link = await connect(Socket, { ...echo, format: "number" });
	const socket = link.socket as unknown as TCP;
	assert.equal(socket.format, "number");
	const arrived = new Promise<void>((resolve) => { link.onReadable = (bytes) => { if (bytes >= 2) resolve(); }; });
	// The byte waits for the end of the turn (hosts/lin/NOTES.md, "CPU per turn").
	assert.equal(socket.write(65) as unknown, NET_OUTPUT_BYTES - 1, "write returns the bytes still writable");
	socket.write(255);
	await arrived;
	assert.equal(socket.read(), 65);
	assert.equal(socket.read(), 255);
	assert.equal(socket.read(), undefined);
	assert.throws(() => socket.write(256), "TCP: invalid byte", RangeError);
	assert.throws(() => socket.write(new ArrayBuffer(1) as any), "TCP: invalid byte", RangeError);
	socket.format = "buffer";
	assert.equal(socket.format, "buffer");
	assert.throws(() => { socket.format = "text" as any; }, "TCP: invalid format", RangeError);
	socket.close();
});

test("write() before connecting and beyond what is writable throws", async () => {
	const early = new TCP({ ...echo });
	assert.throws(() => early.write(new ArrayBuffer(1)), "TCP: not connected yet: write after onWritable");
	early.close();
	const link = await connect(Socket, echo);
	assert.throws(() => link.socket.write(new ArrayBuffer(NET_OUTPUT_BYTES + 1)), `TCP: write of ${NET_OUTPUT_BYTES + 1} bytes exceeds the ${NET_OUTPUT_BYTES} writable`, RangeError);
	assert.equal(link.socket.write(new ArrayBuffer(0)), NET_OUTPUT_BYTES, "an empty write is fine");
	link.socket.close();
});

test("after close() methods throw, close() is idempotent and nothing calls back", async () => {
	let callbacks = 0;
	const link = await connect(Socket, echo);
	link.onReadable = link.onWritable = link.onError = () => { callbacks++; };
	const socket = link.socket as unknown as TCP;
	socket.write(ArrayBuffer.fromString("late echo"));
	socket.close();
	socket.close();
	assert.throws(() => socket.read(), "TCP: closed");
	assert.throws(() => socket.write(new ArrayBuffer(1)), "TCP: closed");
	assert.throws(() => socket.remoteAddress, "TCP: closed");
	assert.throws(() => socket.format, "TCP: closed");
	await delay(100);
	assert.equal(callbacks, 0, "callbacks after close()");
});

test("open sockets are counted until closed", async () => {
	const before = heap().sockets;
	const link = await connect(Socket, echo);
	assert.equal(heap().sockets, before + 1);
	const refused = new TCP({ address: "127.0.0.1", port: REFUSED });
	assert.equal(heap().sockets, before + 2);
	refused.close();
	link.socket.close();
	assert.equal(heap().sockets, before);
});

test("a socket nobody references stays alive until closed", async () => {
	let sent = false;
	const echoed = new Promise<string>((resolve) => {
		new TCP({
			...echo,
			onWritable() {
				if (!sent) this.write(ArrayBuffer.fromString("kept"));
				sent = true;
			},
			onReadable() {
				const text = String.fromArrayBuffer(this.read() as ArrayBuffer);
				this.close();
				resolve(text);
			},
		});
	});
	collectGarbage();
	assert.equal(await echoed, "kept");
});

test("callbacks that option getters create survive a collection while the options are read", async () => {
	const churn = () => { const kept = []; for (let i = 0; i < 2000; i++) kept.push({ i }); return kept.length; };
	const message = await new Promise<string>((resolve) => {
		new TCP({
			address: "127.0.0.1",
			port: REFUSED,
			get onReadable() { collectGarbage(); return () => {}; },
			get onWritable() { collectGarbage(); return () => {}; },
			get onError() { collectGarbage(); return (m: string) => resolve(m); },
			get target() { collectGarbage(); churn(); return undefined; },
		} as any);
	});
	assert.match(message, /^TCP: cannot connect to 127\.0\.0\.1/);
});

test("the constructor checks every option", () => {
	const ok = () => {};
	const T = TCP as any;
	assert.throws(() => new T(), "TCP: options object required", TypeError);
	assert.throws(() => new T({ port: 80 }), "TCP: address required", TypeError);
	assert.throws(() => new T({ address: "localhost", port: 80 }), "TCP: address must be an IP address (resolve names first): \"localhost\"", TypeError);
	assert.throws(() => new T({ address: "127.0.0.1.5", port: 80 }), "TCP: address must be an IP address", TypeError);
	assert.throws(() => new T({ address: 127001, port: 80 }), "TCP: address must be a string", TypeError);
	assert.throws(() => new T({ address: "127.0.0.1" }), "TCP: port required", TypeError);
	assert.throws(() => new T({ address: "127.0.0.1", port: 0 }), "TCP: invalid port", RangeError);
	assert.throws(() => new T({ address: "127.0.0.1", port: 65536 }), "TCP: invalid port", RangeError);
	assert.throws(() => new T({ address: "127.0.0.1", port: 1.5 }), "TCP: invalid port", RangeError);
	assert.throws(() => new T({ address: "127.0.0.1", port: "80" }), "TCP: port must be a number", TypeError);
	assert.throws(() => new T({ ...echo, format: "text" }), "TCP: invalid format", RangeError);
	assert.throws(() => new T({ ...echo, onReadable: 1 }), "TCP: onReadable must be a function", TypeError);
	assert.throws(() => new T({ ...echo, onWritable: "x" }), "TCP: onWritable must be a function", TypeError);
	assert.throws(() => new T({ ...echo, onError: {} }), "TCP: onError must be a function", TypeError);
	assert.throws(() => new T({ ...echo, from: {}, onError: ok }), "TCP: from must be a connection a Listener's read() returned, not yet taken", TypeError);
});

test("every method checks its receiver and its arguments", async () => {
	const proto = TCP.prototype as any;
	const getter = (name: string) => Object.getOwnPropertyDescriptor(proto, name)!.get!;
	const setter = (name: string) => Object.getOwnPropertyDescriptor(proto, name)!.set!;
	for (const receiver of [{}, undefined, 42, new Uint8Array(4)]) {
		assert.throws(() => proto.read.call(receiver), "TCP: invalid receiver", TypeError);
		assert.throws(() => proto.write.call(receiver, new ArrayBuffer(1)), "TCP: invalid receiver", TypeError);
		assert.throws(() => proto.close.call(receiver), "TCP: invalid receiver", TypeError);
		assert.throws(() => getter("remoteAddress").call(receiver), "TCP: invalid receiver", TypeError);
		assert.throws(() => getter("remotePort").call(receiver), "TCP: invalid receiver", TypeError);
		assert.throws(() => getter("format").call(receiver), "TCP: invalid receiver", TypeError);
		assert.throws(() => setter("format").call(receiver, "buffer"), "TCP: invalid receiver", TypeError);
	}
	const link = await connect(Socket, echo);
	const socket = link.socket as any;
	assert.throws(() => socket.read(0), "TCP: invalid read size", RangeError);
	assert.throws(() => socket.read(-1), "TCP: invalid read size", RangeError);
	assert.throws(() => socket.read(1.5), "TCP: invalid read size", RangeError);
	assert.throws(() => socket.read(1e300), "TCP: invalid read size", RangeError);
	assert.throws(() => socket.read(Infinity), "TCP: invalid read size", RangeError);
	assert.throws(() => socket.read("4"), "TCP: expected a buffer", TypeError);
	assert.throws(() => socket.write(), "TCP: expected a buffer", TypeError);
	assert.throws(() => socket.write("text"), "TCP: expected a buffer", TypeError);
	assert.throws(() => socket.write(12), "TCP: expected a buffer", TypeError);
	socket.close();
});
