/*
 * worker.c — the Moddable `worker` module on the lin host: a second XS machine
 * on its own pthread, with its own poll() loop, timers and sockets (host.h).
 *
 *   new Worker(specifier, {static, chunk, heap, stack, keys, ...})
 *     blocks until the worker's module has run (its promise jobs drained);
 *     throws if the module throws or the machine cannot start. Creation sizes:
 *     manifest.json's `creation`, overridden by the options, as on the device.
 *   worker.postMessage(message), worker.onmessage(message), worker.terminate()
 *   inside the worker: self.postMessage(message), self.onmessage(message),
 *     self.close()
 *   worker.onerror(message) — a lin-and-our-device extension: the worker's
 *     machine ended on its own (out of memory, stack or keys, an uncaught
 *     exception or unhandled rejection, the kill hook); message is a sentence
 *     saying which. After it, postMessage throws.
 *
 * Messages are copied with XS's alien marshalling (the machines share no
 * preloaded archive): plain data, ArrayBuffers, typed arrays, Maps, Sets,
 * Dates, errors...; what cannot be marshalled (functions, host objects)
 * throws in postMessage. SharedArrayBuffers are shared, not copied.
 *
 * Each direction has a bounded queue (budgets.ts WORKER_QUEUE_MESSAGES and
 * WORKER_QUEUE_BYTES, through build/lin/budgets.h): postMessage waits up to
 * WORKER_QUEUE_WAIT_MS for room, then throws, as the SDK does with
 * task.queueWait. A message is delivered on the receiving machine's own loop,
 * woken by an eventfd per direction (written by the post that finds the
 * queue empty: the receiver takes every waiting message per wake-up), in the
 * order it was posted.
 *
 * Failure isolation: fxAbort and hostUncaught (machine.c) end a worker's machine
 * alone. Its thread deletes the machine (the destructors close its sockets,
 * files and timers) and exits; the creator is told on its loop: messages the
 * worker posted before it ended are delivered first, then onerror(reason).
 *
 * Kill hook (tests): SIGUSR2 ends the oldest living worker at its next loop
 * turn as if it had crashed: onerror("worker was killed (SIGUSR2) ...").
 * Hang hook (tests): SIGUSR1 makes the oldest living worker, at its next loop
 * turn, run Array.prototype.indexOf.call({length: 2**53 - 1}, 1): a built-in's
 * loop that never gives the turn back, as a hung agent machine does.
 *
 * No thread outlives its worker (issue 25): every worker machine runs under
 * XS's meter for its whole life (WORKER_METER_INTERVAL; the XS built-ins'
 * own loops check it too, xsmeter.h), and the check ends the machine, as a
 * crash would, once its creator terminated it or the kill hook asked: a worker
 * stuck in a loop of script or of a built-in is ended within one interval, not
 * left spinning on its thread. (host/sandbox's run() puts its own meter in
 * place for a script's call and this one back after it.)
 *
 * Ownership: a WorkerLink is shared by the creator's record and the worker's
 * thread (refs, under its lock); everything else belongs to one thread.
 */
#define _GNU_SOURCE /* pthread_getattr_np (the native stack report) */
#include "xsAll.h"
#include "host.h"
#include "budgets.h"

#include <signal.h>
#include <sys/eventfd.h>

#define WORKER_QUEUE_MESSAGES BUDGET_WORKER_QUEUE_MESSAGES
#define WORKER_QUEUE_BYTES BUDGET_WORKER_QUEUE_BYTES
#define WORKER_QUEUE_WAIT_MS BUDGET_WORKER_QUEUE_WAIT_MS
#define WORKER_TERMINATE_WAIT_MS BUDGET_WORKER_TERMINATE_WAIT_MS
#define WORKER_DELIVER_MARGIN_BYTES BUDGET_WORKER_DELIVER_MARGIN_BYTES
#define WORKER_METER_INTERVAL BUDGET_WORKER_METER_INTERVAL
#define WORKER_SPECIFIER_CHARS 256   /* a module specifier; the map's are far shorter */

typedef struct WorkerMessage {
	struct WorkerMessage *next;
	void *data;       /* fxMarshall's block, malloc'd */
	size_t size;
} WorkerMessage;

/* One direction. fd is an eventfd the receiving loop watches. */
typedef struct {
	WorkerMessage *head, *tail;
	int count;
	size_t bytes;
	int fd;
} WorkerQueue;

enum { kStarting, kRunning, kEnded };
enum { kEndNone, kEndClosed, kEndTerminated, kEndAborted };

