/*
 * tls_mbedtls.h — included by the TLS C of both targets before any Mbed TLS
 * header.
 *
 * On the board, Mbed TLS is ESP-IDF's build of it, configured from sdkconfig
 * by mbedtls/esp_config.h: IDF's CMake passes these four defines to every
 * component (its esp32s3 compile line); the Moddable SDK's makefile, which
 * compiles our C, passes none of them. A file that saw the library's default
 * configuration instead would disagree with the library it links against
 * about the fields of mbedtls_ssl_context, mbedtls_ssl_config and the rest.
 * npm run check:device compiles the board's TLS C with both recipes.
 */
#ifndef XSCLAW_TLS_MBEDTLS_H
#define XSCLAW_TLS_MBEDTLS_H

#if defined(ESP_PLATFORM)
#ifndef MBEDTLS_CONFIG_FILE
#define MBEDTLS_CONFIG_FILE "mbedtls/esp_config.h"
#endif
#ifndef TF_PSA_CRYPTO_USER_CONFIG_FILE
#define TF_PSA_CRYPTO_USER_CONFIG_FILE "mbedtls/esp_config.h"
#endif
#ifndef MBEDTLS_MAJOR_VERSION
#define MBEDTLS_MAJOR_VERSION 4
#endif
#ifndef ESP_PSA_ITS_AVAILABLE
#define ESP_PSA_ITS_AVAILABLE 1
#endif
#endif

#endif
