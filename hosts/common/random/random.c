/*
 * random.c — "host/random" (random.h): the argument checks around the
 * target's randomSource(), shared by the lin host and the ESP32-S3.
 */
#include "random.h"
#include "xsmc.h"

void xs_random_fill(xsMachine *the)
{
	void *data = NULL;
	xsUnsignedValue count = 0;
	if (xsmcArgc < 1 || xsmcTypeOf(xsArg(0)) != xsReferenceType)
		xsTypeError("random: fill: the argument must be a Uint8Array");
	xsTry {
		xsmcGetBufferWritable(xsArg(0), &data, &count);
	}
	xsCatch {
		xsTypeError("random: fill: the argument must be a writable Uint8Array, not detached");
	}
	if (count > RANDOM_FILL_MAX_BYTES)
		xsRangeError("random: fill: %u bytes is more than %u in one call", (unsigned)count, (unsigned)RANDOM_FILL_MAX_BYTES);
	if (count && randomSource(data, count) != 0)
		xsUnknownError("random: fill: the system's random generator failed");
}
