/* Stand-in: ESP-IDF's esp_crt_bundle.h (components/mbedtls). */
#ifndef XSCLAW_STANDIN_ESP_CRT_BUNDLE_H
#define XSCLAW_STANDIN_ESP_CRT_BUNDLE_H
#include "esp_err.h"
esp_err_t esp_crt_bundle_attach(void *conf);
#endif
