/*
 * keyvalue.c — `embedded:storage/key-value` on the lin host: NVS-like
 * namespaces, one file each under <data>/nvs, committed crash-safely.
 *
 * Shape, as the Moddable SDK's modules/io/storage/esp32 (NVS):
 *   keyValue.open({path, mode: "r" | "r+" (default), format}) -> store
 *   store.read(key) -> value in the store's format, undefined when missing;
 *   store.read(key, buffer) -> length (format "buffer"); store.write(key,
 *   value); store.delete(key); store[Symbol.iterator]() -> keys (a sorted
 *   snapshot); store.format = "buffer" (default) | "string"; store.close().
 * A value is typed by the format it was written in; reading it in the other
 * format is a TypeError, as NVS's blob/string types are. The SDK's numeric
 * formats (uint8 ... int64) are not provided here.
 * Limits, as NVS: namespace and key names 1-15 bytes; values 4000 bytes
 * (strings 3999 UTF-8 bytes, NVS keeps a NUL); a namespace at most 24 KiB.
 *
 * File format of <data>/nvs/<namespace>.kv, little-endian: the image, then
 * the log (as NVS: a namespace's newest values are entries written after the
 * older ones in erased flash).
 *   image:
 *   0       "XKV1"   magic
 *   4       u32      entry count
 *   8       entries, each: u8 key length (1-15), u8 type (0 buffer, 1 string),
 *                    u16 value length, key bytes, value bytes (a string as
 *                    XS holds it: UTF-8 with NUL as C0 80, no terminator)
 *   then    u32      CRC-32 (IEEE) of every byte of the image before it
 *   log: KV_LOG_BYTES (modules/budgets.ts) written as zeros by the commit that
 *   made the file (an older file has none), then filled from its start with
 *   records, each: an entry as above (type 2: the key was deleted, no value),
 *   then u32 CRC-32 of the record's bytes before it. A zero key length ends
 *   the records.
 * The namespace is the image's entries with the records applied in order.
 * An image failing any check, or a file of another size than the image plus
 * 0 or KV_LOG_BYTES, is reported as corrupt, naming the file; nothing is
 * guessed or repaired. Keys are unique and kept in sorted order.
 *
 * Commit, usually: the change is one record written in place after the last
 * one, then fdatasync: the file keeps its size and blocks, so that is one
 * data block to the disk (no new file, no rename, no directory sync). A
 * record cut by a crash fails its CRC (or its header's checks) and ends the
 * log: the namespace reads as before that write, and the next write rewrites
 * the file instead of writing after it. When the record does not fit in the
 * log, or the log ends in a cut record, or the file has no log: the whole
 * namespace, change applied, is written as a fresh image and an empty log to
 * <namespace>.kv.tmp, fsynced, renamed over <namespace>.kv, and the
 * directory fsynced: a crash leaves the old file or the new one, never a torn
 * one; a stale .tmp is overwritten by the next such commit. Every operation
 * reads the file afresh (image and log: a few KiB), so two stores open on one
 * namespace never disagree; writes (read, change, commit) hold one lock for
 * the process, so two machines never append at the same place.
 *
 * For fault injection (files.c) a commit is one storage operation. When it is
 * the one that loses power, the seeded random choice is between "the write
 * reached the disk" (new value) and "it was torn" (a prefix of the record, or
 * of the temp file: old value).
 */
#include "xsAll.h"
#include "host.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budgets.h"

#define KV_NAME_MAX_BYTES 15            /* NVS_KEY_NAME_MAX_SIZE is 16 with the NUL */
#define KV_VALUE_MAX_BYTES 4000         /* NVS's string limit, NUL included; blobs kept to the same */
#define KV_NAMESPACE_MAX_BYTES 24576    /* the default ESP32 nvs partition (0x6000) */
#define KV_HEADER_BYTES 8               /* magic + count */
#define KV_ENTRY_HEADER_BYTES 4         /* key length, type, value length */
#define KV_CRC_BYTES 4
#define KV_DIRECTORY_NAME "nvs"         /* <data>/nvs holds the namespaces */
#define KV_LOG_BYTES BUDGET_KV_LOG_BYTES
#define KV_RECORD_MIN_BYTES (KV_ENTRY_HEADER_BYTES + 1 + KV_CRC_BYTES)

