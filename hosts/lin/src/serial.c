/*
 * serial.c — embedded:io/serial on the lin host: the console, on stdin/stdout.
 *
 * Input: stdin is watched with poll() and read into gInput, a bounded ring in
 * static storage. The ring belongs to the process, not to the JS machine, so
 * input not yet read when the program reboots is seen by the next machine's
 * Serial (its onReadable fires on the first loop turn after construction).
 * While the ring is full, stdin is not watched: the writer waits on the pipe.
 * stdin is never switched to O_NONBLOCK (the flag would be shared with the
 * shell's terminal); each read(2) follows a poll() that reported it ready, so
 * it returns at once, whether stdin is a terminal, a pipe, a file or /dev/null.
 *
 * End of input: once stdin reports end of file (or fails) and the ring is
 * drained, each Serial gets onError(Error("end of input")) once, on a loop
 * turn of its own. The stdin watch is gone by then, so it keeps nothing alive;
 * neither does a closed Serial.
 *
 * Output: write() goes to stdout with a blocking write(2) — acceptable for a
 * console. onWritable fires after construction and after each write(), always
 * reporting SERIAL_WRITABLE_BYTES.
 *
 * Terminal: when stdin is a terminal, an open Serial holds it in character
 * mode, as a UART is: no line editing and no echo (ICANON, ECHO, ECHONL and
 * IEXTEN off), so each key reaches the console at once and the console draws
 * it (modules/main/console/line.ts). ISIG stays on, so Ctrl-C and Ctrl-Z still
 * signal. Input flags and output processing stay as they were, so a "\n" on
 * stdout or stderr still returns the carriage: the console writes "\n" on a
 * terminal (host/platform's consoleKind "tty"; "\r\n" only on a UART). The
 * mode the terminal had is put back when the Serial closes (close(), or the
 * destructor when reboot or exit tears the machine down), at exit(), before
 * a simulated power loss, on SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT,
 * SIGSEGV, SIGBUS, SIGFPE and SIGILL, which then end the program as before,
 * and while Ctrl-Z has it stopped (character mode again on SIGCONT). A signal
 * that was ignored, or had a handler (a sanitizer's), is left alone; SIGKILL,
 * or a crash a sanitizer reports, leaves the terminal in character mode
 * (`stty sane` repairs it). Nothing changes when stdin is not a terminal.
 *
 * One Serial may be open at a time (port 0); a second open throws.
 * Callbacks are called with the Serial as `this`; an exception escaping one
 * ends the program, as an uncaught exception does on the device.
 */
#include "xsAll.h"
#include "host.h"

#include <poll.h>
#include <signal.h>
#include <termios.h>

#define SERIAL_INPUT_BYTES 4096        /* stdin bytes held for the program: a few console lines */
#define SERIAL_WRITABLE_BYTES 4096     /* reported by onWritable: stdout writes block, any size fits */
#define SERIAL_MAX_BAUD 20000000       /* the device's UART limit; baud is otherwise ignored here */
#define SERIAL_MAX_PIN 48              /* ESP32-S3 GPIO range for transmit/receive (ignored here) */

enum { kFormatNumber, kFormatBuffer };

/* Invariant: 0 <= count <= SERIAL_INPUT_BYTES; bytes[head..] (wrapping) are unread. */
static struct {
	uint8_t bytes[SERIAL_INPUT_BYTES];
	size_t head;
	size_t count;
	int ended;   /* stdin reached end of file or failed: nothing more will come */
} gInput;

typedef struct {
	xsMachine *the;
	xsSlot self;         /* remembered while open */
	xsSlot onReadable;
	xsSlot onWritable;
	xsSlot onError;
	HostWatch *watch;    /* stdin, while input can still come and the ring has room */
	HostTimer *kick;     /* a pending notification turn */
	int format;
	int pendingReadable;
	int pendingWritable;
	int endReported;
} SerialRecord;

/* The open Serial, if any. Loop callbacks reach their record through it, so
 * a record closed by JS in the middle of a notification is never touched. */
static SerialRecord *gOpenSerial = NULL;

static void serialDestructor(void *data);
static void serialMarker(xsMachine *the, void *data, xsMarkRoot markRoot);
static xsHostHooks gSerialHooks = { serialDestructor, serialMarker, NULL };

static void onStdin(void *ctx, int fd, short revents);
static void onKick(void *ctx);

/* ---- the input ring ----------------------------------------------------- */

