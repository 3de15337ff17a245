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

/** The score of entry for the query words (0 = no match). */
export function score(entry: MemoryEntry, words: readonly string[]): number {
	const text = entry.text.toLowerCase();
	const own = new Set(wordsOf(entry.text));
	let total = 0;
	for (const w of words) {
		if (entry.tags.includes(w)) total += 2;
		if (own.has(w) || entry.tags.includes(w)) total += 3;
		else if (text.includes(w)) total += 1;
	}
	return total;
}

/**
 * Ranked search over entries (given oldest first): tag filter, then query scoring,
 * best first, ties newest first. Throws a sentence when neither query nor tag has
 * anything to search for.
 */
export function rank(entries: readonly MemoryEntry[], query: string, tag: string | undefined, limit: number): MemoryEntry[] {
	const words = queryWords(query);
	const wanted = tag !== undefined && tag.trim() ? normalTag(tag) : undefined;
	if (!words.length && !wanted) throw new Error("nothing to search for: give some words, a tag, or both.");
	const scored: Array<{ entry: MemoryEntry; score: number; order: number }> = [];
	entries.forEach((entry, order) => {
		if (wanted && !entry.tags.includes(wanted)) return;
		const s = words.length ? score(entry, words) : 1;
		if (s > 0) scored.push({ entry, score: s, order });
	});
	scored.sort((a, b) => b.score - a.score || b.entry.updated - a.entry.updated || b.order - a.order);
	return scored.slice(0, Math.max(0, limit)).map((s) => s.entry);
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
 * The stable prompt section from entries (oldest first) within budgetBytes: all
 * of them when they fit, otherwise the newest that fit, in stored order, and a
 * closing line saying how many were left out. undefined when empty.
 */
export function contextLines(entries: readonly MemoryEntry[], render: (e: MemoryEntry) => string, budgetBytes: number, header: string): string | undefined {
	if (!entries.length) return undefined;
	const lines = entries.map(render);
	const chosen = stableChoice(lines.map((l) => byteLength(l) + 1), byteLength(header) + 1, budgetBytes);
	if (!chosen.length) return undefined;
	const out = [header, ...chosen.map((i) => lines[i])];
	const left = entries.length - chosen.length;
	if (left) out.push(`(${left} more not shown: use memory_search to find them.)`);
	return out.join("\n");
}

/**
 * The entries relevant to hint that the stable section (contextLines with
 * stableBudgetBytes) leaves out, best first within budgetBytes, shown in stored
 * order. It changes with the question, so it goes after the stable prefix (the
 * volatile end of the request). undefined when none is relevant.
 */
export function relevantLines(entries: readonly MemoryEntry[], render: (e: MemoryEntry) => string, hint: string,
	stableBudgetBytes: number, budgetBytes: number, header: string, stableHeader: string): string | undefined {
	const words = queryWords(hint);
	if (!entries.length || !words.length) return undefined;
	const lines = entries.map(render);
	const sizes = lines.map((l) => byteLength(l) + 1);
	const shown = new Set(stableChoice(sizes, byteLength(stableHeader) + 1, stableBudgetBytes));
	// Relevant: at least half the best score, so a match on a common word ("the") alone does not count.
	const all = entries.map((entry, i) => ({ i, s: shown.has(i) ? 0 : score(entry, words) }));
	const best = Math.max(0, ...all.map((x) => x.s));
	const scored = all.filter((x) => x.s > 0 && x.s * 2 >= best);
	scored.sort((a, b) => b.s - a.s || b.i - a.i);
	const chosen: number[] = [];
	let used = byteLength(header) + 1;
	for (const { i } of scored) {
		if (used + sizes[i] > budgetBytes) continue;
		used += sizes[i];
		chosen.push(i);
	}
	if (!chosen.length) return undefined;
	chosen.sort((a, b) => a - b);
	return [header, ...chosen.map((i) => lines[i])].join("\n");
}
