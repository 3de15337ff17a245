/*
 * sandbox_lin.c — installs "host/sandbox" on the lin host: the functions of
 * hosts/common/sandbox/sandbox.c (shared with the board) on the native
 * object's Sandbox, and XS's lockdown() and harden() as globals of every
 * machine (as xsnap and xst do; the engine has them but leaves defining them to
 * the host): agent/worker locks its machine down at boot, so that a script's
 * Compartment shares only frozen built-ins and cannot reach the Function
 * constructor. fxAbort (machine.c) calls sandboxAbort first (main.c registers it), so a bound met by a
 * stack overflow or an exhausted heap inside a sandboxed call unwinds it
 * instead of ending the machine.
 */
#include "xsAll.h"
#include "host.h"
#include "sandbox.h"

void hostInstallSandbox(xsMachine *the, xsSlot *native)
{
	xs_sandbox_install(the);
	xsVars(1);
	xsVar(0) = xsNewObject();
	hostDefineFunction(the, &xsVar(0), "run", xs_sandbox_run, 4);
	hostDefineFunction(the, &xsVar(0), "stopped", xs_sandbox_stopped, 0);
	xsDefine(xsVar(0), xsID("metered"), xsTrue, xsDontDelete | xsDontSet);
	xsDefine(*native, xsID("Sandbox"), xsVar(0), xsDontEnum);
}
