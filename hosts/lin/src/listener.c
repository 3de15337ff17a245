/*
 * listener.c — `embedded:io/socket/listener` on the lin host, in the shape of
 * the SDK's (modules/io/socket/lwip/listener.js): new Listener({port, address,
 * onReadable(count), target}); read() gives the next accepted connection, which
 * `new TCP({from: it, onReadable, onWritable, onError})` takes over (tcp.c);
 * close(); the port it listens on (port 0: one the system chose).
 *
 * The address defaults to 127.0.0.1 on this host (the board listens on every
 * interface of its own network): a test or `npm start -- --http PORT` never
 * opens a port to the machine's network unless asked. Accepted connections
 * wait in a queue of LISTENER_PENDING_MAX; while it is full the kernel's backlog
 * (WEB_LISTEN_BACKLOG) holds the rest. onReadable(count) is called with the
 * connections waiting, on the loop turn after they arrive, never from inside
 * the constructor. An accepted connection that is never taken over is closed
 * when collected, by its own close(), or with the listener's queue at close().
 *
 * The accepted connection is a small object of its own (ListenerSocket) holding
 * the descriptor until TCP takes it (hosts/lin/modules/listener.ts makes one for
 * each read()).
 */
#define _GNU_SOURCE /* accept4 */
#include "xsAll.h"
#include "netsock.h"
#include "budgets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define LISTENER_PENDING_MAX 16
#define LISTENER_BACKLOG BUDGET_WEB_LISTEN_BACKLOG

typedef struct {
	int fd;
	int port;
	char address[INET6_ADDRSTRLEN];
} Accepted;

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
	Accepted pending[LISTENER_PENDING_MAX];
} Listener;

static void acceptedDestructor(void *data)
{
	Accepted *a = data;
	if (a) {
		if (a->fd >= 0)
			close(a->fd);
		free(a);
	}
}

static xsHostHooks gAcceptedHooks = { acceptedDestructor, NULL, NULL };
static void listenerDestructor(void *data);
static void listenerMarker(xsMachine *the, void *data, xsMarkRoot markRoot);
static xsHostHooks gListenerHooks = { listenerDestructor, listenerMarker, NULL };

static void listenerUpdate(Listener *l);

static void listenerDeliver(Listener *l)
{
	xsMachine *the = l->the;
	if (!l->count || l->closed || xsTypeOf(l->onReadable) == xsUndefinedType)
		return;
	l->busy++;
	hostCallBegin(the);
	{
		xsCallFunction1(l->onReadable, l->self, xsInteger(l->count));
	}
	hostCallEnd(the);
	l->busy--;
}

static void listenerFree(Listener *l)
{
	for (int i = 0; i < l->count; i++)
		close(l->pending[i].fd);
	l->count = 0;
	free(l);
}

static void listenerAccept(Listener *l)
{
	while (l->count < LISTENER_PENDING_MAX) {
		struct sockaddr_storage from;
		socklen_t length = sizeof(from);
		int fd = accept4(l->fd, (struct sockaddr *)&from, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			break;   /* EAGAIN, or a connection that went away before it was taken */
		Accepted *a = &l->pending[l->count++];
		a->fd = fd;
		a->address[0] = 0;
		a->port = 0;
		if (from.ss_family == AF_INET) {
			struct sockaddr_in *in4 = (struct sockaddr_in *)&from;
			inet_ntop(AF_INET, &in4->sin_addr, a->address, sizeof(a->address));
			a->port = ntohs(in4->sin_port);
		}
		else if (from.ss_family == AF_INET6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&from;
			inet_ntop(AF_INET6, &in6->sin6_addr, a->address, sizeof(a->address));
			a->port = ntohs(in6->sin6_port);
		}
	}
}

static void listenerService(Listener *l)
{
	l->busy++;
	listenerAccept(l);
	listenerDeliver(l);
	l->busy--;
	if (l->closed) {
		if (!l->busy)
			listenerFree(l);
		return;
	}
	listenerUpdate(l);
}

static void listenerOnPoll(void *ctx, int fd, short revents)
{
	(void)fd;
	(void)revents;
	listenerService(ctx);
}

static void listenerKickFire(void *ctx)
{
	Listener *l = ctx;
	l->kick = NULL;
	listenerService(l);
}

/* Watch for connections while the queue has room. */
static void listenerUpdate(Listener *l)
{
	if (l->closed)
		return;
	if (l->count < LISTENER_PENDING_MAX) {
		if (!l->watch)
			l->watch = hostWatch(l->fd, POLLIN, listenerOnPoll, l);
	}
	else if (l->watch) {
		hostUnwatch(l->watch);
		l->watch = NULL;
	}
}

static void listenerShutdown(Listener *l)
{
	hostUnwatch(l->watch);
	l->watch = NULL;
	hostTimerCancel(l->kick);
	l->kick = NULL;
	if (l->fd >= 0) {
		close(l->fd);
		l->fd = -1;
	}
}

static void listenerDestructor(void *data)
{
	Listener *l = data;
	if (l) {
		listenerShutdown(l);
		listenerFree(l);
	}
}

static void listenerMarker(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	Listener *l = data;
	if (l)
		(*markRoot)(the, &l->onReadable);
}

static void xs_listener_constructor(xsMachine *the)
{
	const char *name = "Listener";
	xsVars(1);
	hostConstructThis(the, &gListenerHooks, name);
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		xsTypeError("%s: options object required", name);
	xsSlot *options = &xsArg(0);
	int port = hostIntegerOption(the, options, "port", 0, 65535, 0, name);
	char text[64] = "127.0.0.1";
	hostStringOption(the, options, "address", text, sizeof(text), 0, name);
	struct sockaddr_in in4 = { 0 };
	struct sockaddr_in6 in6 = { 0 };
	struct sockaddr *address;
	socklen_t length;
	int family;
	if (inet_pton(AF_INET, text, &in4.sin_addr) == 1) {
		family = in4.sin_family = AF_INET;
		in4.sin_port = htons((uint16_t)port);
		address = (struct sockaddr *)&in4;
		length = sizeof(in4);
	}
	else if (inet_pton(AF_INET6, text, &in6.sin6_addr) == 1) {
		family = in6.sin6_family = AF_INET6;
		in6.sin6_port = htons((uint16_t)port);
		address = (struct sockaddr *)&in6;
		length = sizeof(in6);
	}
	else
		xsTypeError("%s: address must be an IP address: \"%s\"", name, text);
	hostCallbackOption(the, options, "onReadable", &xsVar(0), name);
	if (hostHasOption(the, options, "target")) {
		xsSlot target = xsGet(*options, hostID("target"));
		xsDefine(xsThis, hostID("target"), target, xsDefault);
	}
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		xsUnknownError("%s: cannot create a socket: %s", name, strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, address, length) < 0 || listen(fd, LISTENER_BACKLOG) < 0) {
		int error = errno;
		close(fd);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "%s: cannot listen on %s port %d: %s", name, text, port, strerror(error));
	}
	struct sockaddr_storage bound;
	socklen_t boundLength = sizeof(bound);
	if (getsockname(fd, (struct sockaddr *)&bound, &boundLength) == 0)
		port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port : ((struct sockaddr_in6 *)&bound)->sin6_port);
	Listener *l = calloc(1, sizeof(Listener));
	if (!l) {
		close(fd);
		xsUnknownError("%s: out of memory", name);
	}
	l->the = the;
	l->fd = fd;
	l->port = port;
	l->onReadable = xsVar(0);
	xsSetHostData(xsThis, l);
	l->self = xsThis;
	xsRemember(l->self);
	listenerUpdate(l);
}