typedef struct WorkerLink {
	pthread_mutex_t lock;
	pthread_cond_t changed;      /* state changed, or a queue has room */
	int refs;                    /* the creator's record and the worker thread */
	WorkerQueue toWorker, toCreator;
	int state;                   /* kStarting, kRunning, kEnded */
	int startFailed;
	int how;                     /* kEnd*: why it ended */
	int terminate;               /* the creator asked it to end */
	int kill;                    /* the kill hook asked */
	int hang;                    /* the hang hook asked */
	char reason[HOST_REASON_CHARS];
	xsCreation creation;
	pthread_t thread;
	struct WorkerLink *nextLiving;
	char module[WORKER_SPECIFIER_CHARS];
} WorkerLink;

/* The creator's side: host data of a Worker instance. */
typedef struct {
	xsMachine *the;
	xsSlot self;                 /* remembered while the worker lives */
	WorkerLink *link;            /* NULL once the end was handled */
	HostWatch *watch;
	int remembered;
	/* A message is being delivered: a collection the delivery runs (terminate()
	 * then a GC in a promise job) leaves the record to onCreatorWake to free. */
	int delivering;
	int collected;
	char ended[HOST_REASON_CHARS + 64];  /* what postMessage says after the end */
} WorkerRecord;

/* Living workers, oldest first: the kill hook ends the first. */
static pthread_mutex_t gLivingLock = PTHREAD_MUTEX_INITIALIZER;
static WorkerLink *gLiving = NULL;

static void workerDestructor(void *data);
static void workerMarker(xsMachine *the, void *data, xsMarkRoot markRoot);
static xsHostHooks gWorkerHooks = { workerDestructor, workerMarker, NULL };
/* `self` in a worker: host data is its link; nothing to free or mark. */
static xsHostHooks gSelfHooks = { NULL, NULL, NULL };

/* ---- the link ------------------------------------------------------------ */

static void queueClear(WorkerQueue *queue)
{
	while (queue->head) {
		WorkerMessage *message = queue->head;
		queue->head = message->next;
		free(message->data);
		free(message);
	}
	queue->tail = NULL;
	queue->count = 0;
	queue->bytes = 0;
}

static void wake(int fd)
{
	uint64_t one = 1;
	ssize_t written = write(fd, &one, sizeof(one));
	(void)written;   /* an eventfd at its limit is awake already */
}

static void drain(int fd)
{
	uint64_t count;
	ssize_t got = read(fd, &count, sizeof(count));
	(void)got;
}

static WorkerLink *linkCreate(const char *module, const xsCreation *creation)
{
	WorkerLink *link = calloc(1, sizeof(WorkerLink));
	if (!link)
		return NULL;
	link->toWorker.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	link->toCreator.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (link->toWorker.fd < 0 || link->toCreator.fd < 0) {
		if (link->toWorker.fd >= 0)
			close(link->toWorker.fd);
		if (link->toCreator.fd >= 0)
			close(link->toCreator.fd);
		free(link);
		return NULL;
	}
	pthread_mutex_init(&link->lock, NULL);
	pthread_cond_init(&link->changed, NULL);
	link->refs = 2;
	link->state = kStarting;
	link->creation = *creation;
	snprintf(link->module, sizeof(link->module), "%s", module);
	return link;
}

static void linkRelease(WorkerLink *link)
{
	pthread_mutex_lock(&link->lock);
	int last = --link->refs == 0;
	pthread_mutex_unlock(&link->lock);
	if (!last)
		return;
	queueClear(&link->toWorker);
	queueClear(&link->toCreator);
	close(link->toWorker.fd);
	close(link->toCreator.fd);
	pthread_cond_destroy(&link->changed);
	pthread_mutex_destroy(&link->lock);
	free(link);
}

static void livingAdd(WorkerLink *link)
{
	pthread_mutex_lock(&gLivingLock);
	WorkerLink **last = &gLiving;
	while (*last)
		last = &(*last)->nextLiving;
	*last = link;
	link->nextLiving = NULL;
	pthread_mutex_unlock(&gLivingLock);
}

static void livingRemove(WorkerLink *link)
{
	pthread_mutex_lock(&gLivingLock);
	for (WorkerLink **p = &gLiving; *p; p = &(*p)->nextLiving) {
		if (*p == link) {
			*p = link->nextLiving;
			break;
		}
	}
	pthread_mutex_unlock(&gLivingLock);
}

/* Waits on the link's condition until *until, or throws; lock held. */
static int waitChanged(WorkerLink *link, const struct timespec *until)
{
	return pthread_cond_timedwait(&link->changed, &link->lock, until);
}

static void deadline(struct timespec *until, double ms)
{
	clock_gettime(CLOCK_REALTIME, until);
	long long nanoseconds = until->tv_nsec + (long long)(ms * 1e6);
	until->tv_sec += (time_t)(nanoseconds / 1000000000LL);
	until->tv_nsec = (long)(nanoseconds % 1000000000LL);
}

/* Marshals the message (throws what XS throws for what it cannot copy) and
 * queues it; waits for room up to WORKER_QUEUE_WAIT_MS. Returns 0, or 1 when
 * the receiving side has ended (the caller throws its sentence). */
