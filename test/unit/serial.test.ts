// embedded:io/serial on the lin host (hosts/lin/src/serial.c): the calling
// contract. Input, end of input and reboot are tested through real stdin by
// test/e2e/serial.test.mjs; here stdin is whatever the runner gives (a closed
// pipe), so no test depends on input arriving.
import Serial from "embedded:io/serial";
import Timer from "timer";
import { allocate, free } from "psram";
import { consoleKind } from "host/platform";
import { assert, test } from "testing";

type Options = ConstructorParameters<typeof Serial>[0];
const SETTLE_MS = 20;

function open(options: object = {}): Serial {
	return new Serial(options as Options);
}

function settle(): Promise<void> {
	return new Promise((resolve) => Timer.set(() => resolve(), SETTLE_MS));
}

test("on the runner's pipe the console kind is pipe (a terminal is tested in e2e)", () => {
	assert.equal(consoleKind, "pipe");
});

test("one Serial at a time: a second open throws until the first closes", () => {
	const first = open({ baud: 115200, port: 0 });
	assert.throws(() => open(), "Serial: the console is already open", Error);
	first.close();
	first.close(); // twice is harmless
	open().close();
});

test("format defaults to number, can be set to buffer, and rejects others", () => {
	const serial = open();
	assert.equal(serial.format, "number");
	serial.format = "buffer";
	assert.equal(serial.format, "buffer");
	assert.throws(() => { serial.format = "string" as any; }, "Serial: invalid format", RangeError);
	serial.close();
	const buffered = open({ format: "buffer" });
	assert.equal(buffered.format, "buffer");
	buffered.close();
});

test("onWritable fires after construction and after a write, with the Serial as this", async () => {
	const seen: [unknown, number][] = [];
	const serial = open({ onWritable(this: Serial, bytes: number) { seen.push([this, bytes]); } });
	assert.equal(seen.length, 0, "not synchronously");
	await settle();
	assert.equal(seen.length, 1);
	assert.equal(seen[0][0], serial);
	assert.ok(seen[0][1] > 0, "reports room");
	serial.write(ArrayBuffer.fromString(""));
	await settle();
	assert.equal(seen.length, 2);
	serial.close();
});

test("a closed Serial is never called back and throws on use", async () => {
	let calls = 0;
	const serial = open({ onWritable() { calls++; }, onReadable() { calls++; }, onError() { calls++; } } as object);
	serial.close();
	await settle();
	assert.equal(calls, 0);
	assert.throws(() => serial.read(), "Serial: closed", Error);
	assert.throws(() => serial.write(65), "Serial: closed", Error);
	assert.throws(() => serial.format, "Serial: closed", Error);
});

test("read with nothing buffered returns undefined, and 0 bytes into a buffer", () => {
	const serial = open({ format: "buffer" });
	serial.flush(); // discard whatever the runner left on stdin
	assert.equal(serial.read(), undefined);
	assert.equal(serial.read(8), undefined);
	assert.equal(serial.read(new Uint8Array(4)), 0);
	serial.close();
});

test("the target option is kept on the instance", () => {
	const target = { name: "console" };
	const serial = open({ target }) as Serial & { target: unknown };
	assert.equal(serial.target, target);
	serial.close();
});

test("bad options throw specific errors and leave the console free", () => {
	assert.throws(() => new (Serial as any)(), "Serial: options object required", TypeError);
	assert.throws(() => open({ port: 1 }), "Serial: invalid port", RangeError);
	assert.throws(() => open({ baud: 0 }), "Serial: invalid baud", RangeError);
	assert.throws(() => open({ baud: "fast" }), "Serial: baud must be a number", TypeError);
	assert.throws(() => open({ receive: 49 }), "Serial: invalid receive", RangeError);
	assert.throws(() => open({ format: "ascii" }), "Serial: invalid format", RangeError);
	assert.throws(() => open({ onReadable: 1 }), "Serial: onReadable must be a function", TypeError);
	assert.throws(() => open({ onError: "x" }), "Serial: onError must be a function", TypeError);
	open().close();
});

test("read and write check their arguments", () => {
	const serial = open();
	assert.throws(() => serial.read(4), 'Serial: read(byteLength) needs format "buffer"', TypeError);
	serial.format = "buffer";
	assert.throws(() => serial.read(-1), "Serial: invalid byteLength", RangeError);
	assert.throws(() => serial.read(1.5), "Serial: invalid byteLength", RangeError);
	assert.throws(() => serial.read(1e300), "Serial: invalid byteLength", RangeError);
	assert.throws(() => serial.read(Infinity), "Serial: invalid byteLength", RangeError);
	assert.throws(() => serial.read("4" as any), "Serial: read takes a byte count or a buffer", TypeError);
	assert.throws(() => serial.write(256), "Serial: a byte is 0 to 255", RangeError);
	assert.throws(() => serial.write(1.5), "Serial: a byte is 0 to 255", RangeError);
	assert.throws(() => (serial.write as any)(), "Serial: write takes a byte or a buffer", TypeError);
	assert.throws(() => serial.write("text" as any), "Serial: expected a buffer", TypeError);
	serial.close();
});

test("a psram buffer can be written, and once freed it is refused as detached", () => {
	const serial = open({ format: "buffer" });
	const buffer = allocate(0, "internal");
	serial.write(buffer);
	assert.equal(serial.read(buffer), 0);
	free(buffer);
	assert.throws(() => serial.write(buffer), "Serial: detached buffer", TypeError);
	assert.throws(() => serial.read(buffer), "Serial: detached buffer", TypeError);
	serial.close();
});

test("every method rejects a wrong receiver", () => {
	const proto = Serial.prototype as any;
	for (const name of ["read", "write", "flush", "close"]) {
		assert.throws(() => proto[name].call({}, 1), "Serial: invalid receiver", TypeError);
		assert.throws(() => proto[name].call(new ArrayBuffer(1), 1), "Serial: invalid receiver", TypeError);
	}
	const format = Object.getOwnPropertyDescriptor(proto, "format")!;
	assert.throws(() => format.get!.call({}), "Serial: invalid receiver", TypeError);
	assert.throws(() => format.set!.call({}, "number"), "Serial: invalid receiver", TypeError);
});
