/*
 * udp.c — `embedded:io/socket/udp` on the lin host, in the shape of the SDK's
 * (modules/io/socket/lwip/udp.js): new UDP({port, address, onReadable(packets),
 * target}); read() gives the next datagram as an ArrayBuffer with its sender's
 * `address` and `port`; write(buffer, address, port) sends one; close(). Also
 * `port`, the port it is bound to (port 0: one the system chose), which the
 * SDK's lacks: the lin host's simulated captive DNS and mDNS answer on ports
 * the system picks, printed for the person and the tests.
 *
 * IPv4 only, as the board's. The address defaults to 127.0.0.1 on this host (a
 * board binds every interface of its own network): nothing here opens a port
 * to the machine's network unless asked. Datagrams wait in a queue of
 * UDP_PENDING_MAX; while it is full the kernel holds or drops the rest, as a
 * board's lwIP does. A datagram longer than UDP_PACKET_MAX_BYTES is cut to it
 * (what a DNS answerer reads is at most 512 bytes). onReadable(packets) is
 * called with the datagrams waiting, on the loop turn after they arrive.
 */
#include "xsAll.h"
#include "host.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define UDP_PENDING_MAX 16
#define UDP_PACKET_MAX_BYTES 1500

typedef struct {
	int length;
	uint16_t port;
	char address[INET_ADDRSTRLEN];
	uint8_t bytes[UDP_PACKET_MAX_BYTES];
} Datagram;

typedef struct {
	xsMachine *the;
	xsSlot self;               /* remembered until close() */
	xsSlot onReadable;
	int fd;
	int port;
	HostWatch *watch;
	HostTimer *kick;
	int busy;
	int closed;
	int count;                 /* pending */
	Datagram pending[UDP_PENDING_MAX];
} Udp;

static void udpDestructor(void *data);
static void udpMarker(xsMachine *the, void *data, xsMarkRoot markRoot);
static xsHostHooks gUdpHooks = { udpDestructor, udpMarker, NULL };
static void udpUpdate(Udp *u);

static void udpReceive(Udp *u)
{
	while (u->count < UDP_PENDING_MAX) {
		Datagram *d = &u->pending[u->count];
		struct sockaddr_in from;
		socklen_t length = sizeof(from);
		ssize_t n = recvfrom(u->fd, d->bytes, sizeof(d->bytes), MSG_DONTWAIT, (struct sockaddr *)&from, &length);
		if (n < 0)
			break;   /* EAGAIN, or an ICMP error of an earlier send: nothing to read */
		d->length = (int)n;
		d->port = ntohs(from.sin_port);
		inet_ntop(AF_INET, &from.sin_addr, d->address, sizeof(d->address));
		u->count++;
	}
}

static void udpService(Udp *u)
{
	u->busy++;
	udpReceive(u);
	xsMachine *the = u->the;
	if (u->count && !u->closed && xsTypeOf(u->onReadable) != xsUndefinedType) {
		hostCallBegin(the);
		{
			xsCallFunction1(u->onReadable, u->self, xsInteger(u->count));
		}
		hostCallEnd(the);
	}
	u->busy--;
	if (u->closed) {
		if (!u->busy)
			free(u);
		return;
	}
	udpUpdate(u);
}

static void udpOnPoll(void *ctx, int fd, short revents)
{
	(void)fd;
	(void)revents;
	udpService(ctx);
}

static void udpKickFire(void *ctx)
{
	Udp *u = ctx;
	u->kick = NULL;
	udpService(u);
}

/* Watch for datagrams while the queue has room. */
static void udpUpdate(Udp *u)
{
	if (u->closed)
		return;
	if (u->count < UDP_PENDING_MAX) {
		if (!u->watch)
			u->watch = hostWatch(u->fd, POLLIN, udpOnPoll, u);
	}
	else if (u->watch) {
		hostUnwatch(u->watch);
		u->watch = NULL;
	}
}

static void udpShutdown(Udp *u)
{
	hostUnwatch(u->watch);
	u->watch = NULL;
	hostTimerCancel(u->kick);
	u->kick = NULL;
	if (u->fd >= 0) {
		close(u->fd);
		u->fd = -1;
	}
}

static void udpDestructor(void *data)
{
	Udp *u = data;
	if (u) {
		udpShutdown(u);
		free(u);
	}
}

static void udpMarker(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	Udp *u = data;
	if (u)
		(*markRoot)(the, &u->onReadable);
}

