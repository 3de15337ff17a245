// embedded:io/digital on the lin host (hosts/lin/src/digital.c): the simulated
// pin bank, driven and observed through "host/pins".
import Digital from "embedded:io/digital";
import Timer from "timer";
import * as pins from "host/pins";
import { assert, test } from "testing";

// The SDK's typings leave mode constants `unknown`: the lin host's are numbers.
const D = Digital as unknown as {
	new (options: object): Digital;
	Input: number; InputPullUp: number; InputPullDown: number; InputPullUpDown: number;
	Output: number; OutputOpenDrain: number; Rising: number; Falling: number;
};
const SETTLE_MS = 20;

function settle(): Promise<void> {
	return new Promise((resolve) => Timer.set(() => resolve(), SETTLE_MS));
}

function open(options: object): Digital {
	return new D(options);
}

test("mode and edge constants have the SDK's values", () => {
	assert.deepEqual(
		[D.Input, D.InputPullUp, D.InputPullDown, D.InputPullUpDown, D.Output, D.OutputOpenDrain, D.Rising, D.Falling],
		[0, 1, 2, 3, 8, 9, 1, 2]);
	assert.equal(pins.count, 49);
});

test("a pull-up input reads 1 until driven, follows the drive, and falls back when released", () => {
	const input = open({ pin: 4, mode: D.InputPullUp });
	assert.equal(input.read(), 1);
	pins.drive(4, 0);
	assert.equal(input.read(), 0);
	assert.equal(pins.level(4), 0);
	pins.release(4);
	assert.equal(input.read(), 1);
	input.close();
	const down = open({ pin: 4, mode: D.InputPullDown });
	assert.equal(down.read(), 0);
	pins.drive(4, 1);
	assert.equal(down.read(), 1);
	pins.release(4);
	down.close();
});

test("an output's writes show in level(); open drain pulls low or lets the line float high", () => {
	const out = open({ pin: 10, mode: D.Output });
	assert.equal(pins.level(10), 0);
	out.write(1);
	assert.equal(pins.level(10), 1);
	assert.equal(out.read(), 1);
	pins.drive(10, 0);
	assert.equal(pins.level(10), 1, "push-pull output wins over the outside");
	pins.release(10);
	out.close();
	const drain = open({ pin: 11, mode: D.OutputOpenDrain });
	drain.write(1);
	assert.equal(pins.level(11), 1);
	pins.drive(11, 0);
	assert.equal(pins.level(11), 0, "released open drain shows the outside level");
	pins.release(11);
	drain.write(0);
	assert.equal(pins.level(11), 0);
	drain.close();
});

test("mode() reports the owner's mode, and undefined for a free pin", () => {
	assert.equal(pins.mode(12), undefined);
	const out = open({ pin: 12, mode: D.OutputOpenDrain });
	assert.equal(pins.mode(12), D.OutputOpenDrain);
	out.close();
	assert.equal(pins.mode(12), undefined);
});

test("a pin has one owner: opening it twice throws until the first closes", () => {
	const first = open({ pin: 20, mode: D.Input });
	assert.throws(() => open({ pin: 20, mode: D.Output }), "Digital: pin 20 is in use", Error);
	first.close();
	first.close(); // twice is harmless
	open({ pin: 20, mode: D.Output }).close();
});

test("onReadable fires on the next loop turn for a rising edge, with the Digital as this", async () => {
	const calls: unknown[] = [];
	const input = open({
		pin: 5, mode: D.InputPullDown, edge: D.Rising,
		onReadable(this: Digital) { calls.push(this); },
	});
	pins.drive(5, 1);
	assert.equal(calls.length, 0, "not synchronously");
	await settle();
	assert.equal(calls.length, 1);
	assert.equal(calls[0], input);
	pins.drive(5, 0); // falling: not watched
	await settle();
	assert.equal(calls.length, 1);
	input.close();
	pins.release(5);
});

test("edges between two loop turns are coalesced into one call; both edges can be watched", async () => {
	let count = 0;
	const input = open({
		pin: 6, mode: D.InputPullUp, edge: D.Rising | D.Falling,
		onReadable() { count++; },
	});
	pins.drive(6, 0);
	pins.drive(6, 1);
	pins.drive(6, 0);
	await settle();
	assert.equal(count, 1);
	pins.release(6); // pull-up: rises again
	await settle();
	assert.equal(count, 2);
	pins.drive(6, 1); // already 1: no edge
	await settle();
	assert.equal(count, 2);
	input.close();
	pins.release(6);
});

