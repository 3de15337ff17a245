/*
 * modules.c — the lin host's module map and loader. The map (written by
 * tools/build.mjs from manifest.json) is a text file: a first line "@creation"
 * with the manifest's creation sizes, then one "specifier<TAB>path" line per
 * module. Specifiers are resolved only through it, as mcconfig does on the
 * device; a specifier missing from the map is an import error naming it.
 * Loaded code is kept as the device keeps it in flash (keepCode).
 */
#include "xsAll.h"
#include "host.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

typedef struct { char *specifier; char *path; } MapEntry;
static MapEntry *gMap = NULL;
static int gMapCount = 0;
static xsCreation gCreation;

static const char *mapLookup(const char *specifier)
{
	for (int i = 0; i < gMapCount; i++)
		if (!strcmp(gMap[i].specifier, specifier))
			return gMap[i].path;
	return NULL;
}

static void loadMap(const char *path)
{
	FILE *file = fopen(path, "r");
	if (!file) {
		fprintf(stderr, "xsclaw: cannot open module map %s: %s (run npm run build)\n", path, strerror(errno));
		exit(64);
	}
	char line[PATH_MAX * 2];
	int capacity = 0;
	while (fgets(line, sizeof(line), file)) {
		size_t length = strlen(line);
		while (length && (line[length - 1] == '\n' || line[length - 1] == '\r'))
			line[--length] = 0;
		if (!length)
			continue;
		if (!strncmp(line, "@creation ", 10)) {
			int v[12];
			if (sscanf(line + 10, "%d %d %d %d %d %d %d %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
					&v[6], &v[7], &v[8], &v[9], &v[10], &v[11]) != 12)
				hostUsage("malformed @creation line in module map");
			gCreation.initialChunkSize = v[0];
			gCreation.incrementalChunkSize = v[1];
			gCreation.initialHeapCount = v[2];
			gCreation.incrementalHeapCount = v[3];
			gCreation.stackCount = v[4];
			gCreation.initialKeyCount = v[5];
			gCreation.incrementalKeyCount = v[6];
			gCreation.nameModulo = v[7];
			gCreation.symbolModulo = v[8];
			gCreation.parserBufferSize = v[9];
			gCreation.parserTableModulo = v[10];
			gCreation.staticSize = v[11];
			continue;
		}
		char *tab = strchr(line, '\t');
		if (!tab)
			hostUsage("malformed line in module map");
		*tab = 0;
		if (gMapCount == capacity) {
			capacity = capacity ? capacity * 2 : 64;
			gMap = realloc(gMap, capacity * sizeof(MapEntry));
			if (!gMap)
				hostUsage("out of memory reading module map");
		}
		gMap[gMapCount].specifier = strdup(line);
		gMap[gMapCount].path = strdup(tab + 1);
		if (!gMap[gMapCount].specifier || !gMap[gMapCount].path)
			hostUsage("out of memory reading module map");
		gMapCount++;
	}
	fclose(file);
	if (!gCreation.initialChunkSize)
		hostUsage("module map has no @creation line");
}

void hostFreeModuleMap(void)
{
	for (int i = 0; i < gMapCount; i++) {
		free(gMap[i].specifier);
		free(gMap[i].path);
	}
	free(gMap);
	gMap = NULL;
	gMapCount = 0;
}

const xsCreation *hostCreation(void)
{
	return &gCreation;
}

xsCreation *hostLoadModuleMap(const char *path)
{
	loadMap(path);
	return &gCreation;
}

/* "./x" and "../x" resolve against the importing module's specifier, as
 * folders: "net/http" importing "./sse" is "net/sse". */
