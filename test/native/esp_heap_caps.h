/*
 * A stand-in of ESP-IDF's esp_heap_caps.h for host builds of hosts/esp32/
 * (test/e2e/psram-device.test.mjs): the same names, caps bits and signatures,
 * over malloc with two capacity-limited regions (SPIRAM and internal) that a
 * test sizes and inspects. Only what our device C calls is here.
 */
#ifndef ESP_HEAP_CAPS_STANDIN_H
#define ESP_HEAP_CAPS_STANDIN_H

#include <stddef.h>
#include <stdint.h>

#define MALLOC_CAP_8BIT     (1 << 2)
#define MALLOC_CAP_SPIRAM   (1 << 10)
#define MALLOC_CAP_INTERNAL (1 << 11)

void *heap_caps_malloc(size_t size, uint32_t caps);
void *heap_caps_calloc(size_t n, size_t size, uint32_t caps);
void *heap_caps_realloc(void *ptr, size_t size, uint32_t caps);
void heap_caps_free(void *ptr);
size_t heap_caps_get_free_size(uint32_t caps);
size_t heap_caps_get_total_size(uint32_t caps);

/* Stand-in controls: each region's capacity in bytes, and its use now. */
void standin_heap_caps_set(size_t spiram, size_t internal);
size_t standin_heap_caps_used(uint32_t caps);

#endif
