/*
 * timer.c — the Moddable `timer` module: Timer.set/repeat/schedule/clear/delay.
 *
 * A scheduled timer keeps itself alive (xsRemember) until it fires for the
 * last time or is cleared, as on the device; the callback is held in a slot
 * that the marker hook reports to the garbage collector.
 */
#include "xsAll.h"
#include "host.h"

#include <limits.h>

typedef struct {
	xsMachine *the;
	HostTimer *pending;
	xsSlot self;       /* remembered while scheduled */
	xsSlot callback;
	double interval;   /* 0 for one-shot */
	int remembered;
} TimerRecord;

static void timerDestructor(void *data);
static void timerMarker(xsMachine *the, void *data, xsMarkRoot markRoot);
static xsHostHooks gTimerHooks = { timerDestructor, timerMarker, NULL };

static void timerDestructor(void *data)
{
	TimerRecord *timer = data;
	if (timer) {
		hostTimerCancel(timer->pending);
		free(timer);
	}
}

static void timerMarker(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	TimerRecord *timer = data;
	if (timer)
		(*markRoot)(the, &timer->callback);
}

static void timerUnschedule(xsMachine *the, TimerRecord *timer)
{
	hostTimerCancel(timer->pending);
	timer->pending = NULL;
	if (timer->remembered) {
		timer->remembered = 0;
		xsForget(timer->self);
	}
}

static void timerFire(void *ctx)
{
	TimerRecord *timer = ctx;
	xsMachine *the = timer->the;
	timer->pending = NULL;
	if (timer->interval > 0)
		timer->pending = hostTimerStart(timer->interval, timerFire, timer);
	hostCallBegin(the);
	{
		xsVars(1);
		xsVar(0) = xsAccess(timer->self);
		xsCallFunction1(timer->callback, xsUndefined, xsVar(0));
		if (!timer->pending && timer->remembered) {
			timer->remembered = 0;
			xsForget(timer->self);
		}
	}
	hostCallEnd(the);
}

static double delayArgument(xsMachine *the, int index)
{
	if (hostArgc <= index || xsTypeOf(xsArg(index)) == xsUndefinedType)
		return 0;
	double ms = xsToNumber(xsArg(index));
	if (ms != ms || ms < 0)
		xsRangeError("Timer: invalid interval");
	return ms;
}

/* A timer keeps its record until the garbage collector takes it. */
static TimerRecord *timerArgument(xsMachine *the)
{
	void *timer;
	if (hostArgc < 1 || !hostDataOf(the, &xsArg(0), &gTimerHooks, &timer))
		xsTypeError("Timer: expected a timer");
	return timer;
}

static void timerSchedule(xsMachine *the, TimerRecord *timer, double delay, double interval)
{
	timerUnschedule(the, timer);
	timer->interval = interval;
	timer->pending = hostTimerStart(delay, timerFire, timer);
	xsRemember(timer->self);
	timer->remembered = 1;
}

static void xs_timer_set(xsMachine *the)
{
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsFunctionPrototype))
		xsTypeError("Timer: callback must be a function");
	double delay = delayArgument(the, 1);
	double interval = delayArgument(the, 2);
	TimerRecord *timer = calloc(1, sizeof(TimerRecord));
	if (!timer)
		xsUnknownError("Timer: out of memory");
	timer->the = the;
	timer->callback = xsArg(0);
	xsResult = xsNewHostObject(NULL);
	xsSetHostData(xsResult, timer);
	xsSetHostHooks(xsResult, &gTimerHooks);
	timer->self = xsResult;
	timerSchedule(the, timer, delay, interval);
}

static void xs_timer_repeat(xsMachine *the)
{
	double interval = delayArgument(the, 1);
	if (interval <= 0)
		xsRangeError("Timer: repeat needs an interval above 0");
	xsVars(1);
	xsVar(0) = xsNumber(interval);
	xsResult = xsCall3(xsThis, xsID("set"), xsArg(0), xsVar(0), xsVar(0));
}

static void xs_timer_schedule(xsMachine *the)
{
	TimerRecord *timer = timerArgument(the);
	timerSchedule(the, timer, delayArgument(the, 1), delayArgument(the, 2));
}

static void xs_timer_clear(xsMachine *the)
{
	if (hostArgc < 1 || xsTypeOf(xsArg(0)) == xsUndefinedType || xsTypeOf(xsArg(0)) == xsNullType)
		return;
	timerUnschedule(the, timerArgument(the));
}

/* Blocks the whole host. A delay past INT_MAX ms (24.8 days, or Infinity) is
 * cut to that rather than overflow the conversion to seconds. */
static void xs_timer_delay(xsMachine *the)
{
	double ms = delayArgument(the, 0);
	if (ms > INT_MAX)
		ms = INT_MAX;
	double seconds = floor(ms / 1000);
	struct timespec ts = { (time_t)seconds, (long)((ms - seconds * 1000) * 1e6) };
	nanosleep(&ts, NULL);
}

void hostInstallTimer(xsMachine *the, xsSlot *native)
{
	xsVars(1);
	xsVar(0) = xsNewObject();
	hostDefineFunction(the, &xsVar(0), "set", xs_timer_set, 3);
	hostDefineFunction(the, &xsVar(0), "repeat", xs_timer_repeat, 2);
	hostDefineFunction(the, &xsVar(0), "schedule", xs_timer_schedule, 3);
	hostDefineFunction(the, &xsVar(0), "clear", xs_timer_clear, 1);
	hostDefineFunction(the, &xsVar(0), "delay", xs_timer_delay, 1);
	xsDefine(*native, xsID("Timer"), xsVar(0), xsDontEnum);
}
