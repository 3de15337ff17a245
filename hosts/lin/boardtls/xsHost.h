/* Shim of the Moddable SDK's xsHost.h for tls_esp32.c on the lin host (README.md). */
#ifndef XSCLAW_BOARDTLS_XSHOST_H
#define XSCLAW_BOARDTLS_XSHOST_H
#include "xsmc.h"
#endif
