/* Shim of ESP-IDF's esp_random.h: the hardware RNG is getrandom here. */
#ifndef XSCLAW_BOARDTLS_RANDOM_H
#define XSCLAW_BOARDTLS_RANDOM_H
#include <stddef.h>
void esp_fill_random(void *buffer, size_t length);
#endif
