/*
 * tls.c — `embedded:io/socket/tcp/tls` on the lin host: the TCP socket of
 * tcp.c with an mbedtls 2.28 transport (TLS 1.2) over its non-blocking fd;
 * the handshake is driven by the poll loop and onWritable first fires after it.
 *
 * Options: the TCP ones plus `host` (SNI and the name verified) and
 * `secure: {serverName?, certificate?, verify?}`. The server certificate is
 * verified by default against, in order of preference: secure.certificate
 * (one DER CA), the file given by --ca (PEM or DER), or the system bundle. A
 * failed verification is an onError ("TLS: certificate not trusted: ..." or
 * "TLS: host name mismatch: ..."), never a silent downgrade; only an explicit
 * `verify: false` skips it.
 *
 * The random generator (ctr_drbg seeded from the system entropy) and the
 * default CA chain are loaded once per process and freed at exit. Every
 * machine's thread (host.h) uses them: both are set up under gSharedLock,
 * the generator is called under it (tlsRandom), and the chain is only read
 * once loaded.
 */
#include "xsAll.h"
#include "netsock.h"

#include <sys/socket.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

/* The bundle Debian's ca-certificates installs. */
#define TLS_SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
/* A DNS name (253 characters) and its terminator. */
#define TLS_NAME_CHARS 254
/* Room for one mbedtls error or verification sentence. */
#define TLS_DETAIL_CHARS 200

typedef struct {
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config config;
	mbedtls_x509_crt ownCA;   /* secure.certificate, when given */
	int fd;
	int ioError;              /* errno of the last failed send or receive */
	size_t pendingSend;       /* bytes mbedtls took into a record not yet sent */
	char name[TLS_NAME_CHARS];
} TLSContext;

static pthread_mutex_t gSharedLock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int seeded;
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	int caLoaded;
	mbedtls_x509_crt ca;      /* --ca or the system bundle */
} gShared;

static void tlsFreeShared(void)
{
	if (gShared.caLoaded)
		mbedtls_x509_crt_free(&gShared.ca);
	if (gShared.seeded) {
		mbedtls_ctr_drbg_free(&gShared.drbg);
		mbedtls_entropy_free(&gShared.entropy);
	}
	gShared.caLoaded = gShared.seeded = 0;
}

static int tlsRandom(void *context, unsigned char *output, size_t length)
{
	pthread_mutex_lock(&gSharedLock);
	int result = mbedtls_ctr_drbg_random(context, output, length);
	pthread_mutex_unlock(&gSharedLock);
	return result;
}

static void tlsSeed(xsMachine *the)
{
	static int registered = 0;
	char detail[TLS_DETAIL_CHARS] = "";
	pthread_mutex_lock(&gSharedLock);
	if (!gShared.seeded) {
		if (!registered) {
			atexit(tlsFreeShared);
			registered = 1;
		}
		mbedtls_entropy_init(&gShared.entropy);
		mbedtls_ctr_drbg_init(&gShared.drbg);
		gShared.seeded = 1;
		static const unsigned char personal[] = "xsclaw tls";
		int result = mbedtls_ctr_drbg_seed(&gShared.drbg, mbedtls_entropy_func, &gShared.entropy, personal, sizeof(personal) - 1);
		if (result) {
			mbedtls_strerror(result, detail, sizeof(detail));
			mbedtls_ctr_drbg_free(&gShared.drbg);
			mbedtls_entropy_free(&gShared.entropy);
			gShared.seeded = 0;
		}
	}
	pthread_mutex_unlock(&gSharedLock);
	if (detail[0])
		xsUnknownError("TLS: cannot seed the random generator: %s", detail);
}

