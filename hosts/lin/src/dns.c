/*
 * dns.c — `embedded:network/dns/resolver/udp` on the lin host, in the shape
 * of the Moddable example resolver: new Resolver(options) then
 * resolve({host, onResolved(host, address), onError(host, message)}), with
 * the resolver as `this`. Device options (servers, socket) are accepted and
 * ignored: the system resolver is used.
 *
 * IP literals and "localhost" need no lookup; malformed names fail without
 * one. Their answers still come on the next loop turn, never from inside
 * resolve(). Other names go to getaddrinfo on a detached thread; the result
 * comes back through the lookup's own eventfd, which the asking machine's
 * loop watches, so the loop never blocks and each machine (main or worker,
 * host.h) gets its own answers. An IPv4 address is preferred, as the device
 * speaks IPv4.
 *
 * close() cancels pending callbacks; a cancelled lookup finishes on its
 * thread and is discarded. A lookup is shared by its thread and the loop
 * (refs, under gLock): whichever lets go last frees it, so a machine that
 * ends mid-lookup leaves nothing behind. A resolver with pending lookups
 * stays alive (xsRemember) until they are answered.
 */
#include "xsAll.h"
#include "host.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <netdb.h>
#include <pthread.h>
#include <strings.h>
#include <unistd.h>

/* A DNS name (253 characters) and its terminator. */
#define DNS_NAME_CHARS 254
/* Longest DNS label. */
#define DNS_LABEL_CHARS 63
/* Lookups in flight per resolver: bounds threads and memory; the agent needs a few. */
#define DNS_PENDING_MAX 16
/* An error sentence for onError. */
#define DNS_MESSAGE_CHARS 320

typedef struct DNSRequest DNSRequest;

/* Shared by its lookup thread and the asking loop until both let go. */
typedef struct DNSJob {
	int refs;                 /* under gLock: the lookup thread and the loop */
	int done;                 /* under gLock: the fields below are the answer */
	int fd;                   /* eventfd: the thread signals the answer */
	HostWatch *watch;         /* loop thread only */
	DNSRequest *request;      /* loop thread only; NULL once cancelled */
	int error;                /* getaddrinfo's result */
	int systemError;          /* the worker's errno when error is EAI_SYSTEM */
	char host[DNS_NAME_CHARS];
	char address[INET6_ADDRSTRLEN];
} DNSJob;

typedef struct {
	xsMachine *the;
	xsSlot self;              /* remembered while lookups are pending */
	int pending;
	DNSRequest *requests;
} Resolver;

struct DNSRequest {
	DNSRequest *next;
	Resolver *resolver;
	HostTimer *timer;         /* answers known at once: the next loop turn */
	DNSJob *job;              /* names: the worker's job */
	xsSlot onResolved, onError;
	char host[DNS_NAME_CHARS];
	char address[INET6_ADDRSTRLEN];
	char message[DNS_MESSAGE_CHARS]; /* empty on success */
};

static pthread_mutex_t gLock = PTHREAD_MUTEX_INITIALIZER;   /* every job's refs */

static void resolverDestructor(void *data);
static void resolverMarker(xsMachine *the, void *data, xsMarkRoot markRoot);
static xsHostHooks gResolverHooks = { resolverDestructor, resolverMarker, NULL };

static void jobRelease(DNSJob *job)
{
	pthread_mutex_lock(&gLock);
	int last = --job->refs == 0;
	pthread_mutex_unlock(&gLock);
	if (last) {
		close(job->fd);
		free(job);
	}
}

/* ---- lookup thread ------------------------------------------------------- */

static void *dnsWork(void *arg)
{
	DNSJob *job = arg;
	struct addrinfo hints = { 0 }, *list = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	job->error = getaddrinfo(job->host, NULL, &hints, &list);
	job->systemError = errno;
	if (!job->error) {
		struct addrinfo *chosen = NULL;
		for (struct addrinfo *a = list; a && !chosen; a = a->ai_next)
			if (a->ai_family == AF_INET)
				chosen = a;
		for (struct addrinfo *a = list; a && !chosen; a = a->ai_next)
			if (a->ai_family == AF_INET6)
				chosen = a;
		if (chosen && chosen->ai_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)chosen->ai_addr)->sin_addr, job->address, sizeof(job->address));
		else if (chosen)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)chosen->ai_addr)->sin6_addr, job->address, sizeof(job->address));
		else
			job->error = EAI_NONAME;
		freeaddrinfo(list);
	}
	pthread_mutex_lock(&gLock);
	job->done = 1;
	pthread_mutex_unlock(&gLock);
	uint64_t one = 1;
	ssize_t written = write(job->fd, &one, sizeof(one));
	(void)written;
	jobRelease(job);
	return NULL;
}