enum { KV_BUFFER = 0, KV_STRING = 1, KV_DELETED = 2 };

_Static_assert(KV_LOG_BYTES >= KV_ENTRY_HEADER_BYTES + KV_NAME_MAX_BYTES + KV_VALUE_MAX_BYTES + KV_CRC_BYTES,
	"the key-value log must hold the largest record");

typedef struct {
	char name[KV_NAME_MAX_BYTES + 1];
	int readOnly;
	int format;
} StoreRecord;

typedef struct {
	const uint8_t *key;
	const uint8_t *value;
	uint8_t keyLength;
	uint8_t type;
	uint16_t valueLength;
} Entry;

/* A namespace as loaded: entries point into bytes (the image's entries and
 * the log's records), sorted by key. */
typedef struct {
	uint8_t *bytes;
	Entry *entries;
	uint32_t count;
	size_t logEnd;     /* where the next record goes */
	size_t logLimit;   /* the file's size: the log's end (logEnd when it has no log) */
	int torn;          /* the log ends in a record a crash cut */
} Namespace;

/* Writes (read, change, commit) of every machine, one at a time. */
static pthread_mutex_t gWriteLock = PTHREAD_MUTEX_INITIALIZER;

static void storeDestructor(void *data)
{
	free(data);
}

/* The record holds no JS values, so there is nothing to mark. */
static xsHostHooks gStoreHooks = { storeDestructor, NULL, NULL };
static __thread xsSlot gStorePrototype;   /* per machine: set by its installer, remembered */

static const char *const gFormatNames[] = { "buffer", "string" };

/* ---- bytes -------------------------------------------------------------- */

