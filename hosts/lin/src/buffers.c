/*
 * buffers.c — the "psram" module on the lin host: host buffers from two
 * emulated memory pools, "psram" and "internal" (on-chip RAM), so that tests
 * can assert where big buffers went and that none leak. On the device the
 * same calls are heap_caps_malloc with the matching caps.
 *
 * A buffer is a host object whose data is a calloc'd block (zero-filled, like
 * an ArrayBuffer): Uint8Array, DataView and the native modules' hostBytes()
 * view it directly. Its length is registered as resizable (maxLength >= 0)
 * so that views re-check their bounds on each access: after resize() or
 * free() a stale view cannot reach memory the buffer no longer owns (a freed
 * buffer reads as detached: DataView access throws, typed arrays see zero
 * length).
 *
 * Pools count requested bytes only, not malloc's overhead. Pool sizes come
 * from --psram-bytes / --internal-bytes, else the defaults below. The pools
 * are the board's, so process-wide: every machine (the main one and each
 * worker, on their threads) allocates from the same pools, under gPoolLock.
 * A reboot's machine teardown destroys every buffer of the main machine; the
 * main machine's installer resets the peaks.
 */
#include "xsAll.h"
#include "host.h"

#include <stddef.h>

#define BUFFERS_PSRAM_BYTES (8 * 1024 * 1024)  /* ESP32-S3 boards' PSRAM; = budgets.ts PSRAM_BYTES (tested) */
#define BUFFERS_INTERNAL_BYTES (320 * 1024)    /* on-chip RAM; = budgets.ts INTERNAL_RAM_BYTES (tested) */
#define BUFFERS_MAX_BYTES 0x7FFFFFFF           /* XS buffer lengths are 32-bit */

typedef struct {
	const char *name;
	const char *option;   /* command-line option overriding size */
	double defaultSize;
	double size;
	double used;
	double peak;
	double count;         /* live buffers */
} Pool;

static pthread_mutex_t gPoolLock = PTHREAD_MUTEX_INITIALIZER;
static int gPoolsConfigured = 0;
static Pool gPools[] = {
	{ "psram", "psram-bytes", BUFFERS_PSRAM_BYTES, 0, 0, 0, 0 },
	{ "internal", "internal-bytes", BUFFERS_INTERNAL_BYTES, 0, 0, 0, 0 },
};
#define POOL_COUNT (sizeof(gPools) / sizeof(gPools[0]))

/* Precedes each buffer's bytes; the union keeps those bytes max-aligned. */
typedef union {
	struct {
		Pool *pool;
		size_t length;
	} info;
	max_align_t align;
} BufferHeader;

static void bufferDestructor(void *data);
/* Buffers hold no JS values: nothing to mark. */
static xsHostHooks gBufferHooks = { bufferDestructor, NULL, NULL };

static BufferHeader *headerOf(void *data)
{
	return (BufferHeader *)data - 1;
}

/* Takes bytes from the pool, or throws when it has not that many free. */
static void poolReserve(xsMachine *the, Pool *pool, double bytes)
{
	pthread_mutex_lock(&gPoolLock);
	double available = pool->size - pool->used;
	int fits = bytes <= available;
	if (fits) {
		pool->used += bytes;
		if (pool->used > pool->peak)
			pool->peak = pool->used;
	}
	pthread_mutex_unlock(&gPoolLock);
	if (!fits)
		xsRangeError("psram: %s pool exhausted: asked %.0f bytes, %.0f free", pool->name, bytes, available);
}

/* Gives bytes back; buffers: how many live buffers fewer (-1: one more). */
static void poolReturn(Pool *pool, double bytes, int buffers)
{
	pthread_mutex_lock(&gPoolLock);
	pool->used -= bytes;
	pool->count -= buffers;
	pthread_mutex_unlock(&gPoolLock);
}

static void bufferRelease(void *data)
{
	BufferHeader *header = headerOf(data);
	poolReturn(header->info.pool, (double)header->info.length, 1);
	free(header);
}

static void bufferDestructor(void *data)
{
	if (data)
		bufferRelease(data);
}

/* Points the instance at data, with views bound-checked on each access. */
static void bufferAttach(xsMachine *the, xsSlot *instance, void *data, size_t length)
{
	xsSetHostBuffer(*instance, data, (xsIntegerValue)length);
	txSlot *info = fxToInstance(the, instance)->next->next;
	info->value.bufferInfo.maxLength = (txInteger)length;
}

static Pool *poolArgument(xsMachine *the, int index)
{
	if (hostArgc <= index || xsTypeOf(xsArg(index)) != xsStringType)
		xsTypeError("psram: pool must be \"psram\" or \"internal\"");
	const char *name = xsToString(xsArg(index));
	for (size_t i = 0; i < POOL_COUNT; i++)
		if (!strcmp(gPools[i].name, name))
			return &gPools[i];
	xsRangeError("psram: unknown pool \"%s\" (use \"psram\" or \"internal\")", name);
	return NULL;
}

static size_t lengthArgument(xsMachine *the, int index)
{
	if (hostArgc <= index)
		xsTypeError("psram: byteLength required");
	int type = xsTypeOf(xsArg(index));
	if (type != xsIntegerType && type != xsNumberType)
		xsTypeError("psram: byteLength must be a number");
	double length = xsToNumber(xsArg(index));
	if (!hostIsWhole(length, 0, BUFFERS_MAX_BYTES))
		xsRangeError("psram: invalid byteLength");
	return (size_t)length;
}

/* The buffer argument's data (NULL once freed); throws for anything else. */
static void *bufferArgument(xsMachine *the, int index)
{
	void *data;
	if (hostArgc <= index || !hostDataOf(the, &xsArg(index), &gBufferHooks, &data))
		xsTypeError("psram: expected a buffer from allocate()");
	return data;
}

