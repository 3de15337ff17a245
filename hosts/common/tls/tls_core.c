/*
 * tls_core.c — the mbedtls half of `embedded:io/socket/tcp/tls` for both
 * targets; tls_core.h states the contract, tls_port.h what a target provides.
 *
 * Mbed TLS 2.28 and 4.0 differ here in four places, each marked TLS_V4:
 * the random generator (2.28: a CTR-DRBG we seed; 4.0: PSA, started once),
 * the allocator hook (4.0: mbedtls_platform_set_calloc_free; Debian's 2.28
 * has none, so the lin Makefile renames mbedtls's calloc/free to ours), the
 * protocol range (2.28 as Debian builds it: TLS 1.2 only), and TLS 1.3
 * tickets, which 4.0 signals from mbedtls_ssl_read after the handshake.
 *
 * Verification: a DNS name goes to mbedtls (SNI and the certificate's names);
 * an IP literal is sent as no SNI (RFC 6066) and checked here against the
 * certificate's IP addresses (2.28 does not check them).
 *
 * Resumption: a verified connection's session (TLS 1.2 after the handshake,
 * TLS 1.3 from the server's ticket) is kept per server, name and trust, and
 * offered to the next connection there; a handshake that resumed received no
 * certificate, which is how tlsCoreResumed() knows.
 */
#include "tls_mbedtls.h"
#include "tls_core.h"
#include "tls_port.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ssl.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/platform.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

#if MBEDTLS_VERSION_MAJOR >= 4
#define TLS_V4 1
#include <psa/crypto.h>
#else
#define TLS_V4 0
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#endif

#if TLS_V4
/* The last record mbedtls received: after a fatal alert, [0] is its level
 * and [1] its description. There is no accessor; the field is private in 4.0. */
#define TLS_IN_MSG(ssl) ((ssl)->MBEDTLS_PRIVATE(in_msg))
/* The verify callback a configuration holds (no accessor either): a port's
 * trust may install one (ESP-IDF's certificate bundle checks the chain in its
 * own), and ours chains to it. */
#define TLS_CONF_VERIFY(conf) ((conf)->MBEDTLS_PRIVATE(f_vrfy))
#define TLS_CONF_VERIFY_CONTEXT(conf) ((conf)->MBEDTLS_PRIVATE(p_vrfy))
#else
#define TLS_IN_MSG(ssl) ((ssl)->in_msg)
#define TLS_CONF_VERIFY(conf) ((conf)->f_vrfy)
#define TLS_CONF_VERIFY_CONTEXT(conf) ((conf)->p_vrfy)
#endif

/* Sessions kept for resumption: one per server the firmware talks to (the
 * LLM, the chat channels), with room to spare. */
#define TLS_SESSION_CACHE_ENTRIES 4
/* Tickets taken in one read or write before it returns (TLS 1.3 servers send 1-2). */
#define TLS_TICKETS_PER_READ 4
/* Room for one mbedtls error or verification sentence. */
#define TLS_DETAIL_CHARS 200
/* The server as messages name it, e.g. "[2001:db8::1] port 443". */
#define TLS_PEER_CHARS 96
/* The cache key: name, peer, trust. */
#define TLS_KEY_CHARS (TLS_NAME_CHARS + TLS_PEER_CHARS + 16)

struct TLSCore {
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config config;
	mbedtls_x509_crt ownCA;
	TLSCoreIO io;
	int ioError;              /* errno of the last failed send or receive */
	size_t pendingSend;       /* bytes mbedtls took into a record not yet sent */
	int done, failed, offered, certificates, resumed, verify;
	int ipLength;             /* 4 or 16 when the name is an IP literal */
	/* The port's verify callback, run before ours (tlsConfigure). */
	int (*nextVerify)(void *, mbedtls_x509_crt *, int, uint32_t *);
	void *nextVerifyContext;
	uint8_t ip[16];
	char name[TLS_NAME_CHARS];
	char key[TLS_KEY_CHARS];
	char peer[TLS_PEER_CHARS];
	char message[TLS_MESSAGE_CHARS];
};

/* ---- memory: every mbedtls allocation, counted ----------------------------- */

/* A header before each block keeps its size; 16 keeps the block aligned. */
#define TLS_HEADER_BYTES 16

static long long gBytes, gPeakBytes, gAllocations;

