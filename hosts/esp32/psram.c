/*
 * psram.c — the "psram" module on the ESP32-S3: the XS side of psram_core.c,
 * with the API of typings/shared/psram.d.ts (the lin host's buffers.c gives the
 * same one over emulated pools). A buffer is a host buffer (Uint8Array and
 * DataView view it) whose destructor frees it when the garbage collector does;
 * free() does it at once and leaves it empty.
 *
 * Every entry point checks its receiver or buffer argument (a buffer from
 * allocate(), by its destructor) and its arguments, and throws a specific
 * message. test/e2e/psram-device.test.mjs compiles this file on the host
 * against a stand-in of heap_caps under -Wall -Wextra -Werror.
 */
#include "psram_core.h"  /* first: xs.h uses size_t without including stddef.h */
#include "xsmc.h"

#define PSRAM_MAX_BYTES 0x7FFFFFFF  /* XS buffer lengths are 32-bit */

void xs_psram_buffer_destructor(void *data)
{
	psramRelease(data);
}

static PsramPool poolArgument(xsMachine *the, int index)
{
	if (xsmcArgc <= index || xsmcTypeOf(xsArg(index)) != xsStringType)
		xsTypeError("psram: pool must be \"psram\" or \"internal\"");
	int pool = psramPoolNamed(xsmcToString(xsArg(index)));
	if (pool < 0)
		xsRangeError("psram: unknown pool \"%s\" (use \"psram\" or \"internal\")", xsmcToString(xsArg(index)));
	return (PsramPool)pool;
}

static size_t lengthArgument(xsMachine *the, int index)
{
	if (xsmcArgc <= index)
		xsTypeError("psram: byteLength required");
	int type = xsmcTypeOf(xsArg(index));
	if (type != xsIntegerType && type != xsNumberType)
		xsTypeError("psram: byteLength must be a number");
	double length = xsmcToNumber(xsArg(index));
	if (!(length >= 0 && length <= PSRAM_MAX_BYTES && length == (double)(size_t)length))
		xsRangeError("psram: invalid byteLength");
	return (size_t)length;
}

/* The buffer's bytes (NULL once freed); throws for anything not from allocate(). */
static void *bufferData(xsMachine *the, xsSlot *slot)
{
	if (xsmcTypeOf(*slot) != xsReferenceType || xsGetHostDestructor(*slot) != xs_psram_buffer_destructor)
		xsTypeError("psram: expected a buffer from allocate()");
	return xsmcGetHostData(*slot);
}

/* new (Native("xs_psram_buffer_destructor")) then this(byteLength, pool): allocate(). */
void xs_psram_buffer(xsMachine *the)
{
	if (xsmcTypeOf(xsThis) != xsReferenceType || xsGetHostDestructor(xsThis) != xs_psram_buffer_destructor)
		xsTypeError("psram: use allocate()");
	size_t length = lengthArgument(the, 0);
	PsramPool pool = poolArgument(the, 1);
	if (xsmcGetHostData(xsThis))
		xsTypeError("psram: this buffer is already allocated");
	void *data = psramAllocate(length, pool);
	if (!data)
		xsRangeError("psram: %s pool exhausted: asked %u bytes, %u free", psramPoolName(pool), (unsigned)length, (unsigned)psramPoolFree(pool));
	xsmcSetHostBuffer(xsThis, data, (xsIntegerValue)length);
}

void xs_psram_buffer_get_byteLength(xsMachine *the)
{
	void *data = bufferData(the, &xsThis);
	xsmcSetInteger(xsResult, data ? (xsIntegerValue)psramLength(data) : 0);
}

void xs_psram_free(xsMachine *the)
{
	if (xsmcArgc < 1)
		xsTypeError("psram: expected a buffer from allocate()");
	void *data = bufferData(the, &xsArg(0));
	if (!data)
		return;
	xsmcSetHostBuffer(xsArg(0), NULL, 0);
	psramRelease(data);
}

void xs_psram_resize(xsMachine *the)
{
	if (xsmcArgc < 1)
		xsTypeError("psram: expected a buffer from allocate()");
	void *data = bufferData(the, &xsArg(0));
	size_t length = lengthArgument(the, 1);
	if (!data)
		xsTypeError("psram: the buffer was freed");
	void *moved = psramResize(data, length);
	if (!moved)
		xsRangeError("psram: pool exhausted: cannot grow a buffer to %u bytes", (unsigned)length);
	xsmcSetHostBuffer(xsArg(0), moved, (xsIntegerValue)length);
}

void xs_psram_stats(xsMachine *the)
{
	xsmcVars(2);
	xsmcSetNewObject(xsResult);
	for (int i = 0; i < PSRAM_POOL_COUNT; i++) {
		const PsramPoolCounters *c = psramCounters((PsramPool)i);
		xsmcSetNewObject(xsVar(0));
		xsmcSetNumber(xsVar(1), c->used);
		xsmcSet(xsVar(0), xsID("used"), xsVar(1));
		xsmcSetNumber(xsVar(1), c->peak);
		xsmcSet(xsVar(0), xsID("peak"), xsVar(1));
		xsmcSetNumber(xsVar(1), (double)psramPoolSize((PsramPool)i));
		xsmcSet(xsVar(0), xsID("size"), xsVar(1));
		xsmcSetNumber(xsVar(1), c->count);
		xsmcSet(xsVar(0), xsID("count"), xsVar(1));
		xsmcSetNumber(xsVar(1), c->fallbacks);
		xsmcSet(xsVar(0), xsID("fallbacks"), xsVar(1));
		xsmcSet(xsResult, xsID(psramPoolName((PsramPool)i)), xsVar(0));
	}
}

void xs_psram_resetPeak(xsMachine *the)
{
	(void)the;
	psramResetPeak();
}
