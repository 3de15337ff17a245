/*
 * files.c — `embedded:storage/files` on the lin host, and the storage fault
 * injection that the power-loss tests are built on.
 *
 * Layout. The root directory object is <data>/files, the lin stand-in for the
 * device's littlefs "storage" partition; it is created (mkdir -p) on first
 * use. Key-value namespaces live beside it in <data>/nvs (keyvalue.c), out of
 * reach of file paths, as NVS is on the device.
 *
 * Shapes follow the Moddable SDK's modules/io/files (posix and littlefs):
 *   files.openFile({path, mode}) -> File; mode "r" (default), "r+", "w", "w+"
 *   File: read(count | buffer, position) -> ArrayBuffer | bytes read,
 *         write(buffer, position), status() -> {size, mode}, setSize(n),
 *         flush() (fsync), close()
 *   Directory: openDirectory({path}), delete(path) -> false when missing,
 *         move(from, to[, toDirectory]) (rename(2): atomic, replaces the
 *         target, then syncs the parent directories), status(path),
 *         createDirectory(path) -> false when it exists, scan(path?) and
 *         [Symbol.iterator] -> names, close()
 *   Status: {size, mode} with isFile(), isDirectory(), isSymbolicLink().
 * Where we differ: scan is a sorted snapshot (littlefs lists in name order);
 * positions are required, not coerced; the root directory cannot be closed
 * (it is one object shared by every module).
 *
 * Paths are relative and "/"-separated; "dir/" names dir. Absolute paths,
 * ".." components and NUL are refused ("files: path escapes the storage
 * root"); empty and "." components are refused as invalid. Symbolic links are
 * never followed below the root (the device's littlefs has none; on lin one
 * could be planted in the data directory, e.g. workspace/x -> ../../nvs): every
 * path is opened component by component from the root's descriptor, each
 * directory with O_NOFOLLOW, and the last component with O_NOFOLLOW (open,
 * scan) or by the *at() call that does not follow it (status is the link's own,
 * delete removes the link, move renames it). A link is "files: is a symbolic
 * link (not followed)". The root itself (<data>/files) is the person's choice
 * and is followed.
 *
 * Fault injection. With --crash-after N (or XSCLAW_CRASH_AFTER=N) the storage
 * operations (file write, setSize, flush, move, key-value commit) are counted
 * and operation N+1 "loses power": a write lands only a random prefix of its
 * bytes (strictly shorter; random from --crash-seed S / XSCLAW_CRASH_SEED,
 * deterministic for a seed), other operations do nothing; then the process
 * prints "xsclaw: power lost after N writes" and _exits 86, running no JS and
 * no destructors (only a terminal the console held is put back in its mode).
 * Everything written before stays, as the page cache keeps
 * it: the model is "the first N operations happened, the next was torn".
 * With --crash-model lfs (or XSCLAW_CRASH_MODEL=lfs) the loss is the device's
 * littlefs instead: a file's writes and setSize since its last flush (or
 * close, which commits on littlefs) are undone at the power loss, so each file
 * is exactly as its last flush left it (a file opened with "w"/"w+" keeps its
 * old bytes until then; a new file exists, empty). To undo, each write below a
 * file's committed size saves the bytes it covers first (test runs only).
 * --count-writes 1 prints "xsclaw: storage operations: N" at exit, so a
 * harness can crash at every point 1..N.
 */
#define _GNU_SOURCE 1   /* nftw (storageErase) */
#include "xsAll.h"
#include "host.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILES_PATH_MAX 512              /* bytes of a path below the root; littlefs names stop at 255 */
#define FILES_OFFSET_MAX 2147483647.0   /* positions and sizes: the device's littlefs offsets are 32-bit */
#define FILES_SCAN_MAX_ENTRIES 4096     /* one scan snapshot; a storage partition holds far fewer */
#define FILES_ROOT_NAME "files"         /* <data>/files is the root directory */
#define FILES_READ_UNSIZED_BYTES 4096  /* read(n): up to this, no fstat to size the buffer first */

/* ---- fault injection ---------------------------------------------------- */

/* Process-wide, as power is: every machine's thread counts into the same
 * operation counter, under gFaultLock. */
static pthread_mutex_t gFaultLock = PTHREAD_MUTEX_INITIALIZER;
static long long gCrashAfter = -1;      /* -1: never lose power */
static unsigned long long gOperations = 0;
static unsigned long long gRandomState = 0;
static int gCountWrites = 0;
static int gFaultsConfigured = 0;
static int gPowerLost = 0;
static int gLittlefsModel = 0;          /* --crash-model lfs: unflushed writes are lost */

static long long faultNumber(const char *option, const char *variable)
{
	const char *text = hostOption(option);
	const char *prefix = "--", *source = option;
	if (!text) {
		text = getenv(variable);
		prefix = "";
		source = variable;
	}
	if (!text)
		return -1;
	char *end = NULL;
	errno = 0;
	long long value = strtoll(text, &end, 10);
	if (errno || end == text || *end || value < 0) {
		fprintf(stderr, "xsclaw: %s%s must be a whole number >= 0, not \"%s\"\n", prefix, source, text);
		exit(64);
	}
	return value;
}

static void printOperationCount(void)
{
	pthread_mutex_lock(&gFaultLock);
	unsigned long long operations = gOperations;
	pthread_mutex_unlock(&gFaultLock);
	fprintf(stderr, "xsclaw: storage operations: %llu\n", operations);
}

