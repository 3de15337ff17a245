/*
 * sandbox.c — "host/sandbox" on both hosts (the lin host's XS 13.3 and the
 * Moddable SDK's XS 17 on the ESP32-S3): calls a function under XS metering
 * with these bounds, for the script tool and stored scripts (caps/script):
 *   steps   XS's meter count (bytecodes, calls, and the built-ins' own loop
 *           iterations), checked every BUDGET_SCRIPT_METER_INTERVAL units;
 *   chunks  bytes of XS chunk heap the call may add (after a collection);
 *   slots   XS slots the call may add (after a collection);
 *   stack   JS stack slots the call may use (BUDGET_SCRIPT_STACK_MAX_SLOTS),
 *           so deep recursion stops here, before the machine's own stack ends
 *           (which the board's XS would answer by restarting the board);
 *   keys    on XS 13.3 (lin), new property names (BUDGET_SCRIPT_MAX_KEYS):
 *           that XS never frees one, and a machine whose key table is full
 *           ends; a call does not start when fewer than
 *           BUDGET_SCRIPT_KEYS_RESERVE are free ("sandbox: key limit"). XS 17
 *           collects unused names, so the board has no such bound.
 * Past a bound the call is unwound to run()'s own frame, past any try/catch of
 * the script (a script cannot catch its way out of its bound; the engine's own
 * clean-up handlers still run, see sandboxUnwind), and run() throws a
 * RangeError "sandbox: step limit" / "memory limit" / "stack limit", and
 * stopped() says which bound it was ("steps", "memory", "stack", "keys"; undefined
 * when the last run() returned or threw the function's own exception). A normal
 * exception of the function is rethrown as it is.
 *
 * Promise jobs (issue 25): the jobs the call queues (an async function's
 * continuation, a then() callback) run inside run(), after the function
 * returns, under the same bounds, until none is left; jobs that were waiting
 * before run() are left waiting, untouched. When a bound stops the call, the
 * jobs it queued are dropped: nothing of a script runs after run() returns. A
 * rejection the script left unhandled is dropped too (the host would end the
 * machine for it). run(fn, ..., then) calls then(result) after the jobs, also
 * inside the bounds (reading the result may run the script's getters).
 *
 * Built-in loops (issue 25): XS 17 checks the meter inside the built-ins' own
 * loops (Array.prototype.indexOf over {length: 2**53-1} is stopped); XS 13.3
 * counts there but never checks, so the lin host compiles its built-ins with
 * hosts/lin/src/xsmeter.h, which makes each count a check (sandboxMeterBuiltin).
 *
 * The memory check collects garbage first (what survives is the script's), but
 * only when the meter is checked from script code, where the interpreter has
 * saved its state; from inside a built-in (whose C may hold pointers into the
 * heap) it does not collect, and stops the call only when the raw figures pass
 * twice the bound.
 *
 * On the board the meter check also feeds the task watchdog (when this task is
 * subscribed) and, every BUDGET_SCRIPT_YIELD_MS, lets lower-priority tasks run
 * for a tick (the idle task, which the watchdog watches too).
 *
 * One sandboxed call at a time per thread (run() inside run() throws).
 */
#include "xsAll.h"
#include "sandbox.h"

#if defined(__has_include)
#if __has_include("budgets.h")
#include "budgets.h"
#endif
#endif

#ifndef mxMetering
#error "host/sandbox needs XS built with mxMetering (lin: hosts/lin/Makefile XS_DEFINES; esp32: manifest.json build.C_FLAGS_SUBPLATFORM, hosts/common/sandbox/xsclaw_metering.h): without it no script can be bounded"
#endif
#ifndef mxLockdown
#error "host/sandbox needs XS built with mxLockdown: a script's Compartment must share only frozen built-ins"
#endif
#if !mxBoundsCheck
#error "host/sandbox needs XS built with mxBoundsCheck: a script's stack overflow must be caught"
#endif
#if !defined(BUDGET_SCRIPT_METER_INTERVAL) || !defined(BUDGET_SCRIPT_STACK_MAX_SLOTS) || !defined(BUDGET_SCRIPT_YIELD_MS) || !defined(BUDGET_SCRIPT_MAX_KEYS) || !defined(BUDGET_SCRIPT_KEYS_RESERVE)
#error "budgets.h (modules/budgets.ts as C macros, written by the build) must be on the include path"
#endif

