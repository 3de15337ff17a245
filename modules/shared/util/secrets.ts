// util/secrets: the one way a secret is shown to a person or a log. Which
// values are secret is declared where they are defined: a setting by its
// `secret` flag in config/settings; a tool call's arguments, which the model
// writes freely, by the secret-looking names of their fields (SECRET_FIELD).
//
// Known limit: a secret passed in a field with an innocent name, or inside a
// free-text argument, is not recognised in a tool call.

const MASK_SHOWN_CHARS = 4;          // the tail of a long secret that helps tell keys apart
const MASK_MIN_CHARS_FOR_TAIL = 12;  // shorter secrets are fully masked

// A JSON field named like a credential: api_key, password, bot_token, app_secret, auth ...
// (whole words between separators, so max_tokens and keyword are not secrets).
const SECRET_FIELD = /(^|[_\-.])(api_?key|key|token|secret|passw(or)?d|pass|credentials?|auth(orization)?)($|[_\-.])/i;

/** A secret as it may be shown: "****abcd", or "********" when short. */
export function maskSecret(value: string): string {
	return value.length >= MASK_MIN_CHARS_FOR_TAIL ? "****" + value.slice(-MASK_SHOWN_CHARS) : "********";
}

// How many times a secret is JSON-escaped on the firmware's output paths: once
// in every JSON file and body (a session record, memory's records.dat, an HTTP
// body, a log line quoting JSON), twice in a tool call's arguments (JSON text
// inside a JSON string: the session file, a port message), three times where such
// a record is quoted again (a log line of one). No other encoding carries text out
// (URLs are built from fixed parts; base64 carries only image bytes).
const SECRET_FORM_ESCAPES = 3;
/** The most forms a secret has (secretForms). */
export const SECRET_FORMS_MAX = SECRET_FORM_ESCAPES + 1;

/** One form a secret takes on the way out, and its mask in the same form. */
export interface SecretForm {
	text: string;
	mask: string;
}

function jsonEscaped(text: string): string {
	return JSON.stringify(text).slice(1, -1);
}

/**
 * Every form of a secret to mask on the way out: as it is, and JSON-escaped up to
 * SECRET_FORM_ESCAPES times (a secret with a quote, a backslash or a control
 * character no longer matches itself once escaped: `Pa"ss` is `Pa\"ss` in a JSON
 * file). Each form's mask is maskSecret of the value escaped the same way, so
 * masked JSON stays JSON. A form equal to an earlier one is left out (most secrets
 * have one form); the longest come first, so one inside another is masked whole.
 */
export function secretForms(value: string): SecretForm[] {
	const forms: SecretForm[] = [];
	let text = value, mask = maskSecret(value);
	for (let i = 0; i <= SECRET_FORM_ESCAPES; i++) {
		if (!forms.some((form) => form.text === text)) forms.push({ text, mask });
		text = jsonEscaped(text);
		mask = jsonEscaped(mask);
	}
	return forms.sort((a, b) => b.text.length - a.text.length);
}

/**
 * JSON text as it may be shown: string and number values of secret-looking
 * fields masked with maskSecret; text that is not JSON is shown only as its
 * length (nothing tells which part of it is secret). Not cut short.
 */
export function maskedJson(text: string): string {
	try {
		return JSON.stringify(JSON.parse(text), (key, value) =>
			key && SECRET_FIELD.test(key) && (typeof value === "string" || typeof value === "number") ? maskSecret(String(value)) : value);
	} catch {
		return `(${text.length} characters of invalid JSON)`;
	}
}

// ---- fingerprints: finding a secret a machine must not hold ----
//
// The agent machine never gets the channels' secrets (bot token, app secret,
// Wi-Fi password), yet a model could repeat one it learnt elsewhere into a
// session file. It gets their fingerprints instead: the length and two
// polynomial hashes (moduli near 2^31 and 2^30, so ~61 bits together), enough
// to find the secret in a text, not to recover it. A rolling hash makes the
// search one pass per length. A false match (about 1 in 2^61 per position)
// only masks innocent text. Every step stays an exact integer in a double.

/** A secret (one of its forms: secretForms) as a machine that must not hold it knows it. */
export interface SecretPrint {
	length: number;
	h1: number;
	h2: number;
	/** What replaces it: the form's mask (secretForms), so masked JSON stays JSON; default maskSecret of the text found. */
	mask?: string;
}

const PRINT_MASK_MAX_CHARS = 256;   // a form's mask is "****" and 4 characters, escaped at most three times

const PRINT_MOD_1 = 2_147_483_647;  // 2^31 - 1, prime
const PRINT_MOD_2 = 1_000_000_007;  // prime
const PRINT_BASE_1 = 65_599;        // above every UTF-16 code unit + 1
const PRINT_BASE_2 = 92_821;

