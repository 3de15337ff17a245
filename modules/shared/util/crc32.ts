// util/crc32: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib), the
// check on every session record and header (store) and on memory's records file.
// In C (host/bytes crc32, hosts/common/bytes/bytes.c): a JavaScript loop read each
// byte through XS's generic typed-array getter, ~0.2 µs a byte on lin, for every
// record appended and read back.
import { crc32 as nativeCrc32 } from "host/bytes";

/**
 * Continues a CRC over bytes[start, end): pass the previous result as crc to
 * checksum pieces one after another (crc32(b) of the whole equals chaining the
 * parts). Starts from 0. Returns an unsigned 32-bit value.
 */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, crc = 0): number {
	return nativeCrc32(bytes, start, end, crc);
}