static int post(xsMachine *the, WorkerLink *link, WorkerQueue *queue, int toWorker)
{
	void *data = xsMarshallAlien(xsArg(0));
	if (!data)
		xsUnknownError("worker: out of memory copying the message");
	size_t size = (size_t)*(txSize *)data;
	if (size > WORKER_QUEUE_BYTES) {
		free(data);
		xsRangeError("worker: the message takes %zu bytes, more than a queue holds (%d): send it in parts", size, WORKER_QUEUE_BYTES);
	}
	WorkerMessage *message = calloc(1, sizeof(WorkerMessage));
	if (!message) {
		free(data);
		xsUnknownError("worker: out of memory queueing the message");
	}
	message->data = data;
	message->size = size;
	struct timespec until;
	deadline(&until, WORKER_QUEUE_WAIT_MS);
	pthread_mutex_lock(&link->lock);
	int full = 0, ended = 0, queued = 0, woken = 0;
	for (;;) {
		/* Ended: the worker has, or the creator terminated it (and may no
		 * longer be reading: a worker must not wait for it). */
		ended = link->terminate || (toWorker ? link->state == kEnded : link->refs < 2);
		full = queue->count >= WORKER_QUEUE_MESSAGES || queue->bytes + size > WORKER_QUEUE_BYTES;
		if (ended || !full)
			break;
		if (waitChanged(link, &until) == ETIMEDOUT) {
			full = queue->count >= WORKER_QUEUE_MESSAGES || queue->bytes + size > WORKER_QUEUE_BYTES;
			break;
		}
	}
	if (!ended && !full) {
		/* A message waiting already has woken the receiver, which takes
		 * every queued message before it waits again (or wakes itself
		 * when it leaves some): no wake-up per message of a burst. */
		woken = queue->count > 0;
		if (queue->tail)
			queue->tail->next = message;
		else
			queue->head = message;
		queue->tail = message;
		queue->count++;
		queue->bytes += size;
		queued = 1;
	}
	int count = queue->count;
	size_t bytes = queue->bytes;
	pthread_mutex_unlock(&link->lock);
	/* Woken after the unlock: the receiving thread takes the lock as soon as it
	 * wakes, and finding it still held cost both threads a futex wait and wake
	 * per message. The eventfd lives as long as the link, which this side holds. */
	if (queued && !woken)
		wake(queue->fd);
	if (ended || full) {
		free(data);
		free(message);
	}
	if (ended)
		return 1;
	if (full)
		xsUnknownError("worker: message queue full (%d messages, %zu bytes waiting) for %d ms: the %s is not taking messages",
			count, bytes, WORKER_QUEUE_WAIT_MS, toWorker ? "worker" : "creating machine");
	return 0;
}

/* The next queued message, or NULL; tells a waiting sender there is room. */
static WorkerMessage *take(WorkerLink *link, WorkerQueue *queue)
{
	pthread_mutex_lock(&link->lock);
	WorkerMessage *message = queue->head;
	if (message) {
		queue->head = message->next;
		if (!queue->head)
			queue->tail = NULL;
		queue->count--;
		queue->bytes -= message->size;
		pthread_cond_broadcast(&link->changed);
	}
	pthread_mutex_unlock(&link->lock);
	return message;
}

/* Calls receiver.onmessage(copy) when it is a function; first in a host
 * frame (it takes the frame's xsVars). */
static void deliverCall(xsMachine *the, xsSlot *receiver, WorkerMessage *message)
{
	xsVars(2);
	/* XS cannot collect while it demarshalls (fxDemarshall clears
	 * XS_COLLECTING_FLAG), so a heap full of garbage would abort on a copy that
	 * fits once collected: collect first when the copy might not fit. The
	 * marshalled size bounds both the chunks and the slots the copy takes. */
	size_t room = (size_t)message->size * 2 + WORKER_DELIVER_MARGIN_BYTES;
	if ((size_t)(the->maximumChunksSize - the->currentChunksSize) < room
			|| (size_t)(the->maximumHeapCount - the->currentHeapCount) * sizeof(txSlot) < room)
		xsCollectGarbage();
	xsVar(0) = xsDemarshallAlien(message->data);
	free(message->data);
	message->data = NULL;
	xsVar(1) = xsGet(*receiver, hostID("onmessage"));
	if (xsIsInstanceOf(xsVar(1), xsFunctionPrototype))
		xsCallFunction1(xsVar(1), *receiver, xsVar(0));
}

/* One message on the receiver's loop. The message is freed after
 * hostCallEnd, which an out-of-memory jump out of XS also reaches. */
static void deliver(xsMachine *the, xsSlot *receiver, WorkerMessage *message)
{
	hostCallBegin(the);
	deliverCall(the, receiver, message);
	hostCallEnd(the);
	free(message->data);
	free(message);
}

