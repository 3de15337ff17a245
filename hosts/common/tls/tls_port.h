/*
 * tls_port.h — what each target gives the TLS core (tls_core.c).
 *
 *                lin (hosts/lin/src/tls.c)          ESP32-S3 (hosts/esp32/tls/tls_esp32.c)
 * socket below   the host loop's non-blocking fd    an lwIP socket
 * memory         malloc                             PSRAM (heap_caps, SPIRAM)
 * entropy        getrandom (2.28); PSA's own (4.0)  the hardware RNG (esp_fill_random)
 * CA store       --ca FILE or the system bundle     our CA store, else ESP-IDF's bundle
 * IP literals    inet_pton                          lwip_inet_pton
 */
#ifndef XSCLAW_TLS_PORT_H
#define XSCLAW_TLS_PORT_H

#include <stddef.h>
#include <stdint.h>

/* Memory for mbedtls: zeroed, like calloc; NULL when out of memory. */
void *tlsPortCalloc(size_t size);
void tlsPortFree(void *pointer);

/* Fills output with size random bytes from the target's entropy; 0 or -1.
 * Used by the 2.28 build (4.0 asks PSA, whose entropy is configured per target). */
int tlsPortEntropy(uint8_t *output, size_t size);

/* Trusts the target's CA store in config (an mbedtls_ssl_config *): 0, or
 * -1 with a sentence in error saying what to do. Called for connections that
 * verify and bring no CA of their own. */
int tlsPortTrust(void *config, char *error, size_t errorSize);

/* How a person makes the firmware trust a server: ends a "not trusted" error. */
const char *tlsPortTrustHint(void);

/* An IP literal's bytes into address: returns 4 or 16, or 0 when text is not
 * one (lin: POSIX inet_pton; the board: lwIP's lwip_inet_pton, since ESP-IDF
 * declares the POSIX name only in its lwip/sockets.h wrapper). */
int tlsPortParseIP(const char *text, uint8_t address[16]);

#endif