function power(base: number, exponent: number, mod: number): number {
	let result = 1;
	for (let i = 0; i < exponent; i++) result = (result * base) % mod;
	return result;
}

/** The fingerprint of a secret value. */
export function secretPrint(value: string): SecretPrint {
	let h1 = 0, h2 = 0;
	for (let i = 0; i < value.length; i++) {
		const c = value.charCodeAt(i) + 1;
		h1 = (h1 * PRINT_BASE_1 + c) % PRINT_MOD_1;
		h2 = (h2 * PRINT_BASE_2 + c) % PRINT_MOD_2;
	}
	return { length: value.length, h1, h2 };
}

/** True for a value shaped like a SecretPrint (from a setting, so checked). */
export function isSecretPrint(value: unknown): value is SecretPrint {
	const p = value as SecretPrint;
	return typeof p === "object" && p !== null && [p.length, p.h1, p.h2].every((n) => Number.isInteger(n) && n >= 0) && p.length > 0 &&
		(p.mask === undefined || (typeof p.mask === "string" && p.mask.length <= PRINT_MASK_MAX_CHARS));
}

/** The fingerprints of every form of a secret value (secretForms), each with its mask. */
export function secretPrints(value: string): SecretPrint[] {
	return secretForms(value).map((form) => ({ ...secretPrint(form.text), mask: form.mask }));
}

/** The mask for text found by findPrinted: the mask of the print it matches, else maskSecret (merged matches). */
export function printedMask(text: string, prints: readonly SecretPrint[]): string {
	const found = secretPrint(text);
	for (const p of prints) if (p.mask !== undefined && p.length === found.length && p.h1 === found.h1 && p.h2 === found.h2) return p.mask;
	return maskSecret(text);
}

/**
 * The [start, end) ranges of text whose fingerprint is one of prints, in order,
 * not overlapping. The text is read once as UTF-8 bytes, decoded to its
 * characters as it goes (a print is over charCodeAt's values): charCodeAt(i) costs XS a walk
 * from the start of a string that is not ASCII, which made this quadratic (a
 * 40 Ki-character reply in Chinese took 44 s with three secrets' prints).
 */
export function findPrinted(text: string, prints: readonly SecretPrint[]): Array<[number, number]> {
	const found: Array<[number, number]> = [];
	let bytes: Uint8Array | undefined = undefined;
	for (const length of new Set(prints.map((p) => p.length))) {
		if (length > text.length) continue;
		bytes ??= new Uint8Array(ArrayBuffer.fromString(text));
		const wanted = prints.filter((p) => p.length === length);
		const top1 = power(PRINT_BASE_1, length - 1, PRINT_MOD_1);
		const top2 = power(PRINT_BASE_2, length - 1, PRINT_MOD_2);
		// The last `length` characters, for the one that leaves the window.
		const ring = new Uint32Array(length);
		let h1 = 0, h2 = 0, i = 0;
		for (let at = 0, end = bytes.length; at < end; i++) {
			// A character as XS's charCodeAt gives it: its code point (XS counts a string's length in them).
			const b = bytes[at];
			let c: number;
			if (b < 0x80) {
				c = b;
				at++;
			} else if (b < 0xe0) {
				c = ((b & 0x1f) << 6) | (bytes[at + 1] & 0x3f);
				at += 2;
			} else if (b < 0xf0) {
				c = ((b & 0x0f) << 12) | ((bytes[at + 1] & 0x3f) << 6) | (bytes[at + 2] & 0x3f);
				at += 3;
			} else {
				c = ((b & 0x07) << 18) | ((bytes[at + 1] & 0x3f) << 12) | ((bytes[at + 2] & 0x3f) << 6) | (bytes[at + 3] & 0x3f);
				at += 4;
			}
			const slot = i % length;
			if (i >= length) {
				const out = ring[slot] + 1;
				h1 = (h1 + PRINT_MOD_1 - ((out * top1) % PRINT_MOD_1)) % PRINT_MOD_1;
				h2 = (h2 + PRINT_MOD_2 - ((out * top2) % PRINT_MOD_2)) % PRINT_MOD_2;
			}
			ring[slot] = c;
			h1 = (h1 * PRINT_BASE_1 + c + 1) % PRINT_MOD_1;
			h2 = (h2 * PRINT_BASE_2 + c + 1) % PRINT_MOD_2;
			if (i + 1 >= length) {
				for (let w = 0; w < wanted.length; w++) {
					if (wanted[w].h1 === h1 && wanted[w].h2 === h2) {
						found.push([i + 1 - length, i + 1]);
						break;
					}
				}
			}
		}
	}
	found.sort((a, b) => a[0] - b[0]);
	const merged: Array<[number, number]> = [];
	for (const range of found) {
		const last = merged.at(-1);
		if (last && range[0] < last[1]) last[1] = Math.max(last[1], range[1]);
		else merged.push([range[0], range[1]]);
	}
	return merged;
}
