// net/websocket/sha1: SHA-1 (FIPS 180-4) in plain TypeScript, for the
// WebSocket opening handshake's Sec-WebSocket-Accept (RFC 6455 §4.2.2) only:
// XS has no crypto digest on the lin host, and this runs the same on the board.
// Not for anything that needs collision resistance.

const K = [0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xCA62C1D6];

// Rotation without `<<`: XS shifts int32s in C, where shifting a negative value
// or into the sign bit is undefined (UBSan stops the ASan host), so the bits
// move by exact multiplication instead; `| 0` wraps as ToInt32 does.
function rotl(x: number, n: number): number {
	const u = x >>> 0;
	return ((u % 2 ** (32 - n)) * 2 ** n + (u >>> (32 - n))) | 0;
}

/** The 20-byte SHA-1 digest of bytes. */
export function sha1(bytes: Uint8Array): Uint8Array {
	const length = bytes.length;
	// Message + 0x80 + zero padding + 64-bit big-endian bit length, to a multiple of 64.
	const padded = new Uint8Array(((length + 8) >>> 6 << 6) + 64);
	padded.set(bytes);
	padded[length] = 0x80;
	const view = new DataView(padded.buffer);
	view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
	view.setUint32(padded.length - 4, (length % 0x20000000) * 8);
	let h0 = 0x67452301, h1 = 0xEFCDAB89, h2 = 0x98BADCFE, h3 = 0x10325476, h4 = 0xC3D2E1F0;
	const w = new Int32Array(80);
	for (let block = 0; block < padded.length; block += 64) {
		for (let i = 0; i < 16; i++) w[i] = view.getInt32(block + 4 * i);
		for (let i = 16; i < 80; i++) {
			w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
		}
		let a = h0, b = h1, c = h2, d = h3, e = h4;
		for (let i = 0; i < 80; i++) {
			let f: number;
			if (i < 20) f = (b & c) | (~b & d);
			else if (i < 40) f = b ^ c ^ d;
			else if (i < 60) f = (b & c) | (b & d) | (c & d);
			else f = b ^ c ^ d;
			const t = (rotl(a, 5) + f + e + K[(i / 20) | 0] + w[i]) | 0;
			e = d;
			d = c;
			c = rotl(b, 30);
			b = a;
			a = t;
		}
		h0 = (h0 + a) | 0;
		h1 = (h1 + b) | 0;
		h2 = (h2 + c) | 0;
		h3 = (h3 + d) | 0;
		h4 = (h4 + e) | 0;
	}
	const out = new Uint8Array(20);
	const outView = new DataView(out.buffer);
	[h0, h1, h2, h3, h4].forEach((h, i) => outView.setInt32(4 * i, h));
	return out;
}