/* ---- loop side --------------------------------------------------------------- */

static void dnsUnlink(Resolver *r, DNSRequest *request)
{
	xsMachine *the = r->the;
	for (DNSRequest **p = &r->requests; *p; p = &(*p)->next) {
		if (*p == request) {
			*p = request->next;
			break;
		}
	}
	if (!--r->pending)
		xsForget(r->self);
}

/* Detaches a request from its timer or worker; the caller frees it. */
static void dnsCancel(DNSRequest *request)
{
	hostTimerCancel(request->timer);
	request->timer = NULL;
	if (request->job) {
		DNSJob *job = request->job;
		job->request = NULL;
		request->job = NULL;
		hostUnwatch(job->watch);
		jobRelease(job);
	}
}

static void dnsDeliver(DNSRequest *request)
{
	Resolver *r = request->resolver;
	xsMachine *the = r->the;
	hostCallBegin(the);
	{
		xsVars(4);
		int resolved = !request->message[0];
		xsVar(0) = resolved ? request->onResolved : request->onError;
		xsVar(1) = xsString(request->host);
		xsVar(2) = xsString(resolved ? request->address : request->message);
		xsVar(3) = r->self;
		/* Done before calling: the callback may close the resolver or resolve again. */
		dnsUnlink(r, request);
		free(request);
		if (xsTypeOf(xsVar(0)) != xsUndefinedType)
			xsCallFunction2(xsVar(0), xsVar(3), xsVar(1), xsVar(2));
	}
	hostCallEnd(the);
}

static void dnsTimerFire(void *ctx)
{
	DNSRequest *request = ctx;
	request->timer = NULL;
	dnsDeliver(request);
}

static void dnsOnAnswer(void *ctx, int fd, short revents)
{
	(void)fd;
	(void)revents;
	DNSJob *job = ctx;
	pthread_mutex_lock(&gLock);
	int done = job->done;
	pthread_mutex_unlock(&gLock);
	if (!done)
		return;
	DNSRequest *request = job->request;
	hostUnwatch(job->watch);
	if (request) {
		request->job = NULL;
		if (job->error)
			snprintf(request->message, sizeof(request->message), "Resolver: cannot resolve \"%s\": %s; check the name and the network",
				request->host, job->error == EAI_SYSTEM ? strerror(job->systemError) : gai_strerror(job->error));
		else
			strcpy(request->address, job->address);
	}
	jobRelease(job);
	if (request)
		dnsDeliver(request);
}

/* Returns 0 or an errno. */
static int dnsStartJob(DNSRequest *request)
{
	DNSJob *job = calloc(1, sizeof(DNSJob));
	if (!job)
		return ENOMEM;
	job->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (job->fd < 0) {
		int error = errno;
		free(job);
		return error;
	}
	job->refs = 2;
	strcpy(job->host, request->host);
	pthread_attr_t attributes;
	pthread_t thread;
	pthread_attr_init(&attributes);
	pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
	int error = pthread_create(&thread, &attributes, dnsWork, job);
	pthread_attr_destroy(&attributes);
	if (error) {
		close(job->fd);
		free(job);
		return error;
	}
	job->request = request;
	request->job = job;
	job->watch = hostWatch(job->fd, POLLIN, dnsOnAnswer, job);
	return 0;
}

/* Letters, digits, '-' and '_' in labels of 1 to 63 characters; one trailing dot allowed. */
static int dnsValidName(const char *host)
{
	size_t label = 0;
	for (const char *c = host; *c; c++) {
		if (*c == '.') {
			if (!label)
				return 0;
			label = 0;
		}
		else if ((isalnum((unsigned char)*c) || *c == '-' || *c == '_') && label < DNS_LABEL_CHARS)
			label++;
		else
			return 0;
	}
	return host[0] != 0;
}

