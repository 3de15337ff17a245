/*
 * sandbox.c — "host/sandbox" on the lin host: calls a function under XS
 * metering (the engine is built with mxMetering) with three bounds, for the
 * script tool (modules/agent/caps/script.ts):
 *   steps   XS's meter count (bytecodes, calls and allocations), checked on
 *           every backward branch and call;
 *   chunks  bytes of XS chunk heap the call may add (after a collection);
 *   slots   XS slots the call may add (after a collection).
 * Past a bound, or when the JS stack or the whole heap runs out inside the call,
 * the call is unwound to run()'s own frame, past any try/catch of the script (a
 * script cannot catch its way out of its bound; the engine's own clean-up
 * handlers still run, see hostSandboxAbort), and run() throws a
 * RangeError "sandbox: step limit" / "memory limit" / "stack limit". A normal
 * exception of the function is rethrown as it is.
 *
 * fxAbort (machine.c) calls hostSandboxAbort first: it unwinds when a sandboxed
 * call is running in this machine, and returns 0 otherwise (the firmware's own
 * out-of-memory still ends the program). One call at a time per thread (run()
 * inside run() throws).
 *
 * The installer also defines XS's own lockdown() and harden() as globals (as
 * xsnap and xst do; the engine has them but leaves defining them to the host):
 * main.ts locks the machine down at boot, so that a script's Compartment
 * shares only frozen built-ins and cannot reach the Function constructor.
 */
#include "xsAll.h"
#include "host.h"

enum { kReasonNone = 0, kReasonSteps, kReasonMemory, kReasonStack };

/* Meter units between two checks: small enough that a bound is met within
 * about a millisecond, large enough that the check costs nothing measurable. */
#define SANDBOX_METER_INTERVAL 10000

typedef struct {
	txMachine *the;
	txJump *jump;
	txU4 maxSteps;
	txSize chunkBase, chunkLimit;
	txSize slotBase, slotLimit;
	int reason;
} Sandbox;

static __thread Sandbox *gSandbox;

static int sandboxOver(txMachine *the, Sandbox *s)
{
	return the->currentChunksSize > s->chunkBase + s->chunkLimit || the->currentHeapCount > s->slotBase + s->slotLimit;
}

static txBoolean sandboxMeter(txMachine *the, txU4 index)
{
	Sandbox *s = gSandbox;
	if (!s || s->the != the)
		return 1;
	if (s->reason != kReasonNone)
		return 0; /* already past a bound: keep unwinding */
	if (index > s->maxSteps) {
		s->reason = kReasonSteps;
		return 0;
	}
	if (sandboxOver(the, s)) {
		/* Garbage counts until collected: only what survives a collection is the script's. */
		fxCollectGarbage(the);
		if (sandboxOver(the, s)) {
			s->reason = kReasonMemory;
			return 0;
		}
	}
	return 1;
}

int hostSandboxAbort(txMachine *the, int status)
{
	Sandbox *s = gSandbox;
	if (!s || s->the != the)
		return 0;
	if (status == XS_TOO_MUCH_COMPUTATION_EXIT) {
		if (s->reason == kReasonNone)
			s->reason = kReasonSteps;
	}
	else if (status == XS_NOT_ENOUGH_MEMORY_EXIT)
		s->reason = kReasonMemory;
	else if (status == XS_STACK_OVERFLOW_EXIT)
		s->reason = kReasonStack;
	else
		return 0;
	/* The script's own catch blocks (heap records, flag 1) are skipped and freed,
	 * as XS frees them when it leaves them; the first C-level handler (an mxTry
	 * in the engine, flag 0: fxRunScript deleting its script, ...) runs its
	 * clean-up and rethrows; run()'s own jump ends it. Should a C handler hand
	 * control back to script code instead, the meter is armed to check at the
	 * next step, and sandboxMeter aborts again at once. */
	txJump *jump = the->firstJump;
	while (jump && jump != s->jump && jump->flag) {
		txJump *next = jump->nextJump;
		c_free(jump);
		jump = next;
	}
	if (!jump)
		jump = s->jump;
	the->meterCount = the->meterIndex;
	the->meterInterval = 1;
	the->firstJump = jump;
	c_longjmp(jump->buffer, 1);
	return 1;
}

