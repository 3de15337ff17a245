/*
 * random_esp32.c (ESP32-S3) — the source behind "host/random"
 * (hosts/common/random/random.c): the hardware RNG. esp_fill_random() draws
 * from the RNG peripheral, which is truly random while the RF subsystem (Wi-Fi)
 * or the bootloader's entropy source runs (ESP-IDF's "Random Number
 * Generation" page); the firmware makes its secrets after Wi-Fi starts, and a
 * pairing code printed before that is still the RNG's output.
 */
#include "esp_random.h"
#include "random.h"

int randomSource(uint8_t *data, size_t length)
{
	esp_fill_random(data, length);
	return 0;
}
