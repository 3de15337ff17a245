/* tls.c — placeholder until the native module lands. */
#include "xsAll.h"
#include "host.h"

void hostInstallTLS(xsMachine *the, xsSlot *native)
{
	(void)the;
	(void)native;
}