/* ---- the worker's thread --------------------------------------------------- */

/* The worker thread's own state (one machine per thread). */
static __thread WorkerLink *tLink = NULL;
static __thread int tImported = 0;   /* 1 fulfilled, -1 rejected */
static __thread xsSlot tSelf;

static void xs_worker_imported(xsMachine *the)
{
	tImported = 1;
	/* As the SDK's worker: a module whose default export is a function has it called. */
	xsVars(1);
	if (xsIsInstanceOf(xsArg(0), xsObjectPrototype) && xsHas(xsArg(0), xsID("default"))) {
		xsVar(0) = xsGet(xsArg(0), xsID("default"));
		if (xsIsInstanceOf(xsVar(0), xsFunctionPrototype))
			xsCallFunction0(xsVar(0), xsGlobal);
	}
}

static void xs_worker_failed(xsMachine *the)
{
	tImported = -1;
	char message[HOST_REASON_CHARS / 2];
	message[0] = 0;
	xsTry {
		fxToStringBuffer(the, &xsArg(0), message, sizeof(message));
	}
	xsCatch {
		snprintf(message, sizeof(message), "(error not printable)");
	}
	snprintf(tLink->reason, sizeof(tLink->reason), "%s", message);
}

static void xs_self_postMessage(xsMachine *the)
{
	WorkerLink *link = hostThis(the, &gSelfHooks, "self");
	if (hostArgc < 1)
		xsTypeError("self.postMessage: message required");
	if (hostLoop()->stop)
		xsUnknownError("self.postMessage: the worker is closing");
	if (post(the, link, &link->toCreator, 0))
		xsUnknownError("self.postMessage: the creating machine terminated this worker");
}

static void xs_self_close(xsMachine *the)
{
	WorkerLink *link = hostThis(the, &gSelfHooks, "self");
	pthread_mutex_lock(&link->lock);
	if (link->how == kEndNone)
		link->how = kEndClosed;
	pthread_mutex_unlock(&link->lock);
	hostLoopStop();
}

/* The hang hook: a built-in's loop of 2**53 - 1 steps. Only the meter ends it. */
static void workerHang(xsMachine *the)
{
	fprintf(stderr, "xsclaw: SIGUSR1: worker \"%s\" hangs (the lin host's test hook)\n", tLink->module);
	hostCallBegin(the);
	xsVars(2);
	xsVar(0) = xsNewObject();
	xsSet(xsVar(0), xsID("length"), xsNumber(9007199254740991.0));
	xsVar(1) = xsGet(xsGet(xsGet(xsGlobal, xsID("Array")), xsID("prototype")), xsID("indexOf"));
	xsCallFunction1(xsVar(1), xsVar(0), xsInteger(1));
	hostCallEnd(the);
}

/* The worker machine's meter: a worker its creator terminated, or the kill hook
 * ended, ends here even inside a loop that never returns to its event loop. */
static txBoolean workerMeter(txMachine *the, txU4 index)
{
	(void)index;
	WorkerLink *link = tLink;
	if (!link)
		return 1;
	pthread_mutex_lock(&link->lock);
	int terminate = link->terminate, kill = link->kill;
	pthread_mutex_unlock(&link->lock);
	if (!terminate && !kill)
		return 1;
	hostLoopAbort(kill ? "worker was killed (SIGUSR2, the lin host's test hook)" : "worker was terminated while busy");
	/* As fxAbort does for a worker: out to the outermost host frame, whose
	 * caller finds the loop stopped; the machine is deleted after. */
	if (the->firstJump)
		fxExitToHost(the);
	return 1;
}

/* The worker's loop: messages from the creator, terminate and kill requests. */
static void onWorkerWake(void *ctx, int fd, short revents)
{
	WorkerLink *link = ctx;
	HostLoop *loop = hostLoop();
	xsMachine *the = loop->machine;
	drain(fd);
	for (int i = 0; i < WORKER_QUEUE_MESSAGES && !loop->stop; i++) {
		pthread_mutex_lock(&link->lock);
		int terminate = link->terminate, kill = link->kill, hang = link->hang;
		link->hang = 0;
		pthread_mutex_unlock(&link->lock);
		if (kill) {
			hostLoopAbort("worker was killed (SIGUSR2, the lin host's test hook)");
			return;
		}
		if (hang && !terminate) {
			workerHang(the);
			continue;
		}
		if (terminate) {
			hostLoopStop();
			return;
		}
		WorkerMessage *message = take(link, &link->toWorker);
		if (!message)
			return;
		deliver(the, &tSelf, message);
	}
	/* More than a queue's worth arrived during this turn: come back. */
	wake(fd);
}