txID fxFindModule(txMachine *the, txSlot *realm, txID moduleID, txSlot *slot)
{
	(void)realm;
	char name[PATH_MAX];
	char resolved[PATH_MAX];
	fxToStringBuffer(the, slot, name, sizeof(name));
	const char *rest = name;
	resolved[0] = 0;
	if (name[0] == '.' && (name[1] == '/' || (name[1] == '.' && name[2] == '/'))) {
		if (moduleID == XS_NO_ID)
			return XS_NO_ID;
		c_strncpy(resolved, fxGetKeyName(the, moduleID), sizeof(resolved) - 1);
		resolved[sizeof(resolved) - 1] = 0;
		char *slash = strrchr(resolved, '/');
		if (slash)
			slash[0] = 0;
		else
			resolved[0] = 0;
		while (1) {
			if (!strncmp(rest, "./", 2))
				rest += 2;
			else if (!strncmp(rest, "../", 3)) {
				rest += 3;
				slash = strrchr(resolved, '/');
				if (slash)
					slash[0] = 0;
				else if (resolved[0])
					resolved[0] = 0;
				else
					mxReferenceError("module not found: %s (above the root)", name);
			}
			else
				break;
		}
		if (resolved[0])
			strncat(resolved, "/", sizeof(resolved) - strlen(resolved) - 1);
	}
	strncat(resolved, rest, sizeof(resolved) - strlen(resolved) - 1);
	/* A compiled TypeScript import may carry an extension. */
	size_t length = strlen(resolved);
	if (length > 3 && !strcmp(resolved + length - 3, ".js"))
		resolved[length - 3] = 0;
	if (!mapLookup(resolved))
		mxReferenceError("module not found: %s (not in the manifest for lin)", resolved);
	return fxNewNameC(the, resolved);
}

static txScript *parseFile(txMachine *the, const char *path)
{
	FILE *file = fopen(path, "r");
	if (!file)
		return NULL;
	txScript *script = fxParseScript(the, file, (txGetter)fgetc, mxDebugFlag);
	fclose(file);
	return script;
}

/* Module code kept as the device keeps it in flash. On the ESP32, mcconfig
 * preloads modules: their functions' code and string literals stay in flash
 * and are used in place (XS_CODE_CODE_ARCHIVE_*, XS_CODE_STRING_ARCHIVE_*).
 * Parsed at run time, XS would copy every function's code into the chunk heap
 * when the function is created and every string literal each time it is
 * evaluated, so the lin heap figures would count work the device never does.
 * keepCode() turns those opcodes into their archive forms, remaps the symbols
 * (as fxRunScript would, so it does not free the code) and keeps the code
 * buffer, which never moves, for the rest of the process: like flash, it
 * outlives every machine. That matters for string literals: XS marshals an
 * archived string (XS_STRING_X_KIND) by pointer, so a string a worker posted
 * points into the worker's code, and its creator may hold it after the worker
 * ended (an ASan use-after-free once did, when a worker's code was freed with
 * it). So the buffer is shared instead: a module whose remapped code is byte
 * for byte one already kept (the same module loaded by a machine that assigned
 * the same symbol IDs: a restarted agent machine) uses the kept one, so
 * machines that come and go do not add code. Everything is freed when the
 * process ends with no machine left (freeKeptCode). */
extern void fxRemapIDs(txMachine *the, txByte *codeBuffer, txSize codeSize, txID *theIDs);   /* xsRun.c */

typedef struct KeptCode { txSize size; uint64_t hash; txByte *code; struct KeptCode *next; } KeptCode;
static KeptCode *gKeptCode = NULL;            /* every thread's, under gKeptCodeLock */
static pthread_mutex_t gKeptCodeLock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t codeHash(const txByte *code, txSize size)
{
	uint64_t hash = 1469598103934665603ULL;   /* FNV-1a */
	for (txSize i = 0; i < size; i++)
		hash = (hash ^ (uint8_t)code[i]) * 1099511628211ULL;
	return hash;
}

