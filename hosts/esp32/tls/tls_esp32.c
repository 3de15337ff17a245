/*
 * tls_esp32.c — `embedded:io/socket/tcp/tls` on the ESP32-S3: the XS class
 * (tls.js) over an lwIP socket, and the board's port of the TLS core
 * (hosts/common/tls/tls_core.c, the same source the lin host runs).
 *
 * The shape is the lin host's (typings/lin-net.d.ts): options `address` (an
 * IP literal), `port`, `host`, `secure: {serverName?, certificate?, verify?,
 * handshakeTimeout?}`, `format`, onReadable/onWritable/onError; read(),
 * write(), close(), remoteAddress, remotePort, format, resumed, protocol.
 *
 * The socket below is a non-blocking lwIP socket, serviced by one Moddable
 * timer per socket every TLS_POLL_MS: connect, handshake, then records in
 * while the input buffer has room and out while output waits. Callbacks run
 * on the machine's task, as a timer's do.
 *
 * The port: mbedtls's memory (its record buffers among it) and our stream
 * buffers come from PSRAM (heap_caps, MALLOC_CAP_SPIRAM); entropy is the
 * hardware RNG (on Mbed TLS 4.0 through ESP-IDF's PSA driver); the CA store
 * is the certificate the caller passes (secure.certificate), else ESP-IDF's
 * certificate bundle.
 *
 * npm run check:device compiles it against ESP-IDF v6.0's and the Moddable
 * SDK's own headers, as the SDK's makefile and as IDF's CMake would.
 *
 * Every number comes from budgets.h (modules/budgets.ts): the poll tick
 * (TLS_POLL_MS), the bytes read ahead of JS (TLS_INPUT_BYTES), the bytes JS
 * may queue (NET_OUTPUT_BYTES, as on lin) and the handshake deadlines
 * (TLS_HANDSHAKE_MS, TLS_HANDSHAKE_MAX_MS, as on lin).
 */
#include "tls_mbedtls.h"
#include <stddef.h>
#include "xsmc.h"
#include "xsHost.h"
#include "modTimer.h"
#include "modInstrumentation.h"

#include "lwip/sockets.h"
#include "esp_crt_bundle.h"
#include "esp_heap_caps.h"
#include "esp_random.h"

#include "tls_core.h"
#include "tls_port.h"
#include "budgets.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include <mbedtls/ssl.h>

#define TLS_POLL_MS BUDGET_TLS_POLL_MS
#define TLS_INPUT_BYTES BUDGET_TLS_INPUT_BYTES
#define TLS_OUTPUT_BYTES BUDGET_NET_OUTPUT_BYTES
#define TLS_HANDSHAKE_MS BUDGET_TLS_HANDSHAKE_MS
#define TLS_HANDSHAKE_MAX_MS BUDGET_TLS_HANDSHAKE_MAX_MS

/* ---- the board's port (tls_port.h) ------------------------------------------- */

void *tlsPortCalloc(size_t size)
{
	void *block = heap_caps_calloc(1, size, MALLOC_CAP_SPIRAM | MALLOC_CAP_8BIT);
	return block ? block : heap_caps_calloc(1, size, MALLOC_CAP_8BIT);
}

void tlsPortFree(void *pointer)
{
	heap_caps_free(pointer);
}

int tlsPortEntropy(uint8_t *output, size_t size)
{
	esp_fill_random(output, size);
	return 0;
}

int tlsPortParseIP(const char *text, uint8_t address[16])
{
	return lwip_inet_pton(AF_INET, text, address) == 1 ? 4 : lwip_inet_pton(AF_INET6, text, address) == 1 ? 16 : 0;
}

int tlsPortTrust(void *config, char *error, size_t errorSize)
{
	if (esp_crt_bundle_attach(config) != ESP_OK) {
		snprintf(error, errorSize, "TLS: cannot load ESP-IDF's certificate bundle (enable CONFIG_MBEDTLS_CERTIFICATE_BUNDLE)");
		return -1;
	}
	return 0;
}

const char *tlsPortTrustHint(void)
{
	return "the firmware trusts ESP-IDF's certificate bundle: use a server whose certificate a public CA issued";
}

