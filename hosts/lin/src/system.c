/*
 * system.c — the `system` natives (hosts/lin/modules/platform.ts): exit and
 * reboot (the main machine's: they stop its loop, and main() then ends or
 * starts again), options, the clock, heap figures, garbage collection, trace.
 */
#include "xsAll.h"
#include "host.h"

#include <string.h>
#include <time.h>

static int gExitCode = 0;
static int gExitRequested = 0;
static int gRebootRequested = 0;

int hostExitRequested(int *code)
{
	*code = gExitCode;
	return gExitRequested;
}

int hostRebootRequested(void)
{
	return gRebootRequested;
}

void hostClearReboot(void)
{
	gRebootRequested = 0;
}

/* The process belongs to the main machine: a worker asks it by message. */
static void requireMainMachine(xsMachine *the, const char *what)
{
	HostLoop *loop = hostLoop();
	if (loop && loop->worker)
		xsUnknownError("system: %s belongs to the main machine; a worker posts a message to it", what);
}

static void xs_system_exit(xsMachine *the)
{
	requireMainMachine(the, "exit");
	int code = xsToInteger(hostArgc > 0 ? xsArg(0) : xsInteger(0));
	if (code < 0 || code > 255)
		xsRangeError("system: invalid exit code");
	gExitCode = code;
	gExitRequested = 1;
	hostLoopStop();
}

static void xs_system_reboot(xsMachine *the)
{
	requireMainMachine(the, "reboot");
	gRebootRequested = 1;
	hostLoopStop();
}

static void xs_system_option(xsMachine *the)
{
	if (hostArgc < 1 || xsTypeOf(xsArg(0)) != xsStringType)
		xsTypeError("system: option name must be a string");
	const char *value = hostOption(xsToString(xsArg(0)));
	if (value)
		xsResult = xsString(value);
}

static void xs_system_dataDirectory(xsMachine *the)
{
	xsResult = xsString(hostDataDir());
}

static void xs_system_now(xsMachine *the)
{
	xsResult = xsNumber(hostNowMs());
}

/* CPU time of the calling thread (its machine), in milliseconds: for benchmarks
 * that must not count what other processes on a loaded machine take. */
static void xs_system_threadCpuMs(xsMachine *the)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	xsResult = xsNumber((double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6);
}

static void xs_system_heap(xsMachine *the)
{
	const xsIdentifier *ids = hostHeapIds(the);
	const double figures[HEAP_FIGURES] = {
		[HEAP_CHUNK_USED] = (double)the->currentChunksSize,
		[HEAP_CHUNK_PEAK] = (double)the->peakChunksSize,
		[HEAP_CHUNK_SIZE] = (double)the->maximumChunksSize,
		[HEAP_SLOT_USED] = (double)the->currentHeapCount * (double)sizeof(txSlot),
		[HEAP_SLOT_PEAK] = (double)the->peakHeapCount * (double)sizeof(txSlot),
		[HEAP_SLOT_SIZE] = (double)the->maximumHeapCount * (double)sizeof(txSlot),
		[HEAP_SOCKETS] = (double)__atomic_load_n(&hostOpenSockets, __ATOMIC_RELAXED),
		[HEAP_COLLECTIONS] = (double)hostCollections(),
	};
	xsVars(1);
	xsResult = xsNewObject();
	for (int i = 0; i < HEAP_FIGURES; i++) {
		/* Whole numbers as integers, as before (a figure past 2^31 as a number). */
		xsVar(0) = figures[i] <= 0x7fffffff ? xsInteger((xsIntegerValue)figures[i]) : xsNumber(figures[i]);
		xsSet(xsResult, ids[i], xsVar(0));
	}
}

static void xs_system_gc(xsMachine *the)
{
	xsCollectGarbage();
}

static void xs_system_resetPeak(xsMachine *the)
{
	the->peakChunksSize = the->currentChunksSize;
	the->peakHeapCount = the->currentHeapCount;
}

void hostTrace(xsMachine *the)
{
	for (int i = 0; i < hostArgc; i++)
		fputs(xsToString(xsArg(i)), stderr);
	fflush(stderr);
}

void hostInstallSystem(xsMachine *the, xsSlot *native)
{
	hostDefineFunction(the, native, "exit", xs_system_exit, 1);
	hostDefineFunction(the, native, "reboot", xs_system_reboot, 0);
	hostDefineFunction(the, native, "option", xs_system_option, 1);
	hostDefineFunction(the, native, "dataDirectory", xs_system_dataDirectory, 0);
	hostDefineFunction(the, native, "now", xs_system_now, 0);
	hostDefineFunction(the, native, "threadCpuMs", xs_system_threadCpuMs, 0);
	hostDefineFunction(the, native, "heap", xs_system_heap, 0);
	hostDefineFunction(the, native, "gc", xs_system_gc, 0);
	hostDefineFunction(the, native, "resetPeak", xs_system_resetPeak, 0);
}
