/*
 * loop.c — the poll() event loop every machine runs (the main one on the
 * process's thread, each worker on its own: worker.c): file descriptors to
 * watch, timers, calls posted from other threads, and the promise jobs run
 * after each callback. The loop is thread-local (tLoop).
 */
#include "xsAll.h"
#include "host.h"

#include <errno.h>
#include <limits.h>
#include <sys/eventfd.h>
#include <string.h>
#include <unistd.h>

/* The loop of the machine this thread runs (NULL before the first). */
static __thread HostLoop *tLoop = NULL;

xsMachine *hostMachine(void)
{
	return tLoop ? tLoop->machine : NULL;
}

struct HostWatch {
	int fd;
	short events;
	int dead;
	HostWatchFn fn;
	void *ctx;
	HostWatch *next;
};

struct HostTimer {
	double when;
	int dead;
	HostTimerFn fn;
	void *ctx;
	HostTimer *next;
};

double hostNowMs(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

HostLoop *hostLoop(void)
{
	return tLoop;
}

typedef struct HostPost {
	struct HostPost *next;
	HostTimerFn fn;
	void *ctx;
} HostPost;

HostLoop *hostLoopBegin(const xsCreation *creation, void *worker)
{
	HostLoop *loop = calloc(1, sizeof(HostLoop));
	if (!loop)
		return NULL;
	loop->wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (loop->wakeFd < 0) {
		free(loop);
		return NULL;
	}
	pthread_mutex_init(&loop->postLock, NULL);
	loop->creation = *creation;
	loop->worker = worker;
	tLoop = loop;
	return loop;
}

int hostLoopPost(HostLoop *loop, HostTimerFn fn, void *ctx)
{
	HostPost *post = calloc(1, sizeof(HostPost));
	if (!post)
		return -1;
	post->fn = fn;
	post->ctx = ctx;
	pthread_mutex_lock(&loop->postLock);
	HostPost **last = (HostPost **)&loop->posts;
	while (*last)
		last = &(*last)->next;
	*last = post;
	uint64_t one = 1;
	ssize_t written = write(loop->wakeFd, &one, sizeof(one));
	(void)written;   /* at the eventfd's limit the loop is awake already */
	pthread_mutex_unlock(&loop->postLock);
	return 0;
}

/* Takes the posted calls (oldest first); run: call them, else just free. */
static void runPosts(HostLoop *loop, int run)
{
	pthread_mutex_lock(&loop->postLock);
	HostPost *post = loop->posts;
	loop->posts = NULL;
	uint64_t count;
	ssize_t got = read(loop->wakeFd, &count, sizeof(count));
	(void)got;
	pthread_mutex_unlock(&loop->postLock);
	while (post) {
		HostPost *next = post->next;
		if (run && !loop->stop)
			post->fn(post->ctx);
		free(post);
		post = next;
	}
}

static int hasPosts(HostLoop *loop)
{
	pthread_mutex_lock(&loop->postLock);
	int any = loop->posts != NULL;
	pthread_mutex_unlock(&loop->postLock);
	return any;
}

static void sweepTimers(HostTimer **t, int all)
{
	while (*t) {
		if ((*t)->dead || all) {
			HostTimer *dead = *t;
			*t = dead->next;
			free(dead);
		}
		else
			t = &(*t)->next;
	}
}

static void sweepDead(HostLoop *loop, int all)
{
	HostWatch **w = &loop->watches;
	while (*w) {
		if ((*w)->dead || all) {
			HostWatch *dead = *w;
			*w = dead->next;
			free(dead);
		}
		else
			w = &(*w)->next;
	}
	sweepTimers(&loop->timers, all);
	sweepTimers(&loop->beforeWait, all);
}

/* The hostTimerBeforeWait calls, oldest first; one may add another (it runs
 * in the next round, at most a few rounds a turn). */
static void runBeforeWait(HostLoop *loop)
{
	for (int round = 0; round < 8 && loop->beforeWait && !loop->stop; round++) {
		HostTimer *list = NULL;
		while (loop->beforeWait) {   /* reversed: oldest first */
			HostTimer *t = loop->beforeWait;
			loop->beforeWait = t->next;
			t->next = list;
			list = t;
		}
		while (list) {
			HostTimer *t = list;
			list = t->next;
			if (!t->dead && !loop->stop) {
				t->dead = 1;
				t->fn(t->ctx);
			}
			free(t);
		}
	}
}

void hostLoopEnd(HostLoop *loop)
{
	sweepDead(loop, 1);
	runPosts(loop, 0);
	close(loop->wakeFd);
	pthread_mutex_destroy(&loop->postLock);
	if (tLoop == loop)
		tLoop = NULL;
	free(loop);
}

void hostLoopStop(void)
{
	if (tLoop)
		tLoop->stop = 1;
}

void hostLoopAbort(const char *reason)
{
	HostLoop *loop = tLoop;
	if (!loop || loop->aborted)
		return;
	loop->aborted = 1;
	loop->stop = 1;
	snprintf(loop->reason, sizeof(loop->reason), "%s", reason);
}

int hostMachineAborted(xsMachine *the)
{
	(void)the;
	return tLoop && tLoop->aborted;
}

/* Out of host memory for the loop's own bookkeeping: there is no machine to
 * tell, so the process ends as on an out-of-memory in the main machine. */
static void *loopAllocate(size_t size, const char *what)
{
	void *block = calloc(1, size);
	if (!block) {
		fprintf(stderr, "xsclaw: out of memory (%s)\n", what);
		exit(2);
	}
	return block;
}

HostWatch *hostWatch(int fd, short events, HostWatchFn fn, void *ctx)
{
	HostWatch *watch = loopAllocate(sizeof(HostWatch), "host watch");
	watch->fd = fd;
	watch->events = events;
	watch->fn = fn;
	watch->ctx = ctx;
	watch->next = tLoop->watches;
	tLoop->watches = watch;
	return watch;
}

void hostWatchSetEvents(HostWatch *watch, short events)
{
	if (watch)
		watch->events = events;
}

void hostUnwatch(HostWatch *watch)
{
	if (watch)
		watch->dead = 1;
}

HostTimer *hostTimerStart(double delayMs, HostTimerFn fn, void *ctx)
{
	HostTimer *timer = loopAllocate(sizeof(HostTimer), "host timer");
	timer->when = hostNowMs() + (delayMs > 0 ? delayMs : 0);
	timer->fn = fn;
	timer->ctx = ctx;
	timer->next = tLoop->timers;
	tLoop->timers = timer;
	return timer;
}

HostTimer *hostTimerBeforeWait(HostTimerFn fn, void *ctx)
{
	HostTimer *timer = loopAllocate(sizeof(HostTimer), "host timer");
	timer->fn = fn;
	timer->ctx = ctx;
	timer->next = tLoop->beforeWait;
	tLoop->beforeWait = timer;
	return timer;
}

void hostTimerCancel(HostTimer *timer)
{
	if (timer)
		timer->dead = 1;
}

/* Inside a host frame of its own: a worker's machine that runs out of memory
 * in a promise job jumps out to it (fxAbort), as from a callback. */
void hostRunJobs(xsMachine *machine)
{
	if (!machine->promiseJobs || hostMachineAborted(machine))
		return;
	xsBeginHost(machine);
	while (the->promiseJobs && !hostMachineAborted(the)) {
		while (the->promiseJobs && !hostMachineAborted(the)) {
			the->promiseJobs = 0;
			fxRunPromiseJobs(the);
		}
		fxEndJob(the);
	}
	xsEndHost(machine);
}

/* Runs until the loop is stopped (exit, reboot, a worker's end), or nothing
 * is left to wait on. */
void hostLoopRun(HostLoop *loop)
{
	struct pollfd *fds = NULL;
	HostWatch **owners = NULL;
	int capacity = 0;
	hostRunJobs(loop->machine);
	while (!loop->stop) {
		runBeforeWait(loop);
		sweepDead(loop, 0);
		if (!loop->watches && !loop->timers && !loop->beforeWait && !hasPosts(loop))
			break;
		double now = hostNowMs();
		double soonest = -1;   /* ms until the first timer is due; -1: no timer */
		for (HostTimer *t = loop->timers; t; t = t->next) {
			double wait = t->when > now ? t->when - now : 0;
			if (soonest < 0 || wait < soonest)
				soonest = wait;
		}
		/* poll() takes int milliseconds: a timer further away than INT_MAX ms
		 * (24.8 days, or Infinity) is waited for in steps of that. */
		int timeout = soonest < 0 ? -1 : soonest >= INT_MAX ? INT_MAX : (int)ceil(soonest);
		/* runBeforeWait stopped at its bound with calls left: they run after a
		 * look at the sockets, not after whatever wakes the loop next. */
		if (loop->beforeWait)
			timeout = 0;
		int count = 1;   /* the wake eventfd, first */
		for (HostWatch *w = loop->watches; w; w = w->next)
			count++;
		if (count > capacity) {
			capacity = count * 2;
			fds = realloc(fds, capacity * sizeof(struct pollfd));
			owners = realloc(owners, capacity * sizeof(HostWatch *));
			if (!fds || !owners) {
				fprintf(stderr, "xsclaw: out of memory (poll set)\n");
				exit(2);
			}
		}
		fds[0].fd = loop->wakeFd;
		fds[0].events = POLLIN;
		fds[0].revents = 0;
		owners[0] = NULL;
		int n = 1;
		for (HostWatch *w = loop->watches; w; w = w->next) {
			fds[n].fd = w->fd;
			fds[n].events = w->events;
			fds[n].revents = 0;
			owners[n++] = w;
		}
#ifdef mxProfile
		/* The profiler counts wall time between samples: leave the idle wait out. */
		if (loop->machine)
			fxSuspendProfiler(loop->machine);
#endif
		int ready = poll(fds, n, timeout);
#ifdef mxProfile
		if (loop->machine)
			fxResumeProfiler(loop->machine);
#endif
		if (ready < 0 && errno != EINTR) {
			fprintf(stderr, "xsclaw: poll failed: %s\n", strerror(errno));
			exit(1);
		}
		now = hostNowMs();
		/* Fire due timers one at a time: a callback may cancel or add others. */
		for (int guard = 0; guard < 1024 && !loop->stop; guard++) {
			HostTimer *due = NULL;
			for (HostTimer *t = loop->timers; t; t = t->next)
				if (!t->dead && t->when <= now && (!due || t->when < due->when))
					due = t;
			if (!due)
				break;
			due->dead = 1;
			due->fn(due->ctx);
		}
		if (fds[0].revents)
			runPosts(loop, 1);
		for (int i = 1; i < n && ready > 0 && !loop->stop; i++) {
			HostWatch *w = owners[i];
			if (!fds[i].revents || w->dead)
				continue;
			w->fn(w->ctx, w->fd, fds[i].revents);
		}
	}
	free(fds);
	free(owners);
}
