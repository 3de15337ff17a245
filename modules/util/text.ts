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