static void xs_worker_start(xsMachine *the)
{
	WorkerLink *link = tLink;
	xsVars(1);
	xsVar(0) = xsNewHostObject(NULL);
	xsSetHostHooks(xsVar(0), &gSelfHooks);
	xsSetHostData(xsVar(0), link);
	tSelf = xsVar(0);
	xsRemember(tSelf);
	hostDefineFunction(the, &tSelf, "postMessage", xs_self_postMessage, 1);
	hostDefineFunction(the, &tSelf, "close", xs_self_close, 0);
	xsDefine(xsGlobal, xsID("self"), tSelf, xsDontEnum);
	hostImport(the, link->module, xs_worker_imported, xs_worker_failed);
}

/* Sets the link's end under its lock and tells the creator. */
static void linkEnd(WorkerLink *link, int startFailed, int how, const char *reason)
{
	pthread_mutex_lock(&link->lock);
	link->state = kEnded;
	link->startFailed = startFailed;
	if (how != kEndNone)
		link->how = how;
	if (reason)
		snprintf(link->reason, sizeof(link->reason), "%s", reason);
	queueClear(&link->toWorker);
	pthread_cond_broadcast(&link->changed);
	wake(link->toCreator.fd);
	pthread_mutex_unlock(&link->lock);
}

/* ---- the deepest native stack a worker used (--native-stack-report 1) ----------
 *
 * The board gives a Worker's task a C stack of creation.nativeStack bytes
 * (manifest.json's config.agent.creation); too small, and the board crashes
 * where lin never does, since a pthread here has megabytes. To measure what a
 * worker needs, as FreeRTOS's high-water mark does on the board with its 0xa5
 * fill: with the option, the thread fills a window of its stack below where it
 * starts with a pattern, and at its end finds the lowest byte no longer the
 * pattern, then prints `xsclaw: worker "<module>" native stack peak N bytes` on
 * stderr (npm run bench's agent.c_stack_peak_bytes). N counts from
 * workerThread's frame down, from the moment the worker's module has run (the
 * window is filled again then: lin parses every module it loads, the board
 * none); the thread's start above it is a few hundred bytes more on either
 * target, which the manifest's margin covers. A module the worker imports
 * later is parsed here and not on the board: that run's figure overstates. */
#define NATIVE_STACK_PATTERN 0xa5
#define NATIVE_STACK_WINDOW (256 * 1024)   /* far above any worker's need; a peak at its end says so */
#define NATIVE_STACK_SKIP 4096             /* below the caller's frame: the painter's own frames */

typedef struct {
	uint8_t *top;      /* workerThread's frame */
	uint8_t *low;      /* the window's lowest byte; NULL: not measuring */
} NativeStackMark;

static __attribute__((noinline)) void nativeStackPaint(NativeStackMark *mark, uint8_t *top)
{
	mark->low = NULL;
	const char *option = hostOption("native-stack-report");
	if (!option || strcmp(option, "1"))
		return;
	pthread_attr_t attributes;
	void *stackLow;
	size_t stackSize;
	if (pthread_getattr_np(pthread_self(), &attributes))
		return;
	int known = !pthread_attr_getstack(&attributes, &stackLow, &stackSize);
	pthread_attr_destroy(&attributes);
	uint8_t *high = top - NATIVE_STACK_SKIP, *low = high - NATIVE_STACK_WINDOW;
	if (!known || low < (uint8_t *)stackLow + 65536)
		return;
	memset(low, NATIVE_STACK_PATTERN, NATIVE_STACK_WINDOW);
	mark->top = top;
	mark->low = low;
}

static void nativeStackReport(const NativeStackMark *mark, const char *module)
{
	if (!mark->low)
		return;
	const uint8_t *used = mark->low;
	while (used < mark->top - NATIVE_STACK_SKIP && *used == NATIVE_STACK_PATTERN)
		used++;
	fprintf(stderr, "xsclaw: worker \"%s\" native stack peak %ld bytes%s\n", module, (long)(mark->top - used),
		used == mark->low ? " (the whole window measured: more, perhaps)" : "");
}

