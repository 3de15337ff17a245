/*
 * main.c — the xsclaw lin host: the main XS machine, a module loader over
 * the build's module map, and the poll() event loop every machine runs (the
 * main one on the process's thread, each worker on its own: worker.c).
 *
 * The module map (written by tools/build.mjs from manifest.json) is a text
 * file: a first line "@creation" with the manifest's creation sizes, then one
 * "specifier<TAB>path" line per module. Specifiers are resolved only through
 * it, as mcconfig does on the device; a specifier missing from the map is an
 * import error naming it.
 *
 * Exit codes: the program's own exit(code); 0 when nothing is left to wait
 * for; 1 on an uncaught exception or unhandled rejection; 2 on out of memory
 * (or stack/keys) with a message on stderr; 64 on bad command-line use. These
 * are the main machine's: a worker machine that fails ends alone (fxAbort).
 */
#define _GNU_SOURCE /* pthread_getattr_np (fxCStackLimit), sched_getcpu, CPU_SET */
#include "xsAll.h"
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- command line and module map -------------------------------------- */

#define HOST_MAX_OPTIONS 32

static struct { const char *name; const char *value; } gOptions[HOST_MAX_OPTIONS];
static int gOptionCount = 0;
static const char *gDataDir = "data";

typedef struct { char *specifier; char *path; } MapEntry;
static MapEntry *gMap = NULL;
static int gMapCount = 0;
static xsCreation gCreation;

const char *hostOption(const char *name)
{
	for (int i = 0; i < gOptionCount; i++)
		if (!strcmp(gOptions[i].name, name))
			return gOptions[i].value;
	return NULL;
}

const char *hostDataDir(void)
{
	return gDataDir;
}

/* One line on stderr, exit 64 (EX_USAGE): a command-line problem is found at
 * start, never at first use. */
#define USAGE "usage: xsclaw --modules MAP [--main SPECIFIER] [--data DIR] [--ca FILE] [--cpus one|any] [--sizes]"

static void usage(const char *message)
{
	fprintf(stderr, "xsclaw: %s\n", message);
	exit(64);
}

/* The options the host itself reads, and the two the firmware reads (agent/spawn:
 * the agent machine's heap made small for a test). Any other option of the
 * firmware (no --main) is a typo; a program given with --main (tests, tools)
 * may read any (host/platform's option()). */
static const char *const kHostOptions[] = {
	"modules", "main", "data", "ca", "cpus", "heap-report", "chunk-bytes", "crash-after", "crash-seed", "crash-model", "count-writes", "psram-bytes", "internal-bytes",
	"agent-chunk", "agent-slots", NULL,
};

static void checkOptions(void)
{
	char message[256];
	int anyOption = hostOption("main") != NULL;
	for (int i = 0; i < gOptionCount; i++) {
		const char *name = gOptions[i].name;
		for (int j = 0; j < i; j++) {
			if (!strcmp(gOptions[j].name, name)) {
				snprintf(message, sizeof(message), "--%.64s is given twice: give it once", name);
				usage(message);
			}
		}
		int known = 0;
		for (const char *const *host = kHostOptions; *host; host++)
			known |= !strcmp(*host, name);
		if (!known && !anyOption) {
			snprintf(message, sizeof(message), "unknown option --%.64s: the firmware takes --data DIR and --ca FILE", name);
			usage(message);
		}
	}
}

/* --data DIR: a directory, made (with its parents) when missing. */
static void checkDataDirectory(void)
{
	char message[PATH_MAX + 128];
	if (hostMakeDirectories(gDataDir) < 0) {
		snprintf(message, sizeof(message), "--data %s cannot be used: %s; give a directory (it is created when missing)", gDataDir, strerror(errno));
		usage(message);
	}
}

/* --cpus one (the default) | any. With one, every thread of the process runs on
 * the CPU it started on. The two machines take turns (the agent core serves one
 * request at a time and the main machine waits on it), so a second CPU adds no
 * throughput, while each hand-off to a thread asleep on another CPU wakes that
 * CPU from idle: an interprocessor interrupt and cold caches. On the 2-vCPU VM
 * the peer bench runs on, that cost about 0.5 ms of CPU a turn (hosts/lin/
 * NOTES.md, "One CPU"). Set before any thread starts: threads inherit it. If
 * the kernel refuses (a cpuset that moves), the host runs on any CPU. */