/* Once per process (the first machine's installer): the counter runs across
 * reboots and machines, as power does. */
static void configureFaults(void)
{
	pthread_mutex_lock(&gFaultLock);
	if (gFaultsConfigured) {
		pthread_mutex_unlock(&gFaultLock);
		return;
	}
	gFaultsConfigured = 1;
	gCrashAfter = faultNumber("crash-after", "XSCLAW_CRASH_AFTER");
	long long seed = faultNumber("crash-seed", "XSCLAW_CRASH_SEED");
	gRandomState = seed < 0 ? 0 : (unsigned long long)seed;
	long long count = faultNumber("count-writes", "XSCLAW_COUNT_WRITES");
	if (count > 1) {
		fprintf(stderr, "xsclaw: --count-writes takes 0 or 1\n");
		exit(64);
	}
	gCountWrites = count == 1;
	const char *model = hostOption("crash-model");
	const char *modelSource = "--crash-model";
	if (!model) {
		model = getenv("XSCLAW_CRASH_MODEL");
		modelSource = "XSCLAW_CRASH_MODEL";
	}
	if (model && strcmp(model, "lfs") && strcmp(model, "page-cache")) {
		fprintf(stderr, "xsclaw: %s takes lfs or page-cache, not \"%s\"\n", modelSource, model);
		exit(64);
	}
	gLittlefsModel = model && !strcmp(model, "lfs");
	if (gCountWrites)
		atexit(printOperationCount);
	pthread_mutex_unlock(&gFaultLock);
}

/* Exactly one operation loses power; another thread's storage operation
 * after it waits for the _exit that follows, touching nothing. */
int hostStorageOperation(void)
{
	pthread_mutex_lock(&gFaultLock);
	gOperations++;
	int lose = gCrashAfter >= 0 && gOperations > (unsigned long long)gCrashAfter;
	int lost = gPowerLost;
	if (lose)
		gPowerLost = 1;
	pthread_mutex_unlock(&gFaultLock);
	while (lost)
		pause();
	return lose;
}