/* Fills request->address, or request->message, when no lookup is needed. */
static int dnsAnswerAtOnce(DNSRequest *request)
{
	unsigned char bytes[16];
	const char *host = request->host;
	if (inet_pton(AF_INET, host, bytes) == 1)
		inet_ntop(AF_INET, bytes, request->address, sizeof(request->address));
	else if (inet_pton(AF_INET6, host, bytes) == 1)
		inet_ntop(AF_INET6, bytes, request->address, sizeof(request->address));
	else if (!strcasecmp(host, "localhost") || !strcasecmp(host, "localhost."))
		strcpy(request->address, "127.0.0.1");
	else if (!dnsValidName(host))
		snprintf(request->message, sizeof(request->message), "Resolver: \"%s\" is not a valid host name; check the name", host);
	else
		return 0;
	return 1;
}

/* ---- class ------------------------------------------------------------------- */

static void resolverCancelAll(Resolver *r)
{
	while (r->requests) {
		DNSRequest *request = r->requests;
		r->requests = request->next;
		dnsCancel(request);
		free(request);
	}
}

static void resolverDestructor(void *data)
{
	Resolver *r = data;
	if (r) {
		resolverCancelAll(r);
		free(r);
	}
}

static void resolverMarker(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	Resolver *r = data;
	if (r) {
		for (DNSRequest *request = r->requests; request; request = request->next) {
			(*markRoot)(the, &request->onResolved);
			(*markRoot)(the, &request->onError);
		}
	}
}

static void xs_resolver_constructor(xsMachine *the)
{
	hostConstructThis(the, &gResolverHooks, "Resolver");
	if (hostArgc > 0 && xsTypeOf(xsArg(0)) != xsUndefinedType && !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		xsTypeError("Resolver: options must be an object");
	Resolver *r = calloc(1, sizeof(Resolver));
	if (!r)
		xsUnknownError("Resolver: out of memory");
	r->the = the;
	r->self = xsThis;
	xsSetHostData(xsThis, r);
}

static void xs_resolver_resolve(xsMachine *the)
{
	/* The callbacks wait in xsVars until the request holds them: a getter may
	 * return a function nothing else holds, and the next one collect garbage. */
	xsVars(2);
	hostThis(the, &gResolverHooks, "Resolver");
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		xsTypeError("Resolver: options object required");
	char host[DNS_NAME_CHARS];
	hostStringOption(the, &xsArg(0), "host", host, sizeof(host), 1, "Resolver");
	if (!host[0])
		xsTypeError("Resolver: host required");
	hostCallbackOption(the, &xsArg(0), "onResolved", &xsVar(0), "Resolver");
	hostCallbackOption(the, &xsArg(0), "onError", &xsVar(1), "Resolver");
	if (xsTypeOf(xsVar(0)) == xsUndefinedType && xsTypeOf(xsVar(1)) == xsUndefinedType)
		xsTypeError("Resolver: onResolved or onError required");
	/* Fetched after the options: a getter among them may have closed it. */
	Resolver *r = hostThis(the, &gResolverHooks, "Resolver");
	if (r->pending >= DNS_PENDING_MAX)
		xsUnknownError("Resolver: %d lookups are already pending; wait for their answers", DNS_PENDING_MAX);
	DNSRequest *request = calloc(1, sizeof(DNSRequest));
	if (!request)
		xsUnknownError("Resolver: out of memory");
	request->resolver = r;
	request->onResolved = xsVar(0);
	request->onError = xsVar(1);
	strcpy(request->host, host);
	if (!dnsAnswerAtOnce(request)) {
		int error = dnsStartJob(request);
		if (error)
			snprintf(request->message, sizeof(request->message), "Resolver: cannot start a lookup of \"%s\": %s", host, strerror(error));
	}
	if (!request->job)
		request->timer = hostTimerStart(0, dnsTimerFire, request);
	request->next = r->requests;
	r->requests = request;
	if (!r->pending++)
		xsRemember(r->self);
}

/* Idempotent; pending callbacks never come. */
static void xs_resolver_close(xsMachine *the)
{
	Resolver *r = hostThisOrNull(the, &gResolverHooks, "Resolver");
	if (!r)
		return;
	if (r->pending)
		xsForget(r->self);
	resolverCancelAll(r);
	xsSetHostData(xsThis, NULL);
	free(r);
}

static const HostMember gResolverMembers[] = {
	{ "resolve", xs_resolver_resolve, 1, 0 },
	{ "close", xs_resolver_close, 0, 0 },
	{ NULL }
};

void hostInstallDNS(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "Resolver", xs_resolver_constructor, 1, gResolverMembers, &gResolverHooks);
}
