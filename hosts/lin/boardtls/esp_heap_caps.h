/* Shim of ESP-IDF's esp_heap_caps.h: the board's PSRAM is calloc here. */
#ifndef XSCLAW_BOARDTLS_HEAP_CAPS_H
#define XSCLAW_BOARDTLS_HEAP_CAPS_H
#include <stdlib.h>
#define MALLOC_CAP_8BIT (1 << 2)
#define MALLOC_CAP_SPIRAM (1 << 10)
static inline void *heap_caps_calloc(size_t n, size_t size, unsigned caps) { (void)caps; return calloc(n, size); }
static inline void heap_caps_free(void *pointer) { free(pointer); }
#endif