static void ringTake(uint8_t *to, size_t n)
{
	if (!n)
		return;   /* `to` may be NULL for an empty buffer */
	size_t first = SERIAL_INPUT_BYTES - gInput.head;
	if (first > n)
		first = n;
	memcpy(to, gInput.bytes + gInput.head, first);
	memcpy(to + first, gInput.bytes, n - first);
	gInput.head = (gInput.head + n) % SERIAL_INPUT_BYTES;
	gInput.count -= n;
}

/* Reads once from stdin into the free space after the unread bytes; returns
 * the count, or 0 having set gInput.ended at end of file or on an error. */
static size_t ringFill(void)
{
	size_t tail = (gInput.head + gInput.count) % SERIAL_INPUT_BYTES;
	size_t room = SERIAL_INPUT_BYTES - gInput.count;
	if (room > SERIAL_INPUT_BYTES - tail)
		room = SERIAL_INPUT_BYTES - tail;
	ssize_t n = read(STDIN_FILENO, gInput.bytes + tail, room);
	if (n > 0) {
		gInput.count += (size_t)n;
		return (size_t)n;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	gInput.ended = 1;
	return 0;
}

/* ---- the terminal ------------------------------------------------------- */

static struct termios gTerminalSaved;          /* stdin's mode before the first Serial changed it */
static struct termios gTerminalCharacterMode;  /* gTerminalSaved without line editing and echo */
static int gTerminalPrepared = 0;              /* both are set, atexit and handlers installed */
static volatile sig_atomic_t gTerminalHeld = 0;   /* an open Serial holds stdin in character mode */
static struct sigaction gStopAction;           /* SIGTSTP's handler, installed again after each stop */

/* The signals whose default action ends the program. */
static const int kEndingSignals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };

/* Async-signal-safe; keeps errno, as a handler must. */
static void terminalSet(const struct termios *mode)
{
	int saved = errno;
	tcsetattr(STDIN_FILENO, TCSANOW, mode);
	errno = saved;
}

void hostTerminalRestore(void)
{
	if (gTerminalHeld) {
		gTerminalHeld = 0;
		terminalSet(&gTerminalSaved);
	}
}

/* SA_RESETHAND made the action the default again: the signal raised here
 * ends the program once the handler returns. */
static void onEndingSignal(int number)
{
	hostTerminalRestore();
	raise(number);
}

/* Ctrl-Z: the shell gets its terminal back while this program is stopped.
 * The stop happens inside raise() (the action is the default again and the
 * signal unblocked), so the handler resumes after SIGCONT, or at once in an
 * orphaned process group, where the kernel discards the stop. */
static void onStopSignal(int number)
{
	int saved = errno;
	if (gTerminalHeld)
		terminalSet(&gTerminalSaved);
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, number);
	sigprocmask(SIG_UNBLOCK, &stop, NULL);
	raise(number);
	sigaction(number, &gStopAction, NULL);
	if (gTerminalHeld)
		terminalSet(&gTerminalCharacterMode);
	errno = saved;
}

/* Installs handler for the signal when its action is still the default, and
 * copies the new action to *installed. An ignored signal stays ignored;
 * another handler (a sanitizer's) stays in place. */
static void terminalCatch(int number, void (*handler)(int), int flags, struct sigaction *installed)
{
	struct sigaction action;
	if (sigaction(number, NULL, &action) < 0 || (action.sa_flags & SA_SIGINFO) || action.sa_handler != SIG_DFL)
		return;
	memset(&action, 0, sizeof(action));
	action.sa_handler = handler;
	action.sa_flags = flags;
	sigemptyset(&action.sa_mask);
	if (sigaction(number, &action, NULL) == 0 && installed)
		*installed = action;
}

/* Once per process: remembers the terminal's mode and arranges for it to be
 * put back on every way out. Returns -1 with errno when the mode cannot be read. */
static int terminalPrepare(void)
{
	if (gTerminalPrepared)
		return 0;
	if (tcgetattr(STDIN_FILENO, &gTerminalSaved) < 0)
		return -1;
	gTerminalCharacterMode = gTerminalSaved;
	gTerminalCharacterMode.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ECHONL | IEXTEN);
	gTerminalCharacterMode.c_cc[VMIN] = 1;
	gTerminalCharacterMode.c_cc[VTIME] = 0;
	atexit(hostTerminalRestore);
	for (size_t i = 0; i < sizeof(kEndingSignals) / sizeof(kEndingSignals[0]); i++)
		terminalCatch(kEndingSignals[i], onEndingSignal, SA_RESETHAND, NULL);
	terminalCatch(SIGTSTP, onStopSignal, SA_RESETHAND | SA_RESTART, &gStopAction);
	gTerminalPrepared = 1;
	return 0;
}

