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
