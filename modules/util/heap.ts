// util/heap: the one figure "XS heap bytes in use" derived from the host's heap
// figures (chunks plus slots), for METRIC peaks and benches.
import type { HeapFigures } from "host/platform";

export function heapUsedBytes(figures: HeapFigures): number {
	return figures.chunkUsed + figures.slotUsed;
}