/* When stdin is a terminal, puts it in character mode. Returns 0, or -1 with errno. */
static int terminalHold(void)
{
	if (!isatty(STDIN_FILENO))
		return 0;
	if (terminalPrepare() < 0)
		return -1;
	/* Held first: a signal arriving in between then restores a mode that was never left. */
	gTerminalHeld = 1;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &gTerminalCharacterMode) < 0) {
		int error = errno;
		gTerminalHeld = 0;
		errno = error;
		return -1;
	}
	return 0;
}

/* ---- the open Serial ---------------------------------------------------- */

static void serialUpdateWatch(SerialRecord *serial)
{
	int wanted = !gInput.ended && gInput.count < SERIAL_INPUT_BYTES;
	if (wanted && !serial->watch)
		serial->watch = hostWatch(STDIN_FILENO, POLLIN, onStdin, NULL);
	else if (!wanted && serial->watch) {
		hostUnwatch(serial->watch);
		serial->watch = NULL;
	}
}

/* Asks for a notification turn (onKick) on the next loop iteration. */
static void serialSchedule(SerialRecord *serial)
{
	if (!serial->kick)
		serial->kick = hostTimerStart(0, onKick, NULL);
}

static int serialEndDue(SerialRecord *serial)
{
	return gInput.ended && !gInput.count && !serial->endReported;
}

/* Calls the callbacks for whatever is pending. Re-reads gOpenSerial after
 * each call: the callback may have closed this Serial (and opened another). */
static void serialNotify(xsMachine *the)
{
	xsVars(1);
	SerialRecord *serial = gOpenSerial;
	if (serial && serial->pendingWritable) {
		serial->pendingWritable = 0;
		if (xsTypeOf(serial->onWritable) != xsUndefinedType)
			xsCallFunction1(serial->onWritable, serial->self, xsInteger(SERIAL_WRITABLE_BYTES));
	}
	serial = gOpenSerial;
	if (serial && serial->pendingReadable) {
		serial->pendingReadable = 0;
		if (gInput.count && xsTypeOf(serial->onReadable) != xsUndefinedType)
			xsCallFunction1(serial->onReadable, serial->self, xsInteger((int)gInput.count));
	}
	serial = gOpenSerial;
	if (serial && serialEndDue(serial)) {
		serial->endReported = 1;
		if (xsTypeOf(serial->onError) != xsUndefinedType) {
			xsVar(0) = xsNew1(xsGlobal, xsID("Error"), xsString("end of input"));
			xsCallFunction1(serial->onError, serial->self, xsVar(0));
		}
	}
}

/* Runs serialNotify from a loop callback. */
static void serialDeliver(void)
{
	if (!gOpenSerial)
		return;
	xsMachine *the = gOpenSerial->the;
	hostCallBegin(the);
	serialNotify(the);
	hostCallEnd(the);
}

static void onKick(void *ctx)
{
	(void)ctx;
	if (gOpenSerial)
		gOpenSerial->kick = NULL;
	serialDeliver();
}

static void onStdin(void *ctx, int fd, short revents)
{
	(void)ctx;
	(void)fd;
	SerialRecord *serial = gOpenSerial;
	if (!serial)
		return;
	size_t got = 0;
	if (revents & POLLNVAL)
		gInput.ended = 1;   /* stdin was closed before we started */
	else
		got = ringFill();
	serialUpdateWatch(serial);
	if (got)
		serial->pendingReadable = 1;
	if (got || serialEndDue(serial))
		serialDeliver();
}

/* Frees the record; the caller has detached it from its instance. */
static void serialFree(SerialRecord *serial)
{
	hostUnwatch(serial->watch);
	hostTimerCancel(serial->kick);
	if (gOpenSerial == serial) {
		gOpenSerial = NULL;
		hostTerminalRestore();
	}
	free(serial);
}

static void serialDestructor(void *data)
{
	if (data)
		serialFree(data);
}

static void serialMarker(xsMachine *the, void *data, xsMarkRoot markRoot)
{
	SerialRecord *serial = data;
	if (serial) {
		(*markRoot)(the, &serial->onReadable);
		(*markRoot)(the, &serial->onWritable);
		(*markRoot)(the, &serial->onError);
	}
}

