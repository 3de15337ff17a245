/*
 * main.c — the xsclaw lin host's boot: reads the command line (options.c) and
 * the module map (modules.c), installs the native modules into every machine
 * (one hostInstall* per native module file, gInstallers), creates the main XS
 * machine, imports `main` and runs its loop (loop.c) until exit; a reboot
 * starts a new machine. The other files are the host's parts: machine.c (XS
 * machines and their hooks), loop.c (the event loop), natives.c (the helpers
 * native modules use), system.c, and one file per native module.
 *
 * Exit codes: the program's own exit(code); 0 when nothing is left to wait
 * for; 1 on an uncaught exception or unhandled rejection; 2 on out of memory
 * (or stack/keys) with a message on stderr; 64 on bad command-line use. These
 * are the main machine's: a worker machine that fails ends alone (machine.c).
 */
#include "xsAll.h"
#include "host.h"
#include "sandbox.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <string.h>

/* --data DIR: a directory, made (with its parents) when missing. */
static void checkDataDirectory(void)
{
	char message[PATH_MAX + 128];
	if (hostMakeDirectories(hostDataDir()) < 0) {
		snprintf(message, sizeof(message), "--data %s cannot be used: %s; give a directory (it is created when missing)", hostDataDir(), strerror(errno));
		hostUsage(message);
	}
}

static void onMainFulfilled(xsMachine *the)
{
	(void)the;
	hostReleaseFreeMemory();
}

static void onMainRejected(xsMachine *the)
{
	xsException = xsArg(0);
	hostPrintException(the, "main failed");
	exit(1);
}

typedef void (*HostInstaller)(xsMachine *the, xsSlot *native);
static const HostInstaller gInstallers[] = {
	hostInstallSystem, hostInstallTimer, hostInstallTCP, hostInstallListener, hostInstallUDP, hostInstallTLS, hostInstallDNS,
	hostInstallFiles, hostInstallKeyValue, hostInstallSerial, hostInstallDigital, hostInstallBuffers,
	hostInstallWorker,
	hostInstallSandbox, hostInstallBytes, hostInstallRandom,
};

/* Each installer runs in a host function of its own, so it may use xsVars. */
static void xs_install(xsMachine *the)
{
	gInstallers[xsToInteger(xsArg(1))](the, &xsArg(0));
}

/* Every machine's natives: __xsclaw and trace on the global object (hostInstallNative). */
static void installNative(xsMachine *the)
{
	xsVars(3);
	xsVar(0) = xsNewObject();
	xsVar(1) = xsNewHostFunction(xs_install, 2);
	for (size_t i = 0; i < sizeof(gInstallers) / sizeof(gInstallers[0]); i++)
		xsCallFunction2(xsVar(1), xsUndefined, xsVar(0), xsInteger((int)i));
	xsDefine(xsGlobal, xsID("__xsclaw"), xsVar(0), xsDontEnum);
	xsVar(2) = xsNewHostFunction(hostTrace, 1);
	xsDefine(xsGlobal, xsID("trace"), xsVar(2), xsDontEnum);
}

int main(int argc, char **argv)
{
	const char *volatile mainSpecifier = NULL;
	volatile int sizes = 0;
	/* One malloc arena for every thread, as the device has one heap: with
	 * glibc's default, each machine's thread got an arena of its own, and the
	 * agent machine's module parsing grew a second heap (~1.1 MiB resident)
	 * instead of reusing the pages the main machine's parsing had freed. The
	 * machines allocate little with malloc once started (their XS heaps are
	 * allocated at creation), so the shared lock costs nothing measurable. */
	mallopt(M_ARENA_MAX, 1);
	sizes = hostReadOptions(argc, argv);
	mainSpecifier = hostOption("main");
	if (!sizes)
		checkDataDirectory();
	xsCreation *creation = hostLoadModuleMap(hostOption("modules"));
	/* --chunk-bytes N: a fixed chunk heap of N bytes instead of the manifest's
	 * (the bench finds the smallest one a request fits in by bisection). */
	if (hostOption("chunk-bytes")) {
		char *end = NULL;
		long bytes = strtol(hostOption("chunk-bytes"), &end, 10);
		if (!end || *end || bytes < 65536 || bytes > 1073741824)
			hostUsage("--chunk-bytes must be a whole number of bytes from 65536 to 1073741824");
		creation->initialChunkSize = (txSize)bytes;
		creation->incrementalChunkSize = 0;
	}
	if (!mainSpecifier)
		mainSpecifier = "main";
	setvbuf(stdout, NULL, _IONBF, 0);
	hostKeepToOneCpu();
	hostSetNativeInstaller(installNative);
	hostSetAbortHook(sandboxAbort);

	hostWorkerStartKillHook();
	int exitCode = 0;
	do {
		hostClearReboot();
		HostLoop *loop = hostLoopBegin(creation, NULL);
		xsMachine *machine = loop ? hostCreateMachine(creation, "xsclaw") : NULL;
		if (!machine) {
			fprintf(stderr, "xsclaw: cannot create the XS machine (creation sizes too large?)\n");
			return 2;
		}
		xsBeginHost(machine);
		{
			xsTry {
				if (sizes)
					hostPrintSizes(the);
				else {
					hostInstallNative(the);
					hostImport(the, mainSpecifier, onMainFulfilled, onMainRejected);
				}
			}
			xsCatch {
				hostPrintException(the, "boot failed");
				exit(1);
			}
		}
		xsEndHost(machine);
		int exiting = sizes || hostExitRequested(&exitCode);
		if (!exiting)
			hostLoopRun(loop);
		exiting = sizes || hostExitRequested(&exitCode);
		if (!exiting && !hostRebootRequested()) {
			xsBeginHost(machine);
			fxCheckUnhandledRejections(the, 1);
			xsEndHost(machine);
		}
		/* --heap-report 1: peak XS heap of the run, for tools/size.mjs and the bench. */
		if (hostOption("heap-report") && !hostRebootRequested())
			fprintf(stderr, "xsclaw: heap peak chunk %d slot %d\n", (int)machine->peakChunksSize,
				(int)(machine->peakHeapCount * sizeof(txSlot)));
		hostDeleteMachine(machine);
		hostLoopEnd(loop);
	} while (hostRebootRequested() && !hostExitRequested(&exitCode));
	/* The kept code outlives every machine; a worker that outlived its creator
	 * still runs it, and then the process exit takes it. */
	if (!hostLiveMachines())
		hostFreeModules();
	hostFreeModuleMap();
	return exitCode;
}
