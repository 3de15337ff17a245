// memory/text: words, tags, ranking and the checks on remembered text, shared by
// both memory modes so a search ranks the same way whatever the mode.
//
// Ranking: each query word scores 3 when it is a whole word of the entry, 2 more
// when it is one of its tags, 1 when it only occurs inside a word (so "tea" finds
// "teapot" after "tea", and a Chinese phrase without spaces still matches as a
// substring). Entries scoring 0 are not results. Ties go to the newer entry.
// Limits: no stemming, no synonyms; words are split at whitespace and punctuation.
import { MEMORY_QUERY_MAX_WORDS, MEMORY_RECORD_MAX_BYTES, MEMORY_TAGS_MAX, MEMORY_TAG_MAX_CHARS } from "budgets";
import { byteLength } from "util/files";
import type { MemoryEntry } from "memory/types";
import { clip, oneLine } from "util/text";

const SEPARATORS = /[\s.,;:!?"'()[\]{}<>/\\|`~@$%^&*+=，。；：！？、（）“”‘’《》]+/;
const TAG_PATTERN = /^[^\s#,]+$/;

/** The lowercase words of text, without empty ones and without a leading "#". */
export function wordsOf(text: string): string[] {
	return text.toLowerCase().split(SEPARATORS).map((w) => w.replace(/^#+/, "")).filter((w) => w.length > 0);
}

/** The distinct query words scored by a search (at most MEMORY_QUERY_MAX_WORDS). */
export function queryWords(query: string): string[] {
	return [...new Set(wordsOf(query))].slice(0, MEMORY_QUERY_MAX_WORDS);
}

/** A tag as stored: lowercase, without "#". Throws a sentence for one that cannot be a tag. */
export function normalTag(tag: string): string {
	const t = tag.trim().replace(/^#+/, "").toLowerCase();
	if (!t) throw new Error("a tag cannot be empty: give a word such as \"food\", or leave tags out.");
	if (t.length > MEMORY_TAG_MAX_CHARS) throw new Error(`the tag "${t.slice(0, MEMORY_TAG_MAX_CHARS)}…" is too long: use at most ${MEMORY_TAG_MAX_CHARS} characters.`);
	if (!TAG_PATTERN.test(t)) throw new Error(`the tag "${t}" has a space, "#" or comma in it: use one word per tag.`);
	return t;
}

/** Distinct normal tags, in the order given. Throws a sentence when there are too many or one is bad. */
export function normalTags(tags: readonly string[]): string[] {
	const result = [...new Set(tags.map(normalTag))];
	if (result.length > MEMORY_TAGS_MAX) throw new Error(`a memory can carry at most ${MEMORY_TAGS_MAX} tags (${result.length} were given): keep the most useful ones.`);
	return result;
}

/** Trimmed text that fits one record. Throws a sentence when it is empty or too long. */
export function checkedText(text: string): string {
	const t = text.trim();
	if (!t) throw new Error("there is nothing to remember: give the text to save.");
	const size = byteLength(t);
	if (size > MEMORY_RECORD_MAX_BYTES)
		throw new Error(`that text is ${size} bytes; one memory holds at most ${MEMORY_RECORD_MAX_BYTES}: shorten it or split it into several memories.`);
	return t;
}

/** What scoring needs of an entry: its lowercase text and its words, made once per entry (MemoryIndex). */
interface Facts {
	lower: string;
	words: ReadonlySet<string>;
}

function factsOf(entry: MemoryEntry): Facts {
	return { lower: entry.text.toLowerCase(), words: new Set(wordsOf(entry.text)) };
}

/** The score of an entry (its facts and tags) for the query words (0 = no match). */
function scoreOf(facts: Facts, tags: readonly string[], words: readonly string[]): number {
	let total = 0;
	for (let i = 0; i < words.length; i++) {
		const w = words[i];
		if (tags.includes(w)) total += 5;
		else if (facts.words.has(w)) total += 3;
		else if (facts.lower.includes(w)) total += 1;
	}
	return total;
}

/** text on one line, cut to chars with "…". */
export function preview(text: string, chars: number): string {
	return clip(oneLine(text), chars + 1);
}

/**
 * The entries a stable prompt section shows within budgetBytes (header and the
 * "N more" line counted): all when they fit, else the newest that fit. It does
 * not depend on the question, so the section stays the same from request to
 * request until memory changes. Indexes, in stored order.
 */
function stableChoice(sizes: readonly number[], headerBytes: number, budgetBytes: number): number[] {
	const omittedNoteBytes = 80;   // room kept for the "N more" line; the line is short ASCII
	const total = sizes.reduce((a, b) => a + b, headerBytes);
	if (total <= budgetBytes) return sizes.map((_, i) => i);
	const chosen: number[] = [];
	let used = headerBytes + omittedNoteBytes;
	for (let i = sizes.length - 1; i >= 0; i--) {
		if (used + sizes[i] > budgetBytes) continue;
		used += sizes[i];
		chosen.push(i);
	}
	return chosen.reverse();
}

/**
 * A memory's entries (oldest first) as the prompt sections and the search see
 * them: each entry's rendered line and its size, its lowercase text and its
 * words (each made once, when first needed), and the last stable section made.
 * The memory makes a new index when its entries change (write, forget) and keeps
 * it until then, so a request costs the question's words looked up in each
 * entry's set (at most MEMORY_RECORDS_MAX entries), not every entry split into
 * words and rendered again; and nothing at all while memory is empty.
 */
export class MemoryIndex {
	readonly entries: readonly MemoryEntry[];
	readonly #render: (e: MemoryEntry) => string;
	readonly #header: string;
	readonly #relevantHeader: string;
	#lines: string[] | undefined = undefined;
	#sizes: number[] | undefined = undefined;
	readonly #facts: Array<Facts | undefined> = [];
	/** The last stable section made: its budget, the indexes it shows, its text. */
	#stable: StableSection | undefined = undefined;

	/** header: the stable section's first line; relevantHeader: the volatile one's. */
	constructor(entries: readonly MemoryEntry[], render: (e: MemoryEntry) => string, header: string, relevantHeader: string) {
		this.entries = entries;
		this.#render = render;
		this.#header = header;
		this.#relevantHeader = relevantHeader;
	}

	#factsAt(i: number): Facts {
		return this.#facts[i] ?? (this.#facts[i] = factsOf(this.entries[i]));
	}

	#renderAll(): void {
		if (this.#lines) return;
		const lines = this.entries.map(this.#render);
		this.#sizes = lines.map((l) => byteLength(l) + 1);
		this.#lines = lines;
	}

	/**
	 * The stable prompt section within budgetBytes: all entries when they fit,
	 * otherwise the newest that fit, in stored order, and a closing line saying how
	 * many were left out. undefined when empty.
	 */
	context(budgetBytes: number): string | undefined {
		return this.#stableSection(budgetBytes).text;
	}

	#stableSection(budgetBytes: number): StableSection {
		if (this.#stable && this.#stable.budget === budgetBytes) return this.#stable;
		let text: string | undefined = undefined, shown: ReadonlySet<number> = NONE_SHOWN;
		if (this.entries.length) {
			this.#renderAll();
			const lines = this.#lines!;
			const chosen = stableChoice(this.#sizes!, byteLength(this.#header) + 1, budgetBytes);
			shown = new Set(chosen);
			if (chosen.length) {
				const out = [this.#header, ...chosen.map((i) => lines[i])];
				const left = this.entries.length - chosen.length;
				if (left) out.push(`(${left} more not shown: use memory_search to find them.)`);
				text = out.join("\n");
			}
		}
		return (this.#stable = { budget: budgetBytes, shown, text });
	}

	/**
	 * The entries relevant to hint that the stable section (context with
	 * stableBudgetBytes) leaves out, best first within budgetBytes, shown in stored
	 * order. It changes with the question, so it goes after the stable prefix (the
	 * volatile end of the request). undefined when none is relevant. The cheap
	 * checks first: no entries, or all shown already, cost no word split.
	 */
	relevant(hint: string, stableBudgetBytes: number, budgetBytes: number): string | undefined {
		if (!this.entries.length) return undefined;
		const shown = this.#stableSection(stableBudgetBytes).shown;
		if (shown.size === this.entries.length) return undefined;
		const words = queryWords(hint);
		if (!words.length) return undefined;
		this.#renderAll();
		const lines = this.#lines!, sizes = this.#sizes!;
		// Relevant: at least half the best score, so a match on a common word ("the") alone does not count.
		const scored: Array<{ i: number; s: number }> = [];
		let best = 0;
		for (let i = 0; i < this.entries.length; i++) {
			if (shown.has(i)) continue;
			const s = scoreOf(this.#factsAt(i), this.entries[i].tags, words);
			if (s <= 0) continue;
			scored.push({ i, s });
			if (s > best) best = s;
		}
		const kept = scored.filter((x) => x.s * 2 >= best);
		kept.sort((a, b) => b.s - a.s || b.i - a.i);
		const chosen: number[] = [];
		let used = byteLength(this.#relevantHeader) + 1;
		for (const { i } of kept) {
			if (used + sizes[i] > budgetBytes) continue;
			used += sizes[i];
			chosen.push(i);
		}
		if (!chosen.length) return undefined;
		chosen.sort((a, b) => a - b);
		return [this.#relevantHeader, ...chosen.map((i) => lines[i])].join("\n");
	}

	/**
	 * Ranked search: tag filter, then query scoring, best first, ties newest
	 * first. Throws a sentence when neither query nor tag has anything to search for.
	 */
	rank(query: string, tag: string | undefined, limit: number): MemoryEntry[] {
		const words = queryWords(query);
		const wanted = tag !== undefined && tag.trim() ? normalTag(tag) : undefined;
		if (!words.length && !wanted) throw new Error("nothing to search for: give some words, a tag, or both.");
		const scored: Array<{ entry: MemoryEntry; score: number; order: number }> = [];
		for (let order = 0; order < this.entries.length; order++) {
			const entry = this.entries[order];
			if (wanted && !entry.tags.includes(wanted)) continue;
			const s = words.length ? scoreOf(this.#factsAt(order), entry.tags, words) : 1;
			if (s > 0) scored.push({ entry, score: s, order });
		}
		scored.sort((a, b) => b.score - a.score || b.entry.updated - a.entry.updated || b.order - a.order);
		return scored.slice(0, Math.max(0, limit)).map((s) => s.entry);
	}
}

interface StableSection {
	budget: number;
	shown: ReadonlySet<number>;
	text: string | undefined;
}

const NONE_SHOWN: ReadonlySet<number> = new Set<number>();
