// util/base64: standard base64 (RFC 4648, with padding) without Node's Buffer or
// btoa, which XS lacks. encodeInto writes straight into a caller's buffer, so a
// large image can be encoded into a request body without a JS string copy.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const CODES = new Uint8Array(64).map((_, i) => ALPHABET.charCodeAt(i));
const PAD = 0x3D; // "="

/** Encoded length of n bytes. */
export function base64Length(n: number): number {
	return Math.ceil(n / 3) * 4;
}

// A host buffer (e.g. from PSRAM) is viewable but no ArrayBuffer instance: test for views.
function bytesOf(data: ArrayBufferLike | ArrayBufferView): Uint8Array {
	return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}

/**
 * Writes the base64 of data into out at offset; returns the offset after it.
 * Throws RangeError when out is too small.
 */
export function encodeInto(data: ArrayBufferLike | ArrayBufferView, out: Uint8Array, offset = 0): number {
	const src = bytesOf(data);
	const n = src.length;
	if (offset + base64Length(n) > out.length) throw new RangeError("base64: output buffer too small");
	let o = offset, i = 0;
	for (; i + 2 < n; i += 3) {
		const v = (src[i] << 16) | (src[i + 1] << 8) | src[i + 2];
		out[o++] = CODES[v >> 18];
		out[o++] = CODES[(v >> 12) & 63];
		out[o++] = CODES[(v >> 6) & 63];
		out[o++] = CODES[v & 63];
	}
	if (i < n) {
		const v = (src[i] << 16) | (i + 1 < n ? src[i + 1] << 8 : 0);
		out[o++] = CODES[v >> 18];
		out[o++] = CODES[(v >> 12) & 63];
		out[o++] = i + 1 < n ? CODES[(v >> 6) & 63] : PAD;
		out[o++] = PAD;
	}
	return o;
}

/** The base64 text of data. */
export function encode(data: ArrayBufferLike | ArrayBufferView): string {
	const out = new Uint8Array(base64Length(bytesOf(data).length));
	encodeInto(data, out);
	return String.fromArrayBuffer(out.buffer);
}

const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) VALUES[CODES[i]] = i;

/**
 * The bytes of base64 text (RFC 4648 §4, padding optional; no spaces or line
 * breaks). Throws RangeError naming what is wrong: a character outside the
 * alphabet, a length no base64 has, or more than maxBytes decoded.
 */
export function decode(text: string, maxBytes = Infinity): Uint8Array {
	let end = text.length;
	if (end && text.charCodeAt(end - 1) === PAD) end--;
	if (end && text.charCodeAt(end - 1) === PAD) end--;
	if (end % 4 === 1 || (end !== text.length && text.length % 4 !== 0)) throw new RangeError("base64: the text has a length no base64 has");
	const size = Math.floor((end * 3) / 4);
	if (size > maxBytes) throw new RangeError(`base64: it holds ${size} bytes, more than ${maxBytes}`);
	const out = new Uint8Array(size);
	let o = 0, bits = 0, value = 0;
	for (let i = 0; i < end; i++) {
		const c = text.charCodeAt(i);
		const v = c < 128 ? VALUES[c] : -1;
		if (v < 0) throw new RangeError(`base64: character ${i + 1} is not in the base64 alphabet`);
		value = ((value << 6) | v) & 0xFFFFFF;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (value >> bits) & 0xFF;
		}
	}
	return out;
}
