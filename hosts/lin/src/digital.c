/*
 * digital.c — embedded:io/digital on the lin host: a simulated bank of GPIO
 * pins 0..48 (the ESP32-S3 range), plus the "host/pins" functions that let
 * tests and the console drive inputs and observe every pin.
 *
 * Model of a pin's level (see pinLevel): an Output drives its written value;
 * an OutputOpenDrain pulls low on 0 and otherwise lets an external level (or
 * an assumed external pull-up, 1) through; an input reads what drive() put on
 * it, or its pull resistor when nothing drives it (pull-up 1, otherwise 0).
 *
 * The bank is static: external levels set by drive() stay across a reboot, as
 * a signal wired to a board would; ownership does not (the machine's
 * destructors release every pin). A pin has one owner at a time.
 *
 * An input with onReadable and an edge (Digital.Rising 1, Digital.Falling 2)
 * is called on the loop turn after drive() changes its level that way;
 * changes in between are coalesced into one call, as interrupts are.
 *
 * The bank is the board's, shared by every machine (the main one and each
 * worker): gPins and the records' mode/output/notify fields are under
 * gPinLock. drive() from one machine reaches an input another machine owns
 * through a call posted to the owner's loop (hostLoopPost).
 */
#include "xsAll.h"
#include "host.h"

#define DIGITAL_PIN_COUNT 49   /* ESP32-S3 GPIO 0..48 */

/* The SDK's DigitalBank mode values and Digital edge bits. */
enum {
	kModeInput = 0,
	kModeInputPullUp = 1,
	kModeInputPullDown = 2,
	kModeInputPullUpDown = 3,
	kModeOutput = 8,
	kModeOutputOpenDrain = 9,
};
enum { kEdgeRising = 1, kEdgeFalling = 2 };

typedef struct {
	xsMachine *the;
	HostLoop *loop;       /* the owning machine's loop */
	xsSlot self;          /* remembered while open with onReadable */
	xsSlot onReadable;
	int notify;           /* an onReadable turn is posted to loop */
	int pin;
	int mode;
	int edge;
	int output;           /* last value written (output modes) */
	int remembered;       /* has onReadable: remembered until closed */
} DigitalRecord;

static pthread_mutex_t gPinLock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int driven;           /* something outside drives the pin (drive() until release()) */
	int external;         /* the level it drives, 0 or 1 */
	DigitalRecord *owner;
} gPins[DIGITAL_PIN_COUNT];

static void digitalDestructor(void *data);
static void digitalMarker(xsMachine *the, void *data, xsMarkRoot markRoot);
static xsHostHooks gDigitalHooks = { digitalDestructor, digitalMarker, NULL };

static int isOutputMode(int mode)
{
	return mode == kModeOutput || mode == kModeOutputOpenDrain;
}

/* Under gPinLock. */
static int pinLevel(int pin)
{
	DigitalRecord *owner = gPins[pin].owner;
	if (owner && owner->mode == kModeOutput)
		return owner->output;
	if (owner && owner->mode == kModeOutputOpenDrain)
		return owner->output ? (gPins[pin].driven ? gPins[pin].external : 1) : 0;
	if (gPins[pin].driven)
		return gPins[pin].external;
	return owner && owner->mode == kModeInputPullUp;
}

/* A posted onReadable turn finds the pin's owner gone, or another, and does nothing. */
static void digitalFree(DigitalRecord *digital)
{
	pthread_mutex_lock(&gPinLock);
	if (gPins[digital->pin].owner == digital)
		gPins[digital->pin].owner = NULL;
	pthread_mutex_unlock(&gPinLock);
	free(digital);
}

static void digitalDestructor(void *data)
{
	if (data)
		digitalFree(data);
}

static void digitalMarker(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	DigitalRecord *digital = data;
	if (digital)
		(*markRoot)(the, &digital->onReadable);
}

/* Posted with the pin number: the owner may have closed (and another, maybe
 * on another loop, opened the pin) before the turn comes. */
static void onNotify(void *ctx)
{
	pthread_mutex_lock(&gPinLock);
	DigitalRecord *digital = gPins[(intptr_t)ctx].owner;
	if (digital && digital->loop != hostLoop())
		digital = NULL;
	if (digital)
		digital->notify = 0;
	pthread_mutex_unlock(&gPinLock);
	if (!digital)
		return;
	xsMachine *the = digital->the;
	hostCallBegin(the);
	xsCallFunction0(digital->onReadable, digital->self);
	hostCallEnd(the);
}

/* After a level change from outside: notify the owner on a matching edge.
 * Under gPinLock, which keeps the owner (and so its loop) alive. */
