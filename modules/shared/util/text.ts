// util/text: short one-line forms of text for logs, stage messages and console
// lines, the same everywhere.

/** text cut to at most max characters, "…" marking a cut. */
export function clip(text: string, max: number): string {
	if (text.length <= max) return text;
	let cut = Math.max(0, max - 1);
	// Never between the two halves of a surrogate pair (an emoji cut in half is not text).
	if (cut > 0 && (text.charCodeAt(cut - 1) & 0xfc00) === 0xd800) cut--;
	return text.slice(0, cut) + "…";
}

/** text on one line: every run of white space (newlines too) becomes one space. */
export function oneLine(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

/**
 * text's lines, split at each "\n" with a "\r" before it dropped: what
 * text.split(/\r?\n/) gives, without the regular expression, which XS's split
 * runs at every character (each run finding its place in the UTF-8 from the
 * start: quadratic in a text with non-ASCII characters, most of the main
 * machine's CPU for an answer of a few hundred bytes).
 */
export function lines(text: string): string[] {
	const parts = text.split("\n");
	for (let i = 0; i < parts.length - 1; i++) if (parts[i].endsWith("\r")) parts[i] = parts[i].slice(0, -1);
	return parts;
}

/** The edit distance (Levenshtein) of a and b: for suggesting the nearest known name. */
export function editDistance(a: string, b: string): number {
	let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
	for (let i = 1; i <= a.length; i++) {
		const row = [i];
		for (let j = 1; j <= b.length; j++) {
			row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
		}
		previous = row;
	}
	return previous[b.length];
}

/** The candidate nearest to name (the first of equals); undefined when there are none. */
export function nearest(name: string, candidates: Iterable<string>): string | undefined {
	let best: string | undefined, bestDistance = Infinity;
	for (const candidate of candidates) {
		const d = editDistance(name, candidate);
		if (d < bestDistance) [best, bestDistance] = [candidate, d];
	}
	return best;
}

/**
 * text on lines of at most width characters, broken at spaces (a word longer than
 * width stands on its own line, cut with clip); never an empty list.
 */
export function wrap(text: string, width: number): string[] {
	const out: string[] = [];
	let line = "";
	for (const word of oneLine(text).split(" ")) {
		const piece = clip(word, Math.max(1, width));
		if (line && line.length + 1 + piece.length > width) {
			out.push(line);
			line = piece;
		} else line = line ? `${line} ${piece}` : piece;
	}
	out.push(line);
	return out;
}
