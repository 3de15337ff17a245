/* Shim of ESP-IDF's esp_crt_bundle.h: the same declaration, implemented in
 * boardtls.c with IDF's semantics (README.md). */
#ifndef XSCLAW_BOARDTLS_CRT_BUNDLE_H
#define XSCLAW_BOARDTLS_CRT_BUNDLE_H
typedef int esp_err_t;
#define ESP_OK 0
#define ESP_FAIL -1
esp_err_t esp_crt_bundle_attach(void *conf);
#endif
