/* Shim of the Moddable SDK's modInstrumentation.h as a build without
 * instrumentation has it: the adjustments compile to nothing. */
#ifndef XSCLAW_BOARDTLS_MODINSTRUMENTATION_H
#define XSCLAW_BOARDTLS_MODINSTRUMENTATION_H
#define modInstrumentationAdjust(what, value)
#endif
