// host/random: the one source of secret random bytes, on both targets
// (hosts/common/random/random.h): getrandom(2) on the lin host, the hardware
// RNG (esp_fill_random) on the ESP32-S3. modules/shared/util/random builds codes and
// numbers on it; nothing secret comes from Math.random.
declare module "host/random" {
	/**
	 * Fills bytes (at most 65536) with random bytes. Throws a TypeError for
	 * anything but a writable byte buffer, a RangeError when it is larger, an
	 * Error when the generator fails.
	 */
	export function fill(bytes: Uint8Array): void;
}