/* ---- the socket ----------------------------------------------------------------- */

enum { S_CONNECTING, S_HANDSHAKE, S_READY, S_FAILED };

typedef struct {
	xsMachine *the;
	xsSlot self, onReadable, onWritable, onError;
	TLSCore *core;
	modTimer timer;
	int fd, state, format, port;
	int elapsedMs, timeoutMs;
	int readableNew, writableOwed, errorDelivered, closed, busy;
	int failedIn;              /* the state it failed in: onError's stage */
	char address[48];
	char message[TLS_MESSAGE_CHARS];
	size_t inStart, inLength, outLength;
	uint8_t *input, *output;   /* PSRAM */
} TLSSocket;

static void tlsService(modTimer timer, void *refcon, int refconSize);
static void tlsMark(xsMachine *the, void *data, xsMarkRoot markRoot);
static void tlsFreeSocket(TLSSocket *s);
void xs_tlscore_destructor(void *data);
static xsHostHooks gHooks = { xs_tlscore_destructor, tlsMark, NULL };

static long tlsIOSend(void *io, const uint8_t *buffer, size_t size)
{
	TLSSocket *s = io;
	int n = lwip_send(s->fd, buffer, size, MSG_DONTWAIT);
	if (n >= 0)
		return n;
	return (errno == EAGAIN || errno == EWOULDBLOCK) ? TLS_WANT_WRITE : -errno;
}

static long tlsIORecv(void *io, uint8_t *buffer, size_t size)
{
	TLSSocket *s = io;
	int n = lwip_recv(s->fd, buffer, size, MSG_DONTWAIT);
	if (n >= 0)
		return n;
	return (errno == EAGAIN || errno == EWOULDBLOCK) ? TLS_WANT_READ : -errno;
}

static void tlsFail(TLSSocket *s, const char *message)
{
	if (s->state != S_FAILED) {
		s->failedIn = s->state;
		snprintf(s->message, sizeof(s->message), "%s", message);
		s->state = S_FAILED;
		s->outLength = 0;
		s->writableOwed = 0;
	}
}

static void tlsCall(TLSSocket *s, xsSlot *callback, int bytes, const char *message)
{
	xsMachine *the = s->the;
	xsBeginHost(the);
	{
		xsTry {
			/* onError(message, stage), as lin's tcp.c: "connect", "handshake", or undefined once it was ready. */
			if (message && s->failedIn == S_CONNECTING)
				xsCallFunction2(*callback, s->self, xsString(message), xsString("connect"));
			else if (message && s->failedIn == S_HANDSHAKE)
				xsCallFunction2(*callback, s->self, xsString(message), xsString("handshake"));
			else if (message)
				xsCallFunction1(*callback, s->self, xsString(message));
			else
				xsCallFunction1(*callback, s->self, xsInteger(bytes));
		}
		xsCatch {
		}
	}
	xsEndHost(the);
}

static void tlsConnected(TLSSocket *s)
{
	fd_set writable;
	FD_ZERO(&writable);
	FD_SET(s->fd, &writable);
	struct timeval now = { 0, 0 };
	if (lwip_select(s->fd + 1, NULL, &writable, NULL, &now) <= 0)
		return;
	int error = 0;
	socklen_t length = sizeof(error);
	lwip_getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &error, &length);
	if (error) {
		char message[TLS_MESSAGE_CHARS];
		snprintf(message, sizeof(message), "TLS: cannot connect to %s port %d: %s (is the server running and reachable?)",
			s->address, s->port, strerror(error));
		tlsFail(s, message);
		return;
	}
	s->state = S_HANDSHAKE;
}

static void tlsHandshake(TLSSocket *s)
{
	int result = tlsCoreHandshake(s->core);
	if (result == 0) {
		s->state = S_READY;
		s->writableOwed = 1;
	}
	else if (result == TLS_FAILED)
		tlsFail(s, tlsCoreError(s->core));
}

