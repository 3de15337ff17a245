/*
 * random.h — "host/random": the one source of secret random bytes (pairing
 * codes, WebSocket keys and masks, anything a stranger must not guess).
 *
 * One C file (random.c) for both targets holds the entry point and its
 * argument checks; each target gives randomSource(): getrandom(2) on the lin
 * host (hosts/lin/src/random_lin.c), the hardware RNG's esp_fill_random() on
 * the ESP32-S3 (hosts/esp32/random_esp32.c). The lin host installs xs_random_fill
 * on __xsclaw.Random; the device build reaches it by name
 * (native("xs_random_fill") in hosts/esp32/random.ts). The JavaScript API is
 * typings/shared/random.d.ts. Never Math.random: XS seeds it the same way on
 * every start of the lin host.
 */
#ifndef XSCLAW_RANDOM_H
#define XSCLAW_RANDOM_H

#include <stddef.h>   /* before xs.h, which uses size_t without including it */
#include <stdint.h>
#include "xs.h"

/* The most bytes one fill() call takes (a key or a mask is 4-32; a code 8). */
#define RANDOM_FILL_MAX_BYTES 65536

/* fill(bytes): fills a Uint8Array (or another 1-byte typed array, an
 * ArrayBuffer, a DataView) with random bytes; at most RANDOM_FILL_MAX_BYTES.
 * Throws a TypeError for anything else, a RangeError when it is larger, an
 * Error when the source fails (never a partly filled buffer taken as random). */
void xs_random_fill(xsMachine *the);

/* The target's generator: fills data[0, length) and returns 0, or returns -1. */
int randomSource(uint8_t *data, size_t length);

#endif