static mbedtls_x509_crt *tlsDefaultCA(xsMachine *the)
{
	const char *option = hostOption("ca");
	const char *path = option ? option : TLS_SYSTEM_CA_BUNDLE;
	char detail[TLS_DETAIL_CHARS] = "";
	pthread_mutex_lock(&gSharedLock);
	if (!gShared.caLoaded) {
		mbedtls_x509_crt_init(&gShared.ca);
		/* A positive result counts certificates of a bundle that did not parse;
		 * the rest are usable. */
		int result = mbedtls_x509_crt_parse_file(&gShared.ca, path);
		if (result < 0 || !gShared.ca.version) {
			snprintf(detail, sizeof(detail), "no certificate in it");
			if (result < 0)
				mbedtls_strerror(result, detail, sizeof(detail));
			mbedtls_x509_crt_free(&gShared.ca);
		}
		else
			gShared.caLoaded = 1;
	}
	pthread_mutex_unlock(&gSharedLock);
	if (detail[0] && option)
		xsUnknownError("TLS: --ca needs a PEM or DER certificate: %s: %s", path, detail);
	if (detail[0])
		xsUnknownError("TLS: install ca-certificates or pass --ca FILE: %s: %s", path, detail);
	return &gShared.ca;
}

static void tlsRelease(void *context)
{
	TLSContext *ctx = context;
	if (ctx) {
		mbedtls_ssl_free(&ctx->ssl);
		mbedtls_ssl_config_free(&ctx->config);
		mbedtls_x509_crt_free(&ctx->ownCA);
		free(ctx);
	}
}

/* ---- the bio: mbedtls over the socket's non-blocking fd ------------------ */

static int tlsBioSend(void *context, const unsigned char *buffer, size_t size)
{
	TLSContext *ctx = context;
	ssize_t n = send(ctx->fd, buffer, size, MSG_NOSIGNAL);
	if (n >= 0)
		return (int)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	ctx->ioError = errno;
	return (errno == ECONNRESET || errno == EPIPE) ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int tlsBioReceive(void *context, unsigned char *buffer, size_t size)
{
	TLSContext *ctx = context;
	ssize_t n = recv(ctx->fd, buffer, size, 0);
	if (n >= 0)
		return (int)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_READ;
	ctx->ioError = errno;
	return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
}

/* ---- the transport -------------------------------------------------------- */

static int tlsFailure(NetSocket *s, int code, const char *during)
{
	TLSContext *ctx = netContext(s);
	if (code == MBEDTLS_ERR_NET_CONN_RESET)
		return netFail(s, "TLS: connection reset by peer during %s (%s port %d)", during, netAddressText(s), netPort(s));
	if (code == MBEDTLS_ERR_SSL_CONN_EOF)
		return netFail(s, "TLS: connection closed by peer during %s (%s port %d)", during, netAddressText(s), netPort(s));
	char detail[TLS_DETAIL_CHARS];
	if (ctx->ioError)
		snprintf(detail, sizeof(detail), "%s", strerror(ctx->ioError));
	else
		mbedtls_strerror(code, detail, sizeof(detail));
	return netFail(s, "TLS: %s with %s port %d failed: %s", during, netAddressText(s), netPort(s), detail);
}

static int tlsVerifyFailure(NetSocket *s, uint32_t flags)
{
	TLSContext *ctx = netContext(s);
	char info[TLS_DETAIL_CHARS];
	mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
	/* One line per problem from mbedtls: join them for a one-line message. */
	for (char *c = info; *c; c++)
		if (*c == '\n')
			*c = c[1] ? ';' : 0;
	if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED)
		return netFail(s, "TLS: certificate not trusted: %s port %d presented a certificate no configured CA vouches for (%s); "
			"pass the server's CA as secure.certificate or with --ca FILE", netAddressText(s), netPort(s), info);
	if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH)
		return netFail(s, "TLS: host name mismatch: the certificate of %s port %d is not for \"%s\"; "
			"connect with a host name the certificate lists", netAddressText(s), netPort(s), ctx->name);
	return netFail(s, "TLS: certificate rejected by %s port %d: %s", netAddressText(s), netPort(s), info);
}

static int tlsStart(NetSocket *s)
{
	TLSContext *ctx = netContext(s);
	int result = mbedtls_ssl_handshake(&ctx->ssl);
	if (result == 0)
		return 0;
	if (result == MBEDTLS_ERR_SSL_WANT_READ)
		return NET_WANT_READ;
	if (result == MBEDTLS_ERR_SSL_WANT_WRITE)
		return NET_WANT_WRITE;
	uint32_t flags = mbedtls_ssl_get_verify_result(&ctx->ssl);
	if (result == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags && flags != (uint32_t)-1)
		return tlsVerifyFailure(s, flags);
	return tlsFailure(s, result, "the handshake");
}