static void tlsPump(TLSSocket *s)
{
	while (s->state == S_READY && s->inLength < TLS_INPUT_BYTES) {
		if (s->inStart + s->inLength == TLS_INPUT_BYTES) {
			memmove(s->input, s->input + s->inStart, s->inLength);
			s->inStart = 0;
		}
		long n = tlsCoreRead(s->core, s->input + s->inStart + s->inLength, TLS_INPUT_BYTES - s->inStart - s->inLength);
		if (n > 0) {
			s->inLength += (size_t)n;
			s->readableNew = 1;
		}
		else if (n == 0)
			tlsFail(s, "TLS: connection closed by peer");
		else {
			if (n == TLS_FAILED)
				tlsFail(s, tlsCoreError(s->core));
			break;
		}
	}
	while (s->state == S_READY && s->outLength) {
		long n = tlsCoreWrite(s->core, s->output, s->outLength);
		if (n <= 0) {
			if (n == TLS_FAILED)
				tlsFail(s, tlsCoreError(s->core));
			break;
		}
		memmove(s->output, s->output + n, s->outLength - (size_t)n);
		s->outLength -= (size_t)n;
	}
}

static void tlsDeliver(TLSSocket *s)
{
	xsMachine *the = s->the;
	if (s->readableNew && s->inLength && xsmcTypeOf(s->onReadable) != xsUndefinedType) {
		s->readableNew = 0;
		tlsCall(s, &s->onReadable, (int)s->inLength, NULL);
		if (s->closed)
			return;
	}
	if (s->state == S_READY && s->writableOwed && !s->outLength) {
		s->writableOwed = 0;
		if (xsmcTypeOf(s->onWritable) != xsUndefinedType) {
			tlsCall(s, &s->onWritable, TLS_OUTPUT_BYTES, NULL);
			if (s->closed)
				return;
		}
	}
	if (s->state == S_FAILED && !s->inLength && !s->errorDelivered) {
		s->errorDelivered = 1;
		if (xsmcTypeOf(s->onError) != xsUndefinedType)
			tlsCall(s, &s->onError, 0, s->message);
	}
}

static void tlsService(modTimer timer, void *refcon, int refconSize)
{
	TLSSocket *s = *(TLSSocket **)refcon;
	(void)timer;
	(void)refconSize;
	s->busy++;
	if (s->state == S_CONNECTING || s->state == S_HANDSHAKE) {
		s->elapsedMs += TLS_POLL_MS;
		if (s->state == S_CONNECTING)
			tlsConnected(s);
		if (s->state == S_HANDSHAKE)
			tlsHandshake(s);
		if ((s->state == S_CONNECTING || s->state == S_HANDSHAKE) && s->elapsedMs >= s->timeoutMs) {
			char message[TLS_MESSAGE_CHARS];
			snprintf(message, sizeof(message), "TLS: %s port %d did not complete the TLS handshake within %d ms; the server stalled or is not a TLS server",
				s->address, s->port, s->timeoutMs);
			tlsCoreFail(s->core, message);
			tlsFail(s, message);
		}
	}
	tlsPump(s);
	tlsDeliver(s);
	s->busy--;
	if (s->closed && !s->busy)
		tlsFreeSocket(s);
}

static void tlsShutdown(TLSSocket *s)
{
	if (s->timer) {
		modTimerRemove(s->timer);
		s->timer = NULL;
	}
	if (s->fd >= 0) {
		if (s->state == S_READY)
			tlsCoreGoodbye(s->core);
		lwip_close(s->fd);
		s->fd = -1;
		modInstrumentationAdjust(NetworkSockets, -1);
	}
}

static void tlsFreeSocket(TLSSocket *s)
{
	tlsShutdown(s);
	tlsCoreFree(s->core);
	tlsPortFree(s->input);
	tlsPortFree(s->output);
	tlsPortFree(s);
}

void xs_tlscore_destructor(void *data)
{
	if (data)
		tlsFreeSocket(data);
}

static void tlsMark(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	TLSSocket *s = data;
	if (s) {
		(*markRoot)(the, &s->onReadable);
		(*markRoot)(the, &s->onWritable);
		(*markRoot)(the, &s->onError);
	}
}

static TLSSocket *tlsThis(xsMachine *the)
{
	TLSSocket *s = xsmcGetHostDataValidate(xsThis, (void *)&gHooks);
	if (!s)
		xsUnknownError("TLS: closed");
	return s;
}

