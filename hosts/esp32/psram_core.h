/*
 * psram_core.h — the allocator behind the device's "psram" module: buffers from
 * the ESP32-S3's PSRAM or internal RAM through ESP-IDF's heap_caps, counted per
 * pool. No XS here, so a host build can test it against a stand-in of
 * heap_caps (test/native/).
 *
 * A buffer asked of the "psram" pool that PSRAM cannot hold falls back to
 * internal RAM; it is then charged to the internal pool and counted in the
 * psram pool's `fallbacks`. Pools count requested bytes, not heap overhead.
 * Every block is preceded by a header naming its pool and length; the caller
 * sees only the bytes after it (zero-filled, max-aligned).
 */
#ifndef PSRAM_CORE_H
#define PSRAM_CORE_H

#include <stddef.h>

typedef enum { PSRAM_POOL_PSRAM = 0, PSRAM_POOL_INTERNAL = 1, PSRAM_POOL_COUNT = 2 } PsramPool;

typedef struct {
	double used;       /* bytes in live buffers that landed in this pool */
	double peak;       /* highest used since start or psramResetPeak() */
	double count;      /* live buffers */
	double fallbacks;  /* psram pool only: buffers asked of it that internal RAM had to hold */
} PsramPoolCounters;

/* The pool named name ("psram" or "internal"), or -1. */
int psramPoolNamed(const char *name);
const char *psramPoolName(PsramPool pool);

/* A zero-filled block of length bytes, or NULL when neither place (for the
 * "psram" pool: PSRAM, then internal RAM) has room. */
void *psramAllocate(size_t length, PsramPool pool);
/* Frees a block from psramAllocate/psramResize; NULL is ignored. */
void psramRelease(void *data);
/* The block at its new length (new bytes zero), possibly moved; NULL (and the
 * old block untouched) when its pool has no room. */
void *psramResize(void *data, size_t length);
size_t psramLength(const void *data);

/* Capacity and free bytes of a pool's memory, as heap_caps reports them. */
size_t psramPoolSize(PsramPool pool);
size_t psramPoolFree(PsramPool pool);
const PsramPoolCounters *psramCounters(PsramPool pool);
void psramResetPeak(void);

#endif