/* ---- JS entry points ---------------------------------------------------- */

static int formatArgument(xsMachine *the, xsSlot *value)
{
	if (xsTypeOf(*value) == xsStringType) {
		const char *format = xsToString(*value);
		if (!strcmp(format, "number"))
			return kFormatNumber;
		if (!strcmp(format, "buffer"))
			return kFormatBuffer;
	}
	xsRangeError("Serial: invalid format (use \"number\" or \"buffer\")");
	return kFormatNumber;
}

static void xs_serial_constructor(xsMachine *the)
{
	xsVars(4);
	hostConstructThis(the, &gSerialHooks, "Serial");
	if (hostArgc < 1 || !xsIsInstanceOf(xsArg(0), xsObjectPrototype))
		xsTypeError("Serial: options object required");
	xsSlot *options = &xsArg(0);
	hostIntegerOption(the, options, "port", 0, 0, 0, "Serial");
	hostIntegerOption(the, options, "baud", 1, SERIAL_MAX_BAUD, 115200, "Serial");
	hostIntegerOption(the, options, "receive", 0, SERIAL_MAX_PIN, 0, "Serial");
	hostIntegerOption(the, options, "transmit", 0, SERIAL_MAX_PIN, 0, "Serial");
	int format = kFormatNumber;
	if (hostHasOption(the, options, "format")) {
		xsVar(0) = xsGet(*options, xsID("format"));
		format = formatArgument(the, &xsVar(0));
	}
	hostCallbackOption(the, options, "onReadable", &xsVar(0), "Serial");
	hostCallbackOption(the, options, "onWritable", &xsVar(1), "Serial");
	hostCallbackOption(the, options, "onError", &xsVar(2), "Serial");
	/* stdin, the ring and the terminal mode are the process's: one owner. */
	if (hostLoop() && hostLoop()->worker)
		xsUnknownError("Serial: the console belongs to the main machine; a worker reaches it by message");
	if (gOpenSerial)
		xsUnknownError("Serial: the console is already open; close the other Serial first");
	if (hostHasOption(the, options, "target")) {
		xsVar(3) = xsGet(*options, xsID("target"));
		xsSet(xsThis, xsID("target"), xsVar(3));
	}
	SerialRecord *serial = calloc(1, sizeof(SerialRecord));
	if (!serial)
		xsUnknownError("Serial: out of memory");
	if (terminalHold() < 0) {
		int error = errno;
		free(serial);
		xsUnknownError("Serial: cannot put the terminal in character mode: %s", strerror(error));
	}
	serial->the = the;
	serial->self = xsThis;
	serial->onReadable = xsVar(0);
	serial->onWritable = xsVar(1);
	serial->onError = xsVar(2);
	serial->format = format;
	xsSetHostData(xsThis, serial);
	xsRemember(serial->self);
	gOpenSerial = serial;
	serialUpdateWatch(serial);
	serial->pendingReadable = gInput.count > 0;
	serial->pendingWritable = xsTypeOf(serial->onWritable) != xsUndefinedType;
	if (serial->pendingReadable || serial->pendingWritable || serialEndDue(serial))
		serialSchedule(serial);
}

/* After input was consumed: watch stdin again if it was full, and report the
 * end of input once the last byte is gone. */
static void serialConsumed(SerialRecord *serial)
{
	serialUpdateWatch(serial);
	if (serialEndDue(serial))
		serialSchedule(serial);
}

static void xs_serial_read(xsMachine *the)
{
	SerialRecord *serial = hostThis(the, &gSerialHooks, "Serial");
	size_t available = gInput.count;
	int type = hostArgc > 0 ? xsTypeOf(xsArg(0)) : xsUndefinedType;
	if (type == xsReferenceType) {
		size_t length;
		uint8_t *bytes = hostBytes(the, &xsArg(0), &length, "Serial");
		size_t n = length < available ? length : available;
		ringTake(bytes, n);
		xsResult = xsInteger((int)n);
	}
	else if (type != xsUndefinedType) {
		if (serial->format != kFormatBuffer)
			xsTypeError("Serial: read(byteLength) needs format \"buffer\"");
		if (type != xsIntegerType && type != xsNumberType)
			xsTypeError("Serial: read takes a byte count or a buffer");
		double requested = xsToNumber(xsArg(0));
		if (!hostIsWhole(requested, 0, HOST_MAX_SAFE_INTEGER))
			xsRangeError("Serial: invalid byteLength");
		if (!available)
			return;
		size_t n = requested < (double)available ? (size_t)requested : available;
		xsResult = xsArrayBuffer(NULL, (xsIntegerValue)n);
		ringTake(xsToArrayBuffer(xsResult), n);
	}
	else {
		if (!available)
			return;
		if (serial->format == kFormatNumber) {
			uint8_t byte;
			ringTake(&byte, 1);
			xsResult = xsInteger(byte);
		}
		else {
			xsResult = xsArrayBuffer(NULL, (xsIntegerValue)available);
			ringTake(xsToArrayBuffer(xsResult), available);
		}
	}
	serialConsumed(serial);
}