/* The two engines differ in a few places. */
#if XS_MAJOR_VERSION == 13
typedef txU4 txMeterIndex;
#define JOB_FRAME_SLOTS 6   /* fxRunPromiseJobs: mxRunCount(count - 6) */
#define JOB_STEP 1          /* one meter unit */
#define XS_STACK_EXIT XS_STACK_OVERFLOW_EXIT
#elif XS_MAJOR_VERSION == 17
typedef txU8 txMeterIndex;
#define JOB_FRAME_SLOTS 4   /* fxRunPromiseJobs: mxRunCount(count - 4) */
#define JOB_STEP XS_CODE_METERING /* one meter unit (XS 17 counts in 1/65536) */
#define XS_STACK_EXIT XS_JAVASCRIPT_STACK_OVERFLOW_EXIT
#else
#error "host/sandbox knows XS 13 and 17: check fxRunPromiseJobs, fxCheckMetering and the stack exits of this version"
#endif

#if defined(ESP32)
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#include "esp_timer.h"
#include "sdkconfig.h"
#if CONFIG_ESP_TASK_WDT_EN
#include "esp_task_wdt.h"
#endif
#endif

enum { kReasonNone = 0, kReasonSteps, kReasonMemory, kReasonStack, kReasonKeys };

typedef struct {
	txMachine *the;
	txJump *jump;
	txMeterIndex maxSteps;
	txSize chunkBase, chunkLimit;
	txSize slotBase, slotLimit;
	txSlot *stackBase;
	txID keyBase;
	/* The jobs and unhandled rejections that were there before run(): the
	 * script's are the ones after these (both lists are appended at the end). */
	txSlot *jobsBefore;
	txSlot *rejectionsBefore;
	/* Holds the batch of the script's jobs being run (a GC root). */
	txSlot *running;
	int reason;
	/* The meter is being checked from inside a built-in (xsmeter.h): no collection. */
	int inBuiltin;
#if defined(ESP32)
	int watchdog;
	int64_t yieldAtUs;
#endif
} Sandbox;

static __thread Sandbox *gSandbox;
/* The bound that stopped this thread's last run() (a kReason), for stopped():
 * the caller decides by it, not by the error's message, which a script can
 * write too. */
static __thread int gLastStop;

static int sandboxOver(txMachine *the, Sandbox *s, txSize times)
{
	return the->currentChunksSize > s->chunkBase + times * s->chunkLimit || the->currentHeapCount > s->slotBase + times * s->slotLimit;
}

/* Whether the meter is checked from script code (the interpreter saved its
 * state: a collection is safe) rather than from inside a built-in. */
static int inScriptCode(txMachine *the)
{
	if (!the->frame)
		return 0;
	txSlot *function = mxFunction;
	if (function->kind != XS_REFERENCE_KIND || !function->value.reference)
		return 0;
	txSlot *code = function->value.reference->next;
	return code && (code->kind == XS_CODE_KIND || code->kind == XS_CODE_X_KIND);
}

/* Jumps to run()'s frame: the script's own catch blocks (heap records, flag 1)
 * are skipped and freed, as XS frees them when it leaves them; the first
 * C-level handler (an mxTry in the engine, flag 0: a built-in freeing its
 * buffer, ...) runs its clean-up and rethrows; run()'s own jump ends it. Should
 * a handler hand control back to script code instead, the meter is armed to
 * check at the next step, and sandboxMeter unwinds again at once. */
