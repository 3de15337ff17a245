/*
 * storage_guard.c — the littlefs partition looked at before the SDK mounts it.
 * Called by hosts/esp32/files.ts (embedded:storage/files on the board, through
 * host/storage) before it lets the SDK mount; util/io gives the firmware a root
 * that refuses every call when it refuses (issue 26). The SDK's littlefs module
 * formats the partition whenever lfs_mount fails, so one bad boot (a torn
 * superblock, a firmware that wrote another layout) would erase every session,
 * memory and file without a word. Here the partition is mounted first with callbacks that only read:
 *   xs_storage_check() -> "ok"     it mounts: the SDK's mount will too
 *                         "blank"  its two superblock blocks are erased flash
 *                                  (a new board, or after xs_storage_erase):
 *                                  the SDK formats it, nothing is lost
 *                         else     a sentence with littlefs's error: the caller
 *                                  refuses to mount, and nothing is written
 *   xs_storage_erase()   erases the two superblock blocks, so the next boot
 *                        finds the partition blank and the SDK formats it
 *                        (factory-reset confirm, when the check refused).
 * The answer is kept for the rest of the boot: the agent machine's files.ts asks
 * again once the main machine's SDK mount is live, and a second read-only mount
 * beside a writer could see another state than the first.
 */
#include "xsAll.h"
#include "xsmc.h"
#include "mc.defines.h"
#include "lfs.h"
#include "esp_partition.h"

#include <stdio.h>
#include <string.h>

#define GUARD_BLOCK_BYTES 4096   /* SPI_FLASH_SEC_SIZE: the SDK's littlefs block */
#define GUARD_SUPERBLOCKS 2      /* littlefs keeps its superblock pair in blocks 0 and 1 */

static const esp_partition_t *guardPartition(xsMachine *the)
{
	const esp_partition_t *partition = esp_partition_find_first(ESP_PARTITION_TYPE_DATA, ESP_PARTITION_SUBTYPE_ANY, MODDEF_FILE_PARTITION);
	if (!partition)
		xsUnknownError("storage: no \"%s\" partition in the partition table", MODDEF_FILE_PARTITION);
	return partition;
}

static int guardRead(const struct lfs_config *config, lfs_block_t block, lfs_off_t offset, void *buffer, lfs_size_t size)
{
	const esp_partition_t *partition = config->context;
	return esp_partition_read(partition, block * config->block_size + offset, buffer, size) == ESP_OK ? 0 : LFS_ERR_IO;
}

/* The check never writes: littlefs's mount only reads, and these say so if it tried. */
static int guardProg(const struct lfs_config *config, lfs_block_t block, lfs_off_t offset, const void *buffer, lfs_size_t size)
{
	return LFS_ERR_IO;
}

static int guardErase(const struct lfs_config *config, lfs_block_t block)
{
	return LFS_ERR_IO;
}

static int guardSync(const struct lfs_config *config)
{
	return 0;
}

#ifdef LFS_THREADSAFE
static int guardLock(const struct lfs_config *config)
{
	return 0;
}
#endif

static int guardBlank(const esp_partition_t *partition)
{
	uint8_t bytes[256];
	for (uint32_t at = 0; at < GUARD_SUPERBLOCKS * GUARD_BLOCK_BYTES; at += sizeof(bytes)) {
		if (esp_partition_read(partition, at, bytes, sizeof(bytes)) != ESP_OK)
			return 0;
		for (size_t i = 0; i < sizeof(bytes); i++)
			if (bytes[i] != 0xFF)
				return 0;
	}
	return 1;
}

/* Set by the first check of a boot (the main machine's, before it starts the agent's). */
static char gVerdict[200];

void xs_storage_check(xsMachine *the)
{
	if (gVerdict[0]) {
		xsmcSetString(xsResult, gVerdict);
		return;
	}
	const esp_partition_t *partition = guardPartition(the);
	struct lfs_config config;
	memset(&config, 0, sizeof(config));
	config.context = (void *)partition;
	config.read = guardRead;
	config.prog = guardProg;
	config.erase = guardErase;
	config.sync = guardSync;
#ifdef LFS_THREADSAFE
	config.lock = guardLock;
	config.unlock = guardLock;
#endif
	/* The SDK's own configuration (modules/io/files/littlefs), so both read the same. */
	config.read_size = MODDEF_FILE_LFS_READ_SIZE;
	config.prog_size = MODDEF_FILE_LFS_PROG_SIZE;
	config.block_size = GUARD_BLOCK_BYTES;
	config.block_count = partition->size / GUARD_BLOCK_BYTES;
	config.cache_size = MODDEF_FILE_LFS_CACHE_SIZE;
	config.lookahead_size = MODDEF_FILE_LFS_LOOKAHEAD_SIZE;
	config.block_cycles = MODDEF_FILE_LFS_BLOCK_CYCLES;
	lfs_t lfs;
	int result = lfs_mount(&lfs, &config);
	if (result == 0) {
		lfs_unmount(&lfs);
		snprintf(gVerdict, sizeof(gVerdict), "ok");
	}
	else if (guardBlank(partition))
		snprintf(gVerdict, sizeof(gVerdict), "blank");
	else
		snprintf(gVerdict, sizeof(gVerdict), "littlefs cannot mount the \"%s\" partition (error %d%s)", MODDEF_FILE_PARTITION, result,
		result == LFS_ERR_CORRUPT ? ", corrupt" : result == LFS_ERR_IO ? ", a flash read failed" : result == LFS_ERR_INVAL ? ", another version or layout" : "");
	xsmcSetString(xsResult, gVerdict);
}

void xs_storage_erase(xsMachine *the)
{
	const esp_partition_t *partition = guardPartition(the);
	esp_err_t result = esp_partition_erase_range(partition, 0, GUARD_SUPERBLOCKS * GUARD_BLOCK_BYTES);
	if (result != ESP_OK)
		xsUnknownError("storage: erasing the \"%s\" partition's first blocks failed (ESP-IDF error %d)", MODDEF_FILE_PARTITION, (int)result);
	gVerdict[0] = 0;   /* the next check looks again: blank now */
}
