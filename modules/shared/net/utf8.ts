// net/utf8: UTF-8 sanitising between the wire and XS strings, without
// TextEncoder/TextDecoder (XS 13.3 has neither).
//
// XS keeps strings in a modified UTF-8: U+0000 is C0 80, and a surrogate pair
// built by concatenation may sit as two 3-byte surrogate sequences (ED A0..BF
// xx). ArrayBuffer.fromString() copies those bytes as they are, and
// String.fromArrayBuffer() stops at a 00 byte and throws on a bad lead byte.
// So both directions go through one validator with two output rules:
//   "wire" (XS -> network): C0 80 -> 00, surrogate pair -> 4-byte form,
//           lone surrogate or any invalid sequence -> EF BF BD (U+FFFD)
//   "xs"   (network -> XS): 00 -> C0 80, any invalid sequence (including
//           encoded surrogates and overlongs) -> U+FFFD
// Invalid input is replaced per "maximal subpart" (one U+FFFD per broken
// sequence, as TextDecoder does). Finding what needs repair is one native scan
// (host/bytes utf8Invalid, the same validator in C): clean input, the common
// case, costs one call and allocates nothing; broken input is copied run by
// run, and only the units needing repair go through the JavaScript rules here.

import { utf8Invalid } from "host/bytes";

type Mode = "wire" | "xs";

// Allowed range of the second byte of a multi-byte sequence, by lead byte.
function secondLow(lead: number): number {
	return lead === 0xE0 ? 0xA0 : lead === 0xF0 ? 0x90 : 0x80;
}
function secondHigh(lead: number): number {
	return lead === 0xED ? 0x9F : lead === 0xF4 ? 0x8F : 0xBF; // ED A0..BF would be a surrogate
}
function sequenceLength(lead: number): number {
	if (lead >= 0xC2 && lead <= 0xDF) return 2;
	if (lead >= 0xE0 && lead <= 0xEF) return 3;
	if (lead >= 0xF0 && lead <= 0xF4) return 4;
	return 0;
}
const isContinuation = (b: number) => (b & 0xC0) === 0x80;

/**
 * One step of the validator at bytes[i]. Returns how many input bytes form a
 * valid unit, or a negative count of bytes to replace with one U+FFFD.
 */
function step(bytes: Uint8Array, i: number, end: number): number {
	const lead = bytes[i];
	if (lead < 0x80) return 1;
	const length = sequenceLength(lead);
	if (!length) return -1;
	if (i + 1 >= end) return -1;
	const second = bytes[i + 1];
	if (second < secondLow(lead) || second > secondHigh(lead)) return -1;
	let n = 2;
	while (n < length) {
		if (i + n >= end || !isContinuation(bytes[i + n])) return -n;
		n++;
	}
	return length;
}

/**
 * Sanitises bytes[start, end). Returns undefined when they are already clean
 * for the mode (the caller can use them as they are), or the clean bytes.
 */
export function sanitizeUtf8(bytes: Uint8Array, mode: Mode, start = 0, end = bytes.length): Uint8Array | undefined {
	const bad = utf8Invalid(bytes, start, end, mode);
	return bad < 0 ? undefined : repair(bytes, mode, start, end, bad);
}

/**
 * sanitizeUtf8's copy, from the first byte needing repair on: apart from it, so
 * that the clean case (one native scan) makes no closure environment in XS (the
 * variables `replace` captures cost heap at every call of the function holding them).
 */
