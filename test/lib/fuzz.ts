// test/fuzz: seeded input for the fuzz tests (test/unit/*_fuzz.test.ts and every
// other test that draws random input): the run's seed (--seed N replays it; a
// failing test prints it), the one generator (test/random), and a mutator of
// valid input (truncation, random bytes, JSON punctuation, stray UTF-8
// continuation bytes, spaces).
import { option } from "host/platform";
import { noteOnFailure } from "testing";
import { parseSeed, type Random } from "test/random";

export type { Random } from "test/random";

/**
 * The seed a test file's random input starts from: --seed N when the run was
 * given one, else the file's own fallback. A failing test of the file prints it
 * with how to replay it. Derive a test's streams from it (seed + 1, seed + k).
 */
export function seedFor(fallback: number): number {
	const seed = parseSeed(option("seed"), "--seed") ?? fallback;
	noteOnFailure(`seed ${seed}: replay with --seed ${seed}`);
	return seed;
}

/** How many cases a fuzz loop runs: --fuzz-iterations N when given (longer hunts), else the test's own count. */
export function iterationsFor(fallback: number): number {
	const text = option("fuzz-iterations");
	if (text === undefined || text === "") return fallback;
	const count = /^[0-9]{1,9}$/.test(text) ? Number(text) : 0;
	if (count < 1) throw new RangeError(`--fuzz-iterations ${text}: a count is a whole number from 1`);
	return count;
}

/** A seeded generator: rand(n) is a whole number in [0, n), the same for the same seed (test/random). */
export { random as generator } from "test/random";

/** A damaged copy of bytes: sometimes cut short, then 1-8 edits. */
export function mutate(bytes: Uint8Array, rand: Random): Uint8Array {
	const out = bytes.slice(0, rand(4) === 0 ? rand(bytes.length + 1) : bytes.length);
	const edits = 1 + rand(8);
	for (let i = 0; i < edits && out.length; i++) {
		const at = rand(out.length);
		const kind = rand(4);
		if (kind === 0) out[at] = rand(256);
		else if (kind === 1) out[at] = [0x7b, 0x7d, 0x5b, 0x5d, 0x22, 0x3a, 0x2c, 0x30, 0xff, 0xc3][rand(10)];
		else if (kind === 2) out[at] = 0x80 | rand(64); // a stray continuation byte: invalid UTF-8
		else out[at] = 0x20;
	}
	return out;
}

/** Up to max random bytes. */
export function randomBytes(rand: Random, max: number): Uint8Array {
	return rand.bytes(rand(max + 1));
}
