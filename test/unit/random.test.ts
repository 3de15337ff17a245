// host/random and util/random: the one source of secret random values
// (getrandom(2) on the lin host). fill() fills what it is given and refuses
// anything else with a sentence; randomBelow is uniform and in range;
// randomCode draws from its alphabet. That two fresh starts print different
// pairing codes is test/e2e/random.test.mjs's.
import { test, assert } from "testing";
import { fill } from "host/random";
import { randomBelow, randomCode, randomFill, randomUint32 } from "util/random";

test("fill fills a Uint8Array, an ArrayBuffer and a view's own range with fresh bytes each call", () => {
	const a = new Uint8Array(32), b = new Uint8Array(32);
	fill(a);
	fill(b);
	assert.ok(a.some((x) => x !== 0), "not all zero");
	assert.ok(a.some((x, i) => x !== b[i]), "two draws differ");
	const whole = new Uint8Array(16);
	fill(whole.subarray(4, 8));
	assert.deepEqual([...whole.subarray(0, 4), ...whole.subarray(8)], new Array(12).fill(0), "only the view's bytes are written");
	const buffer = new ArrayBuffer(64);
	fill(buffer as unknown as Uint8Array);
	assert.ok(new Uint8Array(buffer).some((x) => x !== 0));
	fill(new Uint8Array(0));
	fill(new Uint8Array(65536));
});

test("fill refuses what is not a writable byte buffer, and more than 65536 bytes at once", () => {
	const call = fill as unknown as (...args: unknown[]) => void;
	for (const bad of [[], [undefined], [7], ["sixteen bytes..."], [{}]]) assert.throws(() => call(...bad), /random: fill: the argument must be/, TypeError);
	assert.throws(() => fill(new Uint8Array(65537)), /65537 bytes is more than 65536/, RangeError);
});

test("randomBelow stays in range and hits every value about as often", () => {
	for (const n of [1, 2, 3, 31, 1000, 2 ** 32]) {
		for (let i = 0; i < 50; i++) {
			const v = randomBelow(n);
			assert.ok(Number.isInteger(v) && v >= 0 && v < n, `${v} in [0, ${n})`);
		}
	}
	const counts = new Array(31).fill(0);
	const draws = 31 * 200;
	for (let i = 0; i < draws; i++) counts[randomBelow(31)]++;
	// 200 expected each; a fair generator is outside 120..280 with a probability far below 1e-6.
	assert.ok(counts.every((c) => c > 120 && c < 280), `counts ${counts.join(",")}`);
	for (const bad of [0, -1, 1.5, 2 ** 32 + 1, NaN]) assert.throws(() => randomBelow(bad), /not a whole number in 1\.\.2\^32/, RangeError);
	const words = new Set(Array.from({ length: 20 }, () => randomUint32()));
	assert.ok(words.size > 15, "32-bit values rarely repeat");
	assert.equal(randomFill(new Uint8Array(3)).length, 3);
});

test("randomCode draws its length from its alphabet, and codes differ", () => {
	const codes = Array.from({ length: 20 }, () => randomCode("ABC23", 12));
	for (const code of codes) assert.match(code, /^[ABC23]{12}$/);
	assert.equal(new Set(codes).size, 20, "no two of twenty 12-symbol codes alike");
});
