// util/run: values under whole-number keys that lie close together (the record
// indexes of a history window), in one array from the smallest key. In XS a Map
// entry costs three slots of the slot heap (the scarcer one: 65,536 slots on
// the board), an array item one item in the chunk heap; a full window has
// hundreds of them per session.
//
// Known limit: the array spans the smallest to the largest key, so keys must
// stay close together (dropBelow() lets go of the old end).

export class KeyedRun<T> {
	#base = 0;
	#items: (T | undefined)[] = [];
	#count = 0;

	/** How many keys have a value. */
	get size(): number { return this.#count; }

	get(key: number): T | undefined {
		const i = key - this.#base;
		return i >= 0 && i < this.#items.length ? this.#items[i] : undefined;
	}

	has(key: number): boolean {
		return this.get(key) !== undefined;
	}

	/** Sets key's value; undefined is not a value (use null for "known to be nothing"). */
	set(key: number, value: T): void {
		if (value === undefined) throw new TypeError("KeyedRun: undefined is not a value");
		if (!this.#count) {
			this.#items.length = 0;
			this.#base = key;
		}
		let i = key - this.#base;
		if (i < 0) {
			// A key before the run (rare: a window reaching further back): the run moves.
			const items: (T | undefined)[] = new Array(-i);
			for (const item of this.#items) items.push(item);
			this.#items = items;
			this.#base = key;
			i = 0;
		}
		if (this.#items[i] === undefined) this.#count++;
		while (this.#items.length < i) this.#items.push(undefined);
		this.#items[i] = value;
	}

	/** Lets go of every key below key. */
	dropBelow(key: number): void {
		const n = Math.min(key - this.#base, this.#items.length);
		if (n <= 0) return;
		for (let i = 0; i < n; i++) if (this.#items[i] !== undefined) this.#count--;
		this.#items.splice(0, n);
		this.#base += n;
	}
}
