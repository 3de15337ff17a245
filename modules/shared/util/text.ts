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