static void keepCode(txMachine *the, txScript *script)
{
	txByte *p = script->codeBuffer;
	txByte *end = script->codeBuffer + script->codeSize;
	while (p < end) {
		txU1 code = *(txU1 *)p;
		txS1 size = gxCodeSizes[code];
		if (code >= XS_CODE_CODE_1 && code <= XS_CODE_CODE_4)
			*(txU1 *)p = (txU1)(code + (XS_CODE_CODE_ARCHIVE_1 - XS_CODE_CODE_1));
		else if (code >= XS_CODE_STRING_1 && code <= XS_CODE_STRING_4)
			*(txU1 *)p = (txU1)(code + (XS_CODE_STRING_ARCHIVE_1 - XS_CODE_STRING_1));
		if (size > 0)
			p += size;
		else if (size == 0)
			p += 1 + sizeof(txID);
		else if (size == -1)
			p += 2 + *(txU1 *)(p + 1);
		else if (size == -2) {
			txU2 length;
			txByte *q = p + 1;
			mxDecode2(q, length);
			p = q + length;
		}
		else {
			txS4 length;
			txByte *q = p + 1;
			mxDecode4(q, length);
			p = q + length;
		}
	}
	if (script->symbolsBuffer) {
		txByte *q = script->symbolsBuffer;
		txID count, i;
		mxDecodeID(q, count);
		txID *ids = malloc(count * sizeof(txID));
		if (!ids)
			fxAbort(the, XS_NOT_ENOUGH_MEMORY_EXIT);
		ids[0] = XS_NO_ID;
		for (i = 1; i < count; i++) {
			ids[i] = fxNewNameC(the, (txString)q);
			q += strlen((char *)q) + 1;
		}
		fxRemapIDs(the, script->codeBuffer, script->codeSize, ids);
		free(ids);
		free(script->symbolsBuffer);
		script->symbolsBuffer = NULL;
	}
	uint64_t hash = codeHash(script->codeBuffer, script->codeSize);
	pthread_mutex_lock(&gKeptCodeLock);
	KeptCode *kept = gKeptCode;
	while (kept && !(kept->size == script->codeSize && kept->hash == hash && !memcmp(kept->code, script->codeBuffer, (size_t)kept->size)))
		kept = kept->next;
	if (kept) {
		free(script->codeBuffer);
		script->codeBuffer = kept->code;
	}
	else if ((kept = malloc(sizeof(KeptCode)))) {
		kept->size = script->codeSize;
		kept->hash = hash;
		kept->code = script->codeBuffer;
		kept->next = gKeptCode;
		gKeptCode = kept;
	}
	pthread_mutex_unlock(&gKeptCodeLock);
	if (!kept)
		fxAbort(the, XS_NOT_ENOUGH_MEMORY_EXIT);
}


/* Frees the kept code at the end of the process, once no machine is left to use it
 * (the caller checks: a worker that outlived its creator still runs it, and the
 * process exit takes it then), and the map. */
void hostFreeModules(void)
{
	pthread_mutex_lock(&gKeptCodeLock);
	while (gKeptCode) {
		KeptCode *kept = gKeptCode;
		gKeptCode = kept->next;
		free(kept->code);
		free(kept);
	}
	pthread_mutex_unlock(&gKeptCodeLock);
}

void fxLoadModule(txMachine *the, txSlot *module, txID moduleID)
{
	const char *specifier = fxGetKeyName(the, moduleID);
	const char *path = mapLookup(specifier);
	if (!path)
		mxReferenceError("module not found: %s", specifier);
	txScript *script = parseFile(the, path);
	if (!script)
		mxSyntaxError("module %s: cannot load %s", specifier, path);
	keepCode(the, script);
	/* fxRunScript keeps no pointer to the script itself: only to its (kept) code. */
	mxTry(the) {
		fxResolveModule(the, module, moduleID, script, C_NULL, C_NULL);
	}
	mxCatch(the) {
		free(script->hostsBuffer);
		free(script);
		fxJump(the);
	}
	free(script->hostsBuffer);
	free(script);
}

/* --sizes: parse every module and print its bytecode size (tools/size.mjs). */
void hostPrintSizes(xsMachine *the)
{
	long total = 0;
	for (int i = 0; i < gMapCount; i++) {
		txScript *script = parseFile(the, gMap[i].path);
		if (!script) {
			fprintf(stderr, "xsclaw: cannot compile %s\n", gMap[i].specifier);
			exit(1);
		}
		long size = (long)script->codeSize + (long)script->symbolsSize + (long)script->hostsSize;
		printf("%s\t%ld\n", gMap[i].specifier, size);
		total += size;
		fxDeleteScript(script);
	}
	printf("total\t%ld\n", total);
}