/* Copies a string option into buffer; 0 when absent. */
static int tlsStringOption(xsMachine *the, xsSlot *options, const char *name, char *buffer, size_t size)
{
	xsIdentifier id = xsID((char *)name);
	if (!xsmcHas(*options, id))
		return 0;
	xsmcGet(xsVar(0), *options, id);
	if (xsmcTypeOf(xsVar(0)) != xsStringType)
		xsTypeError("TLS: %s must be a string", name);
	const char *text = xsmcToString(xsVar(0));
	if (strlen(text) >= size)
		xsRangeError("TLS: %s too long", name);
	strcpy(buffer, text);
	return 1;
}

static void tlsCallbackOption(xsMachine *the, const char *name, xsSlot *slot)
{
	xsIdentifier id = xsID((char *)name);
	*slot = xsUndefined;
	if (!xsmcHas(xsArg(0), id))
		return;
	xsmcGet(*slot, xsArg(0), id);
	if (xsmcTypeOf(*slot) != xsUndefinedType && !xsmcIsInstanceOf(*slot, xsFunctionPrototype))
		xsTypeError("TLS: %s must be a function", name);
}

void xs_tlscore_constructor(xsMachine *the)
{
	xsmcVars(5);
	if (xsmcArgc < 1 || xsmcTypeOf(xsArg(0)) != xsReferenceType)
		xsTypeError("TLS: options object required");
	char address[48], name[TLS_NAME_CHARS] = "";
	if (!tlsStringOption(the, &xsArg(0), "address", address, sizeof(address)))
		xsTypeError("TLS: address required");
	uint8_t ip[16];
	int family = tlsPortParseIP(address, ip);
	if (!family)
		xsTypeError("TLS: address must be an IP address");
	xsmcGet(xsVar(0), xsArg(0), xsID("port"));
	int port = xsmcToInteger(xsVar(0));
	if (port < 1 || port > 65535)
		xsRangeError("TLS: invalid port");
	tlsStringOption(the, &xsArg(0), "host", name, sizeof(name));
	int verify = 1, timeoutMs = TLS_HANDSHAKE_MS;
	const uint8_t *caDer = NULL;
	xsUnsignedValue caDerLength = 0;
	if (xsmcHas(xsArg(0), xsID("secure"))) {
		xsmcGet(xsVar(1), xsArg(0), xsID("secure"));
		if (xsmcTypeOf(xsVar(1)) != xsReferenceType)
			xsTypeError("TLS: secure must be an object");
		tlsStringOption(the, &xsVar(1), "serverName", name, sizeof(name));
		if (xsmcHas(xsVar(1), xsID("verify"))) {
			xsmcGet(xsVar(0), xsVar(1), xsID("verify"));
			verify = xsmcTest(xsVar(0));
		}
		if (xsmcHas(xsVar(1), xsID("handshakeTimeout"))) {
			xsmcGet(xsVar(0), xsVar(1), xsID("handshakeTimeout"));
			timeoutMs = xsmcToInteger(xsVar(0));
			if (timeoutMs < 1 || timeoutMs > TLS_HANDSHAKE_MAX_MS)
				xsRangeError("TLS: invalid handshakeTimeout");
		}
		if (xsmcHas(xsVar(1), xsID("certificate")))
			xsmcGet(xsVar(2), xsVar(1), xsID("certificate"));
	}
	if (verify && !name[0])
		xsTypeError("TLS: host required to verify the server's certificate (or secure.verify: false to skip verification)");
	tlsCallbackOption(the, "onReadable", &xsVar(3));
	tlsCallbackOption(the, "onWritable", &xsVar(4));

	TLSSocket *s = tlsPortCalloc(sizeof(TLSSocket));
	if (!s)
		xsUnknownError("TLS: out of memory");
	s->the = the;
	s->fd = -1;
	s->port = port;
	s->timeoutMs = timeoutMs;
	s->onReadable = xsVar(3);
	s->onWritable = xsVar(4);
	tlsCallbackOption(the, "onError", &s->onError);
	strcpy(s->address, address);
	s->input = tlsPortCalloc(TLS_INPUT_BYTES);
	s->output = tlsPortCalloc(TLS_OUTPUT_BYTES);
	if (!s->input || !s->output) {
		tlsFreeSocket(s);
		xsUnknownError("TLS: out of memory");
	}
	char peer[96];
	snprintf(peer, sizeof(peer), "%s port %d", address, port);
	TLSCoreOptions options = { name, peer, verify, NULL, 0 };
	if (verify && xsmcTypeOf(xsVar(2)) != xsUndefinedType) {
		void *data;
		xsmcGetBufferReadable(xsVar(2), &data, &caDerLength);
		caDer = data;
		options.caDer = caDer;
		options.caDerLength = caDerLength;
	}
	TLSCoreIO io = { tlsIOSend, tlsIORecv, s };
	char error[TLS_MESSAGE_CHARS];
	int result = tlsCoreNew(&s->core, &options, &io, error, sizeof(error));
	if (result) {
		tlsFreeSocket(s);
		if (result == TLS_BAD_OPTION)
			xsTypeError("%s", error);
		xsUnknownError("%s", error);
	}

	s->fd = lwip_socket(family == 4 ? AF_INET : AF_INET6, SOCK_STREAM, IPPROTO_TCP);
	if (s->fd < 0) {
		tlsFreeSocket(s);
		xsUnknownError("TLS: no socket available");
	}
	modInstrumentationAdjust(NetworkSockets, +1);
	lwip_fcntl(s->fd, F_SETFL, lwip_fcntl(s->fd, F_GETFL, 0) | O_NONBLOCK);
	/* No Nagle, as on lin: a TLS 1.2 handshake's last flight is several small writes. */
	int nodelay = 1;
	lwip_setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof(nodelay));
	struct sockaddr_storage to;
	memset(&to, 0, sizeof(to));
	socklen_t toLength;
	if (family == 4) {
		struct sockaddr_in *v4 = (struct sockaddr_in *)&to;
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		memcpy(&v4->sin_addr, ip, 4);
		toLength = sizeof(*v4);
	}
	else {
		struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&to;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		memcpy(&v6->sin6_addr, ip, 16);
		toLength = sizeof(*v6);
	}
	if (lwip_connect(s->fd, (struct sockaddr *)&to, toLength) < 0 && errno != EINPROGRESS) {
		char message[TLS_MESSAGE_CHARS];
		snprintf(message, sizeof(message), "TLS: cannot connect to %s port %d: %s", address, port, strerror(errno));
		tlsFail(s, message);
	}
	xsmcSetHostData(xsThis, s);
	/* The hooks: the collector marks the callbacks (tlsMark), and every
	 * method finds its socket (xsmcGetHostDataValidate compares them). */
	xsSetHostHooks(xsThis, &gHooks);
	s->self = xsThis;
	xsRemember(s->self);
	s->timer = modTimerAdd(0, TLS_POLL_MS, tlsService, &s, sizeof(s));
}