/* accept(socket): moves the next waiting connection into socket (a fresh
 * ListenerSocket) and returns it; undefined when none waits. */
static void xs_listener_accept(xsMachine *the)
{
	Listener *l = hostThis(the, &gListenerHooks, "Listener");
	void *data = NULL;
	if (hostArgc < 1 || !hostDataOf(the, &xsArg(0), &gAcceptedHooks, &data) || !data)
		xsTypeError("Listener: accept needs a fresh ListenerSocket");
	Accepted *into = data;
	if (into->fd >= 0)
		xsTypeError("Listener: accept needs a fresh ListenerSocket");
	if (!l->count)
		return;
	*into = l->pending[0];
	l->count--;
	memmove(l->pending, l->pending + 1, (size_t)l->count * sizeof(Accepted));
	xsResult = xsArg(0);
	/* Room again: more may be waiting in the backlog. */
	if (!l->busy && !l->kick)
		l->kick = hostTimerStart(0, listenerKickFire, l);
}

static void xs_listener_close(xsMachine *the)
{
	Listener *l = hostThisOrNull(the, &gListenerHooks, "Listener");
	if (!l)
		return;
	xsSetHostData(xsThis, NULL);
	xsForget(l->self);
	listenerShutdown(l);
	l->closed = 1;
	l->onReadable = xsUndefined;
	if (!l->busy)
		listenerFree(l);
}

static void xs_listener_get_port(xsMachine *the)
{
	Listener *l = hostThis(the, &gListenerHooks, "Listener");
	xsResult = xsInteger(l->port);
}

static void xs_accepted_constructor(xsMachine *the)
{
	hostConstructThis(the, &gAcceptedHooks, "ListenerSocket");
	Accepted *a = calloc(1, sizeof(Accepted));
	if (!a)
		xsUnknownError("ListenerSocket: out of memory");
	a->fd = -1;
	xsSetHostData(xsThis, a);
}

static void xs_accepted_close(xsMachine *the)
{
	Accepted *a = hostThisOrNull(the, &gAcceptedHooks, "ListenerSocket");
	if (a && a->fd >= 0) {
		close(a->fd);
		a->fd = -1;
	}
}

static void xs_accepted_get_remoteAddress(xsMachine *the)
{
	Accepted *a = hostThis(the, &gAcceptedHooks, "ListenerSocket");
	xsResult = xsString(a->address);
}

static void xs_accepted_get_remotePort(xsMachine *the)
{
	Accepted *a = hostThis(the, &gAcceptedHooks, "ListenerSocket");
	xsResult = xsInteger(a->port);
}

int netTakeAccepted(xsMachine *the, xsSlot *value, char *address, size_t size, int *port)
{
	void *data = NULL;
	if (!hostDataOf(the, value, &gAcceptedHooks, &data) || !data)
		return -1;
	Accepted *a = data;
	int fd = a->fd;
	if (fd < 0)
		return -1;
	a->fd = -1;
	snprintf(address, size, "%s", a->address);
	*port = a->port;
	return fd;
}

static const HostMember gListenerMembers[] = {
	{ "accept", xs_listener_accept, 1, 0 },
	{ "close", xs_listener_close, 0, 0 },
	{ "port", xs_listener_get_port, 0, 1 },
	{ NULL }
};

static const HostMember gAcceptedMembers[] = {
	{ "close", xs_accepted_close, 0, 0 },
	{ "remoteAddress", xs_accepted_get_remoteAddress, 0, 1 },
	{ "remotePort", xs_accepted_get_remotePort, 0, 1 },
	{ NULL }
};

void hostInstallListener(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "Listener", xs_listener_constructor, 1, gListenerMembers, &gListenerHooks);
	hostDefineClass(the, native, "ListenerSocket", xs_accepted_constructor, 0, gAcceptedMembers, &gAcceptedHooks);
}
