/* Stand-in: ESP-IDF's esp_heap_caps.h. */
#ifndef XSCLAW_STANDIN_ESP_HEAP_CAPS_H
#define XSCLAW_STANDIN_ESP_HEAP_CAPS_H
#include <stddef.h>
#include <stdint.h>
#define MALLOC_CAP_8BIT (1 << 2)
#define MALLOC_CAP_SPIRAM (1 << 10)
void *heap_caps_calloc(size_t n, size_t size, uint32_t caps);
void heap_caps_free(void *ptr);
#endif