static void keepToOneCpu(void)
{
	const char *cpus = hostOption("cpus");
	if (cpus && strcmp(cpus, "one") && strcmp(cpus, "any"))
		usage("--cpus must be one (the default: every thread on the CPU the host started on) or any");
	if (cpus && !strcmp(cpus, "any"))
		return;
	int cpu = sched_getcpu();
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* --ca FILE: a readable regular file (tls.c parses it at the first connection). */
static void checkCaFile(void)
{
	const char *path = hostOption("ca");
	if (!path)
		return;
	char message[PATH_MAX + 128];
	struct stat status;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &status) < 0 || !S_ISREG(status.st_mode)) {
		int error = fd < 0 ? errno : EISDIR;
		if (fd >= 0)
			close(fd);
		snprintf(message, sizeof(message), "--ca %s cannot be read: %s; give a CA certificate file (PEM or DER)", path, strerror(error));
		usage(message);
	}
	close(fd);
}

static const char *mapLookup(const char *specifier)
{
	for (int i = 0; i < gMapCount; i++)
		if (!strcmp(gMap[i].specifier, specifier))
			return gMap[i].path;
	return NULL;
}

static void loadMap(const char *path)
{
	FILE *file = fopen(path, "r");
	if (!file) {
		fprintf(stderr, "xsclaw: cannot open module map %s: %s (run npm run build)\n", path, strerror(errno));
		exit(64);
	}
	char line[PATH_MAX * 2];
	int capacity = 0;
	while (fgets(line, sizeof(line), file)) {
		size_t length = strlen(line);
		while (length && (line[length - 1] == '\n' || line[length - 1] == '\r'))
			line[--length] = 0;
		if (!length)
			continue;
		if (!strncmp(line, "@creation ", 10)) {
			int v[12];
			if (sscanf(line + 10, "%d %d %d %d %d %d %d %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
					&v[6], &v[7], &v[8], &v[9], &v[10], &v[11]) != 12)
				usage("malformed @creation line in module map");
			gCreation.initialChunkSize = v[0];
			gCreation.incrementalChunkSize = v[1];
			gCreation.initialHeapCount = v[2];
			gCreation.incrementalHeapCount = v[3];
			gCreation.stackCount = v[4];
			gCreation.initialKeyCount = v[5];
			gCreation.incrementalKeyCount = v[6];
			gCreation.nameModulo = v[7];
			gCreation.symbolModulo = v[8];
			gCreation.parserBufferSize = v[9];
			gCreation.parserTableModulo = v[10];
			gCreation.staticSize = v[11];
			continue;
		}
		char *tab = strchr(line, '\t');
		if (!tab)
			usage("malformed line in module map");
		*tab = 0;
		if (gMapCount == capacity) {
			capacity = capacity ? capacity * 2 : 64;
			gMap = realloc(gMap, capacity * sizeof(MapEntry));
			if (!gMap)
				usage("out of memory reading module map");
		}
		gMap[gMapCount].specifier = strdup(line);
		gMap[gMapCount].path = strdup(tab + 1);
		if (!gMap[gMapCount].specifier || !gMap[gMapCount].path)
			usage("out of memory reading module map");
		gMapCount++;
	}
	fclose(file);
	if (!gCreation.initialChunkSize)
		usage("module map has no @creation line");
}

static void freeMap(void)
{
	for (int i = 0; i < gMapCount; i++) {
		free(gMap[i].specifier);
		free(gMap[i].path);
	}
	free(gMap);
	gMap = NULL;
	gMapCount = 0;
}

/* ---- XS platform hooks ------------------------------------------------- */

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

static int gExitCode = 0;
static int gExitRequested = 0;
static int gRebootRequested = 0;

/* The loop of the machine this thread runs (NULL before the first). */
static __thread HostLoop *tLoop = NULL;

/* Creating and deleting machines touches XS's process-wide shared cluster
 * (gxSharedCluster in xsAtomics.c: a plain counter): one at a time. */
static pthread_mutex_t gMachineLock = PTHREAD_MUTEX_INITIALIZER;
static int gLiveMachines = 0;                 /* under gMachineLock (kept code is freed when none is left) */

xsMachine *hostMachine(void)
{
	return tLoop ? tLoop->machine : NULL;
}