static void sandboxUnwind(txMachine *the, Sandbox *s)
{
	txJump *jump = the->firstJump;
	while (jump && jump != s->jump && jump->flag) {
		txJump *next = jump->nextJump;
		c_free(jump);
		jump = next;
	}
	if (!jump)
		jump = s->jump;
	s->inBuiltin = 0;
	the->meterCount = the->meterIndex;
	the->meterInterval = 1;
	the->firstJump = jump;
	c_longjmp(jump->buffer, 1);
}

static void sandboxStop(txMachine *the, Sandbox *s, int reason)
{
	if (s->reason == kReasonNone)
		s->reason = reason;
	sandboxUnwind(the, s);
}

#if defined(ESP32)
static void sandboxFeedWatchdog(Sandbox *s)
{
#if CONFIG_ESP_TASK_WDT_EN
	if (s->watchdog)
		esp_task_wdt_reset();
#endif
	int64_t now = esp_timer_get_time();
	if (now >= s->yieldAtUs) {
		vTaskDelay(1);
		s->yieldAtUs = esp_timer_get_time() + (int64_t)BUDGET_SCRIPT_YIELD_MS * 1000;
	}
}
#endif

/* XS's meter callback: a bound past is unwound from here, not by returning 0
 * (which would call the host's fxAbort: on the board, a restart). */
static txBoolean sandboxMeter(txMachine *the, txMeterIndex index)
{
	Sandbox *s = gSandbox;
	if (!s || s->the != the)
		return 1;
	if (s->reason != kReasonNone)
		sandboxUnwind(the, s); /* already past a bound: keep unwinding */
#if defined(ESP32)
	sandboxFeedWatchdog(s);
#endif
	if (index > s->maxSteps)
		sandboxStop(the, s, kReasonSteps);
	if (s->stackBase - the->stack > BUDGET_SCRIPT_STACK_MAX_SLOTS)
		sandboxStop(the, s, kReasonStack);
#if XS_MAJOR_VERSION == 13
	if (the->keyIndex - s->keyBase > BUDGET_SCRIPT_MAX_KEYS)
		sandboxStop(the, s, kReasonKeys);
#endif
	if (sandboxOver(the, s, 1)) {
		if (!s->inBuiltin && inScriptCode(the)) {
			/* Garbage counts until collected: only what survives is the script's. */
			fxCollectGarbage(the);
			if (sandboxOver(the, s, 1))
				sandboxStop(the, s, kReasonMemory);
		}
		else if (sandboxOver(the, s, 2))
			sandboxStop(the, s, kReasonMemory);
	}
	return 1;
}

void sandboxMeterBuiltin(txMachine *the)
{
	Sandbox *s = gSandbox;
	if (!s || s->the != the) {
		fxCheckMetering(the);
		return;
	}
	s->inBuiltin++;
	fxCheckMetering(the);
	s->inBuiltin--;
}

int sandboxAbort(txMachine *the, int status)
{
	Sandbox *s = gSandbox;
	if (!s || s->the != the)
		return 0;
	if (status == XS_TOO_MUCH_COMPUTATION_EXIT)
		sandboxStop(the, s, kReasonSteps);
	else if (status == XS_NOT_ENOUGH_MEMORY_EXIT) {
		s->reason = kReasonMemory;
		sandboxUnwind(the, s);
	}
	else if (status == XS_STACK_EXIT)
		sandboxStop(the, s, kReasonStack);
	else if (status == XS_NO_MORE_KEYS_EXIT)
		sandboxStop(the, s, kReasonKeys);
#if XS_MAJOR_VERSION == 17
	else if (status == XS_NATIVE_STACK_OVERFLOW_EXIT)
		sandboxStop(the, s, kReasonStack);
#endif
	return 0;
}

/* The last slot of a list whose entries are appended at the end (NULL: empty). */
static txSlot *lastOf(txSlot *list)
{
	txSlot *last = NULL;
	for (txSlot *slot = list->next; slot; slot = slot->next)
		last = slot;
	return last;
}