static void *workerThread(void *arg)
{
	WorkerLink *link = arg;
	tLink = link;
	NativeStackMark stackMark;
	nativeStackPaint(&stackMark, (uint8_t *)__builtin_frame_address(0));
	char reason[HOST_REASON_CHARS] = "";
	HostLoop *loop = hostLoopBegin(&link->creation, link);
	xsMachine *machine = loop ? hostCreateMachine(&link->creation, link->module) : NULL;
	if (machine)
		fxBeginMetering(machine, workerMeter, WORKER_METER_INTERVAL);
	if (!machine) {
		snprintf(reason, sizeof(reason), "%s", loop && loop->aborted ? loop->reason : "cannot create its machine: the host is out of memory");
		if (loop)
			hostLoopEnd(loop);
		linkEnd(link, 1, kEndAborted, reason);
		linkRelease(link);
		return NULL;
	}
	xsBeginHost(machine);
	{
		xsTry {
			hostInstallNative(the);
			xsResult = xsNewHostFunction(xs_worker_start, 0);
			xsCallFunction0(xsResult, xsUndefined);
		}
		xsCatch {
			char message[HOST_REASON_CHARS / 2];
			fxToStringBuffer(the, &xsException, message, sizeof(message));
			snprintf(link->reason, sizeof(link->reason), "%s", message);
			tImported = -1;
		}
	}
	xsEndHost(machine);
	hostRunJobs(machine);
	if (loop->aborted || tImported < 0) {
		pthread_mutex_lock(&link->lock);
		snprintf(reason, sizeof(reason), "%s", loop->aborted ? loop->reason : link->reason);
		pthread_mutex_unlock(&link->lock);
		hostDeleteMachine(machine);
		hostLoopEnd(loop);
		linkEnd(link, 1, kEndAborted, reason);
		linkRelease(link);
		return NULL;
	}
	/* A module still awaiting something has run as far as it can alone: it
	 * counts as started, and a later failure ends the worker as any other. */
	HostWatch *watch = hostWatch(link->toWorker.fd, POLLIN, onWorkerWake, link);
	livingAdd(link);
	pthread_mutex_lock(&link->lock);
	link->state = kRunning;
	pthread_cond_broadcast(&link->changed);
	pthread_mutex_unlock(&link->lock);
	/* Messages may have come while the module ran. */
	wake(link->toWorker.fd);
	/* Its modules are loaded: the parser's freed temporaries go back. */
	hostReleaseFreeMemory();
	/* The board loads no module at run time (xsc compiled them, the image
	 * holds them): the native stack is measured from here, without XS's
	 * parser, which lin runs on every module it loads. */
	nativeStackPaint(&stackMark, stackMark.top);

	hostLoopRun(loop);

	livingRemove(link);
	hostUnwatch(watch);
	int how = kEndNone;
	if (loop->aborted) {
		how = kEndAborted;
		snprintf(reason, sizeof(reason), "%s", loop->reason);
		fprintf(stderr, "xsclaw: worker \"%s\" ended: %s\n", link->module, reason);
	}
	else {
		pthread_mutex_lock(&link->lock);
		if (link->how == kEndNone)
			link->how = link->terminate ? kEndTerminated : kEndClosed;
		pthread_mutex_unlock(&link->lock);
	}
	hostDeleteMachine(machine);
	hostLoopEnd(loop);
	nativeStackReport(&stackMark, link->module);
	linkEnd(link, 0, how, how == kEndAborted ? reason : NULL);
	linkRelease(link);
	return NULL;
}

/* ---- the creator's side ------------------------------------------------------ */

/* Stops waiting for the worker: the record no longer owns the link. */
static void recordDetach(WorkerRecord *record, int join)
{
	WorkerLink *link = record->link;
	if (!link)
		return;
	record->link = NULL;
	hostUnwatch(record->watch);
	record->watch = NULL;
	if (join)
		pthread_join(link->thread, NULL);
	else
		pthread_detach(link->thread);
	linkRelease(link);
}

/* Asks the worker to end and waits up to WORKER_TERMINATE_WAIT_MS for its
 * thread to finish its turn; a worker busy longer ends on its own later. */
static void recordTerminate(WorkerRecord *record)
{
	WorkerLink *link = record->link;
	if (!link)
		return;
	struct timespec until;
	deadline(&until, WORKER_TERMINATE_WAIT_MS);
	pthread_mutex_lock(&link->lock);
	link->terminate = 1;
	pthread_cond_broadcast(&link->changed);   /* a worker waiting for room gives up */
	wake(link->toWorker.fd);
	while (link->state != kEnded)
		if (waitChanged(link, &until) == ETIMEDOUT)
			break;
	int ended = link->state == kEnded;
	pthread_mutex_unlock(&link->lock);
	recordDetach(record, ended);
}

static void recordForget(xsMachine *the, WorkerRecord *record)
{
	if (record->remembered) {
		record->remembered = 0;
		xsForget(record->self);
	}
}

