/*
 * platform.c — the natives of host/platform on the ESP32-S3 (platform.ts).
 * xs_platform_gc: a collection now. util/heap's keepHeadroom calls it after a
 * port message when the chunk heap runs short, because the SDK's worker
 * (modWorker.c) copies the next message in with collection turned off.
 */
#include <stddef.h>  /* first: xs.h uses size_t without including it */
#include "xsmc.h"

void xs_platform_gc(xsMachine *the)
{
	xsCollectGarbage();
}
