// net/bytes: a growable byte buffer with a hard cap, for the small pieces the
// parsers keep between chunks (response heads, SSE lines and events). Response
// bodies use their own allocator-backed sink in net/http.
//
// Invariant: bytes[0, length) holds the data; capacity never exceeds max.
// Growing past max calls onOverflow, which must throw.

export class ByteBuffer {
	#bytes: Uint8Array;
	#length = 0;
	readonly #max: number;
	readonly #onOverflow: () => never;

	constructor(initial: number, max: number, onOverflow: () => never) {
		this.#bytes = new Uint8Array(Math.min(initial, max));
		this.#max = max;
		this.#onOverflow = onOverflow;
	}

	get length(): number { return this.#length; }

	/** The data, as a view valid until the next append or clear. */
	view(): Uint8Array { return this.#bytes.subarray(0, this.#length); }

	/** The storage itself (the data is [0, length)), valid until the next append: no view made. */
	get bytes(): Uint8Array { return this.#bytes; }

	append(source: Uint8Array, start = 0, end = source.length): void {
		const count = end - start;
		if (count <= 0) return;
		const needed = this.#length + count;
		if (needed > this.#max) this.#onOverflow();
		if (needed > this.#bytes.length) {
			let capacity = Math.max(this.#bytes.length, 16);
			while (capacity < needed) capacity *= 2;
			const grown = new Uint8Array(Math.min(capacity, this.#max));
			grown.set(this.#bytes.subarray(0, this.#length));
			this.#bytes = grown;
		}
		this.#bytes.set(start === 0 && end === source.length ? source : source.subarray(start, end), this.#length);
		this.#length = needed;
	}

	appendByte(byte: number): void {
		if (this.#length >= this.#bytes.length) this.append(new Uint8Array([byte]));
		else this.#bytes[this.#length++] = byte;
	}

	clear(): void { this.#length = 0; }
}
