/*
 * heap_caps_standin.c — see esp_heap_caps.h. Each block records its region and
 * size in a header; a region refuses what would take it past its capacity,
 * as a full heap on the board does.
 */
#include "esp_heap_caps.h"

#include <stdlib.h>
#include <string.h>

typedef struct { size_t capacity, used; } Region;
static Region gRegions[2];

typedef union {
	struct { int region; size_t size; } info;
	max_align_t align;
} Header;

static int regionOf(uint32_t caps)
{
	return (caps & MALLOC_CAP_SPIRAM) ? 0 : 1;
}

void standin_heap_caps_set(size_t spiram, size_t internal)
{
	gRegions[0].capacity = spiram;
	gRegions[1].capacity = internal;
}

size_t standin_heap_caps_used(uint32_t caps)
{
	return gRegions[regionOf(caps)].used;
}

void *heap_caps_malloc(size_t size, uint32_t caps)
{
	Region *r = &gRegions[regionOf(caps)];
	if (size > r->capacity - r->used)
		return NULL;
	Header *h = malloc(sizeof(Header) + size);
	if (!h)
		return NULL;
	h->info.region = regionOf(caps);
	h->info.size = size;
	r->used += size;
	return h + 1;
}

void *heap_caps_calloc(size_t n, size_t size, uint32_t caps)
{
	if (size && n > (size_t)-1 / size)
		return NULL;
	void *p = heap_caps_malloc(n * size, caps);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void heap_caps_free(void *ptr)
{
	if (!ptr)
		return;
	Header *h = (Header *)ptr - 1;
	gRegions[h->info.region].used -= h->info.size;
	free(h);
}

void *heap_caps_realloc(void *ptr, size_t size, uint32_t caps)
{
	if (!ptr)
		return heap_caps_malloc(size, caps);
	Header *h = (Header *)ptr - 1;
	Region *r = &gRegions[h->info.region];
	size_t old = h->info.size;
	/* Grows in place when the region has the difference, as a heap with room after the block does. */
	if (size > old && size - old > r->capacity - r->used)
		return NULL;
	Header *moved = realloc(h, sizeof(Header) + size);
	if (!moved)
		return NULL;
	r->used = r->used - old + size;
	moved->info.size = size;
	return moved + 1;
}

size_t heap_caps_get_free_size(uint32_t caps)
{
	Region *r = &gRegions[regionOf(caps)];
	return r->capacity - r->used;
}

size_t heap_caps_get_total_size(uint32_t caps)
{
	return gRegions[regionOf(caps)].capacity;
}