test("a closed input is never called, even with an edge already pending", async () => {
	let called = false;
	const input = open({ pin: 7, mode: D.Input, edge: D.Rising, onReadable() { called = true; } });
	pins.drive(7, 1);
	input.close();
	await settle();
	assert.equal(called, false);
	pins.release(7);
});

test("the target option is kept on the instance", () => {
	const target = { name: "button" };
	const input = open({ pin: 8, mode: D.Input, target }) as Digital & { target: unknown };
	assert.equal(input.target, target);
	assert.equal(input.format, "number");
	input.format = "number";
	assert.throws(() => { input.format = "buffer" as any; }, "Digital: invalid format", RangeError);
	input.close();
});

test("bad options throw specific errors", () => {
	assert.throws(() => new (D as any)(), "Digital: options object required", TypeError);
	assert.throws(() => open({ mode: D.Input }), "Digital: pin required", TypeError);
	assert.throws(() => open({ pin: 49, mode: D.Input }), "Digital: invalid pin", RangeError);
	assert.throws(() => open({ pin: -1, mode: D.Input }), "Digital: invalid pin", RangeError);
	assert.throws(() => open({ pin: "3", mode: D.Input }), "Digital: pin must be a number", TypeError);
	assert.throws(() => open({ pin: 3 }), "Digital: mode required", TypeError);
	assert.throws(() => open({ pin: 3, mode: 5 }), "Digital: invalid mode", RangeError);
	assert.throws(() => open({ pin: 3, mode: D.Input, edge: 4 }), "Digital: invalid edge", RangeError);
	assert.throws(() => open({ pin: 3, mode: D.Input, edge: 1, onReadable: 1 }), "Digital: onReadable must be a function", TypeError);
	assert.throws(() => open({ pin: 3, mode: D.Input, onReadable() {} }), "Digital: onReadable needs an input mode and an edge", RangeError);
	assert.throws(() => open({ pin: 3, mode: D.Output, edge: 1, onReadable() {} }), "Digital: onReadable needs an input mode", RangeError);
	assert.throws(() => open({ pin: 3, mode: D.Input, format: "buffer" }), "Digital: invalid format", RangeError);
	assert.equal(pins.mode(3), undefined, "no failed open holds the pin");
});

test("write checks its value and the mode", () => {
	const input = open({ pin: 9, mode: D.Input });
	assert.throws(() => input.write(1), "Digital: pin 9 is an input", TypeError);
	input.close();
	const out = open({ pin: 9, mode: D.Output });
	assert.throws(() => out.write(2 as any), "Digital: value must be 0 or 1", RangeError);
	assert.throws(() => out.write("1" as any), "Digital: value must be 0 or 1", TypeError);
	assert.throws(() => (out.write as any)(), "Digital: value required", TypeError);
	out.close();
	assert.throws(() => out.read(), "Digital: closed", Error);
	assert.throws(() => out.write(1), "Digital: closed", Error);
});

test("every method rejects a wrong receiver", () => {
	const proto = D.prototype as any;
	for (const name of ["read", "write", "close"]) {
		assert.throws(() => proto[name].call({}, 1), "Digital: invalid receiver", TypeError);
		assert.throws(() => proto[name].call(undefined, 1), "Digital: invalid receiver", TypeError);
	}
	const format = Object.getOwnPropertyDescriptor(proto, "format")!;
	assert.throws(() => format.get!.call({}), "Digital: invalid receiver", TypeError);
	assert.throws(() => format.set!.call({}, "number"), "Digital: invalid receiver", TypeError);
});

test("host/pins rejects bad pins and values", () => {
	assert.throws(() => pins.drive(49, 1), "pins: invalid pin (0 to 48)", RangeError);
	assert.throws(() => pins.drive(1.5, 1), "pins: invalid pin", RangeError);
	assert.throws(() => pins.level("1" as any), "pins: pin must be a number", TypeError);
	assert.throws(() => (pins.mode as any)(), "pins: pin required", TypeError);
	assert.throws(() => pins.release(-1), "pins: invalid pin", RangeError);
	assert.throws(() => pins.drive(1, 2 as any), "pins: value must be 0 or 1", RangeError);
	assert.throws(() => (pins.drive as any)(1), "pins: value required", TypeError);
});

test("the host/pins declarations match what the native side returns", () => {
	assert.equal(typeof pins.count, "number");
	const input = open({ pin: 30, mode: D.InputPullUp });
	const level: unknown = pins.level(30);
	const mode: unknown = pins.mode(30);
	assert.ok(level === 1 && mode === D.InputPullUp, "level is 0|1, mode a number");
	assert.equal(typeof input.read(), "number");
	input.close();
	assert.equal(pins.mode(30), undefined);
});