static void xs_udp_constructor(xsMachine *the)
{
	const char *name = "UDP";
	xsVars(1);
	hostConstructThis(the, &gUdpHooks, name);
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		xsTypeError("%s: options object required", name);
	xsSlot *options = &xsArg(0);
	int port = hostIntegerOption(the, options, "port", 0, 65535, 0, name);
	char text[64] = "127.0.0.1";
	hostStringOption(the, options, "address", text, sizeof(text), 0, name);
	struct sockaddr_in in4 = { 0 };
	if (inet_pton(AF_INET, text, &in4.sin_addr) != 1)
		xsTypeError("%s: address must be an IPv4 address: \"%s\"", name, text);
	in4.sin_family = AF_INET;
	in4.sin_port = htons((uint16_t)port);
	hostCallbackOption(the, options, "onReadable", &xsVar(0), name);
	if (hostHasOption(the, options, "target")) {
		xsSlot target = xsGet(*options, hostID("target"));
		xsDefine(xsThis, hostID("target"), target, xsDefault);
	}
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		xsUnknownError("%s: cannot create a socket: %s", name, strerror(errno));
	if (bind(fd, (struct sockaddr *)&in4, sizeof(in4)) < 0) {
		int error = errno;
		close(fd);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "%s: cannot bind %s port %d: %s", name, text, port, strerror(error));
	}
	struct sockaddr_in bound;
	socklen_t boundLength = sizeof(bound);
	if (getsockname(fd, (struct sockaddr *)&bound, &boundLength) == 0)
		port = ntohs(bound.sin_port);
	Udp *u = calloc(1, sizeof(Udp));
	if (!u) {
		close(fd);
		xsUnknownError("%s: out of memory", name);
	}
	u->the = the;
	u->fd = fd;
	u->port = port;
	u->onReadable = xsVar(0);
	xsSetHostData(xsThis, u);
	u->self = xsThis;
	xsRemember(u->self);
	udpUpdate(u);
}

/* read(): the next datagram, an ArrayBuffer with address and port; undefined when none waits. */
static void xs_udp_read(xsMachine *the)
{
	Udp *u = hostThis(the, &gUdpHooks, "UDP");
	if (!u->count)
		return;
	Datagram *d = &u->pending[0];
	xsResult = xsArrayBuffer(d->bytes, d->length);
	xsDefine(xsResult, hostID("address"), xsString(d->address), xsDefault);
	xsDefine(xsResult, hostID("port"), xsInteger(d->port), xsDefault);
	u->count--;
	memmove(u->pending, u->pending + 1, (size_t)u->count * sizeof(Datagram));
	/* Room again: more may be waiting in the kernel. */
	if (!u->busy && !u->kick)
		u->kick = hostTimerStart(0, udpKickFire, u);
}

/* write(buffer, address, port): sends one datagram; a refusal by the system throws. */
static void xs_udp_write(xsMachine *the)
{
	Udp *u = hostThis(the, &gUdpHooks, "UDP");
	if (hostArgc < 3)
		xsTypeError("UDP: write(buffer, address, port)");
	/* The address and port first: converting them may allocate, which may move the buffer's bytes. */
	char text[INET_ADDRSTRLEN + 1];
	struct sockaddr_in to = { 0 };
	snprintf(text, sizeof(text), "%s", xsToString(xsArg(1)));
	if (inet_pton(AF_INET, text, &to.sin_addr) != 1)
		xsTypeError("UDP: write's address must be an IPv4 address");
	double port = xsToNumber(xsArg(2));
	if (!hostIsWhole(port, 1, 65535))
		xsRangeError("UDP: write's port must be 1 to 65535");
	size_t length = 0;
	void *bytes = hostBytes(the, &xsArg(0), &length, "UDP");
	if (length > UDP_PACKET_MAX_BYTES)
		xsRangeError("UDP: a datagram is at most %d bytes", UDP_PACKET_MAX_BYTES);
	to.sin_family = AF_INET;
	to.sin_port = htons((uint16_t)port);
	if (sendto(u->fd, bytes, length, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to)) < 0)
		xsUnknownError("UDP: cannot send: %s", strerror(errno));
}

static void xs_udp_close(xsMachine *the)
{
	Udp *u = hostThisOrNull(the, &gUdpHooks, "UDP");
	if (!u)
		return;
	xsSetHostData(xsThis, NULL);
	xsForget(u->self);
	udpShutdown(u);
	u->closed = 1;
	u->count = 0;
	u->onReadable = xsUndefined;
	if (!u->busy)
		free(u);
}

static void xs_udp_get_port(xsMachine *the)
{
	Udp *u = hostThis(the, &gUdpHooks, "UDP");
	xsResult = xsInteger(u->port);
}

static const HostMember gUdpMembers[] = {
	{ "read", xs_udp_read, 0, 0 },
	{ "write", xs_udp_write, 3, 0 },
	{ "close", xs_udp_close, 0, 0 },
	{ "port", xs_udp_get_port, 0, 1 },
	{ NULL }
};

void hostInstallUDP(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "UDP", xs_udp_constructor, 1, gUdpMembers, &gUdpHooks);
}