/* The creator's loop: the worker's messages, then its end. */
static void onCreatorWake(void *ctx, int fd, short revents)
{
	WorkerRecord *record = ctx;
	xsMachine *the = record->the;
	WorkerLink *link = record->link;
	drain(fd);
	for (int i = 0; i < WORKER_QUEUE_MESSAGES; i++) {
		if (record->link != link || hostMachineAborted(the))
			return;   /* terminate() from onmessage, or this machine ended */
		WorkerMessage *message = take(link, &link->toCreator);
		if (!message)
			break;
		record->delivering = 1;
		deliver(the, &record->self, message);
		record->delivering = 0;
		if (record->collected) {
			free(record);   /* its Worker was collected during the delivery */
			return;
		}
	}
	if (record->link != link || hostMachineAborted(the))
		return;
	pthread_mutex_lock(&link->lock);
	int ended = link->state == kEnded && !link->toCreator.head;
	int more = link->toCreator.head != NULL;
	int how = link->how;
	char reason[HOST_REASON_CHARS];
	snprintf(reason, sizeof(reason), "%s", link->reason);
	pthread_mutex_unlock(&link->lock);
	if (more)
		wake(fd);
	if (!ended)
		return;
	recordDetach(record, 1);
	if (how == kEndAborted)
		snprintf(record->ended, sizeof(record->ended), "worker: the worker ended: %s; create a new Worker", reason);
	else
		snprintf(record->ended, sizeof(record->ended), "worker: the worker closed itself");
	if (how == kEndAborted) {
		hostCallBegin(the);
		{
			xsVars(3);
			xsVar(0) = xsAccess(record->self);
			xsVar(1) = xsGet(xsVar(0), hostID("onerror"));
			xsVar(2) = xsString(reason);
			if (xsIsInstanceOf(xsVar(1), xsFunctionPrototype))
				xsCallFunction1(xsVar(1), xsVar(0), xsVar(2));
		}
		hostCallEnd(the);
	}
	recordForget(the, record);
}

static void workerDestructor(void *data)
{
	WorkerRecord *record = data;
	if (!record)
		return;
	recordTerminate(record);
	if (record->delivering)
		record->collected = 1;   /* onCreatorWake frees it once deliver returns */
	else
		free(record);
}

static void workerMarker(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	(void)the;
	(void)data;
	(void)markRoot;
}

/* Reads a whole-number option of options[name] (or options[group][name]) into *value. */
static void creationOption(xsMachine *the, xsSlot *options, xsSlot *scratch, const char *group, const char *name, xsIntegerValue *value)
{
	xsSlot *from = options;
	if (group) {
		if (!hostHasOption(the, options, group))
			return;
		*scratch = xsGet(*options, hostID(group));
		if (!xsIsInstanceOf(*scratch, xsObjectPrototype))
			xsTypeError("Worker: %s must be an object", group);
		from = scratch;
	}
	if (!hostHasOption(the, from, name))
		return;
	xsSlot option = xsGet(*from, hostID(name));
	int type = xsTypeOf(option);
	if (type != xsIntegerType && type != xsNumberType)
		xsTypeError("Worker: %s%s%s must be a number", group ? group : "", group ? "." : "", name);
	double number = xsToNumber(option);
	if (!hostIsWhole(number, 0, 0x7FFFFFFF))
		xsRangeError("Worker: invalid %s%s%s", group ? group : "", group ? "." : "", name);
	*value = (xsIntegerValue)number;
}

static void readCreation(xsMachine *the, xsSlot *options, xsSlot *scratch, xsCreation *creation)
{
	*creation = *hostCreation();
	if (!xsIsInstanceOf(*options, xsObjectPrototype)) {
		if (xsTypeOf(*options) != xsUndefinedType)
			xsTypeError("Worker: options must be an object");
		return;
	}
	creationOption(the, options, scratch, NULL, "static", &creation->staticSize);
	creationOption(the, options, scratch, "chunk", "initial", &creation->initialChunkSize);
	creationOption(the, options, scratch, "chunk", "incremental", &creation->incrementalChunkSize);
	creationOption(the, options, scratch, "heap", "initial", &creation->initialHeapCount);
	creationOption(the, options, scratch, "heap", "incremental", &creation->incrementalHeapCount);
	creationOption(the, options, scratch, NULL, "stack", &creation->stackCount);
	creationOption(the, options, scratch, "keys", "available", &creation->initialKeyCount);
	creationOption(the, options, scratch, "keys", "initial", &creation->initialKeyCount);
	creationOption(the, options, scratch, "keys", "incremental", &creation->incrementalKeyCount);
	creationOption(the, options, scratch, "keys", "name", &creation->nameModulo);
	creationOption(the, options, scratch, "keys", "symbol", &creation->symbolModulo);
	/* nativeStack, priority, core: FreeRTOS task settings, not used on lin
	 * (a pthread gets the default stack). */
	if (creation->stackCount < 1 || creation->nameModulo < 1 || creation->symbolModulo < 1 || creation->initialKeyCount < 1)
		xsRangeError("Worker: stack, keys.available, keys.name and keys.symbol must be at least 1");
}

