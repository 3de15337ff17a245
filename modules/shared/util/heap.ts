// util/heap: the one figure "XS heap bytes in use" derived from the host's heap
// figures (chunks plus slots), for METRIC peaks and benches; and the headroom a
// machine keeps for the next message between machines.
import { AGENT_PORT_HEADROOM_BYTES } from "budgets";
import { collectGarbage, heap, type HeapFigures } from "host/platform";

export function heapUsedBytes(figures: HeapFigures): number {
	return figures.chunkUsed + figures.slotUsed;
}

/**
 * Collects now when less than AGENT_PORT_HEADROOM_BYTES of the chunk heap is
 * free, garbage counted as used. XS cannot collect while it copies a message
 * in from another machine (the SDK's worker and the lin host's both
 * demarshall with collection off), so a heap that is full of garbage when a
 * message arrives ends the program, though the message fits once collected.
 * Each machine calls this after every message it takes, so the next one finds
 * room. (The lin host also collects before copying when short of room.)
 */
export function keepHeadroom(): void {
	const h = heap();
	if (h.chunkSize - h.chunkUsed < AGENT_PORT_HEADROOM_BYTES) collectGarbage();
}
