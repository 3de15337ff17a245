/*
 * tls_core.h — the mbedtls half of `embedded:io/socket/tcp/tls`, one source for
 * the lin host and the ESP32-S3, built against Mbed TLS 2.28 (Debian) and 4.0
 * (ESP-IDF v6.0; on lin from ../shared/mbedtls).
 *
 * The core owns everything TLS: the configuration (TLS 1.2 and, where the
 * library has it, 1.3; verification on unless asked off; SNI), the handshake,
 * records in and out, certificate checks (including a certificate's IP
 * addresses when the name is an IP literal), the sentences of its errors,
 * session resumption (a small cache of sessions per server), and the counting
 * of what mbedtls allocates. It knows nothing of XS or of sockets.
 *
 * A target's glue (hosts/lin/src/tls.c; hosts/esp32/tls/tls_esp32.c) owns the
 * XS class, the socket below (it moves bytes through TLSCoreIO), and a
 * deadline for the handshake. The few things that differ per target sit
 * behind the tlsPort* functions it provides (tls_port.h).
 *
 * Thread use: each TLSCore belongs to one thread at a time; the shared parts
 * (library start, the session cache, the counters) are safe for the XS
 * machines of several threads.
 */
#ifndef XSCLAW_TLS_CORE_H
#define XSCLAW_TLS_CORE_H

#include <stddef.h>
#include <stdint.h>

/* Results besides a byte count (> 0) or 0 (the peer closed). */
#define TLS_FAILED (-1)       /* tlsCoreError() says why */
#define TLS_WANT_READ (-2)    /* call again when the socket is readable */
#define TLS_WANT_WRITE (-3)   /* call again when the socket is writable */
/* tlsCoreNew: an option was wrong (the glue throws a TypeError). */
#define TLS_BAD_OPTION (-4)

/* A DNS name (253 characters) and its terminator. */
#define TLS_NAME_CHARS 254
/* One error sentence for onError, with the server's address in it. */
#define TLS_MESSAGE_CHARS 320

/* The socket below, as the core sees it. send/recv are like the BSD calls on
 * a non-blocking socket: bytes (> 0), 0 for the end of the stream (recv),
 * TLS_WANT_READ / TLS_WANT_WRITE, or -errno. */
typedef struct {
	long (*send)(void *io, const uint8_t *buffer, size_t size);
	long (*recv)(void *io, uint8_t *buffer, size_t size);
	void *io;
} TLSCoreIO;

typedef struct {
	const char *name;          /* SNI and the name verified: a DNS name or an IP literal; "" for none */
	const char *peer;          /* the server for messages, e.g. "127.0.0.1 port 443" */
	int verify;                /* 0 only when asked explicitly */
	const uint8_t *caDer;      /* one CA trusted instead of the target's store, or NULL */
	size_t caDerLength;
} TLSCoreOptions;

typedef struct TLSCore TLSCore;

/* Creates a client connection over io. Returns 0, TLS_BAD_OPTION (message in
 * error: a bad caDer) or TLS_FAILED (message in error: the library or the
 * target's CA store could not be set up). */
int tlsCoreNew(TLSCore **core, const TLSCoreOptions *options, const TLSCoreIO *io, char *error, size_t errorSize);
void tlsCoreFree(TLSCore *core);

/* Drives the handshake: 0 when done, TLS_WANT_*, TLS_FAILED. */
int tlsCoreHandshake(TLSCore *core);
/* Like recv()/send() over the TLS stream. After TLS_WANT_* on send, call
 * again starting with the same bytes. */
long tlsCoreRead(TLSCore *core, uint8_t *buffer, size_t size);
long tlsCoreWrite(TLSCore *core, const uint8_t *buffer, size_t size);
/* Whether decrypted or received bytes wait inside mbedtls (poll cannot see them). */
int tlsCoreBuffered(TLSCore *core);
/* Best-effort close_notify; never blocks. */
void tlsCoreGoodbye(TLSCore *core);
/* Fails the connection from outside (the glue's handshake deadline). */
void tlsCoreFail(TLSCore *core, const char *sentence);

const char *tlsCoreError(const TLSCore *core);
int tlsCoreHandshakeDone(const TLSCore *core);
/* Whether the handshake resumed a cached session (no certificate was sent). */
int tlsCoreResumed(const TLSCore *core);
/* "TLSv1.2", "TLSv1.3", or "" before the handshake. */
const char *tlsCoreVersion(const TLSCore *core);
/* "2.28.3", "4.0.0": the library this was built with. */
const char *tlsCoreLibrary(void);

/* What mbedtls holds right now, and the most it held since the last reset,
 * in bytes, counted through tlsPortCalloc/tlsPortFree; allocations too. */
typedef struct {
	long long bytes, peakBytes, allocations;
} TLSCoreMemory;
void tlsCoreMemory(TLSCoreMemory *memory);
void tlsCoreResetPeak(void);

/* Forgets every cached session (tests, and a change of the trust store). */
void tlsCoreForgetSessions(void);

/* For the 2.28 build on lin, whose mbedtls has no set_calloc_free: the
 * Makefile renames mbedtls's calloc and free to these. */
void *tlsCoreCalloc(size_t count, size_t size);
void tlsCoreRelease(void *pointer);

#endif
