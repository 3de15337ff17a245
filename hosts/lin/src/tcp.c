/*
 * tcp.c — `embedded:io/socket/tcp` on the lin host, and the stream-socket
 * engine that TLS (tls.c) shares; netsock.h states the contract.
 *
 * As on the device, the address is an IP literal (IPv4 or IPv6): names are
 * resolved first with embedded:network/dns/resolver/udp. The connect is
 * non-blocking and driven by the host's poll loop. Callbacks run with the
 * socket as `this`: onReadable(bytes available), onWritable(bytes free) once
 * connected and whenever the output queue has drained, onError(message, stage)
 * once, after any data received before the failure has been read (stage:
 * "connect", "handshake" or undefined, netCallError). A socket stays
 * alive (xsRemember) until close(); after close() nothing calls back.
 *
 * Small writes of one loop turn go out together at its end (NET_COALESCE_BYTES;
 * hosts/lin/NOTES.md, "CPU per turn").
 *
 * A connection a Listener accepted (listener.c) is taken over with the option
 * `from` (TCP only): it is connected, so onWritable comes on the next turn.
 *
 * Limits: a closed or failed stream is not half-open: after the peer closes,
 * write() throws.
 */
#include "xsAll.h"
#include "netsock.h"
#include "budgets.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bytes read ahead from the peer before JS reads them; past this the peer is
 * paced by TCP flow control (the device's lwip window is of the same order). */
#define NET_INPUT_BYTES (16 * 1024)
/* Bytes JS may queue before onWritable (modules/budgets.ts): bounds memory
 * per socket and keeps large writes paced by the peer. Room for a whole LLM
 * request: its body is written once and goes in one send() (with 16 KiB, a
 * 17-50 KB body took two or more sends and an onWritable in between). */
#define NET_OUTPUT_BYTES BUDGET_NET_OUTPUT_BYTES
/* Writes that leave less than this queued wait for the end of the loop turn
 * and go in one send() with whatever else is written in the turn (an HTTP
 * request is written as its head, a length line, the body and a tail): each
 * send on a connection costs a system call and a pass through the peer's
 * stack. Larger ones go at once, with what waits before them. */
#define NET_COALESCE_BYTES 2048
/* An error sentence for onError, with the address in it. */
#define NET_MESSAGE_CHARS 256

int hostOpenSockets = 0;

enum { STATE_CONNECTING, STATE_STARTING, STATE_READY, STATE_FAILED };

struct NetSocket {
	xsMachine *the;
	const NetClass *cls;
	void *context;            /* the transport's, released with the socket */
	int fd;                   /* -1 once closed */
	int state;
	short want;               /* poll events the transport waits for while starting */
	HostWatch *watch;         /* NULL while there is nothing to wait for */
	HostTimer *kick;          /* a service on the next loop turn */
	HostTimer *flushLater;    /* small writes wait for the end of the turn */
	HostTimer *writableLater; /* onWritable at the end of the turn: the queue drained at once */
	xsSlot self;              /* remembered until close() */
	xsSlot onReadable, onWritable, onError;
	int format;
	int port;
	char addressText[64];
	int readableNew;          /* data arrived since the last onReadable */
	int writableOwed;         /* onWritable due once the output queue drains */
	int errorDelivered;
	int failedIn;             /* the state the socket failed in (onError's stage) */
	int busy;                 /* depth of netService on the stack */
	int closed;               /* detached from JS; freed when not busy */
	char message[NET_MESSAGE_CHARS];
	size_t inStart, inLength;
	size_t outStart, outLength;
	uint8_t input[NET_INPUT_BYTES];
	uint8_t output[NET_OUTPUT_BYTES];
};

static void netService(NetSocket *s, short revents);

int netFd(NetSocket *s)
{
	return s->fd;
}

void *netContext(NetSocket *s)
{
	return s->context;
}

const char *netAddressText(NetSocket *s)
{
	return s->addressText;
}

int netPort(NetSocket *s)
{
	return s->port;
}

int netFail(NetSocket *s, const char *format, ...)
{
	if (s->state != STATE_FAILED) {
		s->failedIn = s->state;
		va_list args;
		va_start(args, format);
		vsnprintf(s->message, sizeof(s->message), format, args);
		va_end(args);
		s->state = STATE_FAILED;
		s->outStart = s->outLength = 0;
		s->writableOwed = 0;
	}
	return NET_FAILED;
}

/* ---- the loop side ------------------------------------------------------ */

static void netKickFire(void *ctx)
{
	NetSocket *s = ctx;
	s->kick = NULL;
	netService(s, 0);
}

static void netKick(NetSocket *s)
{
	if (!s->kick && !s->closed)
		s->kick = hostTimerStart(0, netKickFire, s);
}

/* The queue drained as it was written: the room is there now, no poll()
 * needs to say so (as if it had said POLLOUT: nothing is received). */
static void netWritableFire(void *ctx)
{
	NetSocket *s = ctx;
	s->writableLater = NULL;
	netService(s, POLLOUT);
}

static void netOnPoll(void *ctx, int fd, short revents)
{
	(void)fd;
	netService(ctx, revents);
}

/* Watches exactly what the socket waits for; nothing means no watch, so an
 * idle failed socket neither spins the loop nor keeps the program alive. */
static void netUpdate(NetSocket *s)
{
	short events = 0;
	if (!s->closed) {
		switch (s->state) {
		case STATE_CONNECTING:
			events = POLLOUT;
			break;
		case STATE_STARTING:
			events = s->want;
			break;
		case STATE_READY:
			if (s->inLength < NET_INPUT_BYTES)
				events |= POLLIN;
			/* onWritable is owed once the queue drains: poll() says when,
			 * unless it is empty already (the kernel took it all), and then
			 * it is called before the loop waits: a request written in
			 * parts needs no wake-up per part. */
			if (s->outLength)
				events |= POLLOUT;
			else if (s->writableOwed && !s->writableLater)
				s->writableLater = hostTimerBeforeWait(netWritableFire, s);
			break;
		}
	}
	if (!events) {
		hostUnwatch(s->watch);
		s->watch = NULL;
	}
	else if (!s->watch)
		s->watch = hostWatch(s->fd, events, netOnPoll, s);
	else
		hostWatchSetEvents(s->watch, events);
}

static void netBecomeReady(NetSocket *s)
{
	s->state = STATE_READY;
	s->writableOwed = 1;
}

static void netStart(NetSocket *s)
{
	int result = s->cls->transport->start(s);
	if (result == 0)
		netBecomeReady(s);
	else if (result == NET_WANT_READ)
		s->want = POLLIN;
	else if (result == NET_WANT_WRITE)
		s->want = POLLOUT;
}

static void netConnected(NetSocket *s)
{
	int error = 0;
	socklen_t length = sizeof(error);
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &error, &length) < 0)
		error = errno;
	if (error) {
		netFail(s, "%s: cannot connect to %s port %d: %s (is the server running and reachable?)",
			s->cls->name, s->addressText, s->port, strerror(error));
		return;
	}
	if (s->cls->transport->start) {
		s->state = STATE_STARTING;
		netStart(s);
	}
	else
		netBecomeReady(s);
}

