// util/crc32: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib), the
// check on every session record and header (store) and on memory's records file.
// Table-driven: 1 KiB of table, built on first use, one table lookup per byte.

let table: Uint32Array | undefined;

function makeTable(): Uint32Array {
	const t = new Uint32Array(256);
	for (let n = 0; n < 256; n++) {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
		t[n] = c >>> 0;
	}
	return t;
}

/**
 * Continues a CRC over bytes[start, end): pass the previous result as crc to
 * checksum pieces one after another (crc32(b) of the whole equals chaining the
 * parts). Starts from 0. Returns an unsigned 32-bit value.
 */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, crc = 0): number {
	const t = table ??= makeTable();
	let c = ~crc;
	for (let i = start; i < end; i++) c = t[(c ^ bytes[i]) & 0xFF] ^ (c >>> 8);
	return ~c >>> 0;
}
