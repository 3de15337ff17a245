// util/random: secret random values, all from host/random (getrandom(2) on lin,
// the hardware RNG on the board). Pairing codes, WebSocket keys and masks and
// any id a stranger must not guess come from here; Math.random never does (on
// lin XS seeds it the same way every start, so its "random" codes repeat).
import { fill } from "host/random";

/** bytes filled with random bytes; returns it. */
export function randomFill(bytes: Uint8Array): Uint8Array {
	fill(bytes);
	return bytes;
}

/** A random whole number in [0, 2^32). */
export function randomUint32(): number {
	// A buffer per call: a module-level one would be frozen where this module is preloaded (the device image).
	const bytes = new Uint8Array(4);
	fill(bytes);
	// No << 24: XS shifts a C int, and 255 << 24 overflows it (UBSan stops the asan host).
	return bytes[0] + bytes[1] * 0x100 + bytes[2] * 0x1_0000 + bytes[3] * 0x100_0000;
}

/**
 * A uniform random whole number in [0, n) for 1 <= n <= 2^32: values of the
 * last, incomplete run of n are drawn again, so no result is likelier than
 * another (a plain remainder would favour the small ones). Each draw is
 * accepted with probability above 1/2, so the loop ends; 64 draws bound it.
 */
export function randomBelow(n: number): number {
	if (!Number.isSafeInteger(n) || n < 1 || n > 0x1_0000_0000) throw new RangeError(`randomBelow: ${n} is not a whole number in 1..2^32`);
	const limit = 0x1_0000_0000 - (0x1_0000_0000 % n);
	for (let draw = 0; draw < 64; draw++) {
		const value = randomUint32();
		if (value < limit) return value % n;
	}
	throw new Error("the random generator gave 64 values in a row from a range of at most one half: it is broken");
}

/** length symbols drawn uniformly from alphabet (a pairing code, a login code). */
export function randomCode(alphabet: string, length: number): string {
	let text = "";
	for (let i = 0; i < length; i++) text += alphabet[randomBelow(alphabet.length)];
	return text;
}