void *tlsCoreCalloc(size_t count, size_t size)
{
	if (size && count > (((size_t)-1) - TLS_HEADER_BYTES) / size)
		return NULL;
	size_t bytes = count * size;
	uint8_t *block = tlsPortCalloc(bytes + TLS_HEADER_BYTES);
	if (!block)
		return NULL;
	memcpy(block, &bytes, sizeof(bytes));
	long long now = __atomic_add_fetch(&gBytes, (long long)bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&gAllocations, 1, __ATOMIC_RELAXED);
	long long peak = __atomic_load_n(&gPeakBytes, __ATOMIC_RELAXED);
	while (now > peak && !__atomic_compare_exchange_n(&gPeakBytes, &peak, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return block + TLS_HEADER_BYTES;
}

void tlsCoreRelease(void *pointer)
{
	if (!pointer)
		return;
	uint8_t *block = (uint8_t *)pointer - TLS_HEADER_BYTES;
	size_t bytes;
	memcpy(&bytes, block, sizeof(bytes));
	__atomic_sub_fetch(&gBytes, (long long)bytes, __ATOMIC_RELAXED);
	tlsPortFree(block);
}

void tlsCoreMemory(TLSCoreMemory *memory)
{
	memory->bytes = __atomic_load_n(&gBytes, __ATOMIC_RELAXED);
	memory->peakBytes = __atomic_load_n(&gPeakBytes, __ATOMIC_RELAXED);
	memory->allocations = __atomic_load_n(&gAllocations, __ATOMIC_RELAXED);
}

void tlsCoreResetPeak(void)
{
	__atomic_store_n(&gPeakBytes, __atomic_load_n(&gBytes, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* ---- the library, started once per process ------------------------------- */

static pthread_once_t gStartOnce = PTHREAD_ONCE_INIT;
static int gStartError;   /* an mbedtls or PSA code, 0 when started */

#if !TLS_V4
static mbedtls_entropy_context gEntropy;
static mbedtls_ctr_drbg_context gDrbg;

static int tlsEntropySource(void *data, unsigned char *output, size_t size, size_t *length)
{
	(void)data;
	if (tlsPortEntropy(output, size))
		return MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
	*length = size;
	return 0;
}
#endif

#if !TLS_V4
/* The generator is shared by the machines of every thread: one at a time. */
static pthread_mutex_t gDrbgLock = PTHREAD_MUTEX_INITIALIZER;

static int tlsRandom(void *context, unsigned char *output, size_t length)
{
	pthread_mutex_lock(&gDrbgLock);
	int result = mbedtls_ctr_drbg_random(context, output, length);
	pthread_mutex_unlock(&gDrbgLock);
	return result;
}
#endif

static void tlsForgetAll(void);

static void tlsStop(void)
{
	tlsForgetAll();
#if TLS_V4
	mbedtls_psa_crypto_free();
#else
	mbedtls_ctr_drbg_free(&gDrbg);
	mbedtls_entropy_free(&gEntropy);
#endif
}

static void tlsStart(void)
{
#if defined(MBEDTLS_PLATFORM_MEMORY) && !defined(MBEDTLS_PLATFORM_CALLOC_MACRO) && !defined(ESP_PLATFORM)
	/* Before anything allocates: every block must come from tlsCoreCalloc.
	 * Not on the board: there ESP-IDF's own components (Wi-Fi's supplicant,
	 * esp-tls) use the same Mbed TLS from boot, so an allocator installed at
	 * the first connection would free their earlier blocks as ours; the board
	 * says where Mbed TLS allocates in sdkconfig instead
	 * (CONFIG_MBEDTLS_EXTERNAL_MEM_ALLOC: PSRAM, checked by check:device). */
	mbedtls_platform_set_calloc_free(tlsCoreCalloc, tlsCoreRelease);
#endif
#if TLS_V4
	psa_status_t status = psa_crypto_init();
	gStartError = status == PSA_SUCCESS ? 0 : (int)status;
#else
	mbedtls_entropy_init(&gEntropy);
	mbedtls_ctr_drbg_init(&gDrbg);
	gStartError = mbedtls_entropy_add_source(&gEntropy, tlsEntropySource, NULL, 32, MBEDTLS_ENTROPY_SOURCE_STRONG);
	static const unsigned char personal[] = "xsclaw tls";
	if (!gStartError)
		gStartError = mbedtls_ctr_drbg_seed(&gDrbg, mbedtls_entropy_func, &gEntropy, personal, sizeof(personal) - 1);
#endif
	atexit(tlsStop);
}

const char *tlsCoreLibrary(void)
{
	return MBEDTLS_VERSION_STRING;
}

/* ---- sessions kept for resumption ------------------------------------------ */

typedef struct {
	int used;
	unsigned long long stamp;   /* last stored or taken: the oldest goes first */
	char key[TLS_KEY_CHARS];
	mbedtls_ssl_session session;
} TLSCachedSession;

static pthread_mutex_t gCacheLock = PTHREAD_MUTEX_INITIALIZER;
static TLSCachedSession gCache[TLS_SESSION_CACHE_ENTRIES];
static unsigned long long gCacheClock;

static void tlsForgetAll(void)
{
	pthread_mutex_lock(&gCacheLock);
	for (int i = 0; i < TLS_SESSION_CACHE_ENTRIES; i++) {
		if (gCache[i].used)
			mbedtls_ssl_session_free(&gCache[i].session);
		gCache[i].used = 0;
	}
	pthread_mutex_unlock(&gCacheLock);
}

void tlsCoreForgetSessions(void)
{
	tlsForgetAll();
}

/* Offers the server's cached session, if any. */
static void tlsCacheOffer(TLSCore *c)
{
	pthread_mutex_lock(&gCacheLock);
	for (int i = 0; i < TLS_SESSION_CACHE_ENTRIES; i++) {
		if (gCache[i].used && !strcmp(gCache[i].key, c->key)) {
			if (!mbedtls_ssl_set_session(&c->ssl, &gCache[i].session)) {
				c->offered = 1;
				gCache[i].stamp = ++gCacheClock;
			}
			break;
		}
	}
	pthread_mutex_unlock(&gCacheLock);
}

/* Keeps the connection's current session for the next connection there. */
static void tlsCacheStore(TLSCore *c)
{
	if (!c->verify)
		return;
	mbedtls_ssl_session session;
	mbedtls_ssl_session_init(&session);
	if (mbedtls_ssl_get_session(&c->ssl, &session)) {
		mbedtls_ssl_session_free(&session);
		return;
	}
	pthread_mutex_lock(&gCacheLock);
	TLSCachedSession *slot = NULL;
	for (int i = 0; i < TLS_SESSION_CACHE_ENTRIES && !slot; i++)
		if (gCache[i].used && !strcmp(gCache[i].key, c->key))
			slot = &gCache[i];
	for (int i = 0; i < TLS_SESSION_CACHE_ENTRIES && !slot; i++)
		if (!gCache[i].used)
			slot = &gCache[i];
	if (!slot) {
		slot = &gCache[0];
		for (int i = 1; i < TLS_SESSION_CACHE_ENTRIES; i++)
			if (gCache[i].stamp < slot->stamp)
				slot = &gCache[i];
	}
	if (slot->used)
		mbedtls_ssl_session_free(&slot->session);
	slot->session = session;   /* moved: the cache frees it */
	slot->used = 1;
	slot->stamp = ++gCacheClock;
	snprintf(slot->key, sizeof(slot->key), "%s", c->key);
	pthread_mutex_unlock(&gCacheLock);
}

/* ---- the bio: mbedtls over the target's socket ----------------------------- */

static int tlsBioSend(void *context, const unsigned char *buffer, size_t size)
{
	TLSCore *c = context;
	long n = c->io.send(c->io.io, buffer, size);
	if (n >= 0)
		return (int)n;
	if (n == TLS_WANT_WRITE || n == TLS_WANT_READ)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	c->ioError = (int)-n;
	return (c->ioError == ECONNRESET || c->ioError == EPIPE) ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int tlsBioReceive(void *context, unsigned char *buffer, size_t size)
{
	TLSCore *c = context;
	long n = c->io.recv(c->io.io, buffer, size);
	if (n >= 0)
		return (int)n;
	if (n == TLS_WANT_READ || n == TLS_WANT_WRITE)
		return MBEDTLS_ERR_SSL_WANT_READ;
	c->ioError = (int)-n;
	return c->ioError == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
}

/* ---- certificates ----------------------------------------------------------- */

/* Runs for each certificate of the server's chain (depth 0 is the server's
 * own): first the port's own callback when its trust installed one (ESP-IDF's
 * bundle clears "not trusted" for a chain it vouches for), then counts them
 * (a resumed handshake has none) and checks an IP name against the server
 * certificate's IP addresses. */
static int tlsVerifyCertificate(void *context, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	TLSCore *c = context;
	if (c->nextVerify) {
		int result = c->nextVerify(c->nextVerifyContext, crt, depth, flags);
		if (result)
			return result;
	}
	c->certificates++;
	if (depth == 0 && c->ipLength) {
		int found = 0;
		for (const mbedtls_x509_sequence *san = &crt->subject_alt_names; san && !found; san = san->next) {
			/* iPAddress [7], primitive: the address bytes in network order. */
			if (san->buf.tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7) && san->buf.len == (size_t)c->ipLength
				&& san->buf.p && !memcmp(san->buf.p, c->ip, (size_t)c->ipLength))
				found = 1;
		}
		if (!found)
			*flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
	}
	return 0;
}

static int tlsFail(TLSCore *c, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int tlsFail(TLSCore *c, const char *format, ...)
{
	if (!c->failed) {
		va_list args;
		va_start(args, format);
		vsnprintf(c->message, sizeof(c->message), format, args);
		va_end(args);
		c->failed = 1;
	}
	return TLS_FAILED;
}

static int tlsVerifyFailure(TLSCore *c, uint32_t flags, const char *peer)
{
	char info[TLS_DETAIL_CHARS];
	mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
	/* One line per problem from mbedtls: join them for a one-line message. */
	for (char *p = info; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ';' : 0;
	if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED)
		return tlsFail(c, "TLS: certificate not trusted: %s presented a certificate that no trusted CA vouches for (%s); %s",
			peer, info, tlsPortTrustHint());
	if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH)
		return tlsFail(c, "TLS: host name mismatch: the certificate of %s is not for \"%s\"; connect with a host name the certificate lists",
			peer, c->name);
	if (flags & MBEDTLS_X509_BADCERT_EXPIRED)
		return tlsFail(c, "TLS: certificate expired: the certificate of %s is past its end date; the server must renew it (or this device's clock is wrong)", peer);
	if (flags & MBEDTLS_X509_BADCERT_FUTURE)
		return tlsFail(c, "TLS: certificate not yet valid: the certificate of %s starts later than this device's clock; check the clock", peer);
	return tlsFail(c, "TLS: certificate rejected: %s presented a certificate that failed verification (%s)", peer, info);
}

/* ---- the connection ------------------------------------------------------------ */

static const char *tlsAlertName(int description)
{
	switch (description) {
	case 40: return "handshake failure: no cipher suite, group or signature in common";
	case 42: case 43: case 44: case 45: case 46: return "it refused the client's certificate";
	case 47: return "illegal parameter";
	case 48: return "unknown CA";
	case 70: return "protocol version: no TLS version in common";
	case 71: return "insufficient security";
	case 80: return "internal error";
	case 112: return "unrecognized name: it does not serve that host name";
	default: return "alert";
	}
}

/* The TLS versions this build speaks, for messages. */
#if defined(MBEDTLS_SSL_PROTO_TLS1_3)
#define TLS_VERSIONS "TLS 1.2 and 1.3"
#else
#define TLS_VERSIONS "TLS 1.2 only"
#endif

static int tlsFailure(TLSCore *c, int code, const char *during, const char *peer)
{
	if (code == MBEDTLS_ERR_NET_CONN_RESET)
		return tlsFail(c, "TLS: connection reset by peer during %s (%s)", during, peer);
	if (code == MBEDTLS_ERR_SSL_CONN_EOF)
		return tlsFail(c, "TLS: connection closed by peer during %s (%s)", during, peer);
	if (code == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
		int description = TLS_IN_MSG(&c->ssl) ? TLS_IN_MSG(&c->ssl)[1] : -1;
		return tlsFail(c, "TLS: %s refused %s (alert %d, %s); this build speaks " TLS_VERSIONS " with ECDSA and RSA certificates",
			peer, during, description, tlsAlertName(description));
	}
	char detail[TLS_DETAIL_CHARS];
	if (c->ioError)
		snprintf(detail, sizeof(detail), "%s", strerror(c->ioError));
	else
		mbedtls_strerror(code, detail, sizeof(detail));
	return tlsFail(c, "TLS: %s with %s failed: %s", during, peer, detail);
}

static const char *tlsPeer(const TLSCore *c)
{
	return c->peer;
}

int tlsCoreHandshake(TLSCore *c)
{
	if (c->failed)
		return TLS_FAILED;
	if (c->done)
		return 0;
	c->ioError = 0;
	int result = mbedtls_ssl_handshake(&c->ssl);
	if (result == 0) {
		c->done = 1;
		c->resumed = c->offered && c->verify && !c->certificates;
#if TLS_V4
		/* TLS 1.3 sessions come with the server's tickets, after this. */
		if (mbedtls_ssl_get_version_number(&c->ssl) == MBEDTLS_SSL_VERSION_TLS1_2)
#endif
			tlsCacheStore(c);
		return 0;
	}
	if (result == MBEDTLS_ERR_SSL_WANT_READ)
		return TLS_WANT_READ;
	if (result == MBEDTLS_ERR_SSL_WANT_WRITE)
		return TLS_WANT_WRITE;
	uint32_t flags = mbedtls_ssl_get_verify_result(&c->ssl);
	if (result == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags && flags != (uint32_t)-1)
		return tlsVerifyFailure(c, flags, tlsPeer(c));
	return tlsFailure(c, result, "the handshake", tlsPeer(c));
}

/* Whether result says a TLS 1.3 ticket arrived (4.0 signals it from read and
 * write alike): the session it makes resumable is kept. */
static int tlsTicket(TLSCore *c, int result)
{
#if defined(MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET)
	if (result == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
		tlsCacheStore(c);
		return 1;
	}
#else
	(void)c;
	(void)result;
#endif
	return 0;
}

long tlsCoreRead(TLSCore *c, uint8_t *buffer, size_t size)
{
	if (c->failed)
		return TLS_FAILED;
	c->ioError = 0;
	for (int tickets = 0; ; tickets++) {
		int result = mbedtls_ssl_read(&c->ssl, buffer, size);
		if (result > 0)
			return result;
		if (result == 0 || result == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || result == MBEDTLS_ERR_SSL_CONN_EOF)
			return 0;
		if (result == MBEDTLS_ERR_SSL_WANT_READ)
			return TLS_WANT_READ;
		if (result == MBEDTLS_ERR_SSL_WANT_WRITE)
			return TLS_WANT_WRITE;
		if (tlsTicket(c, result)) {
			if (tickets < TLS_TICKETS_PER_READ)
				continue;
			return TLS_WANT_READ;
		}
		return tlsFailure(c, result, "receive", tlsPeer(c));
	}
}

/* mbedtls copies a record before sending it; after WANT_WRITE it must be
 * called again with the same length to finish that record. */
long tlsCoreWrite(TLSCore *c, const uint8_t *buffer, size_t size)
{
	if (c->failed)
		return TLS_FAILED;
	c->ioError = 0;
	size_t length = c->pendingSend ? c->pendingSend : size;
	int result = mbedtls_ssl_write(&c->ssl, buffer, length);
	for (int tickets = 0; tlsTicket(c, result) && tickets < TLS_TICKETS_PER_READ; tickets++)
		result = mbedtls_ssl_write(&c->ssl, buffer, length);
	if (tlsTicket(c, result))
		result = MBEDTLS_ERR_SSL_WANT_WRITE;
	if (result > 0) {
		c->pendingSend = 0;
		return result;
	}
	if (result == MBEDTLS_ERR_SSL_WANT_WRITE || result == MBEDTLS_ERR_SSL_WANT_READ) {
		c->pendingSend = length;
		return result == MBEDTLS_ERR_SSL_WANT_WRITE ? TLS_WANT_WRITE : TLS_WANT_READ;
	}
	return tlsFailure(c, result, "send", tlsPeer(c));
}

int tlsCoreBuffered(TLSCore *c)
{
	return mbedtls_ssl_get_bytes_avail(&c->ssl) > 0 || mbedtls_ssl_check_pending(&c->ssl);
}

void tlsCoreGoodbye(TLSCore *c)
{
	if (c->done && !c->failed)
		mbedtls_ssl_close_notify(&c->ssl);
}

void tlsCoreFail(TLSCore *c, const char *sentence)
{
	tlsFail(c, "%s", sentence);
}

const char *tlsCoreError(const TLSCore *c) { return c->message; }
int tlsCoreHandshakeDone(const TLSCore *c) { return c->done; }
int tlsCoreResumed(const TLSCore *c) { return c->resumed; }

const char *tlsCoreVersion(const TLSCore *c)
{
	return c->done ? mbedtls_ssl_get_version(&c->ssl) : "";
}

void tlsCoreFree(TLSCore *c)
{
	if (c) {
		mbedtls_ssl_free(&c->ssl);
		mbedtls_ssl_config_free(&c->config);
		mbedtls_x509_crt_free(&c->ownCA);
		tlsPortFree(c);
	}
}

/* FNV-1a of the CA a connection trusts: sessions are kept per trust. */
static unsigned long tlsTrustTag(const uint8_t *bytes, size_t length)
{
	unsigned long hash = 2166136261u;
	for (size_t i = 0; i < length; i++)
		hash = ((hash ^ bytes[i]) * 16777619u) & 0xffffffffu;
	return hash;
}

static int tlsConfigure(TLSCore *c, char *error, size_t errorSize)
{
	int result = mbedtls_ssl_config_defaults(&c->config, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (result)
		return result;
#if TLS_V4
	mbedtls_ssl_conf_min_tls_version(&c->config, MBEDTLS_SSL_VERSION_TLS1_2);
#else
	mbedtls_ssl_conf_min_version(&c->config, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_rng(&c->config, tlsRandom, &gDrbg);
#endif
	mbedtls_ssl_conf_authmode(&c->config, c->verify ? MBEDTLS_SSL_VERIFY_REQUIRED : MBEDTLS_SSL_VERIFY_NONE);
	if (c->verify) {
		if (c->ownCA.version)
			mbedtls_ssl_conf_ca_chain(&c->config, &c->ownCA, NULL);
		else if (tlsPortTrust(&c->config, error, errorSize))
			return TLS_FAILED;
	}
	/* The port's trust may have installed a verify callback of its own
	 * (esp_crt_bundle_attach does): ours replaces it in the configuration
	 * and calls it first, so neither the bundle's check nor ours is lost. */
	c->nextVerify = TLS_CONF_VERIFY(&c->config);
	c->nextVerifyContext = TLS_CONF_VERIFY_CONTEXT(&c->config);
	mbedtls_ssl_conf_verify(&c->config, tlsVerifyCertificate, c);
	result = mbedtls_ssl_setup(&c->ssl, &c->config);
	if (result)
		return result;
	/* An IP literal is no SNI; NULL also tells 4.0 that we check the name. */
	result = mbedtls_ssl_set_hostname(&c->ssl, c->name[0] && !c->ipLength ? c->name : NULL);
	if (result)
		return result;
	mbedtls_ssl_set_bio(&c->ssl, c, tlsBioSend, tlsBioReceive, NULL);
	return 0;
}

int tlsCoreNew(TLSCore **out, const TLSCoreOptions *options, const TLSCoreIO *io, char *error, size_t errorSize)
{
	*out = NULL;
	pthread_once(&gStartOnce, tlsStart);
	if (gStartError) {
		char detail[TLS_DETAIL_CHARS];
		mbedtls_strerror(gStartError, detail, sizeof(detail));
		snprintf(error, errorSize, "TLS: cannot start the TLS library: %s", detail);
		return TLS_FAILED;
	}
	if (strlen(options->name) >= TLS_NAME_CHARS) {
		snprintf(error, errorSize, "TLS: host name longer than %d characters", TLS_NAME_CHARS - 1);
		return TLS_BAD_OPTION;
	}
	TLSCore *c = tlsPortCalloc(sizeof(TLSCore));
	if (!c) {
		snprintf(error, errorSize, "TLS: out of memory");
		return TLS_FAILED;
	}
	mbedtls_ssl_init(&c->ssl);
	mbedtls_ssl_config_init(&c->config);
	mbedtls_x509_crt_init(&c->ownCA);
	c->io = *io;
	c->verify = options->verify;
	strcpy(c->name, options->name);
	c->ipLength = tlsPortParseIP(c->name, c->ip);
	snprintf(c->peer, sizeof(c->peer), "%s", options->peer);
	snprintf(c->key, sizeof(c->key), "%s|%s|%lx", c->name, c->peer,
		options->caDer ? tlsTrustTag(options->caDer, options->caDerLength) : 0ul);

	if (c->verify && options->caDer) {
		int result = mbedtls_x509_crt_parse_der(&c->ownCA, options->caDer, options->caDerLength);
		if (result) {
			char detail[TLS_DETAIL_CHARS];
			mbedtls_strerror(result, detail, sizeof(detail));
			snprintf(error, errorSize, "TLS: secure.certificate is not a DER certificate: %s", detail);
			tlsCoreFree(c);
			return TLS_BAD_OPTION;
		}
	}
	error[0] = 0;
	int result = tlsConfigure(c, error, errorSize);
	if (result) {
		if (!error[0]) {
			char detail[TLS_DETAIL_CHARS];
			mbedtls_strerror(result, detail, sizeof(detail));
			snprintf(error, errorSize, "TLS: cannot set up the session: %s", detail);
		}
		tlsCoreFree(c);
		return TLS_FAILED;
	}
	if (c->verify)
		tlsCacheOffer(c);
	*out = c;
	return 0;
}
