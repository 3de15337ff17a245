/*
 * psram_core.c — see psram_core.h. Counters are static: one board, one set of
 * pools, shared by every XS machine on it (main and workers); ESP-IDF's
 * heap_caps functions are thread-safe, and the counters are only touched
 * under the critical section below.
 */
#include "psram_core.h"

#include <string.h>
#include "esp_heap_caps.h"

#ifdef PSRAM_HOST_STANDIN
#define PSRAM_LOCK()
#define PSRAM_UNLOCK()
#else
#include "freertos/FreeRTOS.h"
static portMUX_TYPE gPsramLock = portMUX_INITIALIZER_UNLOCKED;
#define PSRAM_LOCK() portENTER_CRITICAL(&gPsramLock)
#define PSRAM_UNLOCK() portEXIT_CRITICAL(&gPsramLock)
#endif

static const char *const gPoolNames[PSRAM_POOL_COUNT] = { "psram", "internal" };
static const unsigned gPoolCaps[PSRAM_POOL_COUNT] = {
	MALLOC_CAP_SPIRAM | MALLOC_CAP_8BIT,
	MALLOC_CAP_INTERNAL | MALLOC_CAP_8BIT,
};
static PsramPoolCounters gCounters[PSRAM_POOL_COUNT];

/* Precedes each block's bytes; the union keeps those bytes max-aligned. */
typedef union {
	struct {
		PsramPool landed;  /* where the bytes are (a fallback lands in internal) */
		size_t length;
	} info;
	max_align_t align;
} PsramHeader;

static PsramHeader *headerOf(const void *data)
{
	return (PsramHeader *)data - 1;
}

int psramPoolNamed(const char *name)
{
	for (int i = 0; i < PSRAM_POOL_COUNT; i++)
		if (!strcmp(gPoolNames[i], name))
			return i;
	return -1;
}

const char *psramPoolName(PsramPool pool)
{
	return gPoolNames[pool];
}

static void charge(PsramPool pool, double bytes, double buffers)
{
	PsramPoolCounters *c = &gCounters[pool];
	c->used += bytes;
	c->count += buffers;
	if (c->used > c->peak)
		c->peak = c->used;
}

void *psramAllocate(size_t length, PsramPool pool)
{
	if (length > (size_t)-1 - sizeof(PsramHeader))
		return NULL;
	PsramPool landed = pool;
	PsramHeader *header = heap_caps_calloc(1, sizeof(PsramHeader) + length, gPoolCaps[pool]);
	if (!header && pool == PSRAM_POOL_PSRAM) {
		landed = PSRAM_POOL_INTERNAL;
		header = heap_caps_calloc(1, sizeof(PsramHeader) + length, gPoolCaps[landed]);
	}
	if (!header)
		return NULL;
	header->info.landed = landed;
	header->info.length = length;
	PSRAM_LOCK();
	if (landed != pool)
		gCounters[pool].fallbacks++;
	charge(landed, (double)length, 1);
	PSRAM_UNLOCK();
	return header + 1;
}

void psramRelease(void *data)
{
	if (!data)
		return;
	PsramHeader *header = headerOf(data);
	PSRAM_LOCK();
	charge(header->info.landed, -(double)header->info.length, -1);
	PSRAM_UNLOCK();
	heap_caps_free(header);
}

void *psramResize(void *data, size_t length)
{
	if (length > (size_t)-1 - sizeof(PsramHeader))
		return NULL;
	PsramHeader *header = headerOf(data);
	size_t old = header->info.length;
	PsramPool landed = header->info.landed;
	PsramHeader *moved = heap_caps_realloc(header, sizeof(PsramHeader) + length, gPoolCaps[landed]);
	if (!moved)
		return NULL;
	if (length > old)
		memset((unsigned char *)(moved + 1) + old, 0, length - old);
	moved->info.length = length;
	PSRAM_LOCK();
	charge(landed, (double)length - (double)old, 0);
	PSRAM_UNLOCK();
	return moved + 1;
}

size_t psramLength(const void *data)
{
	return headerOf(data)->info.length;
}

size_t psramPoolSize(PsramPool pool)
{
	return heap_caps_get_total_size(gPoolCaps[pool]);
}

size_t psramPoolFree(PsramPool pool)
{
	return heap_caps_get_free_size(gPoolCaps[pool]);
}

const PsramPoolCounters *psramCounters(PsramPool pool)
{
	return &gCounters[pool];
}

void psramResetPeak(void)
{
	PSRAM_LOCK();
	for (int i = 0; i < PSRAM_POOL_COUNT; i++)
		gCounters[i].peak = gCounters[i].used;
	PSRAM_UNLOCK();
}