static uint32_t crc32(const uint8_t *bytes, size_t length)
{
	uint32_t crc = 0xFFFFFFFFu;
	while (length--) {
		crc ^= *bytes++;
		for (int bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static uint32_t get32(const uint8_t *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static void put32(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }
static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }

static int compareKeys(const uint8_t *a, size_t aLength, const uint8_t *b, size_t bLength)
{
	int order = memcmp(a, b, aLength < bLength ? aLength : bLength);
	return order ? order : (int)aLength - (int)bLength;
}

/* ---- paths and files ---------------------------------------------------- */

static void namespacePath(xsMachine *the, const char *name, const char *suffix, char *path)
{
	if (snprintf(path, PATH_MAX, "%s/" KV_DIRECTORY_NAME "/%s%s", hostDataDir(), name, suffix) >= PATH_MAX)
		hostThrowMessage(the, XS_RANGE_ERROR, "key-value: the data directory path is too long; pass a shorter --data DIR");
}

static void freeNamespace(Namespace *space)
{
	free(space->bytes);
	free(space->entries);
	space->bytes = NULL;
	space->entries = NULL;
	space->count = 0;
}

/* Where key is in the sorted entries, or where it would go (*found 0). */
static uint32_t entryIndex(const Namespace *space, const uint8_t *key, size_t keyLength, int *found)
{
	uint32_t low = 0, high = space->count;
	while (low < high) {
		uint32_t middle = (low + high) / 2;
		int order = compareKeys(space->entries[middle].key, space->entries[middle].keyLength, key, keyLength);
		if (!order) {
			*found = 1;
			return middle;
		}
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	*found = 0;
	return low;
}

/* One log record applied: its entry replaces or joins the key's, or removes it.
 * entries has room for one more. */
static void applyRecord(Namespace *space, const Entry *record)
{
	int found;
	uint32_t at = entryIndex(space, record->key, record->keyLength, &found);
	Entry *entries = space->entries;
	if (record->type == KV_DELETED) {
		if (found) {
			memmove(&entries[at], &entries[at + 1], (space->count - at - 1) * sizeof(Entry));
			space->count--;
		}
		return;
	}
	if (!found) {
		memmove(&entries[at + 1], &entries[at], (space->count - at) * sizeof(Entry));
		space->count++;
	}
	entries[at] = *record;
}

/* Reads an entry's header at offset (room bytes there); 0 when it is not one. */
static int readEntry(const uint8_t *bytes, size_t offset, size_t room, int deletable, Entry *entry)
{
	if (room < KV_ENTRY_HEADER_BYTES)
		return 0;
	entry->keyLength = bytes[offset];
	entry->type = bytes[offset + 1];
	entry->valueLength = get16(bytes + offset + 2);
	if (!entry->keyLength || entry->keyLength > KV_NAME_MAX_BYTES || entry->type > (deletable ? KV_DELETED : KV_STRING)
			|| entry->valueLength > KV_VALUE_MAX_BYTES || (entry->type == KV_DELETED && entry->valueLength))
		return 0;
	if (room - KV_ENTRY_HEADER_BYTES < (size_t)entry->keyLength + entry->valueLength)
		return 0;
	entry->key = bytes + offset + KV_ENTRY_HEADER_BYTES;
	entry->value = entry->key + entry->keyLength;
	return 1;
}

static void corrupt(xsMachine *the, Namespace *space, const char *path, const char *reason)
{
	freeNamespace(space);
	hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: %s is corrupt (%s); delete that file to start the namespace afresh", path, reason);
}

/* Loads and checks a namespace; a missing file is an empty namespace
 * (returns 0), an existing one returns 1. Throws on corruption. */
static int loadNamespace(xsMachine *the, const char *name, Namespace *space)
{
	char path[PATH_MAX];
	namespacePath(the, name, ".kv", path);
	memset(space, 0, sizeof(*space));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: cannot read %s: %s", path, strerror(errno));
	}
	struct stat status;
	if (fstat(fd, &status) < 0) {
		int error = errno;
		close(fd);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: cannot read %s: %s", path, strerror(error));
	}
	size_t size = (size_t)status.st_size;
	if (size < KV_HEADER_BYTES + KV_CRC_BYTES || size > KV_NAMESPACE_MAX_BYTES + KV_LOG_BYTES) {
		close(fd);
		corrupt(the, space, path, "impossible size");
	}
	space->bytes = malloc(size);
	ssize_t got = space->bytes ? pread(fd, space->bytes, size, 0) : -1;
	int error = errno;
	close(fd);
	if (!space->bytes)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: out of memory");
	if (got < 0) {
		freeNamespace(space);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: cannot read %s: %s", path, strerror(error));
	}
	if ((size_t)got != size)
		corrupt(the, space, path, "short read");
	const uint8_t *bytes = space->bytes;
	if (memcmp(bytes, "XKV1", 4))
		corrupt(the, space, path, "bad magic");
	uint32_t count = get32(bytes + 4);
	if (count > (size - KV_HEADER_BYTES - KV_CRC_BYTES) / (KV_ENTRY_HEADER_BYTES + 1))
		corrupt(the, space, path, "impossible entry count");
	/* The image's entries; checked against its CRC before anything is used. */
	size_t offset = KV_HEADER_BYTES;
	Entry entry;
	for (uint32_t i = 0; i < count; i++) {
		if (!readEntry(bytes, offset, size - KV_CRC_BYTES - offset, 0, &entry))
			corrupt(the, space, path, size - KV_CRC_BYTES - offset < KV_ENTRY_HEADER_BYTES ? "entry past the end" : "bad entry header");
		offset += KV_ENTRY_HEADER_BYTES + entry.keyLength + entry.valueLength;
	}
	size_t imageEnd = offset + KV_CRC_BYTES;
	if (imageEnd > KV_NAMESPACE_MAX_BYTES || (size != imageEnd && size != imageEnd + KV_LOG_BYTES))
		corrupt(the, space, path, "impossible size");
	if (crc32(bytes, offset) != get32(bytes + offset))
		corrupt(the, space, path, "bad checksum");
	/* The log's records up to the first zero key length, or a cut one. */
	uint32_t records = 0;
	offset = imageEnd;
	while (offset < size && bytes[offset]) {
		if (!readEntry(bytes, offset, size - offset, 1, &entry)) {
			space->torn = 1;
			break;
		}
		size_t length = KV_ENTRY_HEADER_BYTES + entry.keyLength + entry.valueLength;
		if (size - offset - length < KV_CRC_BYTES || crc32(bytes + offset, length) != get32(bytes + offset + length)) {
			space->torn = 1;
			break;
		}
		offset += length + KV_CRC_BYTES;
		records++;
	}
	space->logEnd = offset;
	space->logLimit = size;
	space->entries = calloc(count + records ? count + records : 1, sizeof(Entry));
	if (!space->entries) {
		freeNamespace(space);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: out of memory");
	}
	offset = KV_HEADER_BYTES;
	for (uint32_t i = 0; i < count; i++) {
		readEntry(bytes, offset, size - offset, 0, &space->entries[i]);
		offset += KV_ENTRY_HEADER_BYTES + space->entries[i].keyLength + space->entries[i].valueLength;
		if (i && compareKeys(space->entries[i - 1].key, space->entries[i - 1].keyLength, space->entries[i].key, space->entries[i].keyLength) >= 0)
			corrupt(the, space, path, "keys out of order");
		space->count++;
	}
	for (offset = imageEnd; offset < space->logEnd; offset += KV_ENTRY_HEADER_BYTES + entry.keyLength + entry.valueLength + KV_CRC_BYTES) {
		readEntry(bytes, offset, size - offset, 1, &entry);
		applyRecord(space, &entry);
	}
	return 1;
}

static int writeFileSynced(const char *path, const uint8_t *bytes, size_t length)
{
	/* 0600: a namespace holds secrets (config's llm.api_key); only its owner reads it. */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (fchmod(fd, 0600) < 0 || hostWriteAll(fd, bytes, length, 0) < 0 || fsync(fd) < 0) {
		int error = errno;
		close(fd);
		errno = error;
		return -1;
	}
	return close(fd);
}

/* Replaces the namespace file with bytes; see the note at the top. */
static int commitNamespace(xsMachine *the, const char *name, const uint8_t *bytes, size_t length)
{
	char path[PATH_MAX], temporary[PATH_MAX];
	namespacePath(the, name, ".kv", path);
	namespacePath(the, name, ".kv.tmp", temporary);
	char *slash = strrchr(path, '/');
	*slash = 0;
	int made = hostMakeDirectories(path);
	*slash = '/';
	if (made < 0)
		return -1;
	if (hostStorageOperation()) {
		int renamed = (int)hostCrashRandom(2);
		writeFileSynced(temporary, bytes, renamed ? length : hostCrashRandom((uint32_t)length));
		if (renamed)
			rename(temporary, path);
		hostPowerLoss();
	}
	if (writeFileSynced(temporary, bytes, length) < 0 || rename(temporary, path) < 0)
		return -1;
	return hostSyncParent(path);
}

/* Writes one record at offset of the namespace file and syncs its data; see
 * the note at the top. */
static int appendRecord(xsMachine *the, const char *name, size_t offset, const uint8_t *record, size_t length)
{
	char path[PATH_MAX];
	namespacePath(the, name, ".kv", path);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (hostStorageOperation()) {
		int landed = (int)hostCrashRandom(2);
		hostWriteAll(fd, record, landed ? length : hostCrashRandom((uint32_t)length), (long long)offset);
		hostPowerLoss();
	}
	if (hostWriteAll(fd, record, length, (long long)offset) < 0 || fdatasync(fd) < 0) {
		int error = errno;
		close(fd);
		errno = error;
		return -1;
	}
	return close(fd);
}

static size_t putEntry(uint8_t *bytes, const uint8_t *key, size_t keyLength, int type, const uint8_t *value, size_t valueLength)
{
	bytes[0] = (uint8_t)keyLength;
	bytes[1] = (uint8_t)type;
	put16(bytes + 2, (uint16_t)valueLength);
	memcpy(bytes + KV_ENTRY_HEADER_BYTES, key, keyLength);
	if (valueLength)
		memcpy(bytes + KV_ENTRY_HEADER_BYTES + keyLength, value, valueLength);
	return KV_ENTRY_HEADER_BYTES + keyLength + valueLength;
}

/* Commits space with the entry for key replaced by (type, value), or removed
 * when value is NULL: a record in the log when it fits, else a fresh file.
 * Frees space. */
static void commitChange(xsMachine *the, const char *name, Namespace *space,
	const uint8_t *key, size_t keyLength, int type, const uint8_t *value, size_t valueLength)
{
	int found;
	uint32_t at = entryIndex(space, key, keyLength, &found);
	size_t size = KV_HEADER_BYTES + KV_CRC_BYTES;
	for (uint32_t i = 0; i < space->count; i++)
		if (!found || i != at)
			size += KV_ENTRY_HEADER_BYTES + space->entries[i].keyLength + space->entries[i].valueLength;
	if (value)
		size += KV_ENTRY_HEADER_BYTES + keyLength + valueLength;
	else {
		type = KV_DELETED;
		valueLength = 0;
	}
	if (size > KV_NAMESPACE_MAX_BYTES) {
		freeNamespace(space);
		hostThrowMessage(the, XS_RANGE_ERROR, "key-value: namespace \"%s\" is full (%d bytes at most); delete keys it no longer needs", name, KV_NAMESPACE_MAX_BYTES);
	}
	size_t recordLength = KV_ENTRY_HEADER_BYTES + keyLength + valueLength + KV_CRC_BYTES;
	int result;
	if (!space->torn && space->logLimit - space->logEnd >= recordLength) {
		uint8_t record[KV_ENTRY_HEADER_BYTES + KV_NAME_MAX_BYTES + KV_VALUE_MAX_BYTES + KV_CRC_BYTES];
		size_t length = putEntry(record, key, keyLength, type, value, valueLength);
		put32(record + length, crc32(record, length));
		size_t offset = space->logEnd;
		freeNamespace(space);
		result = appendRecord(the, name, offset, record, recordLength);
	}
	else {
		/* The image, change applied, then a zeroed log. */
		uint8_t *bytes = calloc(1, size + KV_LOG_BYTES);
		if (!bytes) {
			freeNamespace(space);
			hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: out of memory");
		}
		uint32_t count = 0;
		size_t offset = KV_HEADER_BYTES;
		for (uint32_t i = 0; i <= space->count; i++) {
			if (i == at && value) {
				offset += putEntry(bytes + offset, key, keyLength, type, value, valueLength);
				count++;
			}
			if (i == space->count || (found && i == at))
				continue;
			const Entry *entry = &space->entries[i];
			offset += putEntry(bytes + offset, entry->key, entry->keyLength, entry->type, entry->value, entry->valueLength);
			count++;
		}
		memcpy(bytes, "XKV1", 4);
		put32(bytes + 4, count);
		put32(bytes + offset, crc32(bytes, offset));
		freeNamespace(space);
		result = commitNamespace(the, name, bytes, size + KV_LOG_BYTES);
		int error = errno;
		free(bytes);
		errno = error;
	}
	if (result < 0)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: cannot save namespace \"%s\": %s", name, strerror(errno));
}

static const Entry *findEntry(const Namespace *space, const uint8_t *key, size_t keyLength)
{
	int found;
	uint32_t at = entryIndex(space, key, keyLength, &found);
	return found ? &space->entries[at] : NULL;
}

/* ---- arguments ---------------------------------------------------------- */

/* Copies a key argument into key (KV_NAME_MAX_BYTES + 1); returns its length. */
static size_t keyArgument(xsMachine *the, char *key)
{
	if (hostArgc < 1 || xsTypeOf(xsArg(0)) != xsStringType)
		hostThrowMessage(the, XS_TYPE_ERROR, "key-value: key must be a string");
	const char *text = xsToString(xsArg(0));
	size_t length = strlen(text);
	if (!length)
		hostThrowMessage(the, XS_RANGE_ERROR, "key-value: key must not be empty");
	if (length > KV_NAME_MAX_BYTES)
		hostThrowMessage(the, XS_RANGE_ERROR, "key-value: key \"%s\" is too long (at most %d bytes, as NVS)", text, KV_NAME_MAX_BYTES);
	if (strstr(text, "\xC0\x80"))
		hostThrowMessage(the, XS_RANGE_ERROR, "key-value: key must not contain NUL");
	memcpy(key, text, length + 1);
	return length;
}

static int formatArgument(xsMachine *the, xsSlot *value)
{
	if (xsTypeOf(*value) == xsStringType) {
		const char *text = xsToString(*value);
		for (int format = KV_BUFFER; format <= KV_STRING; format++)
			if (!strcmp(text, gFormatNames[format]))
				return format;
		hostThrowMessage(the, XS_RANGE_ERROR, "key-value: unsupported format \"%s\" (use \"buffer\" or \"string\")", text);
	}
	hostThrowMessage(the, XS_TYPE_ERROR, "key-value: format must be a string");
	return KV_BUFFER;
}

static StoreRecord *writableStore(xsMachine *the)
{
	StoreRecord *store = hostThis(the, &gStoreHooks, "key-value");
	if (store->readOnly)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: namespace \"%s\" is open read-only (mode \"r\"); open it with mode \"r+\" to change it", store->name);
	return store;
}

/* ---- store ---------------------------------------------------------------- */

static void xs_store_constructor(xsMachine *the)
{
	hostThrowMessage(the, XS_TYPE_ERROR, "key-value: use keyValue.open({path})");
}

static void xs_store_read(xsMachine *the)
{
	StoreRecord *store = hostThis(the, &gStoreHooks, "key-value");
	char key[KV_NAME_MAX_BYTES + 1];
	size_t keyLength = keyArgument(the, key);
	int into = hostArgc > 1 && xsTypeOf(xsArg(1)) != xsUndefinedType;
	if (into && store->format != KV_BUFFER)
		hostThrowMessage(the, XS_TYPE_ERROR, "key-value: reading into a buffer needs format \"buffer\"");
	size_t capacity = 0;
	if (into)
		hostBytes(the, &xsArg(1), &capacity, "key-value");
	Namespace space;
	loadNamespace(the, store->name, &space);
	const Entry *entry = findEntry(&space, (const uint8_t *)key, keyLength);
	if (!entry) {
		freeNamespace(&space);
		return;
	}
	if (entry->type != store->format) {
		int type = entry->type;
		freeNamespace(&space);
		hostThrowMessage(the, XS_TYPE_ERROR, "key-value: \"%s\" holds a %s; set format to \"%s\" to read it", key, gFormatNames[type], gFormatNames[type]);
	}
	if (into && capacity < entry->valueLength) {
		freeNamespace(&space);
		hostThrowMessage(the, XS_RANGE_ERROR, "key-value: buffer too small for \"%s\"", key);
	}
	/* Copy out of the C buffer; on an XS allocation failure the host aborts. */
	if (into) {
		memcpy(hostBytes(the, &xsArg(1), &capacity, "key-value"), entry->value, entry->valueLength);
		xsResult = xsInteger(entry->valueLength);
	}
	else if (entry->type == KV_STRING)
		xsResult = xsStringBuffer((char *)entry->value, entry->valueLength);
	else
		xsResult = xsArrayBuffer((void *)entry->value, entry->valueLength);
	freeNamespace(&space);
}

/* Loads the namespace and commits a write (value) or a delete (NULL: nothing
 * to commit when the key is missing), under the write lock. */
static void change(xsMachine *the, const char *name, const uint8_t *key, size_t keyLength,
	int type, const uint8_t *value, size_t valueLength)
{
	pthread_mutex_lock(&gWriteLock);
	xsTry {
		Namespace space;
		loadNamespace(the, name, &space);
		if (!value && !findEntry(&space, key, keyLength))
			freeNamespace(&space);
		else
			commitChange(the, name, &space, key, keyLength, type, value, valueLength);
	}
	xsCatch {
		pthread_mutex_unlock(&gWriteLock);
		xsThrow(xsException);
	}
	pthread_mutex_unlock(&gWriteLock);
}

static void xs_store_write(xsMachine *the)
{
	StoreRecord *store = writableStore(the);
	char key[KV_NAME_MAX_BYTES + 1];
	size_t keyLength = keyArgument(the, key);
	if (hostArgc < 2)
		hostThrowMessage(the, XS_TYPE_ERROR, "key-value: value required");
	const uint8_t *value;
	size_t valueLength;
	if (store->format == KV_STRING) {
		if (xsTypeOf(xsArg(1)) != xsStringType)
			hostThrowMessage(the, XS_TYPE_ERROR, "key-value: value must be a string (format is \"string\")");
		value = (const uint8_t *)xsToString(xsArg(1));
		valueLength = strlen((const char *)value);
		if (valueLength >= KV_VALUE_MAX_BYTES)
			hostThrowMessage(the, XS_RANGE_ERROR, "key-value: value of \"%s\" is too large (%u bytes; strings at most %d)", key, (unsigned)valueLength, KV_VALUE_MAX_BYTES - 1);
	}
	else {
		if (xsTypeOf(xsArg(1)) == xsStringType)
			hostThrowMessage(the, XS_TYPE_ERROR, "key-value: value must be a buffer (format is \"buffer\"; set it to \"string\" for strings)");
		value = hostBytes(the, &xsArg(1), &valueLength, "key-value");
		if (valueLength > KV_VALUE_MAX_BYTES)
			hostThrowMessage(the, XS_RANGE_ERROR, "key-value: value of \"%s\" is too large (%u bytes; at most %d)", key, (unsigned)valueLength, KV_VALUE_MAX_BYTES);
	}
	/* No XS allocation from here on (but an error's), so value stays valid. */
	change(the, store->name, (const uint8_t *)key, keyLength, store->format, value, valueLength);
}

static void xs_store_delete(xsMachine *the)
{
	StoreRecord *store = writableStore(the);
	char key[KV_NAME_MAX_BYTES + 1];
	size_t keyLength = keyArgument(the, key);
	change(the, store->name, (const uint8_t *)key, keyLength, KV_BUFFER, NULL, 0);
}

/* The keys, sorted, as an array iterator: a snapshot, like a scan. */
static void xs_store_iterator(xsMachine *the)
{
	StoreRecord *store = hostThis(the, &gStoreHooks, "key-value");
	Namespace space;
	loadNamespace(the, store->name, &space);
	xsVars(2);
	xsTry {
		xsVar(0) = xsNewArray(0);
		for (uint32_t i = 0; i < space.count; i++) {
			xsVar(1) = xsStringBuffer((char *)space.entries[i].key, space.entries[i].keyLength);
			xsSetIndex(xsVar(0), i, xsVar(1));
		}
	}
	xsCatch {
		freeNamespace(&space);
		xsThrow(xsException);
	}
	freeNamespace(&space);
	xsResult = xsCall0(xsVar(0), mxID(_Symbol_iterator));
}

static void xs_store_get_format(xsMachine *the)
{
	StoreRecord *store = hostThis(the, &gStoreHooks, "key-value");
	xsResult = xsString(gFormatNames[store->format]);
}

static void xs_store_set_format(xsMachine *the)
{
	StoreRecord *store = hostThis(the, &gStoreHooks, "key-value");
	store->format = formatArgument(the, &xsArg(0));
}

static void xs_store_close(xsMachine *the)
{
	StoreRecord *store = hostThisOrNull(the, &gStoreHooks, "key-value");
	if (!store)
		return;
	xsSetHostData(xsThis, NULL);
	storeDestructor(store);
}

/* keyValue.open({path, mode, format}) */
static void xs_keyvalue_open(xsMachine *the)
{
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		hostThrowMessage(the, XS_TYPE_ERROR, "key-value: open needs an options object {path}");
	StoreRecord record = { .format = KV_BUFFER };
	char name[KV_NAME_MAX_BYTES + 2];
	if (!hostHasOption(the, &xsArg(0), "path"))
		hostThrowMessage(the, XS_TYPE_ERROR, "key-value: path required (the namespace)");
	xsVars(1);
	xsVar(0) = xsGet(xsArg(0), hostID("path"));
	if (xsTypeOf(xsVar(0)) != xsStringType)
		hostThrowMessage(the, XS_TYPE_ERROR, "key-value: path must be a string");
	const char *text = xsToString(xsVar(0));
	size_t length = strlen(text);
	if (length > 1 && text[length - 1] == '/')
		length--;   /* the SDK accepts "config/" for "config" */
	int valid = length >= 1 && length <= KV_NAME_MAX_BYTES && text[0] != '.';
	for (size_t i = 0; valid && i < length; i++)
		valid = isalnum((unsigned char)text[i]) || strchr("_-.", text[i]);
	if (!valid)
		hostThrowMessage(the, XS_RANGE_ERROR, "key-value: invalid namespace \"%s\" (1-%d letters, digits, \"_\", \"-\" or \".\", not starting with \".\")", text, KV_NAME_MAX_BYTES);
	memcpy(name, text, length);
	name[length] = 0;
	if (hostHasOption(the, &xsArg(0), "mode")) {
		xsVar(0) = xsGet(xsArg(0), hostID("mode"));
		if (xsTypeOf(xsVar(0)) != xsStringType)
			hostThrowMessage(the, XS_TYPE_ERROR, "key-value: mode must be a string");
		text = xsToString(xsVar(0));
		if (strcmp(text, "r") && strcmp(text, "r+"))
			hostThrowMessage(the, XS_RANGE_ERROR, "key-value: invalid mode \"%s\" (use \"r\" or \"r+\")", text);
		record.readOnly = !strcmp(text, "r");
	}
	if (hostHasOption(the, &xsArg(0), "format")) {
		xsVar(0) = xsGet(xsArg(0), hostID("format"));
		record.format = formatArgument(the, &xsVar(0));
	}
	strcpy(record.name, name);
	/* Check the file now, so a corrupt namespace is reported at open. */
	Namespace space;
	int exists = loadNamespace(the, name, &space);
	freeNamespace(&space);
	if (!exists && record.readOnly)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: namespace \"%s\" not found (nothing was written to it yet)", name);
	xsResult = xsNewHostInstance(gStorePrototype);
	StoreRecord *store = malloc(sizeof(StoreRecord));
	if (!store)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "key-value: out of memory");
	*store = record;
	xsSetHostData(xsResult, store);
}

static const HostMember gStoreMembers[] = {
	{ "read", xs_store_read, 1, 0 },
	{ "write", xs_store_write, 2, 0 },
	{ "delete", xs_store_delete, 1, 0 },
	{ "close", xs_store_close, 0, 0 },
	{ "format", xs_store_get_format, 0, 1 },
	{ "format", xs_store_set_format, 1, 2 },
	{ NULL },
};

/* native.keyValue is {open}; native.KeyValueStore the class of its stores. */
void hostInstallKeyValue(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "KeyValueStore", xs_store_constructor, 0, gStoreMembers, &gStoreHooks);
	xsVars(2);
	xsVar(0) = xsGet(*native, hostID("KeyValueStore"));
	gStorePrototype = xsGet(xsVar(0), hostID("prototype"));
	xsRemember(gStorePrototype);
	xsVar(1) = xsNewHostFunction(xs_store_iterator, 0);
	xsDefine(gStorePrototype, mxID(_Symbol_iterator), xsVar(1), xsDontEnum);
	xsVar(0) = xsNewObject();
	hostDefineFunction(the, &xsVar(0), "open", xs_keyvalue_open, 1);
	xsDefine(*native, hostID("keyValue"), xsVar(0), xsDontEnum);
}
