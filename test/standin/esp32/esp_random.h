/* Stand-in: ESP-IDF's esp_random.h. */
#ifndef XSCLAW_STANDIN_ESP_RANDOM_H
#define XSCLAW_STANDIN_ESP_RANDOM_H
#include <stddef.h>
void esp_fill_random(void *buf, size_t len);
#endif
