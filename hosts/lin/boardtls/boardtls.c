/*
 * boardtls.c — what the board's TLS glue (hosts/esp32/tls/tls_esp32.c) calls
 * on the board, done on the lin host (README.md), and its installation as the
 * lin host's TLS class. Built only into the boardtls hosts (hosts/lin/Makefile
 * VARIANT=boardtls, boardtls-asan), in place of src/tls.c.
 */
#include "xsAll.h"
#include "host.h"
#include "tls_mbedtls.h"
#include "modTimer.h"
#include "esp_crt_bundle.h"
#include "esp_random.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>

#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

/* The bundle Debian's ca-certificates installs, as src/tls.c reads it. */
#define BOARDTLS_SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

/* ---- esp_random.h ---------------------------------------------------------- */

void esp_fill_random(void *buffer, size_t length)
{
	uint8_t *out = buffer;
	while (length) {
		ssize_t n = getrandom(out, length, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			abort(); /* the board's RNG cannot fail either */
		}
		out += n;
		length -= (size_t)n;
	}
}

/* ---- modTimer.h: the SDK's timers over the host loop's ----------------------- */

/* As the SDK's: the refcon is copied into the timer; a repeating timer fires
 * every secondInterval ms (0: once); modTimerRemove may be called from the
 * timer's own callback; the promise jobs run after each callback. */
struct modTimerRecord {
	HostTimer *pending;
	modTimerCallback callback;
	int repeatMs;
	int running, removed;
	uint8_t refcon[32];
	int refconSize;
};

static void modTimerFire(void *context)
{
	modTimer timer = context;
	timer->pending = NULL;
	timer->running = 1;
	timer->callback(timer, timer->refcon, timer->refconSize);
	/* As the SDK's loop does after its timers: the promise jobs a callback
	 * queued (a promise the test awaits settled in onWritable) run now. Still
	 * "running" meanwhile: a job may close the socket, whose modTimerRemove
	 * must leave the timer to be freed here, not free it under us. */
	hostRunJobs(hostMachine());
	timer->running = 0;
	if (timer->removed)
		free(timer);
	else if (timer->repeatMs > 0)
		timer->pending = hostTimerStart(timer->repeatMs, modTimerFire, timer);
	else
		free(timer);
}

modTimer modTimerAdd(int firstInterval, int secondInterval, modTimerCallback cb, void *refcon, int refconSize)
{
	if (refconSize < 0 || (size_t)refconSize > sizeof(((modTimer)0)->refcon))
		return NULL;
	modTimer timer = calloc(1, sizeof(*timer));
	if (!timer)
		return NULL;
	timer->callback = cb;
	timer->repeatMs = secondInterval;
	timer->refconSize = refconSize;
	memcpy(timer->refcon, refcon, (size_t)refconSize);
	timer->pending = hostTimerStart(firstInterval, modTimerFire, timer);
	return timer;
}

void modTimerRemove(modTimer timer)
{
	if (!timer)
		return;
	if (timer->pending) {
		hostTimerCancel(timer->pending);
		timer->pending = NULL;
	}
	if (timer->running)
		timer->removed = 1; /* freed when its callback returns */
	else
		free(timer);
}

/* ---- esp_crt_bundle.h, with ESP-IDF's semantics ------------------------------- */

/* IDF's esp_crt_bundle_attach gives the configuration a dummy CA (so the
 * chain always ends "not trusted") and its own verify callback, which clears
 * that flag when the bundle holds the issuer of the certificate that ended
 * the chain and its signature checks out. Here the bundle is --ca's file, else
 * the system's, loaded once per process. */
static pthread_mutex_t gBundleLock = PTHREAD_MUTEX_INITIALIZER;
static int gBundleLoaded;
static mbedtls_x509_crt gBundle, gDummy;

static int bundleVerify(void *context, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	(void)context;
	(void)depth;
	if ((*flags & ~(uint32_t)MBEDTLS_X509_BADCERT_BAD_MD) != MBEDTLS_X509_BADCERT_NOT_TRUSTED)
		return 0;
	/* The certificate's issuer must be one of the bundle's, and the certificate
	 * signed by it: mbedtls checks both against the bundle as the trusted list. */
	uint32_t result = 0;
	mbedtls_x509_crt single = *crt;
	single.next = NULL;
	if (mbedtls_x509_crt_verify(&single, &gBundle, NULL, NULL, &result, NULL, NULL) == 0)
		*flags = 0;
	return 0;
}

esp_err_t esp_crt_bundle_attach(void *conf)
{
	pthread_mutex_lock(&gBundleLock);
	if (!gBundleLoaded) {
		const char *option = hostOption("ca");
		mbedtls_x509_crt_init(&gBundle);
		mbedtls_x509_crt_init(&gDummy);
		int result = mbedtls_x509_crt_parse_file(&gBundle, option ? option : BOARDTLS_SYSTEM_CA_BUNDLE);
		if (result < 0 || !gBundle.version) {
			mbedtls_x509_crt_free(&gBundle);
			pthread_mutex_unlock(&gBundleLock);
			return ESP_FAIL;
		}
		gBundleLoaded = 1;
	}
	pthread_mutex_unlock(&gBundleLock);
	mbedtls_ssl_config *config = conf;
	mbedtls_ssl_conf_verify(config, bundleVerify, NULL);
	mbedtls_ssl_conf_ca_chain(config, &gDummy, NULL);
	return ESP_OK;
}

/* ---- the glue as the lin host's TLS class -------------------------------------- */

void xs_tlscore_constructor(xsMachine *the);
void xs_tlscore_close(xsMachine *the);
void xs_tlscore_read(xsMachine *the);
void xs_tlscore_write(xsMachine *the);
void xs_tlscore_get_remoteAddress(xsMachine *the);
void xs_tlscore_get_remotePort(xsMachine *the);
void xs_tlscore_get_format(xsMachine *the);
void xs_tlscore_set_format(xsMachine *the);
void xs_tlscore_get_resumed(xsMachine *the);
void xs_tlscore_get_protocol(xsMachine *the);
void xs_tlscore_memory(xsMachine *the);
void xs_tlscore_forget_sessions(xsMachine *the);

/* The prototype's hooks, which a new instance starts with (as the SDK's
 * Native() class gives an instance its destructor): the glue's constructor
 * must set its own, or none of its methods finds the socket. */
static xsHostHooks gPrototypeHooks = { NULL, NULL, NULL };

static const HostMember gBoardTLSMembers[] = {
	{ "read", xs_tlscore_read, 1, 0 },
	{ "write", xs_tlscore_write, 1, 0 },
	{ "close", xs_tlscore_close, 0, 0 },
	{ "remoteAddress", xs_tlscore_get_remoteAddress, 0, 1 },
	{ "remotePort", xs_tlscore_get_remotePort, 0, 1 },
	{ "format", xs_tlscore_get_format, 0, 1 },
	{ "format", xs_tlscore_set_format, 1, 2 },
	{ "resumed", xs_tlscore_get_resumed, 0, 1 },
	{ "protocol", xs_tlscore_get_protocol, 0, 1 },
	{ NULL }
};

void hostInstallTLS(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "TLS", xs_tlscore_constructor, 1, gBoardTLSMembers, &gPrototypeHooks);
	hostDefineFunction(the, native, "tlsMemory", xs_tlscore_memory, 1);
	hostDefineFunction(the, native, "tlsForgetSessions", xs_tlscore_forget_sessions, 0);
}
