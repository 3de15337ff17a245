// util/text: short one-line forms of text for logs, stage messages and console
// lines, the same everywhere.

/** text cut to at most max characters, "…" marking a cut. */
export function clip(text: string, max: number): string {
	return text.length <= max ? text : text.slice(0, Math.max(0, max - 1)) + "…";
}

/** text on one line: every run of white space (newlines too) becomes one space. */
export function oneLine(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}
