// test/random: the one seeded generator of the tests. The XS unit tests use it
// through test/fuzz (which adds --seed); the Node e2e tests import its compiled
// copy (build/js/test/lib/random.js, test/e2e/proof.mjs). It imports nothing so
// both can.
//
// Park-Miller "minimal standard" (multiplier 48271, modulus 2^31 - 1) in plain
// double arithmetic: every product stays below 2^53, so it is exact in any
// engine. XS 13.3 implements Math.imul and << with C signed int arithmetic,
// whose overflow UBSan flags on the ASan host, so the usual 32-bit wrapping
// generators are avoided.

const MODULUS = 2147483647;
const MULTIPLIER = 48271;
/** Steps taken before the first value: seeds 1, 2, 3... start far apart, not at 48271, 96542... */
const WARM_UP = 4;

/** A seeded generator: rand(n) is a whole number in [0, n), the same sequence for the same seed. */
export interface Random {
	(n: number): number;
	/** The seed it started from. */
	readonly seed: number;
	/** A number in [0, 1). */
	next(): number;
	/** One element of a non-empty list. */
	pick<T>(list: readonly T[]): T;
	/** n random bytes. */
	bytes(n: number): Uint8Array;
}

/** The generator for seed, a whole number in [0, 2^53). */
export function random(seed: number): Random {
	if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`a seed is a whole number from 0 to 2^53 - 1, not ${String(seed)}`);
	let state = (seed % (MODULUS - 1)) + 1;
	const next = (): number => {
		state = (state * MULTIPLIER) % MODULUS;
		return (state - 1) / (MODULUS - 1);
	};
	for (let i = 0; i < WARM_UP; i++) next();
	const rand = (n: number): number => (n > 0 ? Math.floor(next() * n) : 0);
	return Object.assign(rand, {
		seed,
		next,
		pick<T>(list: readonly T[]): T {
			return list[rand(list.length)];
		},
		bytes(n: number): Uint8Array {
			const out = new Uint8Array(n);
			for (let i = 0; i < n; i++) out[i] = rand(256);
			return out;
		},
	});
}

/** A seed read from text (--seed N, PROOF_SEED=N); undefined when there is none; a RangeError for anything but a whole number. */
export function parseSeed(text: string | undefined, from: string): number | undefined {
	if (text === undefined || text === "") return undefined;
	const seed = /^[0-9]{1,15}$/.test(text) ? Number(text) : NaN;
	if (!Number.isSafeInteger(seed)) throw new RangeError(`${from} ${text}: a seed is a whole number (digits only, up to 15)`);
	return seed;
}
