// net/status: what a failed HTTP response says, read the same way for every
// caller (net/http's exchange, the LLM backends): Retry-After as a delay, and the
// readable part of an error body.
import { HTTP_ERROR_MESSAGE_MAX_BYTES } from "budgets";
import { decodeUtf8, utf8Boundary } from "net/utf8";

const IMF_DATE = /^[A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** Retry-After (delay-seconds or IMF-fixdate) as milliseconds from nowMs (wall clock), or undefined. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
	if (value === undefined) return undefined;
	const text = value.trim();
	if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
	const date = IMF_DATE.exec(text);
	if (!date) return undefined;
	const month = MONTHS.indexOf(date[2].toLowerCase());
	if (month < 0) return undefined;
	const at = Date.UTC(Number(date[3]), month, Number(date[1]), Number(date[4]), Number(date[5]), Number(date[6]));
	return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** The readable part of an error body: error.message, message, error (a string), else its first bytes. */
export function errorText(body: Uint8Array): string {
	if (!body.length) return "";
	const text = decodeUtf8(body);
	if (/^\s*\{/.test(text)) {
		try {
			const json = JSON.parse(text) as { error?: unknown; message?: unknown };
			const error = json.error as { message?: unknown } | string | undefined;
			if (error && typeof error === "object" && typeof error.message === "string" && error.message) return error.message;
			if (typeof json.message === "string" && json.message) return json.message;
			if (typeof error === "string" && error) return error;
		} catch {
			// not JSON after all: quote the body's start below
		}
	}
	return decodeUtf8(body, 0, utf8Boundary(body, HTTP_ERROR_MESSAGE_MAX_BYTES)).trim();
}