static long tlsReceive(NetSocket *s, uint8_t *buffer, size_t size)
{
	TLSContext *ctx = netContext(s);
	int result = mbedtls_ssl_read(&ctx->ssl, buffer, size);
	if (result > 0)
		return result;
	if (result == 0 || result == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || result == MBEDTLS_ERR_SSL_CONN_EOF)
		return 0;
	if (result == MBEDTLS_ERR_SSL_WANT_READ)
		return NET_WANT_READ;
	if (result == MBEDTLS_ERR_SSL_WANT_WRITE)
		return NET_WANT_WRITE;
	return tlsFailure(s, result, "receive");
}

/* mbedtls copies a record before sending it; after WANT_WRITE it must be
 * called again with the same length to finish that record. */
static long tlsSend(NetSocket *s, const uint8_t *buffer, size_t size)
{
	TLSContext *ctx = netContext(s);
	size_t length = ctx->pendingSend ? ctx->pendingSend : size;
	int result = mbedtls_ssl_write(&ctx->ssl, buffer, length);
	if (result > 0) {
		ctx->pendingSend = 0;
		return result;
	}
	if (result == MBEDTLS_ERR_SSL_WANT_WRITE || result == MBEDTLS_ERR_SSL_WANT_READ) {
		ctx->pendingSend = length;
		return result == MBEDTLS_ERR_SSL_WANT_WRITE ? NET_WANT_WRITE : NET_WANT_READ;
	}
	return tlsFailure(s, result, "send");
}

static size_t tlsBuffered(NetSocket *s)
{
	TLSContext *ctx = netContext(s);
	return mbedtls_ssl_get_bytes_avail(&ctx->ssl) + (mbedtls_ssl_check_pending(&ctx->ssl) ? 1 : 0);
}

static void tlsGoodbye(NetSocket *s)
{
	TLSContext *ctx = netContext(s);
	mbedtls_ssl_close_notify(&ctx->ssl);
}

static const NetTransport gMbedTLS = { tlsStart, tlsReceive, tlsSend, tlsBuffered, tlsGoodbye, tlsRelease };
static xsHostHooks gTLSHooks = { netDestructor, netMarker, NULL };
static const NetClass gTLS = { "TLS", &gTLSHooks, &gMbedTLS };