/* Moves bytes from the transport into the input buffer while it has room. */
static void netPump(NetSocket *s)
{
	while (s->state == STATE_READY && s->inLength < NET_INPUT_BYTES) {
		if (s->inStart + s->inLength == NET_INPUT_BYTES) {
			memmove(s->input, s->input + s->inStart, s->inLength);
			s->inStart = 0;
		}
		size_t room = NET_INPUT_BYTES - s->inStart - s->inLength;
		long n = s->cls->transport->receive(s, s->input + s->inStart + s->inLength, room);
		if (n > 0) {
			s->inLength += (size_t)n;
			s->readableNew = 1;
			/* A stream socket that gave less than asked had no more: poll()
			 * says when more comes, so no recv() just to hear EAGAIN. A
			 * transport with bytes of its own (TLS) is asked until it says so. */
			if ((size_t)n < room && !s->cls->transport->buffered)
				break;
		}
		else if (n == 0)
			netFail(s, "%s: connection closed by peer", s->cls->name);
		else
			break;
	}
}

/* Hands queued output to the transport until it would block. */
static void netFlush(NetSocket *s)
{
	while (s->state == STATE_READY && s->outLength) {
		long n = s->cls->transport->send(s, s->output + s->outStart, s->outLength);
		if (n <= 0)
			break;
		s->outStart += (size_t)n;
		s->outLength -= (size_t)n;
		if (!s->outLength)
			s->outStart = 0;
	}
}