static double boundArgument(xsMachine *the, int index, const char *name, double max)
{
	if (hostArgc <= index)
		xsTypeError("sandbox: %s required", name);
	int type = xsTypeOf(xsArg(index));
	if (type != xsIntegerType && type != xsNumberType)
		xsTypeError("sandbox: %s must be a number", name);
	double value = xsToNumber(xsArg(index));
	if (!hostIsWhole(value, 1, max))
		xsRangeError("sandbox: invalid %s (1 to %.0f)", name, max);
	return value;
}

/* run(fn, steps, chunkBytes, slots) -> fn's result */
static void xs_sandbox_run(xsMachine *the)
{
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsFunctionPrototype))
		xsTypeError("sandbox: function required");
	Sandbox s = { 0 };
	s.maxSteps = (txU4)boundArgument(the, 1, "steps", 4000000000.0);
	double chunks = boundArgument(the, 2, "chunk bytes", (double)the->maximumChunksSize);
	double slots = boundArgument(the, 3, "slots", (double)the->maximumHeapCount);
	if (gSandbox)
		xsTypeError("sandbox: a sandboxed call is already running");
	s.the = the;
	fxCollectGarbage(the);
	s.chunkBase = the->currentChunksSize;
	s.chunkLimit = (txSize)chunks;
	s.slotBase = the->currentHeapCount;
	s.slotLimit = (txSize)slots;

	txJump jump;
	jump.nextJump = the->firstJump;
	jump.stack = the->stack;
	jump.scope = the->scope;
	jump.frame = the->frame;
	jump.environment = NULL;
	jump.code = the->code;
	jump.flag = 0;
	s.jump = &jump;
	int failed = 0;
	the->firstJump = &jump;
	gSandbox = &s;
	if (c_setjmp(jump.buffer) == 0) {
		fxBeginMetering(the, sandboxMeter, SANDBOX_METER_INTERVAL);
		xsResult = xsCallFunction0(xsArg(0), xsUndefined);
	}
	else
		failed = 1;
	fxEndMetering(the);
	gSandbox = NULL;
	/* A bound hit inside a C handler that then returned normally still counts. */
	if (!failed && s.reason != kReasonNone)
		failed = 1;
	the->stack = jump.stack;
	the->scope = jump.scope;
	the->frame = jump.frame;
	the->code = jump.code;
	the->firstJump = jump.nextJump;
	if (!failed)
		return;
	switch (s.reason) {
	case kReasonSteps: xsRangeError("sandbox: step limit");
	case kReasonMemory: fxCollectGarbage(the); xsRangeError("sandbox: memory limit");
	case kReasonStack: xsRangeError("sandbox: stack limit");
	default: xsThrow(xsException);
	}
}

void hostInstallSandbox(xsMachine *the, xsSlot *native)
{
	xsVars(2);
	xsVar(1) = xsNewHostFunction(fx_harden, 1);
	xsDefine(xsGlobal, xsID("harden"), xsVar(1), xsDontEnum);
	xsVar(1) = xsNewHostFunction(fx_lockdown, 0);
	xsDefine(xsGlobal, xsID("lockdown"), xsVar(1), xsDontEnum);
	xsVar(0) = xsNewObject();
	hostDefineFunction(the, &xsVar(0), "run", xs_sandbox_run, 4);
	xsDefine(xsVar(0), xsID("metered"), xsTrue, xsDontDelete | xsDontSet);
	xsDefine(*native, xsID("Sandbox"), xsVar(0), xsDontEnum);
}
