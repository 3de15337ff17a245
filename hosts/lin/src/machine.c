/*
 * machine.c — XS machines on the lin host: creating and deleting them (one at
 * a time across threads), the platform hooks XS calls (stack limit, promise
 * jobs, abort), what an uncaught exception or an abort does (the main machine
 * ends the process, as on the device; a worker's machine ends alone), the
 * figures heap() reads per machine, and import() of a machine's first module.
 *
 * Exit codes of the main machine: 1 on an uncaught exception or unhandled
 * rejection; 2 on out of memory (or stack/keys) with a message on stderr.
 */
#define _GNU_SOURCE /* pthread_getattr_np (fxCStackLimit) */
#include "xsAll.h"
#include "host.h"

#include <malloc.h>
#include <string.h>
#include <unistd.h>

/* Garbage collections of the calling thread's machines, for heap().collections.
 * xsMemory.c is compiled with -DmxReport=1 -DfxReport=xsclawMemoryReport (see
 * the Makefile), so its report lines come here instead of stdout: every
 * collection ends with exactly one "# Slot collection" line. Nothing is printed. */
static __thread unsigned long gCollections = 0;   /* per machine: one machine per thread */

void xsclawMemoryReport(txMachine *the, txString format, ...)
{
	(void)the;
	if (!strncmp(format, "# Slot collection", 17))
		gCollections++;
}

unsigned long hostCollections(void)
{
	return gCollections;
}

/* Creating and deleting machines touches XS's process-wide shared cluster
 * (gxSharedCluster in xsAtomics.c: a plain counter): one at a time. */
static pthread_mutex_t gMachineLock = PTHREAD_MUTEX_INITIALIZER;
static int gLiveMachines = 0;                 /* under gMachineLock (kept code is freed when none is left) */

int hostLiveMachines(void)
{
	pthread_mutex_lock(&gMachineLock);
	int live = gLiveMachines;
	pthread_mutex_unlock(&gMachineLock);
	return live;
}

/* XS asks where the C stack ends each time it creates a machine or compiles a
 * script or a regular expression; glibc answers pthread_getattr_np on the main
 * thread by reading /proc/self/maps (four times a console turn). A thread's
 * stack does not move, so each thread asks once. The limit is XS's own default
 * on Linux: 128 KiB above the stack's lowest address. */
char *fxCStackLimit(void)
{
	static __thread char *limit;
	static __thread int known;
	if (!known) {
		pthread_attr_t attrs;
		if (pthread_getattr_np(pthread_self(), &attrs) == 0) {
			void *stackAddr;
			size_t stackSize;
			if (pthread_attr_getstack(&attrs, &stackAddr, &stackSize) == 0)
				limit = (char *)stackAddr + (128 * 1024);
			pthread_attr_destroy(&attrs);
		}
		known = 1;
	}
	return limit;
}

/* heap()'s property names, looked up once per machine: both machines call heap()
 * after every port message (util/heap keepHeadroom), and eight name lookups were
 * most of the call. A thread runs one machine at a time, so the cache is per
 * thread, checked against the machine, and forgotten when the machine is deleted
 * (a reboot's new machine may get the old one's address). */
static const char *const gHeapNames[HEAP_FIGURES] = { "chunkUsed", "chunkPeak", "chunkSize", "slotUsed", "slotPeak", "slotSize", "sockets", "collections" };
static __thread struct { xsMachine *machine; xsIdentifier ids[HEAP_FIGURES]; } tHeapIds;

const xsIdentifier *hostHeapIds(xsMachine *the)
{
	if (tHeapIds.machine != the) {
		for (int i = 0; i < HEAP_FIGURES; i++)
			tHeapIds.ids[i] = xsID((char *)gHeapNames[i]);
		tHeapIds.machine = the;
	}
	return tHeapIds.ids;
}

