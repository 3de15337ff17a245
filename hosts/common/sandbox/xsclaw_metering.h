/*
 * xsclaw_metering.h — what the board's XS is built with for host/sandbox:
 * the meter (mxMetering: a script's steps are counted and checked) and
 * lockdown (mxLockdown: harden() and lockdown(), so a script's Compartment
 * shares only frozen built-ins). manifest.json's esp32 build names it in
 * C_FLAGS_SUBPLATFORM as "-includexsclaw_metering.h" (one word: mcconfig
 * escapes the spaces of a build value), which the SDK's make.esp32.mk appends
 * to C_FLAGS, the flags of every C file it compiles: the XS sources, the SDK's
 * modules and ours. Every translation unit that includes xsAll.h must agree,
 * or txMachine's layout differs between them (the meter's fields are in it).
 * ESP-IDF's CMake compiles only the SDK's main.c, which includes xs.h, whose
 * machine prefix does not depend on these. The lin host passes the same two
 * defines (hosts/lin/Makefile XS_DEFINES). npm run check:device proves the
 * XS sources and sandbox.c see them.
 */
#ifndef XSCLAW_METERING_H
#define XSCLAW_METERING_H
#ifndef mxMetering
#define mxMetering 1
#endif
#ifndef mxLockdown
#define mxLockdown 1
#endif
#endif