/* onError(message, stage): stage says where the socket failed, so a caller
 * decides by it and not by the sentence: "connect" (the TCP connection),
 * "handshake" (the transport's start: TLS), undefined once it was ready. */
static void netCallError(NetSocket *s)
{
	xsMachine *the = s->the;
	const char *stage = s->failedIn == STATE_CONNECTING ? "connect" : s->failedIn == STATE_STARTING ? "handshake" : NULL;
	hostCallBegin(the);
	{
		xsCallFunction2(s->onError, s->self, xsString(s->message), stage ? xsString((char *)stage) : xsUndefined);
	}
	hostCallEnd(the);
}

static void netCall(NetSocket *s, xsSlot *callback, int bytes)
{
	xsMachine *the = s->the;
	hostCallBegin(the);
	{
		xsCallFunction1(*callback, s->self, xsInteger(bytes));
	}
	hostCallEnd(the);
}

/* Calls back in order: data, then room to write, then the error once the
 * data received before it has been read. Stops as soon as JS closes. */
static void netDeliver(NetSocket *s)
{
	xsMachine *the = s->the;
	if (s->readableNew && s->inLength) {
		s->readableNew = 0;
		if (xsTypeOf(s->onReadable) != xsUndefinedType) {
			netCall(s, &s->onReadable, (int)s->inLength);
			if (s->closed)
				return;
		}
	}
	if (s->state == STATE_READY && s->writableOwed && !s->outLength) {
		s->writableOwed = 0;
		if (xsTypeOf(s->onWritable) != xsUndefinedType) {
			netCall(s, &s->onWritable, NET_OUTPUT_BYTES);
			if (s->closed)
				return;
		}
	}
	if (s->state == STATE_FAILED && !s->inLength && !s->errorDelivered) {
		s->errorDelivered = 1;
		if (xsTypeOf(s->onError) != xsUndefinedType)
			netCallError(s);
	}
}

static void netFree(NetSocket *s)
{
	if (s->cls->transport->release)
		s->cls->transport->release(s->context);
	free(s);
}

static void netService(NetSocket *s, short revents)
{
	s->busy++;
	if (s->state == STATE_CONNECTING && revents)
		netConnected(s);
	else if (s->state == STATE_STARTING && revents)
		netStart(s);
	if (s->state == STATE_READY) {
		/* Woken only because the socket can take more: nothing to receive
		 * unless the transport holds bytes poll() cannot see. A kick (no
		 * revents) receives as before. */
		const NetTransport *transport = s->cls->transport;
		if (revents != POLLOUT || (transport->buffered && transport->buffered(s)))
			netPump(s);
		netFlush(s);
	}
	netDeliver(s);
	s->busy--;
	if (!s->closed)
		netUpdate(s);
	else if (!s->busy)
		netFree(s);
}

/* Sends what can go without blocking, says goodbye and closes the fd. */
static void netShutdown(NetSocket *s)
{
	if (s->fd >= 0) {
		if (s->state == STATE_READY) {
			netFlush(s);
			if (s->cls->transport->goodbye && s->state == STATE_READY)
				s->cls->transport->goodbye(s);
		}
		close(s->fd);
		s->fd = -1;
		__atomic_sub_fetch(&hostOpenSockets, 1, __ATOMIC_RELAXED);
	}
	hostUnwatch(s->watch);
	s->watch = NULL;
	hostTimerCancel(s->kick);
	s->kick = NULL;
	hostTimerCancel(s->flushLater);
	s->flushLater = NULL;
	hostTimerCancel(s->writableLater);
	s->writableLater = NULL;
}

void netDestructor(void *data)
{
	NetSocket *s = data;
	if (s) {
		netShutdown(s);
		netFree(s);
	}
}