static void writeAll(xsMachine *the, const uint8_t *bytes, size_t length)
{
	while (length) {
		ssize_t n = write(STDOUT_FILENO, bytes, length);
		if (n > 0) {
			bytes += n;
			length -= (size_t)n;
		}
		else if (n < 0 && errno == EAGAIN) {
			/* Someone else made stdout non-blocking: wait for room. */
			struct pollfd out = { STDOUT_FILENO, POLLOUT, 0 };
			poll(&out, 1, -1);
		}
		else if (!(n < 0 && errno == EINTR))
			xsUnknownError("Serial: cannot write to stdout: %s", n < 0 ? strerror(errno) : "no progress");
	}
}

static void xs_serial_write(xsMachine *the)
{
	SerialRecord *serial = hostThis(the, &gSerialHooks, "Serial");
	if (hostArgc < 1)
		xsTypeError("Serial: write takes a byte or a buffer");
	int type = xsTypeOf(xsArg(0));
	if (type == xsIntegerType || type == xsNumberType) {
		double value = xsToNumber(xsArg(0));
		if (!hostIsWhole(value, 0, 255))
			xsRangeError("Serial: a byte is 0 to 255");
		uint8_t byte = (uint8_t)value;
		writeAll(the, &byte, 1);
	}
	else {
		size_t length;
		const uint8_t *bytes = hostBytes(the, &xsArg(0), &length, "Serial");
		writeAll(the, bytes, length);
	}
	if (xsTypeOf(serial->onWritable) != xsUndefinedType) {
		serial->pendingWritable = 1;
		serialSchedule(serial);
	}
}

/* ECMA-419: flush() discards unread input and unsent output; flush(input,
 * output) chooses. Output is never held here, so only input is affected. */
static void xs_serial_flush(xsMachine *the)
{
	SerialRecord *serial = hostThis(the, &gSerialHooks, "Serial");
	if (hostArgc == 0 || xsTest(xsArg(0))) {
		gInput.head = 0;
		gInput.count = 0;
		serialConsumed(serial);
	}
}

static void xs_serial_close(xsMachine *the)
{
	SerialRecord *serial = hostThisOrNull(the, &gSerialHooks, "Serial");
	if (!serial)
		return;
	xsForget(serial->self);
	xsSetHostData(xsThis, NULL);
	serialFree(serial);
}

static void xs_serial_get_format(xsMachine *the)
{
	SerialRecord *serial = hostThis(the, &gSerialHooks, "Serial");
	xsResult = xsString(serial->format == kFormatBuffer ? "buffer" : "number");
}

static void xs_serial_set_format(xsMachine *the)
{
	SerialRecord *serial = hostThis(the, &gSerialHooks, "Serial");
	serial->format = formatArgument(the, &xsArg(0));
}

/* Whether stdin is a terminal: an open Serial then holds it in character
 * mode, and the console draws what is typed. */
static void xs_serial_stdinIsTerminal(xsMachine *the)
{
	xsResult = xsBoolean(isatty(STDIN_FILENO) ? 1 : 0);
}

static const HostMember gSerialMembers[] = {
	{ "read", xs_serial_read, 1, 0 },
	{ "write", xs_serial_write, 1, 0 },
	{ "flush", xs_serial_flush, 0, 0 },
	{ "close", xs_serial_close, 0, 0 },
	{ "format", xs_serial_get_format, 0, 1 },
	{ "format", xs_serial_set_format, 1, 2 },
	{ NULL }
};

void hostInstallSerial(xsMachine *the, xsSlot *native)
{
	hostDefineClass(the, native, "Serial", xs_serial_constructor, 1, gSerialMembers, &gSerialHooks);
	hostDefineFunction(the, native, "stdinIsTerminal", xs_serial_stdinIsTerminal, 0);
}
