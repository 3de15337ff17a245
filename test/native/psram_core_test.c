/*
 * psram_core_test.c — hosts/esp32/psram_core.c against the heap_caps stand-in:
 * where each pool's buffers land, the fallback to internal RAM and its counter,
 * resize, release, peaks, and refusal when neither region has room. Prints one
 * line per check that fails and exits 1; prints "ok N checks" otherwise.
 */
#include "psram_core.h"
#include "esp_heap_caps.h"

#include <stdio.h>
#include <string.h>

static int gChecks, gFailures;
#define CHECK(cond, what) do { gChecks++; if (!(cond)) { gFailures++; printf("FAIL %s:%d %s\n", __FILE__, __LINE__, what); } } while (0)

static int allZero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const size_t KIB = 1024;
	/* Room for headers: the stand-in counts each block's header bytes too. */
	standin_heap_caps_set(48 * KIB + 256, 16 * KIB + 256);
	const PsramPoolCounters *ps = psramCounters(PSRAM_POOL_PSRAM), *in = psramCounters(PSRAM_POOL_INTERNAL);

	CHECK(psramPoolNamed("psram") == PSRAM_POOL_PSRAM && psramPoolNamed("internal") == PSRAM_POOL_INTERNAL, "pool names");
	CHECK(psramPoolNamed("spiram") == -1 && psramPoolNamed("") == -1, "unknown pool names are refused");

	unsigned char *a = psramAllocate(40 * KIB, PSRAM_POOL_PSRAM);
	CHECK(a != NULL, "a psram buffer that fits is allocated");
	CHECK(allZero(a, 40 * KIB), "zero-filled");
	CHECK(standin_heap_caps_used(MALLOC_CAP_SPIRAM) >= 40 * KIB && standin_heap_caps_used(MALLOC_CAP_INTERNAL) == 0, "it lands in SPIRAM");
	CHECK(ps->used == 40 * KIB && ps->count == 1 && ps->fallbacks == 0, "charged to psram");

	unsigned char *b = psramAllocate(10 * KIB, PSRAM_POOL_PSRAM);
	CHECK(b != NULL, "a psram buffer PSRAM cannot hold falls back");
	CHECK(standin_heap_caps_used(MALLOC_CAP_INTERNAL) >= 10 * KIB, "... to internal RAM");
	CHECK(ps->fallbacks == 1 && in->used == 10 * KIB && in->count == 1 && ps->used == 40 * KIB, "counted as a fallback and charged to internal");

	CHECK(psramAllocate(32 * KIB, PSRAM_POOL_PSRAM) == NULL, "refused when neither region has room");
	CHECK(ps->fallbacks == 1 && ps->count == 1 && in->count == 1, "a refusal changes no counter");
	CHECK(psramAllocate(8 * KIB, PSRAM_POOL_INTERNAL) == NULL, "an internal buffer never goes to PSRAM");

	memset(a, 0xAB, 40 * KIB);
	unsigned char *grown = psramResize(a, 48 * KIB);
	CHECK(grown != NULL && psramLength(grown) == 48 * KIB, "resize grows within the region");
	CHECK(grown && grown[0] == 0xAB && grown[40 * KIB - 1] == 0xAB && allZero(grown + 40 * KIB, 8 * KIB), "content kept, new bytes zero");
	CHECK(ps->used == 48 * KIB && ps->peak >= 48 * KIB, "resize charged");
	CHECK(psramResize(grown, 200 * KIB) == NULL && ps->used == 48 * KIB, "a resize past the region fails and changes nothing");
	a = grown;

	psramResetPeak();
	CHECK(ps->peak == ps->used && in->peak == in->used, "resetPeak brings the peaks to the use");
	psramRelease(b);
	CHECK(in->used == 0 && in->count == 0 && standin_heap_caps_used(MALLOC_CAP_INTERNAL) == 0, "a fallback buffer returns to internal RAM");
	CHECK(in->peak == 10 * KIB, "the peak stays");
	psramRelease(a);
	psramRelease(NULL);
	CHECK(ps->used == 0 && ps->count == 0 && standin_heap_caps_used(MALLOC_CAP_SPIRAM) == 0, "everything released");
	CHECK(psramPoolSize(PSRAM_POOL_PSRAM) == 48 * KIB + 256 && psramPoolFree(PSRAM_POOL_INTERNAL) == 16 * KIB + 256, "sizes from heap_caps");
	CHECK(psramAllocate((size_t)-1, PSRAM_POOL_PSRAM) == NULL, "an impossible length is refused, not wrapped");

	if (gFailures) {
		printf("%d of %d checks failed\n", gFailures, gChecks);
		return 1;
	}
	printf("ok %d checks\n", gChecks);
	return 0;
}
