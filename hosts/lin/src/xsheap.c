/*
 * xsheap.c — where XS's heaps come from on the lin host (the platform header
 * asks for the host's fxAllocateChunks and fxAllocateSlots instead of XS's
 * plain malloc).
 *
 * Each block is malloc'd as before (one this large is a fresh mapping of its
 * own); the ones a machine is known to write whole are then faulted in at once
 * (MADV_POPULATE_WRITE, Linux 5.14) instead of one page fault at a time as XS
 * first writes each page. On this project's VMs a page fault costs ~17 us of
 * CPU and a page populated in bulk ~0.8 us (hosts/lin/NOTES.md, "CPU per
 * turn"):
 *   - the slot heap: XS links its free list through every slot at creation, so
 *     all its pages (512 for 65,536 slots) were faulted then, one by one;
 *   - a worker machine's chunk heap (the agent machine's): XS collects only
 *     when it is full, so the agent writes all of it within its first ~20
 *     turns; that was ~8 page faults a turn until then.
 * The main machine's chunk heap peaks at about half its size in the peer
 * bench, and the stacks are touched only as deep as they go: those are left
 * to fault as used, so resident memory does not grow.
 *
 * A kernel without MADV_POPULATE_WRITE answers EINVAL and the pages fault in
 * as before. Under ASan the sanitizer's malloc gives the block; populating
 * works the same on it.
 */
#include "xsAll.h"
#include "host.h"

#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static void populate(void *block, size_t size)
{
	if (!block)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)block + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t end = ((uintptr_t)block + size) & ~(uintptr_t)(page - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

void *fxAllocateChunks(txMachine *the, txSize size)
{
	(void)the;
	void *block = malloc((size_t)size);
	/* The calling thread is creating the machine: a worker's loop says so. */
	HostLoop *loop = hostLoop();
	if (loop && loop->worker)
		populate(block, (size_t)size);
	return block;
}

void fxFreeChunks(txMachine *the, void *chunks)
{
	(void)the;
	free(chunks);
}

txSlot *fxAllocateSlots(txMachine *the, txSize count)
{
	size_t size = (size_t)count * sizeof(txSlot);
	void *block = malloc(size);
	/* XS allocates the stack first (stackBottom still unset), then the heap. */
	if (the->stackBottom)
		populate(block, size);
	return block;
}

void fxFreeSlots(txMachine *the, void *slots)
{
	(void)the;
	free(slots);
}