/* The part of a list after `before` (the whole list when before is NULL), cut
 * off and returned. Should `before` have left the list meanwhile, nothing is
 * cut (it is looked for first, so a slot no longer in the list is never written). */
static txSlot *cutAfter(txSlot *list, txSlot *before)
{
	txSlot **at = &list->next;
	if (before) {
		txSlot *slot = list->next;
		while (slot && slot != before)
			slot = slot->next;
		if (!slot)
			return NULL;
		at = &before->next;
	}
	txSlot *rest = *at;
	*at = NULL;
	return rest;
}

/* Runs the jobs the call queued, batch by batch, until none is left; each
 * job's steps are metered as the script's, and each job counts one step more,
 * so an endless chain of jobs is stopped even if none of them loops. */
static void sandboxRunJobs(txMachine *the, Sandbox *s)
{
	txSlot *pending = mxPendingJobs.value.reference;
	txSlot *job;
	while ((job = cutAfter(pending, s->jobsBefore))) {
		s->running->next = job;
		while (job) {
			txInteger count = 0;
			for (txSlot *slot = job->value.reference->next; slot; slot = slot->next) {
				mxPushSlot(slot);
				count++;
			}
			mxRunCount(count - JOB_FRAME_SLOTS);
			mxPop();
			if (mxDuringJobs.kind == XS_REFERENCE_KIND)
				mxDuringJobs.value.reference->next = C_NULL;
			the->meterIndex += JOB_STEP;
			job = job->next;
		}
		s->running->next = NULL;
		if (the->meterInterval && the->meterIndex > the->meterCount)
			fxCheckMetering(the);
	}
}

static double boundArgument(txMachine *the, int index, const char *name, double max)
{
	if (mxArgc <= index)
		mxTypeError("sandbox: %s required", name);
	txSlot *slot = mxArgv(index);
	if (slot->kind != XS_INTEGER_KIND && slot->kind != XS_NUMBER_KIND)
		mxTypeError("sandbox: %s must be a number", name);
	double value = fxToNumber(the, slot);
	if (!(value >= 1 && value <= max && value == (double)(long long)value))
		mxRangeError("sandbox: invalid %s (1 to %.0f)", name, max);
	return value;
}

static int isFunction(txMachine *the, int index)
{
	return mxArgc > index && mxIsReference(mxArgv(index)) && mxIsCallable(mxArgv(index)->value.reference);
}

