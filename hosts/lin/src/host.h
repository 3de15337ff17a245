/*
 * host.h — the lin host's platform layer, as seen by native modules.
 *
 * Threading model: one XS machine per thread, one poll() loop per machine.
 * The main machine runs on the process's thread; each Worker (worker.c) runs
 * its own machine on its own pthread with its own loop. Native modules
 * register file descriptors and timers here; they go to the calling thread's
 * loop (thread-local), and their callbacks run on that thread and may call
 * into JS with hostCallBegin()/hostCallEnd(), which also runs promise jobs
 * afterwards. Nothing here blocks.
 *
 * So a native module's state is of one of three kinds (NOTES.md):
 *   - per machine: host data of its instances, or `static __thread` for what
 *     an installer sets up (a prototype kept in a C slot);
 *   - per loop: watches and timers, which go to the calling thread's loop;
 *   - per process, shared by every thread: the storage fault counter
 *     (files.c), the PSRAM/internal pools (buffers.c), the pin bank
 *     (digital.c), the open-socket count (tcp.c), the TLS random generator
 *     and CA chain (tls.c): each under a mutex or atomic, said where defined.
 * Machines reach each other only by message (worker.c), never by a pointer
 * into another machine's slots.
 *
 * Native classes are installed on a hidden object (the "native" object) that
 * the platform modules in hosts/lin/modules/ read: main.c calls one
 * hostInstall* per native module file (gInstallers). The helpers below
 * ("classes") are natives.c's; no native module calls main.c.
 */
#ifndef XSCLAW_HOST_H
#define XSCLAW_HOST_H

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include "xs.h"

/* xs.h takes names as char* and the argument count as a slot. */
#define hostID(NAME) xsID((char *)(NAME))
#define hostArgc xsToInteger(xsArgc)

/* ---- event loop ------------------------------------------------------- */

typedef struct HostWatch HostWatch;
/* Called when poll() reports revents on fd. May call hostUnwatch on itself. */
typedef void (*HostWatchFn)(void *ctx, int fd, short revents);
HostWatch *hostWatch(int fd, short events, HostWatchFn fn, void *ctx);
void hostWatchSetEvents(HostWatch *watch, short events);
/* Safe to call from inside any callback, including the watch's own. */
void hostUnwatch(HostWatch *watch);

typedef struct HostTimer HostTimer;
typedef void (*HostTimerFn)(void *ctx);
/* Watches and timers go to the calling thread's loop and must be cancelled
 * (or fire) on that thread. */
/* One-shot timer; the timer is freed after it fires. Cancel before then. */
HostTimer *hostTimerStart(double delayMs, HostTimerFn fn, void *ctx);
/* One-shot: fn(ctx) runs when the loop has nothing else due this turn, just
 * before it waits in poll() (tcp.c sends a turn's small writes together).
 * Cancelled with hostTimerCancel. A pending one keeps the loop alive. */
HostTimer *hostTimerBeforeWait(HostTimerFn fn, void *ctx);
void hostTimerCancel(HostTimer *timer);

double hostNowMs(void);          /* monotonic milliseconds */
xsMachine *hostMachine(void);    /* the calling thread's machine */

/* Run a JS call from a loop callback: xsBeginHost + xsTry. An exception that
 * escapes is an uncaught exception: in the main machine it is reported on
 * stderr and the program exits 1, as on the device; in a worker's machine it
 * ends that machine (its loop stops; worker.c tells the creator). Promise
 * jobs run after. Nothing runs in a machine that has aborted. */
#define hostCallBegin(THE) if (!hostMachineAborted(THE)) { xsBeginHost(THE); xsTry {
#define hostCallEnd(THE) } xsCatch { hostUncaught(the); } xsEndHost(THE); hostRunJobs(THE); }
void hostUncaught(xsMachine *the);
void hostRunJobs(xsMachine *the);
int hostMachineAborted(xsMachine *the);

/* ---- loops and machines (loop.c, machine.c; used by main() and worker.c) */

#define HOST_REASON_CHARS 512   /* why a machine ended: a sentence for onerror */

typedef struct HostLoop {
	xsMachine *machine;
	xsCreation creation;     /* the machine's creation sizes (for messages) */
	void *worker;            /* worker.c's record when this loop runs a worker; NULL for main */
	HostWatch *watches;
	HostTimer *timers;
	HostTimer *beforeWait;   /* hostTimerBeforeWait, newest first */
	int wakeFd;              /* eventfd: another thread posted a call (hostLoopPost) */
	pthread_mutex_t postLock;
	void *posts;             /* posted calls, oldest first, under postLock */
	int stop;                /* leave the loop at the next turn */
	int aborted;             /* the machine aborted: no more JS runs in it */
	char reason[HOST_REASON_CHARS];
} HostLoop;