void xs_tlscore_close(xsMachine *the)
{
	TLSSocket *s = xsmcGetHostDataValidate(xsThis, (void *)&gHooks);
	if (!s)
		return;
	xsmcSetHostData(xsThis, NULL);
	xsForget(s->self);
	tlsShutdown(s);
	s->closed = 1;
	s->onReadable = s->onWritable = s->onError = xsUndefined;
	if (!s->busy)
		tlsFreeSocket(s);
}

/* read(): all available bytes as an ArrayBuffer; read(n): up to n of them;
 * read(buffer): fills up to its length and returns the count (nothing is
 * allocated: net/http reads every reply into one kept buffer); "number"
 * format: one byte. Returns undefined when nothing is available. */
void xs_tlscore_read(xsMachine *the)
{
	TLSSocket *s = tlsThis(the);
	void *into = NULL;
	xsUnsignedValue room = 0;
	if (!s->inLength)
		return;
	size_t count = s->format ? 1 : s->inLength;
	if (!s->format && xsmcArgc > 0 && xsmcTypeOf(xsArg(0)) == xsReferenceType) {
		xsmcGetBufferWritable(xsArg(0), &into, &room);
		if ((size_t)room < count)
			count = (size_t)room;
	}
	else if (!s->format && xsmcArgc > 0 && xsmcTypeOf(xsArg(0)) != xsUndefinedType) {
		int wanted = xsmcToInteger(xsArg(0));
		if (wanted < 1)
			xsRangeError("TLS: invalid read size");
		if ((size_t)wanted < count)
			count = (size_t)wanted;
	}
	if (s->format)
		xsmcSetInteger(xsResult, s->input[s->inStart]);
	else if (into) {
		memcpy(into, s->input + s->inStart, count);
		xsmcSetInteger(xsResult, (xsIntegerValue)count);
	}
	else
		xsmcSetArrayBuffer(xsResult, s->input + s->inStart, (xsIntegerValue)count);
	s->inStart += count;
	s->inLength -= count;
	if (!s->inLength)
		s->inStart = 0;
}

