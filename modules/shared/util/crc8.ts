// util/crc8: the CRC-8 Sensirion's sensors (SHT3x and kin) put after each
// 16-bit word: polynomial 0x31, initial value 0xFF, no reflection, no final
// XOR; crc8([0xBE, 0xEF]) is 0x92 (their datasheets' example).
export function crc8(bytes: ArrayLike<number>): number {
	let crc = 0xFF;
	for (let i = 0; i < bytes.length; i++) {
		crc ^= bytes[i];
		for (let bit = 0; bit < 8; bit++) crc = crc & 0x80 ? ((crc << 1) ^ 0x31) & 0xFF : (crc << 1) & 0xFF;
	}
	return crc;
}