xsMachine *hostCreateMachine(const xsCreation *creation, const char *name)
{
	pthread_mutex_lock(&gMachineLock);
	xsMachine *machine = xsCreateMachine((xsCreation *)creation, (char *)name, NULL);
	if (machine)
		gLiveMachines++;
	pthread_mutex_unlock(&gMachineLock);
	HostLoop *loop = hostLoop();
	if (machine && loop)
		loop->machine = machine;
#ifdef mxProfile
	if (machine && getenv("XSCLAW_PROFILE"))
		fxStartProfiling(machine);
#endif
	return machine;
}

/* The lin host parses every module when a machine starts (the device runs
 * them from flash): about 0.7 MiB of parser temporaries per machine, freed
 * again, but left between the code XS keeps and other live blocks, so malloc
 * could not give those pages back by itself and they stayed resident for the
 * life of the process. malloc_trim returns every free page. Called once a
 * machine's modules are loaded: after the main module settles, and after a
 * worker's module has run (a restarted agent machine parses again). */
void hostReleaseFreeMemory(void)
{
	malloc_trim(0);
}

void hostDeleteMachine(xsMachine *machine)
{
#ifdef mxProfile
	const char *profileDir = getenv("XSCLAW_PROFILE");
	if (profileDir && ((txMachine *)machine)->profiler) {
		static int profiles = 0;
		char path[1024];
		snprintf(path, sizeof(path), "%s/%d-%d.cpuprofile", profileDir, (int)getpid(), __atomic_fetch_add(&profiles, 1, __ATOMIC_SEQ_CST));
		FILE *file = fopen(path, "w");
		if (file)
			fxStopProfiling(machine, file);
	}
#endif
	pthread_mutex_lock(&gMachineLock);
	xsDeleteMachine(machine);
	gLiveMachines--;
	pthread_mutex_unlock(&gMachineLock);
	HostLoop *loop = hostLoop();
	if (loop && loop->machine == machine)
		loop->machine = NULL;
	if (tHeapIds.machine == machine)
		tHeapIds.machine = NULL;
}

void fxCreateMachinePlatform(txMachine *the)
{
	the->promiseJobs = 0;
	the->waiterCondition = NULL;
	the->waiterData = NULL;
	the->waiterLink = NULL;
}

void fxDeleteMachinePlatform(txMachine *the)
{
	(void)the;
}

void fxQueuePromiseJobs(txMachine *the)
{
	the->promiseJobs = 1;
}

void hostExceptionText(txMachine *the, char *message, size_t size)
{
	message[0] = 0;
	mxTry(the) {
		fxToStringBuffer(the, &mxException, message, size);
	}
	mxCatch(the) {
		snprintf(message, size, "(exception not printable)");
	}
}

void hostPrintException(txMachine *the, const char *prefix)
{
	char message[512];
	hostExceptionText(the, message, sizeof(message));
	fprintf(stderr, "xsclaw: %s: %s\n", prefix, message);
}

/* Why a machine aborted, as a sentence (worker.c passes it to onerror). */
static void abortReason(txMachine *the, int status, const xsCreation *creation, char *reason, size_t size)
{
	char message[HOST_REASON_CHARS / 2];
	switch (status) {
	case XS_NOT_ENOUGH_MEMORY_EXIT:
		snprintf(reason, size, "out of memory: the XS heap (chunks %d bytes, slots %d) is exhausted; raise the creation sizes",
			(int)the->maximumChunksSize, (int)the->maximumHeapCount);
		break;
	case XS_STACK_OVERFLOW_EXIT:
		snprintf(reason, size, "stack overflow (creation.stack is %d slots)", (int)creation->stackCount);
		break;
	case XS_NO_MORE_KEYS_EXIT:
		snprintf(reason, size, "out of keys (creation.keys.available is %d)", (int)creation->initialKeyCount);
		break;
	case XS_UNHANDLED_EXCEPTION_EXIT:
	case XS_UNHANDLED_REJECTION_EXIT:
		hostExceptionText(the, message, sizeof(message));
		snprintf(reason, size, "%s: %s", status == XS_UNHANDLED_EXCEPTION_EXIT ? "uncaught exception" : "unhandled rejection", message);
		break;
	default:
		snprintf(reason, size, "fatal XS error %d", status);
		break;
	}
}

