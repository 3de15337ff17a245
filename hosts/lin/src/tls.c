/*
 * tls.c — `embedded:io/socket/tcp/tls` on the lin host: the XS class and the
 * lin port of the TLS core (hosts/common/tls/tls_core.c, shared with the
 * ESP32-S3). The socket below is tcp.c's stream engine over a non-blocking
 * fd driven by the host loop; the handshake runs there, and onWritable first
 * fires after it.
 *
 * Options: the TCP ones (`nodelay` true by default) plus `host` (SNI and the name verified; an IP literal
 * is checked against the certificate's IP addresses) and `secure:
 * {serverName?, certificate?, verify?, handshakeTimeout?}`. The server's
 * certificate is verified by default against, in order of preference:
 * secure.certificate (one DER CA), the file given by --ca (PEM or DER), or
 * the system bundle. A failed verification is an onError naming the cause,
 * never a silent downgrade; only an explicit `verify: false` skips it. A
 * handshake not finished within handshakeTimeout ms (TLS_HANDSHAKE_MS by
 * default) ends in onError.
 *
 * Beyond ECMA-419, for tests and figures: `resumed` (the handshake resumed a
 * cached session), `protocol` ("TLSv1.2", "TLSv1.3"), and the module's
 * memory() (what mbedtls holds, counted through our allocator).
 *
 * The port: memory from malloc, entropy from getrandom (the 2.28 build), the
 * CA chain of --ca or the system bundle loaded once per process.
 */
#include "xsAll.h"
#include "netsock.h"
#include "tls_core.h"
#include "tls_port.h"
#include "budgets.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <mbedtls/error.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

/* The bundle Debian's ca-certificates installs. */
#define TLS_SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
/* The handshake's deadlines, the board's too (modules/budgets.ts). */
#define TLS_HANDSHAKE_MS BUDGET_TLS_HANDSHAKE_MS
#define TLS_HANDSHAKE_MAX_MS BUDGET_TLS_HANDSHAKE_MAX_MS

/* ---- the lin port (tls_port.h) --------------------------------------------- */

void *tlsPortCalloc(size_t size)
{
	return calloc(1, size);
}

void tlsPortFree(void *pointer)
{
	free(pointer);
}