void netMarker(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	NetSocket *s = data;
	if (s) {
		(*markRoot)(the, &s->onReadable);
		(*markRoot)(the, &s->onWritable);
		(*markRoot)(the, &s->onError);
	}
}

/* ---- construction ------------------------------------------------------- */

void netParseOptions(xsMachine *the, const NetClass *cls, NetOptions *o)
{
	const char *name = cls->name;
	hostConstructThis(the, cls->hooks, name);
	memset(o, 0, sizeof(*o));
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		xsTypeError("%s: options object required", name);
	xsSlot *options = &xsArg(0);
	o->from = -1;
	char text[64];
	if (hostHasOption(the, options, "from")) {
		if (strcmp(name, "TCP"))
			xsTypeError("%s: option from is not supported on this host", name);
		xsVar(NET_VAR_ON_READABLE) = xsGet(*options, hostID("from"));
		o->from = netTakeAccepted(the, &xsVar(NET_VAR_ON_READABLE), text, sizeof(text), &o->port);
		xsVar(NET_VAR_ON_READABLE) = xsUndefined;
		if (o->from < 0)
			xsTypeError("%s: from must be a connection a Listener's read() returned, not yet taken", name);
		o->family = strchr(text, ':') ? AF_INET6 : AF_INET;
		snprintf(o->text, sizeof(o->text), "%s", text);
	}
	else if (!hostHasOption(the, options, "address"))
		xsTypeError("%s: address required: an IP address (resolve host names with embedded:network/dns/resolver/udp first)", name);
	if (o->from < 0) {
		hostStringOption(the, options, "address", text, sizeof(text), 1, name);
		if (inet_pton(AF_INET, text, o->address) == 1)
			o->family = AF_INET;
		else if (inet_pton(AF_INET6, text, o->address) == 1)
			o->family = AF_INET6;
		else
			xsTypeError("%s: address must be an IP address (resolve names first): \"%s\"", name, text);
		inet_ntop(o->family, o->address, o->text, sizeof(o->text));
		o->port = hostIntegerOption(the, options, "port", 1, 65535, -1, name);
		if (o->port < 0)
			xsTypeError("%s: port required", name);
	}
	o->nodelay = -1;
	if (hostHasOption(the, options, "nodelay"))
		o->nodelay = xsToBoolean(xsGet(*options, hostID("nodelay"))) ? 1 : 0;
	char format[8];
	o->format = NET_FORMAT_BUFFER;
	if (hostStringOption(the, options, "format", format, sizeof(format), 0, name)) {
		if (!strcmp(format, "number"))
			o->format = NET_FORMAT_NUMBER;
		else if (strcmp(format, "buffer"))
			xsRangeError("%s: invalid format (\"buffer\" or \"number\")", name);
	}
	hostCallbackOption(the, options, "onReadable", &xsVar(NET_VAR_ON_READABLE), name);
	hostCallbackOption(the, options, "onWritable", &xsVar(NET_VAR_ON_WRITABLE), name);
	hostCallbackOption(the, options, "onError", &xsVar(NET_VAR_ON_ERROR), name);
	if (hostHasOption(the, options, "target")) {
		xsSlot target = xsGet(*options, hostID("target"));
		xsDefine(xsThis, hostID("target"), target, xsDefault);
	}
}

