/* Stand-in: ESP-IDF's esp_err.h. */
#ifndef XSCLAW_STANDIN_ESP_ERR_H
#define XSCLAW_STANDIN_ESP_ERR_H
typedef int esp_err_t;
#define ESP_OK 0
#define ESP_FAIL -1
#endif