int tlsPortEntropy(uint8_t *output, size_t size)
{
	while (size) {
		ssize_t n = getrandom(output, size, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		output += n;
		size -= (size_t)n;
	}
	return 0;
}

int tlsPortParseIP(const char *text, uint8_t address[16])
{
	return inet_pton(AF_INET, text, address) == 1 ? 4 : inet_pton(AF_INET6, text, address) == 1 ? 16 : 0;
}

const char *tlsPortTrustHint(void)
{
	return "if you trust this server, start xsclaw with --ca FILE naming its CA";
}

/* The default CA chain: loaded once per process, read-only after. */
static pthread_mutex_t gCALock = PTHREAD_MUTEX_INITIALIZER;
static int gCALoaded;
static mbedtls_x509_crt gCA;

static void tlsFreeCA(void)
{
	if (gCALoaded)
		mbedtls_x509_crt_free(&gCA);
	gCALoaded = 0;
}

int tlsPortTrust(void *config, char *error, size_t errorSize)
{
	pthread_mutex_lock(&gCALock);
	if (!gCALoaded) {
		const char *option = hostOption("ca");
		const char *path = option ? option : TLS_SYSTEM_CA_BUNDLE;
		mbedtls_x509_crt_init(&gCA);
		/* A positive result counts certificates of a bundle that did not
		 * parse; the rest are usable. */
		int result = mbedtls_x509_crt_parse_file(&gCA, path);
		if (result < 0 || !gCA.version) {
			char detail[200] = "no certificate in it";
			if (result < 0)
				mbedtls_strerror(result, detail, sizeof(detail));
			mbedtls_x509_crt_free(&gCA);
			pthread_mutex_unlock(&gCALock);
			if (option)
				snprintf(error, errorSize, "TLS: --ca needs a PEM or DER certificate: %s: %s", path, detail);
			else
				snprintf(error, errorSize, "TLS: install ca-certificates or pass --ca FILE: %s: %s", path, detail);
			return -1;
		}
		static int registered;
		if (!registered) {
			atexit(tlsFreeCA);
			registered = 1;
		}
		gCALoaded = 1;
	}
	pthread_mutex_unlock(&gCALock);
	mbedtls_ssl_conf_ca_chain(config, &gCA, NULL);
	return 0;
}

/* ---- the socket below: tcp.c's engine ---------------------------------------- */

typedef struct {
	TLSCore *core;
	NetSocket *socket;
	HostTimer *deadline;
	int fd;
	int timeoutMs;
} TLSContext;

static long tlsIOSend(void *io, const uint8_t *buffer, size_t size)
{
	TLSContext *ctx = io;
	ssize_t n = send(ctx->fd, buffer, size, MSG_NOSIGNAL);
	if (n >= 0)
		return (long)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return TLS_WANT_WRITE;
	return -errno;
}

static long tlsIORecv(void *io, uint8_t *buffer, size_t size)
{
	TLSContext *ctx = io;
	ssize_t n = recv(ctx->fd, buffer, size, 0);
	if (n >= 0)
		return (long)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return TLS_WANT_READ;
	return -errno;
}

static long tlsResult(NetSocket *s, long result)
{
	TLSContext *ctx = netContext(s);
	if (result == TLS_WANT_READ)
		return NET_WANT_READ;
	if (result == TLS_WANT_WRITE)
		return NET_WANT_WRITE;
	if (result == TLS_FAILED)
		return netFail(s, "%s", tlsCoreError(ctx->core));
	return result;
}

static void tlsCancelDeadline(TLSContext *ctx)
{
	hostTimerCancel(ctx->deadline);
	ctx->deadline = NULL;
}

static int tlsStart(NetSocket *s)
{
	TLSContext *ctx = netContext(s);
	int result = (int)tlsResult(s, tlsCoreHandshake(ctx->core));
	if (result == 0 || result == NET_FAILED)
		tlsCancelDeadline(ctx);
	return result;
}

static long tlsReceive(NetSocket *s, uint8_t *buffer, size_t size)
{
	TLSContext *ctx = netContext(s);
	return tlsResult(s, tlsCoreRead(ctx->core, buffer, size));
}

static long tlsSend(NetSocket *s, const uint8_t *buffer, size_t size)
{
	TLSContext *ctx = netContext(s);
	return tlsResult(s, tlsCoreWrite(ctx->core, buffer, size));
}

static size_t tlsBuffered(NetSocket *s)
{
	TLSContext *ctx = netContext(s);
	return tlsCoreBuffered(ctx->core) ? 1 : 0;
}

static void tlsGoodbye(NetSocket *s)
{
	TLSContext *ctx = netContext(s);
	tlsCoreGoodbye(ctx->core);
}

static void tlsRelease(void *context)
{
	TLSContext *ctx = context;
	if (ctx) {
		tlsCancelDeadline(ctx);
		tlsCoreFree(ctx->core);
		free(ctx);
	}
}

static void tlsDeadline(void *context)
{
	TLSContext *ctx = context;
	ctx->deadline = NULL;
	if (tlsCoreHandshakeDone(ctx->core))
		return;
	char message[TLS_MESSAGE_CHARS];
	snprintf(message, sizeof(message), "TLS: %s port %d did not complete the TLS handshake within %d ms; the server stalled or is not a TLS server",
		netAddressText(ctx->socket), netPort(ctx->socket), ctx->timeoutMs);
	tlsCoreFail(ctx->core, message);
	netAbort(ctx->socket, message);
}

static const NetTransport gMbedTLS = { tlsStart, tlsReceive, tlsSend, tlsBuffered, tlsGoodbye, tlsRelease };
static xsHostHooks gTLSHooks = { netDestructor, netMarker, NULL };
static const NetClass gTLS = { "TLS", &gTLSHooks, &gMbedTLS };

/* ---- the class ------------------------------------------------------------------ */

enum { TLS_VAR_SECURE = NET_VARS, TLS_VAR_CERTIFICATE, TLS_VARS };

static void xs_tls_constructor(xsMachine *the)
{
	xsVars(TLS_VARS);
	NetOptions options;
	netParseOptions(the, &gTLS, &options);
	/* Unless asked otherwise, no Nagle: a TLS 1.2 handshake's last flight goes
	 * out as several small writes, and Nagle with the peer's delayed ACK would
	 * hold it back ~40 ms. */
	if (options.nodelay < 0)
		options.nodelay = 1;
	char name[TLS_NAME_CHARS] = "";
	hostStringOption(the, &xsArg(0), "host", name, sizeof(name), 0, "TLS");
	int verify = 1, hasCertificate = 0, timeoutMs = TLS_HANDSHAKE_MS;
	if (hostHasOption(the, &xsArg(0), "secure")) {
		xsVar(TLS_VAR_SECURE) = xsGet(xsArg(0), hostID("secure"));
		if (!xsIsInstanceOf(xsVar(TLS_VAR_SECURE), xsObjectPrototype))
			xsTypeError("TLS: secure must be an object");
		hostStringOption(the, &xsVar(TLS_VAR_SECURE), "serverName", name, sizeof(name), 0, "TLS");
		if (hostHasOption(the, &xsVar(TLS_VAR_SECURE), "verify"))
			verify = xsToBoolean(xsGet(xsVar(TLS_VAR_SECURE), hostID("verify")));
		timeoutMs = hostIntegerOption(the, &xsVar(TLS_VAR_SECURE), "handshakeTimeout", 1, TLS_HANDSHAKE_MAX_MS, TLS_HANDSHAKE_MS, "TLS");
		if (hostHasOption(the, &xsVar(TLS_VAR_SECURE), "certificate")) {
			hasCertificate = 1;
			xsVar(TLS_VAR_CERTIFICATE) = xsGet(xsVar(TLS_VAR_SECURE), hostID("certificate"));
			size_t length;
			hostBytes(the, &xsVar(TLS_VAR_CERTIFICATE), &length, "TLS: secure.certificate");
		}
	}
	if (verify && !name[0])
		xsTypeError("TLS: host required to verify the server's certificate (or secure.verify: false to skip verification)");

	TLSContext *ctx = calloc(1, sizeof(TLSContext));
	if (!ctx)
		xsUnknownError("TLS: out of memory");
	ctx->fd = -1;
	ctx->timeoutMs = timeoutMs;
	char peer[96];
	snprintf(peer, sizeof(peer), "%s port %d", options.text, options.port);
	TLSCoreOptions core = { name, peer, verify, NULL, 0 };
	if (verify && hasCertificate)
		/* Nothing allocates in the machine between this and the parse. */
		core.caDer = hostBytes(the, &xsVar(TLS_VAR_CERTIFICATE), &core.caDerLength, "TLS: secure.certificate");
	TLSCoreIO io = { tlsIOSend, tlsIORecv, ctx };
	char error[TLS_MESSAGE_CHARS];
	int result = tlsCoreNew(&ctx->core, &core, &io, error, sizeof(error));
	if (result) {
		free(ctx);
		hostThrowMessage(the, result == TLS_BAD_OPTION ? XS_TYPE_ERROR : XS_UNKNOWN_ERROR, "%s", error);
	}
	NetSocket *s = netOpen(the, &gTLS, &options, ctx);
	ctx->socket = s;
	ctx->fd = netFd(s);
	ctx->deadline = hostTimerStart(timeoutMs, tlsDeadline, ctx);
}

static void xs_tls_read(xsMachine *the) { netRead(the, &gTLS); }
static void xs_tls_write(xsMachine *the) { netWrite(the, &gTLS); }
static void xs_tls_close(xsMachine *the) { netClose(the, &gTLS); }
static void xs_tls_get_remoteAddress(xsMachine *the) { netGetRemoteAddress(the, &gTLS); }
static void xs_tls_get_remotePort(xsMachine *the) { netGetRemotePort(the, &gTLS); }
static void xs_tls_get_format(xsMachine *the) { netGetFormat(the, &gTLS); }
static void xs_tls_set_format(xsMachine *the) { netSetFormat(the, &gTLS); }

static void xs_tls_get_resumed(xsMachine *the)
{
	TLSContext *ctx = netContextOf(the, &gTLS);
	xsResult = xsBoolean(tlsCoreResumed(ctx->core) ? 1 : 0);
}

static void xs_tls_get_protocol(xsMachine *the)
{
	TLSContext *ctx = netContextOf(the, &gTLS);
	xsResult = xsString(tlsCoreVersion(ctx->core));
}

/* memory() -> {bytes, peakBytes, allocations, library}; memory(true) also
 * starts a new peak from what is held now. */
static void xs_tls_memory(xsMachine *the)
{
	if (hostArgc > 0 && xsToBoolean(xsArg(0)))
		tlsCoreResetPeak();
	TLSCoreMemory memory;
	tlsCoreMemory(&memory);
	xsResult = xsNewObject();
	xsSet(xsResult, hostID("bytes"), xsNumber((double)memory.bytes));
	xsSet(xsResult, hostID("peakBytes"), xsNumber((double)memory.peakBytes));
	xsSet(xsResult, hostID("allocations"), xsNumber((double)memory.allocations));
	xsSet(xsResult, hostID("library"), xsString(tlsCoreLibrary()));
}

static void xs_tls_forget_sessions(xsMachine *the)
{
	tlsCoreForgetSessions();
}

static const HostMember gTLSMembers[] = {
	{ "read", xs_tls_read, 1, 0 },
	{ "write", xs_tls_write, 1, 0 },
	{ "close", xs_tls_close, 0, 0 },
	{ "remoteAddress", xs_tls_get_remoteAddress, 0, 1 },
	{ "remotePort", xs_tls_get_remotePort, 0, 1 },
	{ "format", xs_tls_get_format, 0, 1 },
	{ "format", xs_tls_set_format, 1, 2 },
	{ "resumed", xs_tls_get_resumed, 0, 1 },
	{ "protocol", xs_tls_get_protocol, 0, 1 },
	{ NULL }
};

void hostInstallTLS(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "TLS", xs_tls_constructor, 1, gTLSMembers, &gTLSHooks);
	hostDefineFunction(the, native, "tlsMemory", xs_tls_memory, 1);
	hostDefineFunction(the, native, "tlsForgetSessions", xs_tls_forget_sessions, 0);
}
