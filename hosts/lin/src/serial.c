/* serial.c — placeholder until the native module lands. */
#include "xsAll.h"
#include "host.h"

void hostInstallSerial(xsMachine *the, xsSlot *native)
{
	(void)the;
	(void)native;
}
