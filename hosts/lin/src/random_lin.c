/*
 * random_lin.c — installs "host/random" (hosts/common/random/random.c, shared
 * with the ESP32-S3) on the lin host: __xsclaw.Random, read by
 * hosts/lin/modules/random.ts. The source is getrandom(2): the kernel's
 * CSPRNG, which blocks only until it is seeded at boot, keeps no state here
 * and is safe from every thread.
 */
#include <errno.h>
#include <sys/random.h>
#include "host.h"
#include "random.h"

int randomSource(uint8_t *data, size_t length)
{
	size_t done = 0;
	/* getrandom returns at most 33554431 bytes a call and may return fewer
	 * when a signal arrives; length is at most RANDOM_FILL_MAX_BYTES. */
	while (done < length) {
		ssize_t got = getrandom(data + done, length - done, 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)got;
	}
	return 0;
}

void hostInstallRandom(xsMachine *the, xsSlot *native)
{
	xsVars(1);
	xsVar(0) = xsNewObject();
	hostDefineFunction(the, &xsVar(0), "fill", xs_random_fill, 1);
	xsDefine(*native, xsID("Random"), xsVar(0), xsDontEnum);
}
