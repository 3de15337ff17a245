/*
 * TF-PSA-Crypto options for the lin host's Mbed TLS 4.0 build, appended to the
 * default crypto_config.h (TF_PSA_CRYPTO_USER_CONFIG_FILE), as ESP-IDF v6.0
 * sets them for the board:
 *  - MBEDTLS_PLATFORM_MEMORY: mbedtls_platform_set_calloc_free() exists, so
 *    the TLS binding routes every allocation through its own allocator
 *    (counted on lin, PSRAM on the board);
 *  - MBEDTLS_THREADING_C: PSA's random generator and key store are shared by
 *    the XS machines of several threads (Workers).
 */
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_THREADING_C
#define MBEDTLS_THREADING_PTHREAD
