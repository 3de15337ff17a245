/*
 * platform.c — the natives of host/platform on the ESP32-S3 (platform.ts).
 * xs_platform_gc: a collection now. util/heap's keepHeadroom calls it after a
 * port message when the chunk heap runs short, because the SDK's worker
 * (modWorker.c) copies the next message in with collection turned off.
 * xs_platform_heap: this machine's heap figures, read from the machine itself.
 * The SDK's Instrumentation figures exist only in an instrumented build
 * (mcconfig -d, MODINSTRUMENTATION); in a release build they are 0, and
 * keepHeadroom, which compares them with AGENT_PORT_HEADROOM_BYTES, would
 * never collect before a port message.
 * xs_platform_reset_peak: the peaks start again from the current use.
 */
#include "xsAll.h"
#include "xsmc.h"

void xs_platform_gc(xsMachine *the)
{
	xsCollectGarbage();
}

static void setNumber(xsMachine *the, const char *name, double value)
{
	xsmcSetNumber(xsVar(0), value);
	xsmcSet(xsResult, xsID((char *)name), xsVar(0));
}

/* {chunkUsed, chunkPeak, chunkSize, slotUsed, slotPeak, slotSize, collections}: bytes, and collections since start. */
void xs_platform_heap(xsMachine *the)
{
	txMachine *machine = (txMachine *)the;
	xsmcVars(1);
	xsResult = xsNewObject();
	setNumber(the, "chunkUsed", (double)machine->currentChunksSize);
	setNumber(the, "chunkPeak", (double)machine->peakChunksSize);
	setNumber(the, "chunkSize", (double)machine->maximumChunksSize);
	setNumber(the, "slotUsed", (double)machine->currentHeapCount * sizeof(txSlot));
	setNumber(the, "slotPeak", (double)machine->peakHeapCount * sizeof(txSlot));
	setNumber(the, "slotSize", (double)machine->maximumHeapCount * sizeof(txSlot));
#ifdef mxInstrument
	setNumber(the, "collections", (double)machine->garbageCollectionCount);
#endif
}

void xs_platform_reset_peak(xsMachine *the)
{
	txMachine *machine = (txMachine *)the;
	machine->peakChunksSize = machine->currentChunksSize;
	machine->peakHeapCount = machine->currentHeapCount;
}
