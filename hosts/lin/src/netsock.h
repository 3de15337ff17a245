/*
 * netsock.h — the stream-socket engine shared by TCP (tcp.c) and TLS (tls.c).
 *
 * tcp.c owns the engine: option parsing, the non-blocking connect driven by
 * the poll loop, the bounded input and output buffers, the ECMA-419 callbacks
 * and the JS methods. A transport (plain TCP in tcp.c, mbedtls in tls.c) only
 * moves bytes between those buffers and the file descriptor.
 *
 * Buffer invariants: input holds bytes received from the transport and not yet
 * read by JS (at most NET_INPUT_BYTES); output holds bytes JS wrote that the
 * transport has not yet accepted (at most NET_OUTPUT_BYTES). write() of more
 * than the free output space throws; onWritable(bytes free) fires once the
 * stream is ready and again each time the output queue has drained.
 */
#ifndef XSCLAW_NETSOCK_H
#define XSCLAW_NETSOCK_H

#include "host.h"

/* Transport results besides a byte count (> 0) or 0 for the end of the stream. */
#define NET_FAILED (-1)      /* the message was set with netFail() */
#define NET_WANT_READ (-2)   /* call again when the fd is readable */
#define NET_WANT_WRITE (-3)  /* call again when the fd is writable */

typedef struct NetSocket NetSocket;

typedef struct {
	/* After the TCP connection is up: 0 when the stream is ready for data,
	 * NET_WANT_READ / NET_WANT_WRITE to be called again, NET_FAILED. */
	int (*start)(NetSocket *socket);
	/* Like recv(): bytes (> 0), 0 at the end of the stream, or a NET_ code. */
	long (*receive)(NetSocket *socket, uint8_t *buffer, size_t size);
	/* Like send(): bytes accepted (> 0) or a NET_ code. After a NET_WANT_*
	 * the engine calls again starting with the same bytes (perhaps moved,
	 * perhaps followed by more). */
	long (*send)(NetSocket *socket, const uint8_t *buffer, size_t size);
	/* Bytes already received and waiting inside the transport, which poll()
	 * cannot see. */
	size_t (*buffered)(NetSocket *socket);
	/* Best-effort goodbye before the descriptor closes; must not block. */
	void (*goodbye)(NetSocket *socket);
	/* Frees the transport context given to netOpen. */
	void (*release)(void *context);
} NetTransport;

typedef struct {
	const char *name;               /* "TCP" or "TLS": prefixes every error */
	xsHostHooks *hooks;             /* identifies instances of this class */
	const NetTransport *transport;
} NetClass;

/* The TCP options of a constructor, validated; nothing allocated. */
typedef struct {
	int family;                     /* AF_INET or AF_INET6 */
	unsigned char address[16];      /* network order */
	char text[64];                  /* the address as inet_ntop writes it */
	int port;
	int nodelay;                    /* -1 absent, 0 or 1 */
	int format;                     /* NET_FORMAT_* */
	int from;                       /* an accepted connection's descriptor (option from), or -1 */
} NetOptions;

enum { NET_FORMAT_BUFFER = 0, NET_FORMAT_NUMBER = 1 };

/* The callbacks wait in the constructor's first xsVars, where the garbage
 * collector sees them, until netOpen hands them to the socket (and its
 * marker): a getter on the options may return a function nothing else holds.
 * A constructor calls xsVars(NET_VARS + its own) before anything else, and
 * uses xsVar(NET_VARS) onwards for itself. Undefined when absent. */
enum { NET_VAR_ON_READABLE, NET_VAR_ON_WRITABLE, NET_VAR_ON_ERROR, NET_VARS };

/* Reads xsArg(0) of a constructor; throws specific errors naming cls. */
void netParseOptions(xsMachine *the, const NetClass *cls, NetOptions *options);
/* Creates the socket and starts connecting; makes xsThis the instance.
 * Takes ownership of context (released on failure too). Throws only when the
 * socket cannot be created; connection errors reach onError later. */
NetSocket *netOpen(xsMachine *the, const NetClass *cls, const NetOptions *options, void *context);

/* option from: the descriptor of a connection a Listener accepted (listener.c),
 * which the caller now owns, with its peer's address and port; -1 when value
 * is not one, or was taken already. */
int netTakeAccepted(xsMachine *the, xsSlot *value, char *address, size_t size, int *port);

/* For transports. */
int netFd(NetSocket *socket);
void *netContext(NetSocket *socket);
const char *netAddressText(NetSocket *socket);
int netPort(NetSocket *socket);
/* Records the error that onError will report; returns NET_FAILED. */
int netFail(NetSocket *socket, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Fails the stream from outside the transport (a deadline): onError(message)
 * follows on the next loop turn, after data already received is read. */
void netAbort(NetSocket *socket, const char *message);

/* The JS methods, for each class's own receiver check. */
/* The transport context of `this`, after the receiver check. */
void *netContextOf(xsMachine *the, const NetClass *cls);
void netDestructor(void *data);
void netMarker(xsMachine *the, void *data, xsMarkRoot markRoot);
void netRead(xsMachine *the, const NetClass *cls);
void netWrite(xsMachine *the, const NetClass *cls);
void netClose(xsMachine *the, const NetClass *cls);
void netGetRemoteAddress(xsMachine *the, const NetClass *cls);
void netGetRemotePort(xsMachine *the, const NetClass *cls);
void netGetFormat(xsMachine *the, const NetClass *cls);
void netSetFormat(xsMachine *the, const NetClass *cls);

#endif