static void pinChanged(int pin, int before)
{
	DigitalRecord *owner = gPins[pin].owner;
	int after = pinLevel(pin);
	if (!owner || !owner->remembered || before == after || owner->notify)
		return;
	if ((after && (owner->edge & kEdgeRising)) || (!after && (owner->edge & kEdgeFalling)))
		owner->notify = hostLoopPost(owner->loop, onNotify, (void *)(intptr_t)pin) == 0;
}

/* ---- Digital ------------------------------------------------------------ */

static void xs_digital_constructor(xsMachine *the)
{
	xsVars(2);
	hostConstructThis(the, &gDigitalHooks, "Digital");
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		xsTypeError("Digital: options object required");
	xsSlot *options = &xsArg(0);
	if (!hostHasOption(the, options, "pin"))
		xsTypeError("Digital: pin required");
	int pin = hostIntegerOption(the, options, "pin", 0, DIGITAL_PIN_COUNT - 1, 0, "Digital");
	if (!hostHasOption(the, options, "mode"))
		xsTypeError("Digital: mode required");
	int mode = hostIntegerOption(the, options, "mode", 0, kModeOutputOpenDrain, 0, "Digital");
	if (mode > kModeInputPullUpDown && !isOutputMode(mode))
		xsRangeError("Digital: invalid mode");
	int edge = hostIntegerOption(the, options, "edge", 0, kEdgeRising | kEdgeFalling, 0, "Digital");
	hostCallbackOption(the, options, "onReadable", &xsVar(0), "Digital");
	int readable = xsTypeOf(xsVar(0)) != xsUndefinedType;
	if (readable && (isOutputMode(mode) || !edge))
		xsRangeError("Digital: onReadable needs an input mode and an edge (Digital.Rising, Digital.Falling)");
	if (hostHasOption(the, options, "format")) {
		xsVar(1) = xsGet(*options, xsID("format"));
		if (xsTypeOf(xsVar(1)) != xsStringType || strcmp(xsToString(xsVar(1)), "number"))
			xsRangeError("Digital: invalid format (only \"number\")");
	}
	if (hostHasOption(the, options, "target")) {
		xsVar(1) = xsGet(*options, xsID("target"));
		xsSet(xsThis, xsID("target"), xsVar(1));
	}
	DigitalRecord *digital = calloc(1, sizeof(DigitalRecord));
	if (!digital)
		xsUnknownError("Digital: out of memory");
	digital->the = the;
	digital->loop = hostLoop();
	digital->self = xsThis;
	digital->onReadable = xsVar(0);
	digital->pin = pin;
	digital->mode = mode;
	digital->edge = edge;
	digital->remembered = readable;
	/* Complete before another thread can see it as the pin's owner. */
	pthread_mutex_lock(&gPinLock);
	int taken = gPins[pin].owner != NULL;
	if (!taken)
		gPins[pin].owner = digital;
	pthread_mutex_unlock(&gPinLock);
	if (taken) {
		free(digital);
		xsUnknownError("Digital: pin %d is in use; close its other Digital first", pin);
	}
	xsSetHostData(xsThis, digital);
	/* Like the device, an input waiting for edges lives until closed. */
	if (readable)
		xsRemember(digital->self);
}

static void xs_digital_read(xsMachine *the)
{
	DigitalRecord *digital = hostThis(the, &gDigitalHooks, "Digital");
	pthread_mutex_lock(&gPinLock);
	int level = pinLevel(digital->pin);
	pthread_mutex_unlock(&gPinLock);
	xsResult = xsInteger(level);
}

static int levelArgument(xsMachine *the, int index, const char *cls)
{
	if (hostArgc <= index || xsTypeOf(xsArg(index)) == xsUndefinedType)
		xsTypeError("%s: value required (0 or 1)", cls);
	int type = xsTypeOf(xsArg(index));
	if (type != xsIntegerType && type != xsNumberType)
		xsTypeError("%s: value must be 0 or 1", cls);
	double value = xsToNumber(xsArg(index));
	if (value != 0 && value != 1)
		xsRangeError("%s: value must be 0 or 1", cls);
	return value == 1;
}

static void xs_digital_write(xsMachine *the)
{
	DigitalRecord *digital = hostThis(the, &gDigitalHooks, "Digital");
	int value = levelArgument(the, 0, "Digital");
	if (!isOutputMode(digital->mode))
		xsTypeError("Digital: pin %d is an input; write needs mode Output or OutputOpenDrain", digital->pin);
	pthread_mutex_lock(&gPinLock);
	digital->output = value;
	pthread_mutex_unlock(&gPinLock);
}

