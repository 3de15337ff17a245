/* digital.c — placeholder until the native module lands. */
#include "xsAll.h"
#include "host.h"

void hostInstallDigital(xsMachine *the, xsSlot *native)
{
	(void)the;
	(void)native;
}
