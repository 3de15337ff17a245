// util/errors: the text of a caught value, for log lines and sentences to a
// person. A thrown non-Error (a string, a number) is shown as it is.

export function messageOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