static void xs_digital_close(xsMachine *the)
{
	DigitalRecord *digital = hostThisOrNull(the, &gDigitalHooks, "Digital");
	if (!digital)
		return;
	if (digital->remembered)
		xsForget(digital->self);
	xsSetHostData(xsThis, NULL);
	digitalFree(digital);
}

static void xs_digital_get_format(xsMachine *the)
{
	hostThis(the, &gDigitalHooks, "Digital");
	xsResult = xsString("number");
}

static void xs_digital_set_format(xsMachine *the)
{
	hostThis(the, &gDigitalHooks, "Digital");
	if (xsTypeOf(xsArg(0)) != xsStringType || strcmp(xsToString(xsArg(0)), "number"))
		xsRangeError("Digital: invalid format (only \"number\")");
}

static const HostMember gDigitalMembers[] = {
	{ "read", xs_digital_read, 0, 0 },
	{ "write", xs_digital_write, 1, 0 },
	{ "close", xs_digital_close, 0, 0 },
	{ "format", xs_digital_get_format, 0, 1 },
	{ "format", xs_digital_set_format, 1, 2 },
	{ NULL }
};

/* ---- host/pins ---------------------------------------------------------- */

static int pinArgument(xsMachine *the)
{
	if (hostArgc < 1 || xsTypeOf(xsArg(0)) == xsUndefinedType)
		xsTypeError("pins: pin required");
	int type = xsTypeOf(xsArg(0));
	if (type != xsIntegerType && type != xsNumberType)
		xsTypeError("pins: pin must be a number");
	double pin = xsToNumber(xsArg(0));
	if (!hostIsWhole(pin, 0, DIGITAL_PIN_COUNT - 1))
		xsRangeError("pins: invalid pin (0 to %d)", DIGITAL_PIN_COUNT - 1);
	return (int)pin;
}

static void xs_pins_drive(xsMachine *the)
{
	int pin = pinArgument(the);
	int value = levelArgument(the, 1, "pins");
	pthread_mutex_lock(&gPinLock);
	int before = pinLevel(pin);
	gPins[pin].driven = 1;
	gPins[pin].external = value;
	pinChanged(pin, before);
	pthread_mutex_unlock(&gPinLock);
}

static void xs_pins_release(xsMachine *the)
{
	int pin = pinArgument(the);
	pthread_mutex_lock(&gPinLock);
	int before = pinLevel(pin);
	gPins[pin].driven = 0;
	pinChanged(pin, before);
	pthread_mutex_unlock(&gPinLock);
}

static void xs_pins_level(xsMachine *the)
{
	int pin = pinArgument(the);
	pthread_mutex_lock(&gPinLock);
	int level = pinLevel(pin);
	pthread_mutex_unlock(&gPinLock);
	xsResult = xsInteger(level);
}

static void xs_pins_mode(xsMachine *the)
{
	int pin = pinArgument(the);
	pthread_mutex_lock(&gPinLock);
	DigitalRecord *owner = gPins[pin].owner;
	int mode = owner ? owner->mode : -1;
	pthread_mutex_unlock(&gPinLock);
	if (mode >= 0)
		xsResult = xsInteger(mode);
}

void hostInstallDigital(xsMachine *the, xsSlot *native)
{
	xsVars(2);
	hostDefineClass(the, native, "Digital", xs_digital_constructor, 1, gDigitalMembers, &gDigitalHooks);
	xsVar(0) = xsGet(*native, xsID("Digital"));
	static const struct { const char *name; int value; } constants[] = {
		{ "Input", kModeInput }, { "InputPullUp", kModeInputPullUp }, { "InputPullDown", kModeInputPullDown },
		{ "InputPullUpDown", kModeInputPullUpDown }, { "Output", kModeOutput },
		{ "OutputOpenDrain", kModeOutputOpenDrain }, { "Rising", kEdgeRising }, { "Falling", kEdgeFalling },
	};
	for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
		xsDefine(xsVar(0), hostID(constants[i].name), xsInteger(constants[i].value), xsDontDelete | xsDontSet);
	xsVar(1) = xsNewObject();
	hostDefineFunction(the, &xsVar(1), "drive", xs_pins_drive, 2);
	hostDefineFunction(the, &xsVar(1), "release", xs_pins_release, 1);
	hostDefineFunction(the, &xsVar(1), "level", xs_pins_level, 1);
	hostDefineFunction(the, &xsVar(1), "mode", xs_pins_mode, 1);
	xsDefine(xsVar(1), xsID("count"), xsInteger(DIGITAL_PIN_COUNT), xsDontDelete | xsDontSet);
	xsDefine(*native, xsID("Pins"), xsVar(1), xsDontEnum);
}
