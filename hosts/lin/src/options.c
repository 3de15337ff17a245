/*
 * options.c — the lin host's command line: the --name value pairs, checked at
 * start (a command-line problem is found at start, never at first use: one
 * line on stderr, exit 64), read later by any native module (hostOption,
 * hostDataDir), and --cpus (which CPUs the host's threads run on).
 */
#define _GNU_SOURCE /* sched_getcpu, CPU_SET */
#include "xsAll.h"
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOST_MAX_OPTIONS 32

static struct { const char *name; const char *value; } gOptions[HOST_MAX_OPTIONS];
static int gOptionCount = 0;
static const char *gDataDir = "data";

const char *hostOption(const char *name)
{
	for (int i = 0; i < gOptionCount; i++)
		if (!strcmp(gOptions[i].name, name))
			return gOptions[i].value;
	return NULL;
}

const char *hostDataDir(void)
{
	return gDataDir;
}

/* One line on stderr, exit 64 (EX_USAGE). */
void hostUsage(const char *message)
{
	fprintf(stderr, "xsclaw: %s\n", message);
	exit(64);
}

/* The options the host itself reads, and those the firmware reads (agent/spawn:
 * the agent machine's heap made small, its heartbeat's deadline short, for a
 * test; --http). Any other option of the
 * firmware (no --main) is a typo; a program given with --main (tests, tools)
 * may read any (host/platform's option()). */
static const char *const kHostOptions[] = {
	"modules", "main", "data", "ca", "cpus", "heap-report", "chunk-bytes", "crash-after", "crash-seed", "crash-model", "count-writes", "psram-bytes", "internal-bytes",
	"agent-chunk", "agent-slots", "http", "agent-deadline-ms", "native-stack-report", NULL,
};

static void checkOptions(void)
{
	char message[256];
	int anyOption = hostOption("main") != NULL;
	for (int i = 0; i < gOptionCount; i++) {
		const char *name = gOptions[i].name;
		for (int j = 0; j < i; j++) {
			if (!strcmp(gOptions[j].name, name)) {
				snprintf(message, sizeof(message), "--%.64s is given twice: give it once", name);
				hostUsage(message);
			}
		}
		int known = 0;
		for (const char *const *host = kHostOptions; *host; host++)
			known |= !strcmp(*host, name);
		if (!known && !anyOption) {
			snprintf(message, sizeof(message), "unknown option --%.64s: the firmware takes --data DIR, --ca FILE and --http PORT", name);
			hostUsage(message);
		}
	}
}



/* --cpus one (the default) | any. With one, every thread of the process runs on
 * the CPU it started on. The two machines take turns (the agent core serves one
 * request at a time and the main machine waits on it), so a second CPU adds no
 * throughput, while each hand-off to a thread asleep on another CPU wakes that
 * CPU from idle: an interprocessor interrupt and cold caches. On the 2-vCPU VM
 * the peer bench runs on, that cost about 0.5 ms of CPU a turn (hosts/lin/
 * NOTES.md, "One CPU"). Set before any thread starts: threads inherit it. If
 * the kernel refuses (a cpuset that moves), the host runs on any CPU. */
void hostKeepToOneCpu(void)
{
	const char *cpus = hostOption("cpus");
	if (cpus && strcmp(cpus, "one") && strcmp(cpus, "any"))
		hostUsage("--cpus must be one (the default: every thread on the CPU the host started on) or any");
	if (cpus && !strcmp(cpus, "any"))
		return;
	int cpu = sched_getcpu();
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* --http PORT: the web console's port on 127.0.0.1 (0: one the system picks). */
static void checkHttpPort(void)
{
	const char *port = hostOption("http");
	if (!port)
		return;
	size_t length = strlen(port);
	int digits = length >= 1 && length <= 5;
	for (size_t i = 0; digits && i < length; i++)
		digits = port[i] >= '0' && port[i] <= '9';
	if (!digits || atoi(port) > 65535)
		hostUsage("--http must be a port number, 0 to 65535 (0: one the system picks; the console prints it)");
}

/* --ca FILE: a readable regular file (tls.c parses it at the first connection). */
static void checkCaFile(void)
{
	const char *path = hostOption("ca");
	if (!path)
		return;
	char message[PATH_MAX + 128];
	struct stat status;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &status) < 0 || !S_ISREG(status.st_mode)) {
		int error = fd < 0 ? errno : EISDIR;
		if (fd >= 0)
			close(fd);
		snprintf(message, sizeof(message), "--ca %s cannot be read: %s; give a CA certificate file (PEM or DER)", path, strerror(error));
		hostUsage(message);
	}
	close(fd);
}

int hostReadOptions(int argc, char **argv)
{
	int sizes = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--sizes")) {
			sizes = 1;
			continue;
		}
		if (strncmp(arg, "--", 2) || i + 1 >= argc)
			hostUsage("options are --name value pairs (" HOST_USAGE ")");
		if (gOptionCount == HOST_MAX_OPTIONS)
			hostUsage("too many options");
		gOptions[gOptionCount].name = arg + 2;
		gOptions[gOptionCount].value = argv[++i];
		gOptionCount++;
	}
	checkOptions();
	if (!hostOption("modules"))
		hostUsage("--modules is required (" HOST_USAGE ")");
	if (hostOption("data"))
		gDataDir = hostOption("data");
	/* The firmware's --ca is checked now; a program given with --main (the TLS
	 * tests) may want tls.c's own error at the first connection. */
	if (!hostOption("main"))
		checkCaFile();
	checkHttpPort();
	return sizes;
}