function repair(bytes: Uint8Array, mode: Mode, start: number, end: number, bad: number): Uint8Array {
	// Worst case: 00 -> C0 80 (x2), one bad byte -> EF BF BD (x3).
	const out = new Uint8Array((end - start) * 3);
	let o = 0;
	const replace = () => { out[o++] = 0xEF; out[o++] = 0xBF; out[o++] = 0xBD; };
	let i = start;
	while (i < end) {
		// The clean run up to the next unit needing repair, copied as it is.
		if (bad < i) bad = utf8Invalid(bytes, i, end, mode);
		const clean = bad < 0 ? end : bad;
		if (i < clean) {
			out.set(bytes.subarray(i, clean), o);
			o += clean - i;
			i = clean;
			if (i === end) break;
		}
		const b = bytes[i];
		if (b === 0) {
			if (mode === "xs") { out[o++] = 0xC0; out[o++] = 0x80; }
			else out[o++] = 0;
			i++;
			continue;
		}
		if (mode === "wire" && b === 0xC0 && i + 1 < end && bytes[i + 1] === 0x80) { // XS's U+0000
			out[o++] = 0;
			i += 2;
			continue;
		}
		if (mode === "wire" && b === 0xED && i + 2 < end && bytes[i + 1] >= 0xA0 && isContinuation(bytes[i + 2])) {
			// An encoded surrogate: join a high one with a following low one.
			if (bytes[i + 1] <= 0xAF && i + 5 < end && bytes[i + 3] === 0xED
				&& bytes[i + 4] >= 0xB0 && bytes[i + 4] <= 0xBF && isContinuation(bytes[i + 5])) {
				const high = ((bytes[i + 1] & 0x0F) << 6) | (bytes[i + 2] & 0x3F);
				const low = ((bytes[i + 4] & 0x0F) << 6) | (bytes[i + 5] & 0x3F);
				const cp = 0x10000 + (high << 10) + low;
				out[o++] = 0xF0 | (cp >> 18);
				out[o++] = 0x80 | ((cp >> 12) & 0x3F);
				out[o++] = 0x80 | ((cp >> 6) & 0x3F);
				out[o++] = 0x80 | (cp & 0x3F);
				i += 6;
			} else {
				replace();
				i += 3;
			}
			continue;
		}
		const n = b < 0x80 ? 1 : step(bytes, i, end);
		if (n > 0) {
			for (let k = 0; k < n; k++) out[o++] = bytes[i + k];
			i += n;
		} else {
			replace();
			i -= n;
		}
	}
	return out.subarray(0, o);
}

// XS's String.fromArrayBuffer takes an optional byte offset and length; the
// typings know only the buffer.
const stringFromBytes = String.fromArrayBuffer as (buffer: ArrayBufferLike, offset?: number, length?: number) => string;

/** A string as UTF-8 bytes for the network: lone surrogates become U+FFFD. */
export function encodeUtf8(text: string): Uint8Array {
	const raw = new Uint8Array(ArrayBuffer.fromString(text));
	return sanitizeUtf8(raw, "wire") ?? raw;
}

/** Bytes from the network as a string; invalid sequences become U+FFFD. */
export function decodeUtf8(bytes: Uint8Array, start = 0, end = bytes.length): string {
	if (end <= start) return "";
	const clean = sanitizeUtf8(bytes, "xs", start, end);
	if (clean) return stringFromBytes(clean.buffer, clean.byteOffset, clean.byteLength);
	return stringFromBytes(bytes.buffer, bytes.byteOffset + start, end - start);
}

/**
 * text with each lone UTF-16 surrogate (half of a pair, alone) replaced by
 * U+FFFD and everything else kept: what a request, a session and the JSON for a
 * provider may hold (a provider may refuse "\\udXXX" alone, and every later
 * request of the session with it). One native scan, and the text itself back,
 * when there is none.
 */
export function wellFormed(text: string): string {
	const raw = new Uint8Array(ArrayBuffer.fromString(text));
	const clean = sanitizeUtf8(raw, "wire");
	return clean ? decodeUtf8(clean) : text;
}

/** The length of the longest prefix of bytes[0, limit) that ends on a character boundary. */
export function utf8Boundary(bytes: Uint8Array, limit: number): number {
	if (limit >= bytes.length) return bytes.length;
	let i = limit;
	// Back off over continuation bytes to the lead of the character cut at the limit.
	while (i > 0 && limit - i < 3 && isContinuation(bytes[i])) i--;
	return i;
}