/* Called first by fxAbort: a bounded call (sandbox.c) unwinds instead. */
static int (*gAbortHook)(xsMachine *the, int status) = NULL;

void hostSetAbortHook(int (*hook)(xsMachine *the, int status))
{
	gAbortHook = hook;
}

/* A worker machine that aborts ends alone: its loop stops, no more JS runs in
 * it, and worker.c tells the creating machine. Out of memory, stack or keys
 * leave XS where it cannot go on, so the host jumps out to the outermost
 * xsBeginHost (whose own fxAbort call then finds the loop aborted and
 * returns). The main machine ends the process, as on the device. */
void fxAbort(txMachine *the, int status)
{
	/* A script over its bounds is unwound to its caller, not the machine ended. */
	if (gAbortHook)
		gAbortHook(the, status);
	HostLoop *loop = hostLoop();
	if (loop && loop->worker) {
		if (loop->aborted)
			return;
		char reason[HOST_REASON_CHARS];
		abortReason(the, status, &loop->creation, reason, sizeof(reason));
		hostLoopAbort(reason);
		if (status != XS_UNHANDLED_EXCEPTION_EXIT && status != XS_UNHANDLED_REJECTION_EXIT && the->firstJump)
			fxExitToHost(the);
		return;
	}
	char reason[HOST_REASON_CHARS];
	abortReason(the, status, loop ? &loop->creation : hostCreation(), reason, sizeof(reason));
	switch (status) {
	case XS_NOT_ENOUGH_MEMORY_EXIT:
		fprintf(stderr, "xsclaw: out of memory: the XS heap (chunks %d bytes, slots %d) is exhausted; raise creation sizes in manifest.json\n",
			(int)the->maximumChunksSize, (int)the->maximumHeapCount);
		exit(2);
	case XS_STACK_OVERFLOW_EXIT:
	case XS_NO_MORE_KEYS_EXIT:
		fprintf(stderr, "xsclaw: %s\n", reason);
		exit(2);
	default:
		fprintf(stderr, "xsclaw: %s\n", reason);
		exit(1);
	}
}

/* The main machine ends the process; a worker's machine ends alone. */
void hostUncaught(xsMachine *the)
{
	HostLoop *loop = hostLoop();
	if (loop && loop->worker) {
		char message[HOST_REASON_CHARS / 2], reason[HOST_REASON_CHARS];
		hostExceptionText(the, message, sizeof(message));
		snprintf(reason, sizeof(reason), "uncaught exception: %s", message);
		hostLoopAbort(reason);
		return;
	}
	hostPrintException(the, "uncaught exception");
	exit(1);
}

/* The natives every machine gets: main.c's table, registered by main(). */
static void (*gInstallNative)(xsMachine *the) = NULL;

void hostSetNativeInstaller(void (*install)(xsMachine *the))
{
	gInstallNative = install;
}

void hostInstallNative(xsMachine *the)
{
	gInstallNative(the);
}

void hostImport(xsMachine *the, const char *specifier, xsCallback fulfilled, xsCallback rejected)
{
	txSlot *realm = mxProgram.value.reference->next->value.module.realm;
	mxPushStringC((char *)specifier);
	fxRunImport(the, realm, XS_NO_ID);
	mxDub();
	fxGetID(the, mxID(_then));
	mxCall();
	fxNewHostFunction(the, fulfilled, 1, XS_NO_ID, XS_NO_ID);
	fxNewHostFunction(the, rejected, 1, XS_NO_ID, XS_NO_ID);
	mxRunCount(2);
	mxPop();
}