/* new Buffer(byteLength, pool): the allocate() of the psram module. */
static void xs_buffer_constructor(xsMachine *the)
{
	hostConstructThis(the, &gBufferHooks, "psram");
	size_t length = lengthArgument(the, 0);
	Pool *pool = poolArgument(the, 1);
	poolReserve(the, pool, (double)length);
	BufferHeader *header = calloc(1, sizeof(BufferHeader) + length);
	if (!header) {
		poolReturn(pool, (double)length, 0);
		xsUnknownError("psram: out of memory (the system refused %zu bytes)", length);
	}
	header->info.pool = pool;
	header->info.length = length;
	poolReturn(pool, 0, -1);
	bufferAttach(the, &xsThis, header + 1, length);
}

static void xs_buffer_get_byteLength(xsMachine *the)
{
	void *data = hostThisOrNull(the, &gBufferHooks, "psram buffer");
	xsResult = xsInteger(data ? (xsIntegerValue)headerOf(data)->info.length : 0);
}

static void xs_psram_free(xsMachine *the)
{
	void *data = bufferArgument(the, 0);
	if (!data)
		return;
	xsSetHostBuffer(xsArg(0), NULL, 0);
	bufferRelease(data);
}

static void xs_psram_resize(xsMachine *the)
{
	void *data = bufferArgument(the, 0);
	size_t length = lengthArgument(the, 1);
	if (!data)
		xsTypeError("psram: the buffer was freed");
	BufferHeader *header = headerOf(data);
	Pool *pool = header->info.pool;
	size_t old = header->info.length;
	if (length > old)
		poolReserve(the, pool, (double)(length - old));
	BufferHeader *moved = realloc(header, sizeof(BufferHeader) + length);
	if (!moved) {
		if (length > old)
			poolReturn(pool, (double)(length - old), 0);
		xsUnknownError("psram: out of memory (the system refused %zu bytes)", length);
	}
	if (length > old)
		memset((uint8_t *)(moved + 1) + old, 0, length - old);
	moved->info.length = length;
	if (length < old)
		poolReturn(pool, (double)(old - length), 0);
	bufferAttach(the, &xsArg(0), moved + 1, length);
}

static void xs_psram_stats(xsMachine *the)
{
	xsVars(2);
	xsResult = xsNewObject();
	for (size_t i = 0; i < POOL_COUNT; i++) {
		pthread_mutex_lock(&gPoolLock);
		Pool pool = gPools[i];
		pthread_mutex_unlock(&gPoolLock);
		xsVar(0) = xsNewObject();
		xsVar(1) = xsNumber(pool.used);
		xsSet(xsVar(0), xsID("used"), xsVar(1));
		xsVar(1) = xsNumber(pool.peak);
		xsSet(xsVar(0), xsID("peak"), xsVar(1));
		xsVar(1) = xsNumber(pool.size);
		xsSet(xsVar(0), xsID("size"), xsVar(1));
		xsVar(1) = xsNumber(pool.count);
		xsSet(xsVar(0), xsID("count"), xsVar(1));
		xsVar(1) = xsNumber(0); /* no fallback: a full emulated pool throws */
		xsSet(xsVar(0), xsID("fallbacks"), xsVar(1));
		xsSet(xsResult, hostID(pool.name), xsVar(0));
	}
}

static void xs_psram_resetPeak(xsMachine *the)
{
	(void)the;
	pthread_mutex_lock(&gPoolLock);
	for (size_t i = 0; i < POOL_COUNT; i++)
		gPools[i].peak = gPools[i].used;
	pthread_mutex_unlock(&gPoolLock);
}

static const HostMember gBufferMembers[] = {
	{ "byteLength", xs_buffer_get_byteLength, 0, 1 },
	{ NULL }
};

/* Pool sizes are read once per process; the main machine's installer (at
 * boot and each reboot) resets the peaks. */
void hostInstallBuffers(xsMachine *the, xsSlot *native)
{
	xsVars(1);
	double sizes[POOL_COUNT];
	for (size_t i = 0; i < POOL_COUNT; i++) {
		Pool *pool = &gPools[i];
		const char *option = hostOption(pool->option);
		sizes[i] = pool->defaultSize;
		if (option) {
			char *end;
			double size = strtod(option, &end);
			if (end == option || *end || !hostIsWhole(size, 0, BUFFERS_MAX_BYTES))
				xsRangeError("psram: --%s must be a byte count (0 to %d)", pool->option, BUFFERS_MAX_BYTES);
			sizes[i] = size;
		}
	}
	int mainMachine = !hostLoop() || !hostLoop()->worker;
	pthread_mutex_lock(&gPoolLock);
	for (size_t i = 0; i < POOL_COUNT; i++) {
		if (!gPoolsConfigured)
			gPools[i].size = sizes[i];
		if (mainMachine)
			gPools[i].peak = gPools[i].used;
	}
	gPoolsConfigured = 1;
	pthread_mutex_unlock(&gPoolLock);
	xsVar(0) = xsNewObject();
	hostDefineClass(the, &xsVar(0), "Buffer", xs_buffer_constructor, 2, gBufferMembers, &gBufferHooks);
	hostDefineFunction(the, &xsVar(0), "free", xs_psram_free, 1);
	hostDefineFunction(the, &xsVar(0), "resize", xs_psram_resize, 2);
	hostDefineFunction(the, &xsVar(0), "stats", xs_psram_stats, 0);
	hostDefineFunction(the, &xsVar(0), "resetPeak", xs_psram_resetPeak, 0);
	xsDefine(*native, xsID("Psram"), xsVar(0), xsDontEnum);
}
