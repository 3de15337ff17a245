// test/fuzz: seeded input for the fuzz tests (test/unit/*_fuzz.test.ts): a
// repeatable generator and a mutator of valid input (truncation, random bytes,
// JSON punctuation, stray UTF-8 continuation bytes, spaces).

/** A seeded generator: rand(n) is a whole number in [0, n), the same for the same seed. */
export function generator(seed: number): (n: number) => number {
	let state = (seed * 2654435761) >>> 0 || 1;
	return (n: number) => {
		state = (Math.imul(state, 1103515245) + 12345) >>> 0;
		return n > 0 ? (state >>> 8) % n : 0;
	};
}

/** A damaged copy of bytes: sometimes cut short, then 1-8 edits. */
export function mutate(bytes: Uint8Array, rand: (n: number) => number): Uint8Array {
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
export function randomBytes(rand: (n: number) => number, max: number): Uint8Array {
	const out = new Uint8Array(rand(max + 1));
	for (let i = 0; i < out.length; i++) out[i] = rand(256);
	return out;
}