NetSocket *netOpen(xsMachine *the, const NetClass *cls, const NetOptions *o, void *context)
{
	const NetTransport *transport = cls->transport;
	int fd = o->from >= 0 ? o->from : socket(o->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int error = errno;
		if (transport->release)
			transport->release(context);
		xsUnknownError("%s: cannot create a socket: %s", cls->name, strerror(error));
	}
	/* The buffers are not zeroed: only what was written into them is read,
	 * and zeroing would write (and fault in) all 80 KiB at every connect. */
	NetSocket *s = malloc(sizeof(NetSocket));
	if (s)
		memset(s, 0, offsetof(NetSocket, input));
	if (!s) {
		close(fd);
		if (transport->release)
			transport->release(context);
		xsUnknownError("%s: out of memory", cls->name);
	}
	__atomic_add_fetch(&hostOpenSockets, 1, __ATOMIC_RELAXED);
	s->the = the;
	s->cls = cls;
	s->context = context;
	s->fd = fd;
	s->format = o->format;
	s->port = o->port;
	strcpy(s->addressText, o->text);
	s->onReadable = xsVar(NET_VAR_ON_READABLE);
	s->onWritable = xsVar(NET_VAR_ON_WRITABLE);
	s->onError = xsVar(NET_VAR_ON_ERROR);
	s->state = STATE_CONNECTING;
	if (o->nodelay >= 0) {
		int value = o->nodelay;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, sizeof(value));
	}
	if (o->from >= 0) {
		/* Accepted: connected already (only plain TCP takes from). */
		netBecomeReady(s);
		xsSetHostData(xsThis, s);
		s->self = xsThis;
		xsRemember(s->self);
		netUpdate(s);
		return s;
	}
	struct sockaddr_in in4 = { 0 };
	struct sockaddr_in6 in6 = { 0 };
	struct sockaddr *address;
	socklen_t length;
	if (o->family == AF_INET) {
		in4.sin_family = AF_INET;
		in4.sin_port = htons((uint16_t)o->port);
		memcpy(&in4.sin_addr, o->address, 4);
		address = (struct sockaddr *)&in4;
		length = sizeof(in4);
	}
	else {
		in6.sin6_family = AF_INET6;
		in6.sin6_port = htons((uint16_t)o->port);
		memcpy(&in6.sin6_addr, o->address, 16);
		address = (struct sockaddr *)&in6;
		length = sizeof(in6);
	}
	if (connect(fd, address, length) < 0 && errno != EINPROGRESS)
		netFail(s, "%s: cannot connect to %s port %d: %s", cls->name, s->addressText, s->port, strerror(errno));
	xsSetHostData(xsThis, s);
	s->self = xsThis;
	xsRemember(s->self);
	/* Never call back from inside the constructor: a failure waits a turn. */
	if (s->state == STATE_FAILED)
		netKick(s);
	else
		netUpdate(s);
	return s;
}

/* ---- JS methods ---------------------------------------------------------- */

/* The error message without its "TCP: " prefix. XS caps thrown messages at
 * 127 bytes, so what is thrown puts the advice first and the detail last. */
static const char *netDetail(NetSocket *s)
{
	size_t length = strlen(s->cls->name);
	if (!strncmp(s->message, s->cls->name, length) && s->message[length] == ':')
		return s->message + length + 2;
	return s->message;
}

static void netAfterRead(NetSocket *s)
{
	if (s->state == STATE_READY) {
		const NetTransport *transport = s->cls->transport;
		if (transport->buffered && transport->buffered(s))
			netKick(s);
		if (!s->busy)
			netUpdate(s);
	}
	else if (s->state == STATE_FAILED && !s->inLength && !s->errorDelivered)
		netKick(s);
}

/* read(): all available bytes as an ArrayBuffer; read(n): up to n of them;
 * read(buffer): fills up to its length and returns the count; "number"
 * format: one byte. Returns undefined when nothing is available. */
void netRead(xsMachine *the, const NetClass *cls)
{
	NetSocket *s = hostThis(the, cls->hooks, cls->name);
	size_t wanted = NET_INPUT_BYTES;
	uint8_t *into = NULL;   /* read(buffer): nothing allocates before the copy */
	if (s->format == NET_FORMAT_NUMBER)
		wanted = 1;
	else if (hostArgc > 0 && xsTypeOf(xsArg(0)) != xsUndefinedType) {
		int type = xsTypeOf(xsArg(0));
		if (type == xsIntegerType || type == xsNumberType) {
			double n = xsToNumber(xsArg(0));
			if (!hostIsWhole(n, 1, HOST_MAX_SAFE_INTEGER))
				xsRangeError("%s: invalid read size", cls->name);
			if (n < NET_INPUT_BYTES)
				wanted = (size_t)n;
		}
		else
			into = hostBytes(the, &xsArg(0), &wanted, cls->name);
	}
	if (!s->inLength)
		return;
	size_t count = wanted < s->inLength ? wanted : s->inLength;
	const uint8_t *from = s->input + s->inStart;
	if (s->format == NET_FORMAT_NUMBER)
		xsResult = xsInteger(from[0]);
	else if (into) {
		memcpy(into, from, count);
		xsResult = xsInteger((int)count);
	}
	else
		xsResult = xsArrayBuffer((void *)from, (int)count);
	s->inStart += count;
	s->inLength -= count;
	if (!s->inLength)
		s->inStart = 0;
	netAfterRead(s);
}