/* Makes a loop the calling thread's (NULL when out of memory). */
HostLoop *hostLoopBegin(const xsCreation *creation, void *worker);
HostLoop *hostLoop(void);        /* the calling thread's loop */
void hostLoopRun(HostLoop *loop);
/* Frees the loop's watches and timers; after its machine is deleted. */
void hostLoopEnd(HostLoop *loop);
void hostLoopStop(void);         /* the calling thread's loop ends after this turn */
/* From any thread: fn(ctx) runs on loop's thread at its next turn (a pending
 * post keeps the loop alive). The caller guarantees the loop outlives the
 * call (e.g. it holds a lock the loop's machine takes to go away). Returns
 * -1 when out of memory. */
int hostLoopPost(HostLoop *loop, HostTimerFn fn, void *ctx);
/* The calling thread's machine ends: no more JS in it, the loop stops. */
void hostLoopAbort(const char *reason);
/* Gives the free pages of malloc's heap back to the system: called once a
 * machine has loaded its modules (hosts/lin/NOTES.md, "Resident memory"). */
void hostReleaseFreeMemory(void);
/* Machine creation and deletion, one at a time across threads (XS keeps a
 * process-wide count); creation sets the calling thread's loop's machine. */
xsMachine *hostCreateMachine(const xsCreation *creation, const char *name);
void hostDeleteMachine(xsMachine *machine);
const xsCreation *hostCreation(void);   /* manifest.json's creation sizes (modules.c) */
int hostLiveMachines(void);             /* machines not yet deleted, every thread's */
/* __xsclaw and trace on the global object: the installer main() registers
 * (it knows every native module; machine.c and worker.c do not). */
void hostInstallNative(xsMachine *the);
void hostSetNativeInstaller(void (*install)(xsMachine *the));
/* fxAbort calls hook first (main() registers hosts/common/sandbox's sandboxAbort). */
void hostSetAbortHook(int (*hook)(xsMachine *the, int status));
/* The pending exception as text; on stderr as "xsclaw: <prefix>: <text>". */
void hostExceptionText(xsMachine *the, char *message, size_t size);
void hostPrintException(xsMachine *the, const char *prefix);
/* Per machine, for heap(): garbage collections so far, and the figures'
 * property IDs (looked up once per machine, forgotten when it is deleted). */
enum { HEAP_CHUNK_USED, HEAP_CHUNK_PEAK, HEAP_CHUNK_SIZE, HEAP_SLOT_USED, HEAP_SLOT_PEAK, HEAP_SLOT_SIZE, HEAP_SOCKETS, HEAP_COLLECTIONS, HEAP_FIGURES };
unsigned long hostCollections(void);
const xsIdentifier *hostHeapIds(xsMachine *the);
/* import(specifier).then(fulfilled, rejected) */
void hostImport(xsMachine *the, const char *specifier, xsCallback fulfilled, xsCallback rejected);
/* SIGUSR2 ends the oldest living worker as if it had crashed (worker.c). */
void hostWorkerStartKillHook(void);

/* ---- classes ---------------------------------------------------------- */

typedef struct {
	const char *name;
	xsCallback callback;
	int length;
	int getter;   /* 1: accessor getter, 2: accessor setter, 0: method */
} HostMember;

/* Defines a class on the native object: native[name] = constructor.
 * The constructor gets `this` as a fresh host instance of new.target's
 * prototype (with its hooks), checks it with hostConstructThis, and attaches
 * its record with xsSetHostData; methods get it back with hostThis.
 * members is terminated by {NULL}. */
void hostDefineClass(xsMachine *the, xsSlot *native, const char *name,
	xsCallback constructor, int length, const HostMember *members, xsHostHooks *hooks);
/* Defines native[name] = function. */
void hostDefineFunction(xsMachine *the, xsSlot *native, const char *name, xsCallback callback, int length);

/* Receiver check: returns the instance's host data, or throws
 * TypeError("<cls>: invalid receiver") / Error("<cls>: closed") when NULL. */
void *hostThis(xsMachine *the, xsHostHooks *hooks, const char *cls);
void *hostThisOrNull(xsMachine *the, xsHostHooks *hooks, const char *cls);
/* First in a constructor: throws TypeError unless `this` is a fresh instance
 * of the class (or a subclass). Reflect.construct with another native class
 * as new.target would otherwise give that class's methods and destructor a
 * record of the wrong type. */
void hostConstructThis(xsMachine *the, xsHostHooks *hooks, const char *cls);
/* Whether value is an instance made with hooks; if so *data is its host data
 * (NULL once closed). For arguments that must be instances of a class. */
int hostDataOf(xsMachine *the, xsSlot *value, xsHostHooks *hooks, void **data);

/* Whether value is a whole number in [min, max] (both finite); false for NaN.
 * Use it before converting a JS number to an integer type: the conversion is
 * undefined behaviour when the number does not fit. */
int hostIsWhole(double value, double min, double max);
/* The largest count a JS number holds exactly (2^53 - 1). */
#define HOST_MAX_SAFE_INTEGER 9007199254740991.0