static void xs_worker_constructor(xsMachine *the)
{
	hostConstructThis(the, &gWorkerHooks, "Worker");
	if (hostArgc < 1 || xsTypeOf(xsArg(0)) != xsStringType)
		xsTypeError("Worker: module specifier (a string) required");
	const char *specifier = xsToString(xsArg(0));
	if (!specifier[0] || strlen(specifier) >= WORKER_SPECIFIER_CHARS)
		xsRangeError("Worker: invalid module specifier");
	xsCreation creation;
	xsVars(2);
	xsVar(0) = hostArgc > 1 ? xsArg(1) : xsUndefined;
	readCreation(the, &xsVar(0), &xsVar(1), &creation);
	specifier = xsToString(xsArg(0));   /* a getter above may have moved the string */
	WorkerRecord *record = calloc(1, sizeof(WorkerRecord));
	WorkerLink *link = record ? linkCreate(specifier, &creation) : NULL;
	if (!link) {
		free(record);
		xsUnknownError("Worker: out of memory (host)");
	}
	int error = pthread_create(&link->thread, NULL, workerThread, link);
	if (error) {
		link->refs = 1;
		linkRelease(link);
		free(record);
		xsUnknownError("Worker: cannot start a thread: %s", strerror(error));
	}
	/* As on the device, the creator waits until the worker's module has run. */
	pthread_mutex_lock(&link->lock);
	while (link->state == kStarting)
		pthread_cond_wait(&link->changed, &link->lock);
	int failed = link->startFailed;
	char reason[HOST_REASON_CHARS];
	snprintf(reason, sizeof(reason), "%s", link->reason);
	pthread_mutex_unlock(&link->lock);
	if (failed) {
		char module[WORKER_SPECIFIER_CHARS];
		snprintf(module, sizeof(module), "%s", link->module);
		pthread_join(link->thread, NULL);
		linkRelease(link);
		free(record);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "Worker: module \"%s\" failed to start: %s", module, reason);
	}
	record->the = the;
	record->link = link;
	record->self = xsThis;
	record->watch = hostWatch(link->toCreator.fd, POLLIN, onCreatorWake, record);
	xsSetHostData(xsThis, record);
	xsRemember(record->self);
	record->remembered = 1;
}

static void xs_worker_postMessage(xsMachine *the)
{
	WorkerRecord *record = hostThis(the, &gWorkerHooks, "Worker");
	if (hostArgc < 1)
		xsTypeError("Worker.postMessage: message required");
	if (!record->link)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "%s", record->ended);
	if (post(the, record->link, &record->link->toWorker, 1)) {
		pthread_mutex_lock(&record->link->lock);
		char reason[HOST_REASON_CHARS];
		snprintf(reason, sizeof(reason), "%s", record->link->how == kEndAborted ? record->link->reason : "it closed itself");
		pthread_mutex_unlock(&record->link->lock);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "worker: the worker ended: %s", reason);
	}
}

/* Ends the worker: no onerror, no more messages either way. The record stays
 * (a loop callback may be using it) to say "terminated" until the instance
 * is collected. */
static void xs_worker_terminate(xsMachine *the)
{
	WorkerRecord *record = hostThis(the, &gWorkerHooks, "Worker");
	if (!record->link)
		return;
	recordTerminate(record);
	recordForget(the, record);
	snprintf(record->ended, sizeof(record->ended), "Worker: terminated");
}

static const HostMember gWorkerMembers[] = {
	{ "postMessage", xs_worker_postMessage, 1, 0 },
	{ "terminate", xs_worker_terminate, 0, 0 },
	{ NULL }
};

void hostInstallWorker(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "Worker", xs_worker_constructor, 2, gWorkerMembers, &gWorkerHooks);
}

/* ---- kill hook ------------------------------------------------------------------ */

/* A thread of its own waits for SIGUSR2 and SIGUSR1 (blocked in every other
 * thread, which inherit the mask from main) and asks the oldest living worker
 * to end as if it had crashed (SIGUSR2: onerror reports it like a real crash)
 * or to hang (SIGUSR1). */
static void *killHookThread(void *arg)
{
	sigset_t *set = arg;
	for (;;) {
		int number = 0;
		if (sigwait(set, &number))
			continue;
		pthread_mutex_lock(&gLivingLock);
		WorkerLink *link = gLiving;
		if (link) {
			pthread_mutex_lock(&link->lock);
			if (number == SIGUSR1)
				link->hang = 1;
			else
				link->kill = 1;
			wake(link->toWorker.fd);
			pthread_mutex_unlock(&link->lock);
		}
		pthread_mutex_unlock(&gLivingLock);
		if (!link)
			fprintf(stderr, "xsclaw: %s: no worker to %s\n", number == SIGUSR1 ? "SIGUSR1" : "SIGUSR2", number == SIGUSR1 ? "hang" : "kill");
	}
	return NULL;
}

void hostWorkerStartKillHook(void)
{
	static sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return;
	pthread_attr_t attributes;
	pthread_t thread;
	pthread_attr_init(&attributes);
	pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&thread, &attributes, killHookThread, &set)) {
		sigset_t none;
		sigemptyset(&none);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
	}
	pthread_attr_destroy(&attributes);
}