/* The end of the turn that wrote: what waits goes in one send. */
static void netFlushLater(void *ctx)
{
	NetSocket *s = ctx;
	s->flushLater = NULL;
	netFlush(s);
	if (s->state == STATE_FAILED)
		netKick(s);
	else if (!s->busy)
		netUpdate(s);
}

/* Queues bytes (or one byte in "number" format) and returns the bytes still
 * writable. More than is writable throws: wait for onWritable. */
void netWrite(xsMachine *the, const NetClass *cls)
{
	NetSocket *s = hostThis(the, cls->hooks, cls->name);
	const uint8_t *bytes;
	size_t length;
	uint8_t byte;
	if (s->format == NET_FORMAT_NUMBER) {
		int type = hostArgc > 0 ? xsTypeOf(xsArg(0)) : xsUndefinedType;
		double n = (type == xsIntegerType || type == xsNumberType) ? xsToNumber(xsArg(0)) : -1;
		if (!hostIsWhole(n, 0, 255))
			xsRangeError("%s: invalid byte (0 to 255 in \"number\" format)", cls->name);
		byte = (uint8_t)n;
		bytes = &byte;
		length = 1;
	}
	else {
		if (hostArgc < 1)
			xsTypeError("%s: expected a buffer (ArrayBuffer, TypedArray or DataView)", cls->name);
		bytes = hostBytes(the, &xsArg(0), &length, cls->name);
	}
	if (s->state == STATE_FAILED)
		xsUnknownError("%s: cannot write after an error: %s", cls->name, netDetail(s));
	if (s->state != STATE_READY)
		xsUnknownError("%s: not connected yet: write after onWritable", cls->name);
	if (length > NET_OUTPUT_BYTES - s->outLength && s->flushLater)
		netFlush(s);   /* what waits for the end of the turn goes first */
	if (s->state == STATE_FAILED) {
		netKick(s);
		xsUnknownError("%s: cannot write after an error: %s", cls->name, netDetail(s));
	}
	size_t writable = NET_OUTPUT_BYTES - s->outLength;
	if (length > writable)
		xsRangeError("%s: write of %zu bytes exceeds the %zu writable: write at most what onWritable reports", cls->name, length, writable);
	if (length) {
		if (s->outStart + s->outLength + length > NET_OUTPUT_BYTES) {
			memmove(s->output, s->output + s->outStart, s->outLength);
			s->outStart = 0;
		}
		memcpy(s->output + s->outStart + s->outLength, bytes, length);
		s->outLength += length;
		s->writableOwed = 1;
		if (s->outLength < NET_COALESCE_BYTES) {
			if (!s->flushLater)
				s->flushLater = hostTimerBeforeWait(netFlushLater, s);
		}
		else {
			netFlush(s);
			if (s->state == STATE_FAILED)
				netKick(s);
			else if (!s->busy)
				netUpdate(s);
		}
	}
	xsResult = xsInteger((int)(NET_OUTPUT_BYTES - s->outLength));
}

/* Idempotent. Sends what the kernel takes at once, then closes; queued bytes
 * beyond that are dropped. */
void netClose(xsMachine *the, const NetClass *cls)
{
	NetSocket *s = hostThisOrNull(the, cls->hooks, cls->name);
	if (!s)
		return;
	xsSetHostData(xsThis, NULL);
	xsForget(s->self);
	netShutdown(s);
	s->closed = 1;
	s->onReadable = s->onWritable = s->onError = xsUndefined;
	if (!s->busy)
		netFree(s);
}

void *netContextOf(xsMachine *the, const NetClass *cls)
{
	NetSocket *s = hostThis(the, cls->hooks, cls->name);
	return s->context;
}