void xs_sandbox_run(xsMachine *the)
{
	gLastStop = kReasonNone;
	if (!isFunction(the, 0))
		mxTypeError("sandbox: function required");
	if (mxArgc > 4 && !isFunction(the, 4))
		mxTypeError("sandbox: then must be a function");
	Sandbox s = { 0 };
	s.maxSteps = (txMeterIndex)boundArgument(the, 1, "steps", 4000000000.0);
	double chunks = boundArgument(the, 2, "chunk bytes", (double)the->maximumChunksSize);
	double slots = boundArgument(the, 3, "slots", (double)the->maximumHeapCount);
	if (gSandbox)
		mxTypeError("sandbox: a sandboxed call is already running");
#if XS_MAJOR_VERSION == 13
	if (the->keyCount - the->keyIndex < BUDGET_SCRIPT_KEYS_RESERVE) {
		gLastStop = kReasonKeys;
		mxRangeError("sandbox: key limit");
	}
	s.keyBase = the->keyIndex;
#endif
	s.the = the;
	/* The machine's own meter (the lin host's worker.c meters each worker for
	 * its whole life), put back as it was after the call. */
	txBoolean (*outerCallback)(txMachine*, txMeterIndex) = the->meterCallback;
	txMeterIndex outerInterval = the->meterInterval, outerCount = the->meterCount, outerIndex = the->meterIndex;
	/* The holder of the jobs being run: on the stack, so the collector sees them. */
	fxNewInstance(the);
	s.running = the->stack->value.reference;
	s.jobsBefore = lastOf(mxPendingJobs.value.reference);
	s.rejectionsBefore = lastOf(mxUnhandledPromises.value.reference);
	fxCollectGarbage(the);
	s.chunkBase = the->currentChunksSize;
	s.chunkLimit = (txSize)chunks;
	s.slotBase = the->currentHeapCount;
	s.slotLimit = (txSize)slots;
	s.stackBase = the->stack;
#if defined(ESP32)
#if CONFIG_ESP_TASK_WDT_EN
	s.watchdog = esp_task_wdt_status(NULL) == ESP_OK;
#endif
	s.yieldAtUs = esp_timer_get_time() + (int64_t)BUDGET_SCRIPT_YIELD_MS * 1000;
#endif

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
		fxBeginMetering(the, sandboxMeter, BUDGET_SCRIPT_METER_INTERVAL);
		xsResult = xsCallFunction0(xsArg(0), xsUndefined);
		sandboxRunJobs(the, &s);
		if (mxArgc > 4) {
			xsResult = xsCallFunction1(xsArg(4), xsUndefined, xsResult);
			sandboxRunJobs(the, &s);
		}
	}
	else
		failed = 1;
	fxEndMetering(the);
	if (outerCallback) {
		the->meterCallback = outerCallback;
		the->meterCount = outerCount;
		the->meterIndex = outerIndex;
		the->meterInterval = outerInterval;
	}
	gSandbox = NULL;
	/* A bound hit inside a C handler that then returned normally still counts. */
	if (!failed && s.reason != kReasonNone)
		failed = 1;
	the->stack = jump.stack;
	the->scope = jump.scope;
	the->frame = jump.frame;
	the->code = jump.code;
	the->firstJump = jump.nextJump;
	/* Nothing of the script outlives the call: its jobs not run (a bound
	 * stopped it) and its unhandled rejections are dropped. */
	s.running->next = NULL;
	cutAfter(mxPendingJobs.value.reference, s.jobsBefore);
	cutAfter(mxUnhandledPromises.value.reference, s.rejectionsBefore);
	mxPop(); /* the jobs' holder */
	if (!failed)
		return;
	gLastStop = s.reason;
	switch (s.reason) {
	case kReasonSteps: mxRangeError("sandbox: step limit");
	case kReasonMemory: fxCollectGarbage(the); mxRangeError("sandbox: memory limit");
	case kReasonStack: mxRangeError("sandbox: stack limit");
	case kReasonKeys: mxRangeError("sandbox: key limit");
	default: xsThrow(xsException);
	}
}

void xs_sandbox_stopped(xsMachine *the)
{
	static const char *const names[] = { NULL, "steps", "memory", "stack", "keys" };
	if (gLastStop > kReasonNone && gLastStop <= kReasonKeys)
		xsResult = xsString((char *)names[gLastStop]);
}

void xs_sandbox_metered(xsMachine *the)
{
	mxResult->kind = XS_BOOLEAN_KIND;
	mxResult->value.boolean = 1;
}

static void defineGlobal(txMachine *the, const char *name, txCallback callback, txInteger length)
{
	fxNewHostFunction(the, callback, length, XS_NO_ID, XS_NO_ID);
	mxPush(mxGlobal);
	fxDefineID(the, fxID(the, (txString)name), XS_DONT_ENUM_FLAG, XS_DONT_ENUM_FLAG | XS_DONT_DELETE_FLAG | XS_DONT_SET_FLAG);
	mxPop();
}

void xs_sandbox_install(xsMachine *the)
{
	if (xsHas(xsGlobal, xsID("lockdown")))
		return;
	defineGlobal(the, "harden", fx_harden, 1);
	defineGlobal(the, "lockdown", fx_lockdown, 0);
}