/* Builds the mbedtls state; returns 0 or an mbedtls error code. */
static int tlsConfigure(TLSContext *ctx, mbedtls_x509_crt *chain, int verify)
{
	int result = mbedtls_ssl_config_defaults(&ctx->config, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (result)
		return result;
	mbedtls_ssl_conf_min_version(&ctx->config, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_authmode(&ctx->config, verify ? MBEDTLS_SSL_VERIFY_REQUIRED : MBEDTLS_SSL_VERIFY_NONE);
	if (chain)
		mbedtls_ssl_conf_ca_chain(&ctx->config, chain, NULL);
	mbedtls_ssl_conf_rng(&ctx->config, tlsRandom, &gShared.drbg);
	result = mbedtls_ssl_setup(&ctx->ssl, &ctx->config);
	if (result)
		return result;
	if (ctx->name[0]) {
		result = mbedtls_ssl_set_hostname(&ctx->ssl, ctx->name);
		if (result)
			return result;
	}
	mbedtls_ssl_set_bio(&ctx->ssl, ctx, tlsBioSend, tlsBioReceive, NULL);
	return 0;
}

enum { TLS_VAR_SECURE = NET_VARS, TLS_VAR_CERTIFICATE, TLS_VARS };

static void xs_tls_constructor(xsMachine *the)
{
	xsVars(TLS_VARS);
	NetOptions options;
	netParseOptions(the, &gTLS, &options);
	char name[TLS_NAME_CHARS] = "";
	hostStringOption(the, &xsArg(0), "host", name, sizeof(name), 0, "TLS");
	int verify = 1, hasCertificate = 0;
	if (hostHasOption(the, &xsArg(0), "secure")) {
		xsVar(TLS_VAR_SECURE) = xsGet(xsArg(0), hostID("secure"));
		if (!xsIsInstanceOf(xsVar(TLS_VAR_SECURE), xsObjectPrototype))
			xsTypeError("TLS: secure must be an object");
		hostStringOption(the, &xsVar(TLS_VAR_SECURE), "serverName", name, sizeof(name), 0, "TLS");
		if (hostHasOption(the, &xsVar(TLS_VAR_SECURE), "verify"))
			verify = xsToBoolean(xsGet(xsVar(TLS_VAR_SECURE), hostID("verify")));
		if (hostHasOption(the, &xsVar(TLS_VAR_SECURE), "certificate")) {
			hasCertificate = 1;
			xsVar(TLS_VAR_CERTIFICATE) = xsGet(xsVar(TLS_VAR_SECURE), hostID("certificate"));
			size_t length;
			hostBytes(the, &xsVar(TLS_VAR_CERTIFICATE), &length, "TLS: secure.certificate");
		}
	}
	if (verify && !name[0])
		xsTypeError("TLS: host required to verify the server's certificate (or secure.verify: false to skip verification)");
	tlsSeed(the);
	mbedtls_x509_crt *chain = NULL;
	if (verify && !hasCertificate)
		chain = tlsDefaultCA(the);

	/* From here on every exit path releases ctx. */
	TLSContext *ctx = calloc(1, sizeof(TLSContext));
	if (!ctx)
		xsUnknownError("TLS: out of memory");
	mbedtls_ssl_init(&ctx->ssl);
	mbedtls_ssl_config_init(&ctx->config);
	mbedtls_x509_crt_init(&ctx->ownCA);
	ctx->fd = -1;
	strcpy(ctx->name, name);
	char detail[TLS_DETAIL_CHARS];
	if (verify && hasCertificate) {
		size_t length;
		/* Nothing allocates in the machine between this and the parse. */
		const unsigned char *der = hostBytes(the, &xsVar(TLS_VAR_CERTIFICATE), &length, "TLS: secure.certificate");
		int result = mbedtls_x509_crt_parse_der(&ctx->ownCA, der, length);
		if (result) {
			mbedtls_strerror(result, detail, sizeof(detail));
			tlsRelease(ctx);
			xsTypeError("TLS: secure.certificate is not a DER certificate: %s", detail);
		}
		chain = &ctx->ownCA;
	}
	int result = tlsConfigure(ctx, chain, verify);
	if (result) {
		mbedtls_strerror(result, detail, sizeof(detail));
		tlsRelease(ctx);
		xsUnknownError("TLS: cannot set up the session: %s", detail);
	}
	NetSocket *s = netOpen(the, &gTLS, &options, ctx);
	ctx->fd = netFd(s);
}

static void xs_tls_read(xsMachine *the) { netRead(the, &gTLS); }
static void xs_tls_write(xsMachine *the) { netWrite(the, &gTLS); }
static void xs_tls_close(xsMachine *the) { netClose(the, &gTLS); }
static void xs_tls_get_remoteAddress(xsMachine *the) { netGetRemoteAddress(the, &gTLS); }
static void xs_tls_get_remotePort(xsMachine *the) { netGetRemotePort(the, &gTLS); }
static void xs_tls_get_format(xsMachine *the) { netGetFormat(the, &gTLS); }
static void xs_tls_set_format(xsMachine *the) { netSetFormat(the, &gTLS); }

static const HostMember gTLSMembers[] = {
	{ "read", xs_tls_read, 1, 0 },
	{ "write", xs_tls_write, 1, 0 },
	{ "close", xs_tls_close, 0, 0 },
	{ "remoteAddress", xs_tls_get_remoteAddress, 0, 1 },
	{ "remotePort", xs_tls_get_remotePort, 0, 1 },
	{ "format", xs_tls_get_format, 0, 1 },
	{ "format", xs_tls_set_format, 1, 2 },
	{ NULL }
};

void hostInstallTLS(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "TLS", xs_tls_constructor, 1, gTLSMembers, &gTLSHooks);
}