void xs_tlscore_write(xsMachine *the)
{
	TLSSocket *s = tlsThis(the);
	void *data;
	xsUnsignedValue length;
	uint8_t byte;
	if (s->format) {
		int value = xsmcToInteger(xsArg(0));
		if (value < 0 || value > 255)
			xsRangeError("TLS: invalid byte (0 to 255 in \"number\" format)");
		byte = (uint8_t)value;
		data = &byte;
		length = 1;
	}
	else
		xsmcGetBufferReadable(xsArg(0), &data, &length);
	if (s->state == S_FAILED)
		xsUnknownError("TLS: cannot write after an error");
	if (s->state != S_READY)
		xsUnknownError("TLS: not connected yet: write after onWritable");
	if (length > TLS_OUTPUT_BYTES - s->outLength)
		xsRangeError("TLS: write exceeds the bytes writable: write at most what onWritable reports");
	memcpy(s->output + s->outLength, data, length);
	s->outLength += length;
	if (length)
		s->writableOwed = 1;
	xsmcSetInteger(xsResult, (xsIntegerValue)(TLS_OUTPUT_BYTES - s->outLength));
}

void xs_tlscore_get_remoteAddress(xsMachine *the) { xsmcSetString(xsResult, tlsThis(the)->address); }
void xs_tlscore_get_remotePort(xsMachine *the) { xsmcSetInteger(xsResult, tlsThis(the)->port); }
void xs_tlscore_get_format(xsMachine *the) { xsmcSetString(xsResult, tlsThis(the)->format ? "number" : "buffer"); }

void xs_tlscore_set_format(xsMachine *the)
{
	TLSSocket *s = tlsThis(the);
	const char *format = xsmcTypeOf(xsArg(0)) == xsStringType ? xsmcToString(xsArg(0)) : "";
	if (!strcmp(format, "number"))
		s->format = 1;
	else if (!strcmp(format, "buffer"))
		s->format = 0;
	else
		xsRangeError("TLS: invalid format (\"buffer\" or \"number\")");
}

void xs_tlscore_get_resumed(xsMachine *the) { xsmcSetBoolean(xsResult, tlsCoreResumed(tlsThis(the)->core)); }
void xs_tlscore_get_protocol(xsMachine *the) { xsmcSetString(xsResult, (char *)tlsCoreVersion(tlsThis(the)->core)); }

void xs_tlscore_memory(xsMachine *the)
{
	if (xsmcArgc > 0 && xsmcTest(xsArg(0)))
		tlsCoreResetPeak();
	TLSCoreMemory memory;
	tlsCoreMemory(&memory);
	xsmcVars(1);
	xsResult = xsNewObject();
	xsmcSetNumber(xsVar(0), (double)memory.bytes);
	xsmcSet(xsResult, xsID("bytes"), xsVar(0));
	xsmcSetNumber(xsVar(0), (double)memory.peakBytes);
	xsmcSet(xsResult, xsID("peakBytes"), xsVar(0));
	xsmcSetNumber(xsVar(0), (double)memory.allocations);
	xsmcSet(xsResult, xsID("allocations"), xsVar(0));
	xsmcSetString(xsVar(0), (char *)tlsCoreLibrary());
	xsmcSet(xsResult, xsID("library"), xsVar(0));
}

void xs_tlscore_forget_sessions(xsMachine *the)
{
	(void)the;
	tlsCoreForgetSessions();
}
