/* tcp.c — placeholder until the native module lands. */
#include "xsAll.h"
#include "host.h"
int hostOpenSockets = 0;
void hostInstallTCP(xsMachine *the, xsSlot *native)
{
	(void)the;
	(void)native;
}
