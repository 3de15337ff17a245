// util/run: values under whole-number keys that lie close together (the record
// indexes of a history window), in one array from the smallest key. In XS a Map
// entry costs three slots of the slot heap (the scarcer one: 65,536 slots on
// the board), an array item one item in the chunk heap; a full window has
// hundreds of them per session.
//
// The array is a ring whose capacity doubles when it is full: a window that
// gains a few records at its new end and lets go of as many at its old end
// (every request) neither grows nor moves it. In XS an array that grows by one
// item is copied whole whenever anything was allocated after it (~8 KiB for a
// window of 256 records), and splice() of its old end copies it too.
//
// Known limit: the ring spans the smallest to the largest key, so keys must
// stay close together (dropBelow() lets go of the old end).

const FIRST_CAPACITY = 16;   // items; doubled as needed (a power of two, so a mask finds a ring index)

/** A KeyedRun's ring (see view()). */
export interface RunView<T> {
	readonly items: ReadonlyArray<T | undefined>;
	readonly offset: number;
	readonly mask: number;
	readonly lo: number;
	readonly hi: number;
}

export class KeyedRun<T> {
	/** The key at the ring's head. */
	#base = 0;
	/** Where the head is in #items. */
	#head = 0;
	/** Keys [base, base + span) are inside the ring (some without a value). */
	#span = 0;
	#items: (T | undefined)[] = [];
	#count = 0;

	/** How many keys have a value. */
	get size(): number { return this.#count; }

	get(key: number): T | undefined {
		const i = key - this.#base;
		return i >= 0 && i < this.#span ? this.#items[(this.#head + i) & (this.#items.length - 1)] : undefined;
	}

	has(key: number): boolean {
		return this.get(key) !== undefined;
	}

	/** Sets key's value; undefined is not a value (use null for "known to be nothing"). */
	set(key: number, value: T): void {
		if (value === undefined) throw new TypeError("KeyedRun: undefined is not a value");
		if (!this.#count) {
			this.#clear();
			this.#base = key;
		}
		let i = key - this.#base;
		if (i < 0) {
			// A key before the run (rare: a window reaching further back): the ring grows at its head.
			this.#grow(this.#span - i, -i);
			this.#base = key;
			i = 0;
		} else if (i >= this.#span) {
			if (i >= this.#items.length) this.#grow(i + 1, 0);
			this.#span = i + 1;
		}
		const at = (this.#head + i) & (this.#items.length - 1);
		if (this.#items[at] === undefined) this.#count++;
		this.#items[at] = value;
	}

	/** Lets go of every key below key. */
	dropBelow(key: number): void {
		const n = Math.min(key - this.#base, this.#span);
		if (n <= 0) return;
		const mask = this.#items.length - 1;
		for (let i = 0; i < n; i++) {
			const at = (this.#head + i) & mask;
			if (this.#items[at] !== undefined) {
				this.#count--;
				this.#items[at] = undefined;
			}
		}
		this.#head = (this.#head + n) & mask;
		this.#base += n;
		this.#span -= n;
	}

	/**
	 * The ring as it is now, for loops over many keys that must not make a call
	 * per item (store/history's window): key k's value is items[(offset + k) & mask]
	 * for keys in [lo, hi) (undefined: no value). Valid until the next set or dropBelow.
	 */
	view(): RunView<T> {
		return { items: this.#items, offset: this.#head - this.#base, mask: this.#items.length - 1, lo: this.#base, hi: this.#base + this.#span };
	}

	/** Whether every key in [from, to) has a value; O(1) while the run has no gap. */
	covers(from: number, to: number): boolean {
		if (to <= from) return true;
		if (from < this.#base || to > this.#base + this.#span) return false;
		if (this.#count === this.#span) return true;
		for (let k = from; k < to; k++) if (this.get(k) === undefined) return false;
		return true;
	}

	#clear(): void {
		for (let i = 0; i < this.#items.length; i++) this.#items[i] = undefined;
		this.#head = 0;
		this.#span = 0;
	}

	/** A ring of at least `span` items, the current ones moved `shift` places on (filled by pushes: XS grows it in place). */
	#grow(span: number, shift: number): void {
		let capacity = this.#items.length || FIRST_CAPACITY;
		while (capacity < span) capacity *= 2;
		const old = this.#items, mask = old.length - 1;
		const items: (T | undefined)[] = [];
		for (let i = 0; i < shift; i++) items.push(undefined);
		for (let i = 0; i < this.#span; i++) items.push(old[(this.#head + i) & mask]);
		while (items.length < capacity) items.push(undefined);
		this.#items = items;
		this.#head = 0;
		this.#span += shift;
	}
}
