/* buffers.c — placeholder until the native module lands. */
#include "xsAll.h"
#include "host.h"

void hostInstallBuffers(xsMachine *the, xsSlot *native)
{
	(void)the;
	(void)native;
}