const xsCreation *hostCreation(void)
{
	return &gCreation;
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
enum { HEAP_CHUNK_USED, HEAP_CHUNK_PEAK, HEAP_CHUNK_SIZE, HEAP_SLOT_USED, HEAP_SLOT_PEAK, HEAP_SLOT_SIZE, HEAP_SOCKETS, HEAP_COLLECTIONS, HEAP_FIGURES };
static const char *const gHeapNames[HEAP_FIGURES] = { "chunkUsed", "chunkPeak", "chunkSize", "slotUsed", "slotPeak", "slotSize", "sockets", "collections" };
static __thread struct { xsMachine *machine; xsIdentifier ids[HEAP_FIGURES]; } tHeapIds;

xsMachine *hostCreateMachine(const xsCreation *creation, const char *name)
{
	pthread_mutex_lock(&gMachineLock);
	xsMachine *machine = xsCreateMachine((xsCreation *)creation, (char *)name, NULL);
	if (machine)
		gLiveMachines++;
	pthread_mutex_unlock(&gMachineLock);
	if (machine && tLoop)
		tLoop->machine = machine;
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
	if (tLoop && tLoop->machine == machine)
		tLoop->machine = NULL;
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

static void exceptionText(txMachine *the, char *message, size_t size)
{
	message[0] = 0;
	mxTry(the) {
		fxToStringBuffer(the, &mxException, message, size);
	}
	mxCatch(the) {
		snprintf(message, size, "(exception not printable)");
	}
}

static void printException(txMachine *the, const char *prefix)
{
	char message[512];
	exceptionText(the, message, sizeof(message));
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
		exceptionText(the, message, sizeof(message));
		snprintf(reason, size, "%s: %s", status == XS_UNHANDLED_EXCEPTION_EXIT ? "uncaught exception" : "unhandled rejection", message);
		break;
	default:
		snprintf(reason, size, "fatal XS error %d", status);
		break;
	}
}

/* A worker machine that aborts ends alone: its loop stops, no more JS runs in
 * it, and worker.c tells the creating machine. Out of memory, stack or keys
 * leave XS where it cannot go on, so the host jumps out to the outermost
 * xsBeginHost (whose own fxAbort call then finds the loop aborted and
 * returns). The main machine ends the process, as on the device. */
void fxAbort(txMachine *the, int status)
{
	/* A script over its bounds is unwound to its caller, not the machine ended. */
	hostSandboxAbort(the, status);
	HostLoop *loop = tLoop;
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
	abortReason(the, status, &gCreation, reason, sizeof(reason));
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

/* "./x" and "../x" resolve against the importing module's specifier, as
 * folders: "net/http" importing "./sse" is "net/sse". */
txID fxFindModule(txMachine *the, txSlot *realm, txID moduleID, txSlot *slot)
{
	(void)realm;
	char name[PATH_MAX];
	char resolved[PATH_MAX];
	fxToStringBuffer(the, slot, name, sizeof(name));
	const char *rest = name;
	resolved[0] = 0;
	if (name[0] == '.' && (name[1] == '/' || (name[1] == '.' && name[2] == '/'))) {
		if (moduleID == XS_NO_ID)
			return XS_NO_ID;
		c_strncpy(resolved, fxGetKeyName(the, moduleID), sizeof(resolved) - 1);
		resolved[sizeof(resolved) - 1] = 0;
		char *slash = strrchr(resolved, '/');
		if (slash)
			slash[0] = 0;
		else
			resolved[0] = 0;
		while (1) {
			if (!strncmp(rest, "./", 2))
				rest += 2;
			else if (!strncmp(rest, "../", 3)) {
				rest += 3;
				slash = strrchr(resolved, '/');
				if (slash)
					slash[0] = 0;
				else if (resolved[0])
					resolved[0] = 0;
				else
					mxReferenceError("module not found: %s (above the root)", name);
			}
			else
				break;
		}
		if (resolved[0])
			strncat(resolved, "/", sizeof(resolved) - strlen(resolved) - 1);
	}
	strncat(resolved, rest, sizeof(resolved) - strlen(resolved) - 1);
	/* A compiled TypeScript import may carry an extension. */
	size_t length = strlen(resolved);
	if (length > 3 && !strcmp(resolved + length - 3, ".js"))
		resolved[length - 3] = 0;
	if (!mapLookup(resolved))
		mxReferenceError("module not found: %s (not in the manifest for lin)", resolved);
	return fxNewNameC(the, resolved);
}

static txScript *parseFile(txMachine *the, const char *path)
{
	FILE *file = fopen(path, "r");
	if (!file)
		return NULL;
	txScript *script = fxParseScript(the, file, (txGetter)fgetc, mxDebugFlag);
	fclose(file);
	return script;
}

/* Module code kept as the device keeps it in flash. On the ESP32, mcconfig
 * preloads modules: their functions' code and string literals stay in flash
 * and are used in place (XS_CODE_CODE_ARCHIVE_*, XS_CODE_STRING_ARCHIVE_*).
 * Parsed at run time, XS would copy every function's code into the chunk heap
 * when the function is created and every string literal each time it is
 * evaluated, so the lin heap figures would count work the device never does.
 * keepCode() turns those opcodes into their archive forms, remaps the symbols
 * (as fxRunScript would, so it does not free the code) and keeps the code
 * buffer, which never moves, for the rest of the process: like flash, it
 * outlives every machine. That matters for string literals: XS marshals an
 * archived string (XS_STRING_X_KIND) by pointer, so a string a worker posted
 * points into the worker's code, and its creator may hold it after the worker
 * ended (an ASan use-after-free once did, when a worker's code was freed with
 * it). So the buffer is shared instead: a module whose remapped code is byte
 * for byte one already kept (the same module loaded by a machine that assigned
 * the same symbol IDs: a restarted agent machine) uses the kept one, so
 * machines that come and go do not add code. Everything is freed when the
 * process ends with no machine left (freeKeptCode). */
extern void fxRemapIDs(txMachine *the, txByte *codeBuffer, txSize codeSize, txID *theIDs);   /* xsRun.c */

typedef struct KeptCode { txSize size; uint64_t hash; txByte *code; struct KeptCode *next; } KeptCode;
static KeptCode *gKeptCode = NULL;            /* every thread's, under gKeptCodeLock */
static pthread_mutex_t gKeptCodeLock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t codeHash(const txByte *code, txSize size)
{
	uint64_t hash = 1469598103934665603ULL;   /* FNV-1a */
	for (txSize i = 0; i < size; i++)
		hash = (hash ^ (uint8_t)code[i]) * 1099511628211ULL;
	return hash;
}

static void keepCode(txMachine *the, txScript *script)
{
	txByte *p = script->codeBuffer;
	txByte *end = script->codeBuffer + script->codeSize;
	while (p < end) {
		txU1 code = *(txU1 *)p;
		txS1 size = gxCodeSizes[code];
		if (code >= XS_CODE_CODE_1 && code <= XS_CODE_CODE_4)
			*(txU1 *)p = (txU1)(code + (XS_CODE_CODE_ARCHIVE_1 - XS_CODE_CODE_1));
		else if (code >= XS_CODE_STRING_1 && code <= XS_CODE_STRING_4)
			*(txU1 *)p = (txU1)(code + (XS_CODE_STRING_ARCHIVE_1 - XS_CODE_STRING_1));
		if (size > 0)
			p += size;
		else if (size == 0)
			p += 1 + sizeof(txID);
		else if (size == -1)
			p += 2 + *(txU1 *)(p + 1);
		else if (size == -2) {
			txU2 length;
			txByte *q = p + 1;
			mxDecode2(q, length);
			p = q + length;
		}
		else {
			txS4 length;
			txByte *q = p + 1;
			mxDecode4(q, length);
			p = q + length;
		}
	}
	if (script->symbolsBuffer) {
		txByte *q = script->symbolsBuffer;
		txID count, i;
		mxDecodeID(q, count);
		txID *ids = malloc(count * sizeof(txID));
		if (!ids)
			fxAbort(the, XS_NOT_ENOUGH_MEMORY_EXIT);
		ids[0] = XS_NO_ID;
		for (i = 1; i < count; i++) {
			ids[i] = fxNewNameC(the, (txString)q);
			q += strlen((char *)q) + 1;
		}
		fxRemapIDs(the, script->codeBuffer, script->codeSize, ids);
		free(ids);
		free(script->symbolsBuffer);
		script->symbolsBuffer = NULL;
	}
	uint64_t hash = codeHash(script->codeBuffer, script->codeSize);
	pthread_mutex_lock(&gKeptCodeLock);
	KeptCode *kept = gKeptCode;
	while (kept && !(kept->size == script->codeSize && kept->hash == hash && !memcmp(kept->code, script->codeBuffer, (size_t)kept->size)))
		kept = kept->next;
	if (kept) {
		free(script->codeBuffer);
		script->codeBuffer = kept->code;
	}
	else if ((kept = malloc(sizeof(KeptCode)))) {
		kept->size = script->codeSize;
		kept->hash = hash;
		kept->code = script->codeBuffer;
		kept->next = gKeptCode;
		gKeptCode = kept;
	}
	pthread_mutex_unlock(&gKeptCodeLock);
	if (!kept)
		fxAbort(the, XS_NOT_ENOUGH_MEMORY_EXIT);
}

/* Frees the kept code at the end of the process, once no machine is left to use it. */
static void freeKeptCode(void)
{
	pthread_mutex_lock(&gMachineLock);
	int live = gLiveMachines;
	pthread_mutex_unlock(&gMachineLock);
	if (live)
		return;   /* a worker that outlived its creator still runs it: the process exit takes it */
	pthread_mutex_lock(&gKeptCodeLock);
	while (gKeptCode) {
		KeptCode *kept = gKeptCode;
		gKeptCode = kept->next;
		free(kept->code);
		free(kept);
	}
	pthread_mutex_unlock(&gKeptCodeLock);
}

void fxLoadModule(txMachine *the, txSlot *module, txID moduleID)
{
	const char *specifier = fxGetKeyName(the, moduleID);
	const char *path = mapLookup(specifier);
	if (!path)
		mxReferenceError("module not found: %s", specifier);
	txScript *script = parseFile(the, path);
	if (!script)
		mxSyntaxError("module %s: cannot load %s", specifier, path);
	keepCode(the, script);
	/* fxRunScript keeps no pointer to the script itself: only to its (kept) code. */
	mxTry(the) {
		fxResolveModule(the, module, moduleID, script, C_NULL, C_NULL);
	}
	mxCatch(the) {
		free(script->hostsBuffer);
		free(script);
		fxJump(the);
	}
	free(script->hostsBuffer);
	free(script);
}

/* ---- event loop -------------------------------------------------------- */

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

/* The main machine ends the process; a worker's machine ends alone. */
void hostUncaught(xsMachine *the)
{
	if (tLoop && tLoop->worker) {
		char message[HOST_REASON_CHARS / 2], reason[HOST_REASON_CHARS];
		exceptionText(the, message, sizeof(message));
		snprintf(reason, sizeof(reason), "uncaught exception: %s", message);
		hostLoopAbort(reason);
		return;
	}
	printException(the, "uncaught exception");
	exit(1);
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

/* ---- classes ----------------------------------------------------------- */

/* These helpers keep their temporaries on the XS stack, not in xsVars, so an
 * installer may call them after declaring its own variables. */
void hostDefineClass(xsMachine *the, xsSlot *native, const char *name,
	xsCallback constructor, int length, const HostMember *members, xsHostHooks *hooks)
{
	xsOverflow(-4);
	/* The prototype is itself a host object so instances made from it get host data. */
	fxNewHostObject(the, NULL);
	txSlot *prototype = the->stack;
	xsSetHostHooks(*prototype, hooks);
	for (const HostMember *m = members; m && m->name; m++) {
		if (m->getter)
			xsDefine(*prototype, hostID(m->name), xsNewHostFunction(m->callback, m->getter == 1 ? 0 : 1), (m->getter == 1 ? xsIsGetter : xsIsSetter) | xsDontEnum);
		else
			xsDefine(*prototype, hostID(m->name), xsNewHostFunction(m->callback, m->length), xsDontEnum);
	}
	fxPush(*prototype);
	fxNewHostConstructor(the, constructor, length, hostID(name));
	txSlot *function = the->stack;
	/* XS 13.3 creates `this` for host constructors only with the base flag. */
	mxFunctionInstanceCode(fxToInstance(the, function))->flag |= XS_BASE_FLAG;
	xsDefine(*native, hostID(name), *function, xsDontEnum);
	the->stack += 2;
}

void hostDefineFunction(xsMachine *the, xsSlot *native, const char *name, xsCallback callback, int length)
{
	xsDefine(*native, hostID(name), xsNewHostFunctionObject(callback, length, hostID(name)), xsDontEnum);
}

int hostDataOf(xsMachine *the, xsSlot *value, xsHostHooks *hooks, void **data)
{
	(void)the;
	if (value->kind != XS_REFERENCE_KIND)
		return 0;
	txSlot *host = value->value.reference->next;
	if (!host || host->kind != XS_HOST_KIND || !(host->flag & XS_HOST_HOOKS_FLAG) || host->value.host.variant.hooks != hooks)
		return 0;
	*data = host->value.host.data;
	return 1;
}

void hostConstructThis(xsMachine *the, xsHostHooks *hooks, const char *cls)
{
	void *data;
	if (!hostDataOf(the, &xsThis, hooks, &data) || data)
		xsTypeError("%s: invalid new.target: construct with new %s(...) or a subclass", cls, cls);
}

void *hostThisOrNull(xsMachine *the, xsHostHooks *hooks, const char *cls)
{
	void *data;
	if (!hostDataOf(the, &xsThis, hooks, &data))
		xsTypeError("%s: invalid receiver", cls);
	return data;
}

void *hostThis(xsMachine *the, xsHostHooks *hooks, const char *cls)
{
	void *data = hostThisOrNull(the, hooks, cls);
	if (!data)
		xsUnknownError("%s: closed", cls);
	return data;
}

int hostIsWhole(double value, double min, double max)
{
	return value >= min && value <= max && value == floor(value);
}

int hostHasOption(xsMachine *the, xsSlot *options, const char *name)
{
	if (!xsIsInstanceOf(*options, xsObjectPrototype))
		return 0;
	return xsHas(*options, hostID(name)) && xsTypeOf(xsGet(*options, hostID(name))) != xsUndefinedType;
}

int hostIntegerOption(xsMachine *the, xsSlot *options, const char *name, int min, int max, int fallback, const char *cls)
{
	if (!hostHasOption(the, options, name))
		return fallback;
	xsSlot value = xsGet(*options, hostID(name));
	int type = xsTypeOf(value);
	if (type != xsIntegerType && type != xsNumberType)
		xsTypeError("%s: %s must be a number", cls, name);
	double number = xsToNumber(value);
	if (!hostIsWhole(number, min, max))
		xsRangeError("%s: invalid %s", cls, name);
	return (int)number;
}

int hostStringOption(xsMachine *the, xsSlot *options, const char *name, char *buf, size_t size, int required, const char *cls)
{
	if (!hostHasOption(the, options, name)) {
		if (required)
			xsTypeError("%s: %s required", cls, name);
		return 0;
	}
	xsSlot value = xsGet(*options, hostID(name));
	if (xsTypeOf(value) != xsStringType)
		xsTypeError("%s: %s must be a string", cls, name);
	const char *string = xsToString(value);
	if (strlen(string) >= size)
		xsRangeError("%s: %s too long", cls, name);
	strcpy(buf, string);
	return 1;
}

void hostCallbackOption(xsMachine *the, xsSlot *options, const char *name, xsSlot *slot, const char *cls)
{
	if (!hostHasOption(the, options, name)) {
		*slot = xsUndefined;
		return;
	}
	*slot = xsGet(*options, hostID(name));
	if (!xsIsInstanceOf(*slot, xsFunctionPrototype))
		xsTypeError("%s: %s must be a function", cls, name);
}

void *hostBytes(xsMachine *the, xsSlot *value, size_t *length, const char *cls)
{
	txSlot *slot = NULL;
	if (xsIsInstanceOf(*value, xsObjectPrototype))
		slot = fxToInstance(the, value)->next;
	if (slot && slot->kind == XS_ARRAY_BUFFER_KIND) {
		if (!slot->value.arrayBuffer.address)
			xsTypeError("%s: detached buffer", cls);
		*length = (size_t)slot->next->value.bufferInfo.length;
		return slot->value.arrayBuffer.address;
	}
	/* Host buffers (psram module, SharedArrayBuffer) carry a buffer-info slot. */
	if (slot && slot->kind == XS_HOST_KIND && slot->next && slot->next->kind == XS_BUFFER_INFO_KIND) {
		if (!slot->value.host.data)
			xsTypeError("%s: detached buffer", cls);   /* a freed psram buffer */
		*length = (size_t)slot->next->value.bufferInfo.length;
		return slot->value.host.data;
	}
	if (slot && (slot->kind == XS_DATA_VIEW_KIND || slot->kind == XS_TYPED_ARRAY_KIND)) {
		txSlot *view = (slot->kind == XS_TYPED_ARRAY_KIND) ? slot->next : slot;
		txSlot *buffer = view->next;
		txSlot *target = buffer->value.reference->next;
		txByte *base = (target->kind == XS_ARRAY_BUFFER_KIND) ? target->value.arrayBuffer.address : (txByte *)target->value.host.data;
		if (!base)
			xsTypeError("%s: detached buffer", cls);
		*length = (size_t)fxGetDataViewSize(the, view, buffer);
		return base + view->value.dataView.offset;
	}
	xsTypeError("%s: expected a buffer (ArrayBuffer, TypedArray or DataView)", cls);
	return NULL;
}

#define HOST_MESSAGE_MAX 1024   /* a thrown message naming two paths (files.c move) */

/* As fxThrowMessage, with room for paths. */
void hostThrowMessage(xsMachine *the, int error, const char *format, ...)
{
	char message[HOST_MESSAGE_MAX];
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(message, sizeof(message), format, arguments);
	va_end(arguments);
	/* Do not end inside a UTF-8 sequence cut by the limit. */
	size_t length = strlen(message);
	if (length == sizeof(message) - 1)
		while (length && (message[length - 1] & 0x80))
			message[--length] = 0;
	txSlot *slot = fxNewSlot(the);
	slot->kind = XS_INSTANCE_KIND;
	slot->value.instance.garbage = C_NULL;
	slot->value.instance.prototype = mxErrorPrototypes(error).value.reference;
	mxException.kind = XS_REFERENCE_KIND;
	mxException.value.reference = slot;
	slot = slot->next = fxNewSlot(the);
	slot->flag = XS_INTERNAL_FLAG;
	slot->kind = XS_ERROR_KIND;
	slot->value.error.info = C_NULL;
	slot->value.error.which = error;
	if (gxDefaults.captureErrorStack)
		gxDefaults.captureErrorStack(the, slot, the->frame);
	fxNextStringProperty(the, slot, message, mxID(_message), XS_DONT_ENUM_FLAG);
	fxJump(the);
	abort();   /* fxJump does not return; this tells the compiler so */
}

/* ---- system: exit, reboot, trace, heap figures ------------------------- */

/* The process belongs to the main machine: a worker asks it by message. */
static void requireMainMachine(xsMachine *the, const char *what)
{
	if (tLoop && tLoop->worker)
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
	xsResult = xsString(gDataDir);
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
	if (tHeapIds.machine != the) {
		for (int i = 0; i < HEAP_FIGURES; i++)
			tHeapIds.ids[i] = xsID((char *)gHeapNames[i]);
		tHeapIds.machine = the;
	}
	const double figures[HEAP_FIGURES] = {
		[HEAP_CHUNK_USED] = (double)the->currentChunksSize,
		[HEAP_CHUNK_PEAK] = (double)the->peakChunksSize,
		[HEAP_CHUNK_SIZE] = (double)the->maximumChunksSize,
		[HEAP_SLOT_USED] = (double)the->currentHeapCount * (double)sizeof(txSlot),
		[HEAP_SLOT_PEAK] = (double)the->peakHeapCount * (double)sizeof(txSlot),
		[HEAP_SLOT_SIZE] = (double)the->maximumHeapCount * (double)sizeof(txSlot),
		[HEAP_SOCKETS] = (double)__atomic_load_n(&hostOpenSockets, __ATOMIC_RELAXED),
		[HEAP_COLLECTIONS] = (double)gCollections,
	};
	xsVars(1);
	xsResult = xsNewObject();
	for (int i = 0; i < HEAP_FIGURES; i++) {
		/* Whole numbers as integers, as before (a figure past 2^31 as a number). */
		xsVar(0) = figures[i] <= 0x7fffffff ? xsInteger((xsIntegerValue)figures[i]) : xsNumber(figures[i]);
		xsSet(xsResult, tHeapIds.ids[i], xsVar(0));
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

static void xs_trace(xsMachine *the)
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

/* ---- boot -------------------------------------------------------------- */

static void onMainFulfilled(xsMachine *the)
{
	(void)the;
	hostReleaseFreeMemory();
}

static void onMainRejected(xsMachine *the)
{
	xsException = xsArg(0);
	printException(the, "main failed");
	exit(1);
}

typedef void (*HostInstaller)(xsMachine *the, xsSlot *native);
static const HostInstaller gInstallers[] = {
	hostInstallSystem, hostInstallTimer, hostInstallTCP, hostInstallTLS, hostInstallDNS,
	hostInstallFiles, hostInstallKeyValue, hostInstallSerial, hostInstallDigital, hostInstallBuffers,
	hostInstallWorker,
	hostInstallSandbox, hostInstallBytes, hostInstallRandom,
};

/* Each installer runs in a host function of its own, so it may use xsVars. */
static void xs_install(xsMachine *the)
{
	gInstallers[xsToInteger(xsArg(1))](the, &xsArg(0));
}

void hostInstallNative(xsMachine *the)
{
	xsVars(3);
	xsVar(0) = xsNewObject();
	xsVar(1) = xsNewHostFunction(xs_install, 2);
	for (size_t i = 0; i < sizeof(gInstallers) / sizeof(gInstallers[0]); i++)
		xsCallFunction2(xsVar(1), xsUndefined, xsVar(0), xsInteger((int)i));
	xsDefine(xsGlobal, xsID("__xsclaw"), xsVar(0), xsDontEnum);
	xsVar(2) = xsNewHostFunction(xs_trace, 1);
	xsDefine(xsGlobal, xsID("trace"), xsVar(2), xsDontEnum);
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

/* --sizes: parse every module and print its bytecode size (tools/size.mjs). */
static void printSizes(xsMachine *the)
{
	long total = 0;
	for (int i = 0; i < gMapCount; i++) {
		txScript *script = parseFile(the, gMap[i].path);
		if (!script) {
			fprintf(stderr, "xsclaw: cannot compile %s\n", gMap[i].specifier);
			exit(1);
		}
		long size = (long)script->codeSize + (long)script->symbolsSize + (long)script->hostsSize;
		printf("%s\t%ld\n", gMap[i].specifier, size);
		total += size;
		fxDeleteScript(script);
	}
	printf("total\t%ld\n", total);
}

int main(int argc, char **argv)
{
	const char *mapPath = NULL;
	const char *volatile mainSpecifier = NULL;
	volatile int sizes = 0;
	/* One malloc arena for every thread, as the device has one heap: with
	 * glibc's default, each machine's thread got an arena of its own, and the
	 * agent machine's module parsing grew a second heap (~1.1 MiB resident)
	 * instead of reusing the pages the main machine's parsing had freed. The
	 * machines allocate little with malloc once started (their XS heaps are
	 * allocated at creation), so the shared lock costs nothing measurable. */
	mallopt(M_ARENA_MAX, 1);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--sizes")) {
			sizes = 1;
			continue;
		}
		if (strncmp(arg, "--", 2) || i + 1 >= argc)
			usage("options are --name value pairs (" USAGE ")");
		if (gOptionCount == HOST_MAX_OPTIONS)
			usage("too many options");
		gOptions[gOptionCount].name = arg + 2;
		gOptions[gOptionCount].value = argv[++i];
		gOptionCount++;
	}
	checkOptions();
	mapPath = hostOption("modules");
	if (!mapPath)
		usage("--modules is required (" USAGE ")");
	mainSpecifier = hostOption("main");
	if (hostOption("data"))
		gDataDir = hostOption("data");
	if (!sizes)
		checkDataDirectory();
	/* The firmware's --ca is checked now; a program given with --main (the TLS
	 * tests) may want tls.c's own error at the first connection. */
	if (!mainSpecifier)
		checkCaFile();
	loadMap(mapPath);
	/* --chunk-bytes N: a fixed chunk heap of N bytes instead of the manifest's
	 * (the bench finds the smallest one a request fits in by bisection). */
	if (hostOption("chunk-bytes")) {
		char *end = NULL;
		long bytes = strtol(hostOption("chunk-bytes"), &end, 10);
		if (!end || *end || bytes < 65536 || bytes > 1073741824)
			usage("--chunk-bytes must be a whole number of bytes from 65536 to 1073741824");
		gCreation.initialChunkSize = (txSize)bytes;
		gCreation.incrementalChunkSize = 0;
	}
	if (!mainSpecifier)
		mainSpecifier = "main";
	setvbuf(stdout, NULL, _IONBF, 0);
	keepToOneCpu();

	hostWorkerStartKillHook();
	do {
		gRebootRequested = 0;
		HostLoop *loop = hostLoopBegin(&gCreation, NULL);
		xsMachine *machine = loop ? hostCreateMachine(&gCreation, "xsclaw") : NULL;
		if (!machine) {
			fprintf(stderr, "xsclaw: cannot create the XS machine (creation sizes too large?)\n");
			return 2;
		}
		xsBeginHost(machine);
		{
			xsTry {
				if (sizes) {
					printSizes(the);
					gExitRequested = 1;
				}
				else {
					hostInstallNative(the);
					hostImport(the, mainSpecifier, onMainFulfilled, onMainRejected);
				}
			}
			xsCatch {
				printException(the, "boot failed");
				exit(1);
			}
		}
		xsEndHost(machine);
		if (!gExitRequested)
			hostLoopRun(loop);
		if (!gExitRequested && !gRebootRequested) {
			xsBeginHost(machine);
			fxCheckUnhandledRejections(the, 1);
			xsEndHost(machine);
		}
		/* --heap-report 1: peak XS heap of the run, for tools/size.mjs and the bench. */
		if (hostOption("heap-report") && !gRebootRequested)
			fprintf(stderr, "xsclaw: heap peak chunk %d slot %d\n", (int)machine->peakChunksSize,
				(int)(machine->peakHeapCount * sizeof(txSlot)));
		hostDeleteMachine(machine);
		hostLoopEnd(loop);
	} while (gRebootRequested && !gExitRequested);
	freeKeptCode();
	freeMap();
	return gExitCode;
}