/* splitmix64: small, and the same sequence for the same seed everywhere. */
uint32_t hostCrashRandom(uint32_t bound)
{
	if (!bound)
		return 0;
	unsigned long long z = (gRandomState += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	return (uint32_t)(z % bound);
}

static void littlefsRevert(void);

void hostPowerLoss(void)
{
	littlefsRevert();
	fprintf(stderr, "xsclaw: power lost after %lld writes\n", gCrashAfter);
	hostTerminalRestore();   /* _exit skips atexit, which would put a terminal back */
	_exit(HOST_POWER_LOSS_EXIT);
}

/* ---- storage helpers ---------------------------------------------------- */

int hostMakeDirectories(const char *path)
{
	struct stat status;
	if (stat(path, &status) == 0 && S_ISDIR(status.st_mode))
		return 0;   /* the common case, once the directory is made */
	char partial[PATH_MAX];
	size_t length = strlen(path);
	if (length >= sizeof(partial)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(partial, path, length + 1);
	for (size_t i = 1; i <= length; i++) {
		if (partial[i] != '/' && partial[i] != 0)
			continue;
		char saved = partial[i];
		partial[i] = 0;
		if (mkdir(partial, 0777) < 0 && errno != EEXIST)
			return -1;
		partial[i] = saved;
	}
	if (stat(path, &status) < 0)
		return -1;
	if (!S_ISDIR(status.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

int hostWriteAll(int fd, const void *data, size_t length, long long position)
{
	const uint8_t *bytes = data;
	while (length) {
		ssize_t written = pwrite(fd, bytes, length, (off_t)position);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		bytes += written;
		length -= (size_t)written;
		position += written;
	}
	return 0;
}

static ssize_t readAll(int fd, void *data, size_t length, long long position)
{
	uint8_t *bytes = data;
	size_t total = 0;
	while (total < length) {
		ssize_t got = pread(fd, bytes + total, length - total, (off_t)(position + (long long)total));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (!got)
			break;
		total += (size_t)got;
	}
	return (ssize_t)total;
}

/* Makes a rename durable: the entry lives in the parent directory. */
int hostSyncParent(const char *full)
{
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", full);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(parent, ".");
	int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int result = fsync(fd);
	close(fd);
	return result;
}

/* ---- records and errors ------------------------------------------------- */

typedef struct {
	int isRoot;
	char path[FILES_PATH_MAX];   /* below the root; "" for the root */
} DirectoryRecord;

/* Bytes a write or setSize replaced below the committed size (lfs model). */
typedef struct Undo {
	struct Undo *next;       /* older */
	long long position;
	size_t length;
	uint8_t bytes[];
} Undo;

typedef struct FileRecord {
	int fd;
	int readable;
	int writable;
	char path[FILES_PATH_MAX];   /* below the root, for messages */
	/* lfs model only (writable files), under gFaultLock: */
	struct FileRecord *nextTracked, *previousTracked;
	int tracked;
	int dirty;                   /* written or resized since the last commit */
	long long committedSize;
	Undo *undo;                  /* newest first */
} FileRecord;

static FileRecord *gTracked = NULL;   /* writable files, lfs model */

static void freeUndo(FileRecord *file)
{
	while (file->undo) {
		Undo *older = file->undo->next;
		free(file->undo);
		file->undo = older;
	}
}

/* Saves the bytes [position, end) below the committed size before they change. */
static int saveUndo(FileRecord *file, long long position, long long end)
{
	if (end > file->committedSize)
		end = file->committedSize;
	if (position >= end)
		return 0;
	size_t length = (size_t)(end - position);
	Undo *undo = malloc(sizeof(Undo) + length);
	if (!undo)
		return -1;
	ssize_t got = readAll(file->fd, undo->bytes, length, position);
	if (got < 0) {
		free(undo);
		return -1;
	}
	undo->position = position;
	undo->length = (size_t)got;
	undo->next = file->undo;
	file->undo = undo;
	return 0;
}

/* Before a write or setSize (lfs model): remembers what a power loss must put back. */
static int littlefsChange(FileRecord *file, long long position, long long end)
{
	if (!file->tracked)
		return 0;
	pthread_mutex_lock(&gFaultLock);
	int result = saveUndo(file, position, end);
	file->dirty = 1;
	pthread_mutex_unlock(&gFaultLock);
	return result;
}

/* After a flush or at close (lfs model): the file as it is now is what a power loss leaves. */
static void littlefsCommit(FileRecord *file)
{
	if (!file->tracked)
		return;
	struct stat status;
	pthread_mutex_lock(&gFaultLock);
	freeUndo(file);
	if (fstat(file->fd, &status) == 0)
		file->committedSize = (long long)status.st_size;
	file->dirty = 0;
	pthread_mutex_unlock(&gFaultLock);
}

static void littlefsTrack(FileRecord *file, long long committedSize, Undo *undo)
{
	pthread_mutex_lock(&gFaultLock);
	file->tracked = 1;
	file->committedSize = committedSize;
	file->undo = undo;
	file->dirty = undo != NULL;
	file->previousTracked = NULL;
	file->nextTracked = gTracked;
	if (gTracked)
		gTracked->previousTracked = file;
	gTracked = file;
	pthread_mutex_unlock(&gFaultLock);
}

static void littlefsUntrack(FileRecord *file)
{
	pthread_mutex_lock(&gFaultLock);
	if (file->previousTracked)
		file->previousTracked->nextTracked = file->nextTracked;
	else
		gTracked = file->nextTracked;
	if (file->nextTracked)
		file->nextTracked->previousTracked = file->previousTracked;
	freeUndo(file);
	file->tracked = 0;
	pthread_mutex_unlock(&gFaultLock);
}

/* At the power loss (lfs model): every file back to its last commit. No lock:
 * the thread losing power holds the only way on (hostStorageOperation). */
static void littlefsRevert(void)
{
	if (!gLittlefsModel)
		return;
	for (FileRecord *file = gTracked; file; file = file->nextTracked) {
		if (!file->dirty)
			continue;
		for (Undo *undo = file->undo; undo; undo = undo->next)
			(void)hostWriteAll(file->fd, undo->bytes, undo->length, undo->position);
		(void)!ftruncate(file->fd, (off_t)file->committedSize);
	}
}

static void directoryDestructor(void *data)
{
	free(data);
}

static void fileDestructor(void *data)
{
	FileRecord *file = data;
	if (file) {
		/* littlefs commits a file when it is closed. */
		if (file->tracked)
			littlefsUntrack(file);
		close(file->fd);
		free(file);
	}
}

/* Neither record holds JS values, so there is nothing to mark. */
static xsHostHooks gDirectoryHooks = { directoryDestructor, NULL, NULL };
static xsHostHooks gFileHooks = { fileDestructor, NULL, NULL };

/* Prototypes for objects made here (openFile, openDirectory, status); set by
 * the installer and remembered so the garbage collector keeps them. */
static __thread xsSlot gFilePrototype;   /* per machine: set by its installer */
static __thread xsSlot gDirectoryPrototype;
static __thread xsSlot gStatusPrototype;

static const char *errorText(int error)
{
	switch (error) {
	case ENOENT: return "not found";
	case EEXIST: return "already exists";
	case ENOTDIR: return "not a directory";
	case EISDIR: return "is a directory";
	case ENOTEMPTY: return "directory not empty";
	case EACCES:
	case EPERM: return "permission denied";
	case ENOSPC: return "no space left";
	case ENAMETOOLONG: return "name too long";
	case ELOOP: return "is a symbolic link (not followed)";
	default: return strerror(error);
	}
}

static void throwErrno(xsMachine *the, int error, const char *path)
{
	hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: %s: %s", errorText(error), path);
}

/* ---- paths -------------------------------------------------------------- */

/* Copies a path argument into out (FILES_PATH_MAX), refusing escapes. */
static void pathArgument(xsMachine *the, xsSlot *slot, char *out)
{
	if (xsTypeOf(*slot) != xsStringType)
		hostThrowMessage(the, XS_TYPE_ERROR, "files: path must be a string");
	const char *text = xsToString(*slot);
	size_t length = strlen(text);
	if (!length)
		hostThrowMessage(the, XS_RANGE_ERROR, "files: path must not be empty");
	if (length >= FILES_PATH_MAX)
		hostThrowMessage(the, XS_RANGE_ERROR, "files: path too long (at most %d bytes)", FILES_PATH_MAX - 1);
	memcpy(out, text, length + 1);
	/* XS stores U+0000 inside strings as the bytes C0 80. */
	if (out[0] == '/' || strstr(out, "\xC0\x80"))
		hostThrowMessage(the, XS_RANGE_ERROR, "files: path escapes the storage root: %s", out);
	if (length > 1 && out[length - 1] == '/')
		out[--length] = 0;
	for (const char *part = out;;) {
		const char *slash = strchr(part, '/');
		size_t size = slash ? (size_t)(slash - part) : strlen(part);
		if (size == 2 && part[0] == '.' && part[1] == '.')
			hostThrowMessage(the, XS_RANGE_ERROR, "files: path escapes the storage root: %s", out);
		if (!size || (size == 1 && part[0] == '.'))
			hostThrowMessage(the, XS_RANGE_ERROR, "files: invalid path (empty or \".\" part): %s", out);
		if (!slash)
			break;
		part = slash + 1;
	}
}

static void rootPath(xsMachine *the, char *full)
{
	if (snprintf(full, PATH_MAX, "%s/" FILES_ROOT_NAME, hostDataDir()) >= PATH_MAX)
		hostThrowMessage(the, XS_RANGE_ERROR, "files: the data directory path is too long; pass a shorter --data DIR");
}

/* Resolves a validated path of a directory into its path below the root. */
static void resolvePath(xsMachine *the, DirectoryRecord *directory, const char *path, char *below)
{
	int length = directory->path[0]
		? snprintf(below, FILES_PATH_MAX, "%s/%s", directory->path, path)
		: snprintf(below, FILES_PATH_MAX, "%s", path);
	if (length >= FILES_PATH_MAX)
		hostThrowMessage(the, XS_RANGE_ERROR, "files: path too long (at most %d bytes below the root): %s", FILES_PATH_MAX - 1, path);
}

/* The root directory's descriptor, opened once per process (created on first
 * use); every path is walked from it. */
static pthread_mutex_t gRootLock = PTHREAD_MUTEX_INITIALIZER;
static int gRootFd = -1;

static int rootDescriptor(xsMachine *the)
{
	pthread_mutex_lock(&gRootLock);
	int fd = gRootFd;
	pthread_mutex_unlock(&gRootLock);
	if (fd >= 0)
		return fd;
	char full[PATH_MAX];
	rootPath(the, full);
	if (hostMakeDirectories(full) < 0)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: cannot create the data directory %s: %s; check --data DIR", full, errorText(errno));
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: cannot open the data directory %s: %s; check --data DIR", full, errorText(errno));
	pthread_mutex_lock(&gRootLock);
	if (gRootFd < 0)
		gRootFd = fd;
	else {
		close(fd);   /* another machine's thread opened it meanwhile */
		fd = gRootFd;
	}
	pthread_mutex_unlock(&gRootLock);
	return fd;
}

/* Opens the directory holding the last component of below ("a/b/c": a/b),
 * walking from the root fd one component at a time with O_NOFOLLOW, so a
 * symbolic link on the way fails (ELOOP) instead of leading out of the root.
 * Copies the last component into name (FILES_PATH_MAX). Returns a descriptor
 * the caller closes, or -1 with errno set and nothing left open. */
static int walkParent(int root, const char *below, char *name)
{
	/* Only ever used by the *at() calls: a dup (sharing its position) is enough. */
	int fd = fcntl(root, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	const char *part = below;
	for (;;) {
		const char *slash = strchr(part, '/');
		if (!slash)
			break;
		size_t size = (size_t)(slash - part);
		memcpy(name, part, size);
		name[size] = 0;
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int error = errno;
		struct stat status;
		/* A link on the way is a link, whatever O_DIRECTORY says first. */
		if (next < 0 && error == ENOTDIR && fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(status.st_mode))
			error = ELOOP;
		close(fd);
		if (next < 0) {
			errno = error;
			return -1;
		}
		fd = next;
		part = slash + 1;
	}
	snprintf(name, FILES_PATH_MAX, "%s", part);
	return fd;
}

/* walkParent, throwing "files: <why>: <below>" on failure. */
static int openParent(xsMachine *the, const char *below, char *name)
{
	int fd = walkParent(rootDescriptor(the), below, name);
	if (fd < 0)
		throwErrno(the, errno, below);
	return fd;
}

/* Opens the directory below itself ("" is the root), as openParent walks. */
static int openBelowDirectory(xsMachine *the, const char *below)
{
	if (!below[0]) {
		/* Opened anew, not dup'ed: a listing's position must not be shared. */
		int fd = openat(rootDescriptor(the), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			throwErrno(the, errno, ".");
		return fd;
	}
	char name[FILES_PATH_MAX];
	int parent = openParent(the, below, name);
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int error = errno;
	struct stat status;
	if (fd < 0 && error == ENOTDIR && fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(status.st_mode))
		error = ELOOP;
	close(parent);
	if (fd < 0)
		throwErrno(the, error, below);
	return fd;
}

static void requireArgument(xsMachine *the, int index, const char *what)
{
	if (hostArgc <= index)
		hostThrowMessage(the, XS_TYPE_ERROR, "files: %s required", what);
}

/* The receiving directory's first argument, a path, resolved below the root. */
static void directoryPath(xsMachine *the, char *below)
{
	DirectoryRecord *directory = hostThis(the, &gDirectoryHooks, "files");
	requireArgument(the, 0, "path");
	char path[FILES_PATH_MAX];
	pathArgument(the, &xsArg(0), path);
	resolvePath(the, directory, path, below);
}

static long long byteArgument(xsMachine *the, int index, const char *what)
{
	requireArgument(the, index, what);
	int type = xsTypeOf(xsArg(index));
	if (type != xsIntegerType && type != xsNumberType)
		hostThrowMessage(the, XS_TYPE_ERROR, "files: %s must be a number", what);
	double value = xsToNumber(xsArg(index));
	if (!hostIsWhole(value, 0, FILES_OFFSET_MAX))
		hostThrowMessage(the, XS_RANGE_ERROR, "files: invalid %s", what);
	return (long long)value;
}

static void optionsArgument(xsMachine *the, const char *method)
{
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		hostThrowMessage(the, XS_TYPE_ERROR, "files: %s needs an options object {path}", method);
}

static void makeStatus(xsMachine *the, const struct stat *status)
{
	xsResult = xsNewHostInstance(gStatusPrototype);
	xsVars(1);
	xsVar(0) = xsNumber((double)status->st_size);
	xsSet(xsResult, hostID("size"), xsVar(0));
	xsVar(0) = xsInteger((int)status->st_mode);
	xsSet(xsResult, hostID("mode"), xsVar(0));
}

/* ---- File ---------------------------------------------------------------- */

static void xs_file_constructor(xsMachine *the)
{
	hostThrowMessage(the, XS_TYPE_ERROR, "files: use files.openFile({path, mode})");
}

static void xs_file_read(xsMachine *the)
{
	FileRecord *file = hostThis(the, &gFileHooks, "files");
	requireArgument(the, 0, "byte count or buffer");
	long long position = byteArgument(the, 1, "position");
	if (!file->readable)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: not open for reading (mode \"w\"): %s", file->path);
	int type = xsTypeOf(xsArg(0));
	if (type == xsIntegerType || type == xsNumberType) {
		long long count = byteArgument(the, 0, "byte count");
		size_t length = (size_t)count;
		/* A small read (a record of the session store) is read into a buffer
		 * of the size asked, cut below when the file ends sooner; a larger one
		 * is sized from the file first, so asking for much more than is there
		 * allocates only what is. Saves an fstat per small read. */
		if (count > FILES_READ_UNSIZED_BYTES) {
			struct stat status;
			if (fstat(file->fd, &status) < 0)
				throwErrno(the, errno, file->path);
			long long available = (long long)status.st_size > position ? (long long)status.st_size - position : 0;
			length = (size_t)(count < available ? count : available);
		}
		xsResult = xsArrayBuffer(NULL, (txInteger)length);
		ssize_t got = readAll(file->fd, xsToArrayBuffer(xsResult), length, position);
		if (got < 0)
			throwErrno(the, errno, file->path);
		if ((size_t)got < length) {
			/* The file ends sooner (or shrank under us): return what is there. */
			xsArg(0) = xsResult;
			xsResult = xsArrayBuffer(NULL, (txInteger)got);
			memcpy(xsToArrayBuffer(xsResult), xsToArrayBuffer(xsArg(0)), (size_t)got);
		}
		return;
	}
	size_t length;
	void *bytes = hostBytes(the, &xsArg(0), &length, "files");
	ssize_t got = readAll(file->fd, bytes, length, position);
	if (got < 0)
		throwErrno(the, errno, file->path);
	xsResult = xsInteger((txInteger)got);
}

static void xs_file_write(xsMachine *the)
{
	FileRecord *file = hostThis(the, &gFileHooks, "files");
	requireArgument(the, 0, "buffer");
	long long position = byteArgument(the, 1, "position");
	if (!file->writable)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: read-only (opened with mode \"r\"): %s", file->path);
	size_t length;
	const void *bytes = hostBytes(the, &xsArg(0), &length, "files");
	if ((double)position + (double)length > FILES_OFFSET_MAX)
		hostThrowMessage(the, XS_RANGE_ERROR, "files: write would pass %.0f bytes: %s", FILES_OFFSET_MAX, file->path);
	if (littlefsChange(file, position, position + (long long)length) < 0)
		throwErrno(the, errno, file->path);
	if (hostStorageOperation()) {
		hostWriteAll(file->fd, bytes, hostCrashRandom((uint32_t)length), position);
		hostPowerLoss();
	}
	if (hostWriteAll(file->fd, bytes, length, position) < 0)
		throwErrno(the, errno, file->path);
}

static void xs_file_status(xsMachine *the)
{
	FileRecord *file = hostThis(the, &gFileHooks, "files");
	struct stat status;
	if (fstat(file->fd, &status) < 0)
		throwErrno(the, errno, file->path);
	makeStatus(the, &status);
}

static void xs_file_setSize(xsMachine *the)
{
	FileRecord *file = hostThis(the, &gFileHooks, "files");
	long long size = byteArgument(the, 0, "size");
	if (!file->writable)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: read-only (opened with mode \"r\"): %s", file->path);
	if (littlefsChange(file, size, FILES_OFFSET_MAX) < 0)
		throwErrno(the, errno, file->path);
	if (hostStorageOperation())
		hostPowerLoss();
	if (ftruncate(file->fd, (off_t)size) < 0)
		throwErrno(the, errno, file->path);
}

static void xs_file_flush(xsMachine *the)
{
	FileRecord *file = hostThis(the, &gFileHooks, "files");
	if (hostStorageOperation())
		hostPowerLoss();
	if (fsync(file->fd) < 0)
		throwErrno(the, errno, file->path);
	littlefsCommit(file);
}

static void xs_file_close(xsMachine *the)
{
	FileRecord *file = hostThisOrNull(the, &gFileHooks, "files");
	if (!file)
		return;
	xsSetHostData(xsThis, NULL);
	fileDestructor(file);
}

/* ---- Directory ------------------------------------------------------------ */

static void xs_directory_constructor(xsMachine *the)
{
	hostThrowMessage(the, XS_TYPE_ERROR, "files: use files.openDirectory({path})");
}

static void xs_directory_openFile(xsMachine *the)
{
	hostThis(the, &gDirectoryHooks, "files");
	optionsArgument(the, "openFile");
	char mode[4] = "r";
	xsVars(1);
	if (hostHasOption(the, &xsArg(0), "mode")) {
		xsVar(0) = xsGet(xsArg(0), hostID("mode"));
		if (xsTypeOf(xsVar(0)) != xsStringType)
			hostThrowMessage(the, XS_TYPE_ERROR, "files: mode must be a string");
		const char *text = xsToString(xsVar(0));
		if (strcmp(text, "r") && strcmp(text, "r+") && strcmp(text, "w") && strcmp(text, "w+"))
			hostThrowMessage(the, XS_RANGE_ERROR, "files: invalid mode \"%s\" (use \"r\", \"r+\", \"w\" or \"w+\")", text);
		strcpy(mode, text);
	}
	xsVar(0) = xsGet(xsArg(0), hostID("path"));
	char path[FILES_PATH_MAX], below[FILES_PATH_MAX], name[FILES_PATH_MAX];
	pathArgument(the, &xsVar(0), path);
	/* Fetched after the options: a getter among them may have closed it. */
	DirectoryRecord *directory = hostThis(the, &gDirectoryHooks, "files");
	resolvePath(the, directory, path, below);

	int flags = !strcmp(mode, "r") ? O_RDONLY
		: !strcmp(mode, "r+") ? O_RDWR
		: !strcmp(mode, "w") ? O_WRONLY | O_CREAT | O_TRUNC
		: O_RDWR | O_CREAT | O_TRUNC;
	xsResult = xsNewHostInstance(gFilePrototype);
	int parent = openParent(the, below, name);
	struct stat status;
	if (fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(status.st_mode)) {
		close(parent);
		if (S_ISLNK(status.st_mode))
			throwErrno(the, ELOOP, below);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: not a file: %s", below);
	}
	FileRecord *file = calloc(1, sizeof(FileRecord));
	if (!file) {
		close(parent);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: out of memory");
	}
	int writable = mode[0] == 'w' || mode[1] == '+';
	/* lfs model: a truncation is committed by the first flush, so the old bytes are kept until then. */
	long long committedSize = 0;
	Undo *undo = NULL;
	if (gLittlefsModel && writable) {
		int existing = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (existing >= 0) {
			struct stat before;
			if (fstat(existing, &before) == 0)
				committedSize = (long long)before.st_size;
			if (mode[0] == 'w' && committedSize > 0) {
				FileRecord reader = { .fd = existing, .committedSize = committedSize };
				if (saveUndo(&reader, 0, committedSize) < 0)
					committedSize = 0;
				undo = reader.undo;
			}
			close(existing);
		}
	}
	file->fd = openat(parent, name, flags | O_NOFOLLOW | O_CLOEXEC, 0666);
	int openError = errno;
	close(parent);
	if (file->fd < 0) {
		int error = openError;
		free(undo);
		free(file);
		throwErrno(the, error, below);
	}
	file->readable = mode[0] == 'r' || mode[1] == '+';
	file->writable = writable;
	strcpy(file->path, below);
	if (gLittlefsModel && writable)
		littlefsTrack(file, committedSize, undo);
	xsSetHostData(xsResult, file);
}

static void xs_directory_openDirectory(xsMachine *the)
{
	hostThis(the, &gDirectoryHooks, "files");
	optionsArgument(the, "openDirectory");
	xsVars(1);
	xsVar(0) = xsGet(xsArg(0), hostID("path"));
	char path[FILES_PATH_MAX], below[FILES_PATH_MAX];
	pathArgument(the, &xsVar(0), path);
	/* Fetched after the options: a getter among them may have closed it. */
	DirectoryRecord *directory = hostThis(the, &gDirectoryHooks, "files");
	resolvePath(the, directory, path, below);
	/* Opened (without following links) to check it; each later call walks again from the root. */
	close(openBelowDirectory(the, below));
	xsResult = xsNewHostInstance(gDirectoryPrototype);
	DirectoryRecord *opened = calloc(1, sizeof(DirectoryRecord));
	if (!opened)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: out of memory");
	strcpy(opened->path, below);
	xsSetHostData(xsResult, opened);
}

static void xs_directory_delete(xsMachine *the)
{
	char below[FILES_PATH_MAX], name[FILES_PATH_MAX];
	directoryPath(the, below);
	int parent = openParent(the, below, name);
	struct stat status;
	if (fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW) < 0) {
		int error = errno;
		close(parent);
		if (error != ENOENT)
			throwErrno(the, error, below);
		xsResult = xsFalse;
		return;
	}
	/* A link is removed itself, never what it points to. */
	int result = unlinkat(parent, name, S_ISDIR(status.st_mode) ? AT_REMOVEDIR : 0);
	int error = errno;
	close(parent);
	if (result < 0)
		throwErrno(the, error, below);
	xsResult = xsTrue;
}

/* move's optional third argument: the directory that `to` is relative to. */
static DirectoryRecord *directoryArgument(xsMachine *the, xsSlot *slot)
{
	void *directory;
	if (!hostDataOf(the, slot, &gDirectoryHooks, &directory))
		hostThrowMessage(the, XS_TYPE_ERROR, "files: move target must be a directory");
	if (!directory)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: move target directory is closed");
	return directory;
}

static void xs_directory_move(xsMachine *the)
{
	char fromBelow[FILES_PATH_MAX], fromName[FILES_PATH_MAX], toPath[FILES_PATH_MAX], toBelow[FILES_PATH_MAX], toName[FILES_PATH_MAX];
	directoryPath(the, fromBelow);
	requireArgument(the, 1, "target path");
	DirectoryRecord *target = hostArgc > 2 && xsTypeOf(xsArg(2)) != xsUndefinedType
		? directoryArgument(the, &xsArg(2)) : hostThis(the, &gDirectoryHooks, "files");
	pathArgument(the, &xsArg(1), toPath);
	resolvePath(the, target, toPath, toBelow);
	int fromParent = openParent(the, fromBelow, fromName);
	int toParent = walkParent(rootDescriptor(the), toBelow, toName);
	if (toParent < 0) {
		int error = errno;
		close(fromParent);
		throwErrno(the, error, toBelow);
	}
	if (hostStorageOperation())
		hostPowerLoss();
	/* renameat follows neither name: a link is moved itself. */
	if (renameat(fromParent, fromName, toParent, toName) < 0) {
		int error = errno;
		close(fromParent);
		close(toParent);
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: %s: %s -> %s", errorText(error), fromBelow, toBelow);
	}
	/* Durable: the entries live in the parent directories. */
	int synced = fsync(toParent) == 0 && fsync(fromParent) == 0;
	int error = errno;
	close(fromParent);
	close(toParent);
	if (!synced)
		throwErrno(the, error, toBelow);
}

/* The entry's own status: a link's is a link's (isSymbolicLink), not its target's. */
static void xs_directory_status(xsMachine *the)
{
	char below[FILES_PATH_MAX], name[FILES_PATH_MAX];
	directoryPath(the, below);
	int parent = openParent(the, below, name);
	struct stat status;
	int result = fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW);
	int error = errno;
	close(parent);
	if (result < 0)
		throwErrno(the, error, below);
	makeStatus(the, &status);
}

static void xs_directory_createDirectory(xsMachine *the)
{
	char below[FILES_PATH_MAX], name[FILES_PATH_MAX];
	directoryPath(the, below);
	int parent = openParent(the, below, name);
	int result = mkdirat(parent, name, 0777);
	int error = errno;
	close(parent);
	if (result < 0) {
		if (error != EEXIST)
			throwErrno(the, error, below);
		xsResult = xsFalse;
		return;
	}
	xsResult = xsTrue;
}

static int compareNames(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void freeNames(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
}

/* A sorted snapshot of the names in a directory, as an iterator. */
static void xs_directory_scan(xsMachine *the)
{
	DirectoryRecord *directory = hostThis(the, &gDirectoryHooks, "files");
	char below[FILES_PATH_MAX];
	if (hostArgc > 0 && xsTypeOf(xsArg(0)) != xsUndefinedType) {
		char path[FILES_PATH_MAX];
		pathArgument(the, &xsArg(0), path);
		resolvePath(the, directory, path, below);
	}
	else
		snprintf(below, sizeof(below), "%s", directory->path);
	int fd = openBelowDirectory(the, below);
	DIR *listing = fdopendir(fd);
	if (!listing) {
		int error = errno;
		close(fd);
		throwErrno(the, error, below[0] ? below : ".");
	}
	char **names = NULL;
	size_t count = 0, capacity = 0;
	int error = 0;
	struct dirent *entry;
	while ((entry = readdir(listing))) {
		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		if (count == FILES_SCAN_MAX_ENTRIES) {
			error = E2BIG;
			break;
		}
		if (count == capacity) {
			capacity = capacity ? capacity * 2 : 16;
			char **grown = realloc(names, capacity * sizeof(char *));
			if (!grown) {
				error = ENOMEM;
				break;
			}
			names = grown;
		}
		if (!(names[count] = strdup(entry->d_name))) {
			error = ENOMEM;
			break;
		}
		count++;
	}
	closedir(listing);
	if (error) {
		freeNames(names, count);
		if (error == E2BIG)
			hostThrowMessage(the, XS_RANGE_ERROR, "files: more than %d entries in %s; scan a smaller directory", FILES_SCAN_MAX_ENTRIES, below[0] ? below : ".");
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: out of memory scanning %s", below[0] ? below : ".");
	}
	if (count)
		qsort(names, count, sizeof(char *), compareNames);
	xsVars(2);
	xsTry {
		xsVar(0) = xsNewArray(0);
		for (size_t i = 0; i < count; i++) {
			xsVar(1) = xsString(names[i]);
			xsSetIndex(xsVar(0), (txIndex)i, xsVar(1));
		}
	}
	xsCatch {
		freeNames(names, count);
		xsThrow(xsException);
	}
	freeNames(names, count);
	xsResult = xsCall0(xsVar(0), mxID(_Symbol_iterator));
}

static void xs_directory_close(xsMachine *the)
{
	DirectoryRecord *directory = hostThisOrNull(the, &gDirectoryHooks, "files");
	if (!directory)
		return;
	if (directory->isRoot)
		hostThrowMessage(the, XS_TYPE_ERROR, "files: the root directory is shared by every module and cannot be closed");
	xsSetHostData(xsThis, NULL);
	directoryDestructor(directory);
}

/* ---- Status --------------------------------------------------------------- */

static int statusMode(xsMachine *the)
{
	if (!xsIsInstanceOf(xsThis, gStatusPrototype))
		hostThrowMessage(the, XS_TYPE_ERROR, "files: invalid receiver");
	return xsToInteger(xsGet(xsThis, hostID("mode")));
}

static void xs_status_isFile(xsMachine *the)
{
	xsResult = xsBoolean(S_ISREG(statusMode(the)));
}

static void xs_status_isDirectory(xsMachine *the)
{
	xsResult = xsBoolean(S_ISDIR(statusMode(the)));
}

static void xs_status_isSymbolicLink(xsMachine *the)
{
	xsResult = xsBoolean(S_ISLNK(statusMode(the)));
}

/* ---- the mount guard (host/storage) --------------------------------------- */

/* The board's hosts/esp32/storage_guard.c in the lin host's terms: <data>/files
 * is the storage, a directory is "ok", nothing there is "blank" (the firmware
 * makes it, as the SDK formats a blank partition), and anything else (a file, a
 * directory that cannot be opened) is a sentence saying why: util/io then gives
 * the firmware a root that refuses every call, and nothing there is changed
 * until storageErase (factory-reset confirm). */
static void xs_storage_check(xsMachine *the)
{
	char full[PATH_MAX];
	rootPath(the, full);
	struct stat status;
	char message[PATH_MAX + 160];
	if (stat(full, &status) < 0) {
		if (errno == ENOENT) {
			xsResult = xsString("blank");
			return;
		}
		snprintf(message, sizeof(message), "%s cannot be looked at (%s)", full, errorText(errno));
	}
	else if (!S_ISDIR(status.st_mode))
		snprintf(message, sizeof(message), "%s is not a directory (%lld bytes of something else)", full, (long long)status.st_size);
	else {
		int fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			xsResult = xsString("ok");
			return;
		}
		snprintf(message, sizeof(message), "%s cannot be opened (%s)", full, errorText(errno));
	}
	xsResult = xsString(message);
}

static int eraseEntry(const char *path, const struct stat *status, int type, struct FTW *walk)
{
	(void)status;
	(void)walk;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

/* Removes <data>/files, whatever it is, so that the next boot finds it blank. */
static void xs_storage_erase(xsMachine *the)
{
	char full[PATH_MAX];
	rootPath(the, full);
	pthread_mutex_lock(&gRootLock);
	if (gRootFd >= 0) {
		close(gRootFd);
		gRootFd = -1;
	}
	pthread_mutex_unlock(&gRootLock);
	if (nftw(full, eraseEntry, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "storage: erasing %s failed: %s", full, errorText(errno));
}

/* ---- installer ------------------------------------------------------------ */

static const HostMember gFileMembers[] = {
	{ "read", xs_file_read, 2, 0 },
	{ "write", xs_file_write, 2, 0 },
	{ "status", xs_file_status, 0, 0 },
	{ "setSize", xs_file_setSize, 1, 0 },
	{ "flush", xs_file_flush, 0, 0 },
	{ "close", xs_file_close, 0, 0 },
	{ NULL },
};

static const HostMember gDirectoryMembers[] = {
	{ "openFile", xs_directory_openFile, 1, 0 },
	{ "openDirectory", xs_directory_openDirectory, 1, 0 },
	{ "delete", xs_directory_delete, 1, 0 },
	{ "move", xs_directory_move, 2, 0 },
	{ "status", xs_directory_status, 1, 0 },
	{ "createDirectory", xs_directory_createDirectory, 1, 0 },
	{ "scan", xs_directory_scan, 0, 0 },
	{ "close", xs_directory_close, 0, 0 },
	{ NULL },
};

/* native.files is the root directory; native.File and native.Directory are
 * the classes (their constructors refuse: files are opened, not made). */
void hostInstallFiles(xsMachine *the, xsSlot *native)
{
	configureFaults();
	hostDefineClass(the, native, "File", xs_file_constructor, 1, gFileMembers, &gFileHooks);
	hostDefineClass(the, native, "Directory", xs_directory_constructor, 1, gDirectoryMembers, &gDirectoryHooks);
	xsVars(2);
	xsVar(0) = xsGet(*native, hostID("File"));
	gFilePrototype = xsGet(xsVar(0), hostID("prototype"));
	xsRemember(gFilePrototype);
	xsVar(0) = xsGet(*native, hostID("Directory"));
	gDirectoryPrototype = xsGet(xsVar(0), hostID("prototype"));
	xsRemember(gDirectoryPrototype);
	xsVar(0) = xsGet(gDirectoryPrototype, hostID("scan"));
	xsDefine(gDirectoryPrototype, mxID(_Symbol_iterator), xsVar(0), xsDontEnum);

	gStatusPrototype = xsNewObject();
	xsRemember(gStatusPrototype);
	hostDefineFunction(the, &gStatusPrototype, "isFile", xs_status_isFile, 0);
	hostDefineFunction(the, &gStatusPrototype, "isDirectory", xs_status_isDirectory, 0);
	hostDefineFunction(the, &gStatusPrototype, "isSymbolicLink", xs_status_isSymbolicLink, 0);

	DirectoryRecord *root = calloc(1, sizeof(DirectoryRecord));
	if (!root)
		hostThrowMessage(the, XS_UNKNOWN_ERROR, "files: out of memory");
	root->isRoot = 1;
	xsVar(1) = xsNewHostInstance(gDirectoryPrototype);
	xsSetHostData(xsVar(1), root);
	xsDefine(*native, hostID("files"), xsVar(1), xsDontEnum);
	hostDefineFunction(the, native, "storageCheck", xs_storage_check, 0);
	hostDefineFunction(the, native, "storageErase", xs_storage_erase, 0);
}