void netAbort(NetSocket *s, const char *message)
{
	netFail(s, "%s", message);
	netKick(s);
}

void netGetRemoteAddress(xsMachine *the, const NetClass *cls)
{
	NetSocket *s = hostThis(the, cls->hooks, cls->name);
	xsResult = xsString(s->addressText);
}

void netGetRemotePort(xsMachine *the, const NetClass *cls)
{
	NetSocket *s = hostThis(the, cls->hooks, cls->name);
	xsResult = xsInteger(s->port);
}

void netGetFormat(xsMachine *the, const NetClass *cls)
{
	NetSocket *s = hostThis(the, cls->hooks, cls->name);
	xsResult = xsString(s->format == NET_FORMAT_NUMBER ? "number" : "buffer");
}

void netSetFormat(xsMachine *the, const NetClass *cls)
{
	NetSocket *s = hostThis(the, cls->hooks, cls->name);
	const char *format = (hostArgc > 0 && xsTypeOf(xsArg(0)) == xsStringType) ? xsToString(xsArg(0)) : "";
	if (!strcmp(format, "number"))
		s->format = NET_FORMAT_NUMBER;
	else if (!strcmp(format, "buffer"))
		s->format = NET_FORMAT_BUFFER;
	else
		xsRangeError("%s: invalid format (\"buffer\" or \"number\")", cls->name);
}

/* ---- plain TCP ----------------------------------------------------------- */

static const char *tcpErrorText(int error)
{
	return (error == ECONNRESET || error == EPIPE) ? "connection reset by peer" : strerror(error);
}

static long tcpReceive(NetSocket *s, uint8_t *buffer, size_t size)
{
	ssize_t n = recv(s->fd, buffer, size, 0);
	if (n >= 0)
		return (long)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return NET_WANT_READ;
	return netFail(s, "TCP: %s (%s port %d)", tcpErrorText(errno), s->addressText, s->port);
}

static long tcpSend(NetSocket *s, const uint8_t *buffer, size_t size)
{
	ssize_t n = send(s->fd, buffer, size, MSG_NOSIGNAL);
	if (n > 0)
		return (long)n;
	if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return NET_WANT_WRITE;
	return netFail(s, "TCP: %s (%s port %d)", tcpErrorText(errno), s->addressText, s->port);
}

static const NetTransport gPlain = { NULL, tcpReceive, tcpSend, NULL, NULL, NULL };
static xsHostHooks gTCPHooks = { netDestructor, netMarker, NULL };
static const NetClass gTCP = { "TCP", &gTCPHooks, &gPlain };

static void xs_tcp_constructor(xsMachine *the)
{
	xsVars(NET_VARS);
	NetOptions options;
	netParseOptions(the, &gTCP, &options);
	netOpen(the, &gTCP, &options, NULL);
}

static void xs_tcp_read(xsMachine *the) { netRead(the, &gTCP); }
static void xs_tcp_write(xsMachine *the) { netWrite(the, &gTCP); }
static void xs_tcp_close(xsMachine *the) { netClose(the, &gTCP); }
static void xs_tcp_get_remoteAddress(xsMachine *the) { netGetRemoteAddress(the, &gTCP); }
static void xs_tcp_get_remotePort(xsMachine *the) { netGetRemotePort(the, &gTCP); }
static void xs_tcp_get_format(xsMachine *the) { netGetFormat(the, &gTCP); }
static void xs_tcp_set_format(xsMachine *the) { netSetFormat(the, &gTCP); }

static const HostMember gTCPMembers[] = {
	{ "read", xs_tcp_read, 1, 0 },
	{ "write", xs_tcp_write, 1, 0 },
	{ "close", xs_tcp_close, 0, 0 },
	{ "remoteAddress", xs_tcp_get_remoteAddress, 0, 1 },
	{ "remotePort", xs_tcp_get_remotePort, 0, 1 },
	{ "format", xs_tcp_get_format, 0, 1 },
	{ "format", xs_tcp_set_format, 1, 2 },
	{ NULL }
};

void hostInstallTCP(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "TCP", xs_tcp_constructor, 1, gTCPMembers, &gTCPHooks);
}