/* Argument helpers, throwing specific errors naming cls and the option. */
int hostHasOption(xsMachine *the, xsSlot *options, const char *name);
int hostIntegerOption(xsMachine *the, xsSlot *options, const char *name, int min, int max, int fallback, const char *cls);
/* Copies a string option into buf; returns 0 when absent (and required==0). */
int hostStringOption(xsMachine *the, xsSlot *options, const char *name, char *buf, size_t size, int required, const char *cls);
/* Fetches a callback option into *slot (undefined when absent); throws if not
 * a function. Make *slot an xsVar or a marked slot: a getter may return a
 * function that nothing else holds. */
void hostCallbackOption(xsMachine *the, xsSlot *options, const char *name, xsSlot *slot, const char *cls);
/* A view of bytes from ArrayBuffer, TypedArray, DataView or SharedArrayBuffer.
 * The pointer is valid until the next allocation in the machine. */
void *hostBytes(xsMachine *the, xsSlot *value, size_t *length, const char *cls);
/* Throws error (XS_UNKNOWN_ERROR, XS_TYPE_ERROR, XS_RANGE_ERROR) with a message
 * of up to 1 KiB: xsUnknownError and friends cut at 127 bytes, short of a path. */
void hostThrowMessage(xsMachine *the, int error, const char *format, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

/* ---- configuration (options.c) ----------------------------------------- */

#define HOST_USAGE "usage: xsclaw --modules MAP [--main SPECIFIER] [--data DIR] [--ca FILE] [--cpus one|any] [--sizes]"
const char *hostDataDir(void);       /* --data DIR, default ./data */
const char *hostOption(const char *name); /* --name value from the command line, or NULL */
/* Reads and checks the command line (exit 64 on a problem); 1 for --sizes. */
int hostReadOptions(int argc, char **argv);
void hostUsage(const char *message) __attribute__((noreturn));   /* one line on stderr, exit 64 */
void hostKeepToOneCpu(void);         /* --cpus one (the default) | any */

/* ---- the module map and loader (modules.c) ------------------------------ */

/* Reads the map (exit 64 when it cannot); its creation sizes, which main() may change. */
xsCreation *hostLoadModuleMap(const char *path);
void hostFreeModuleMap(void);
void hostFreeModules(void);          /* the kept code: once no machine is left */
void hostPrintSizes(xsMachine *the); /* --sizes: every module's bytecode size */

/* ---- the system natives (system.c) -------------------------------------- */

/* exit(code) and reboot() asked by the main machine (its loop stops then). */
int hostExitRequested(int *code);
int hostRebootRequested(void);
void hostClearReboot(void);
void hostTrace(xsMachine *the);      /* the global trace(...) */

/* ---- the console (serial.c) ------------------------------------------- */

/* Puts stdin back in the terminal mode it had before a Serial held it in
 * character mode; does nothing otherwise. Async-signal-safe: for exit paths
 * that skip atexit (_exit). */
void hostTerminalRestore(void);

/* ---- per-module installers (one per native module file) ---------------- */
void hostInstallTimer(xsMachine *the, xsSlot *native);
void hostInstallSystem(xsMachine *the, xsSlot *native);
void hostInstallTCP(xsMachine *the, xsSlot *native);
void hostInstallListener(xsMachine *the, xsSlot *native);
void hostInstallUDP(xsMachine *the, xsSlot *native);
void hostInstallTLS(xsMachine *the, xsSlot *native);
void hostInstallDNS(xsMachine *the, xsSlot *native);
void hostInstallFiles(xsMachine *the, xsSlot *native);
void hostInstallKeyValue(xsMachine *the, xsSlot *native);
void hostInstallSerial(xsMachine *the, xsSlot *native);
void hostInstallDigital(xsMachine *the, xsSlot *native);
void hostInstallBuffers(xsMachine *the, xsSlot *native);
void hostInstallWorker(xsMachine *the, xsSlot *native);
void hostInstallSandbox(xsMachine *the, xsSlot *native);
void hostInstallBytes(xsMachine *the, xsSlot *native);
void hostInstallRandom(xsMachine *the, xsSlot *native);

/* Fault injection for storage (files.c): counts writes/flushes and "loses
 * power" (exit 86 after tearing the pending write) past XSCLAW_CRASH_AFTER. */
#define HOST_POWER_LOSS_EXIT 86

/* Every storage operation (file write, setSize, flush, move, key-value
 * commit) calls hostStorageOperation() before touching the disk. It returns 0
 * to go ahead, or 1 when this operation is the one that loses power: the
 * caller then lands only its torn part (hostCrashRandom picks how much, from
 * --crash-seed) and calls hostPowerLoss(), which exits at once. */
int hostStorageOperation(void);
uint32_t hostCrashRandom(uint32_t bound);   /* in [0, bound), 0 when bound is 0 */
void hostPowerLoss(void) __attribute__((noreturn));
/* Storage helpers: 0 on success, -1 with errno. */
int hostMakeDirectories(const char *path);  /* mkdir -p */
int hostWriteAll(int fd, const void *data, size_t length, long long position);
int hostSyncParent(const char *path);       /* fsync the directory holding path */

/* Socket accounting for instrumentation: every thread's sockets, changed
 * with __atomic builtins. */
extern int hostOpenSockets;

#endif
