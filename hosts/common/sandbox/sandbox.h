/*
 * sandbox.h — "host/sandbox", one C file for both hosts (NOTES.md): a function
 * call bounded in steps, memory and stack, with the promise jobs it queues run
 * inside the same bounds. The lin host installs the functions on its hidden
 * native object (hosts/lin/src/sandbox.c); the board reaches them by name
 * (hosts/esp32/sandbox.ts: native("xs_sandbox_run")).
 *
 * The engine must be built with mxMetering and mxLockdown: sandbox.c refuses to
 * compile otherwise (#error), so a build whose scripts could not be bounded
 * cannot be made. On the board, every translation unit that includes xsAll.h
 * gets them from manifest.json's build.C_FLAGS_SUBPLATFORM (xsclaw_metering.h).
 */
#ifndef XSCLAW_SANDBOX_H
#define XSCLAW_SANDBOX_H

#include "xs.h"

/* run(fn, steps, chunkBytes, slots[, then]) -> fn's result, or then(result)'s:
 * see sandbox.c for what each bound means and what run() throws. */
void xs_sandbox_run(xsMachine *the);
/* stopped() -> "steps" | "memory" | "stack" | "keys": the bound that stopped
 * this thread's last run(); undefined when it returned or threw fn's own
 * exception (which may carry any message: decide by this, not by the text). */
void xs_sandbox_stopped(xsMachine *the);
/* metered() -> true: the engine meters (the file does not compile otherwise). */
void xs_sandbox_metered(xsMachine *the);
/* install() defines XS's lockdown() and harden() as globals of the machine (the
 * engine has them, but leaves defining them to the host), once. */
void xs_sandbox_install(xsMachine *the);

/* A meter check from inside a built-in's C (the lin host's xsmeter.h): as
 * fxCheckMetering, but never collects garbage, whose C may hold heap pointers. */
void sandboxMeterBuiltin(xsMachine *the);

/* For a host's fxAbort: when a sandboxed call runs in this machine and status
 * is a bound (steps, memory, stack), unwinds it to run() and does not return;
 * otherwise returns 0 and the abort goes on as the host decides. */
int sandboxAbort(xsMachine *the, int status);

#endif
