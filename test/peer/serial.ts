// A tiny console on embedded:io/serial, driven by test/e2e/serial.test.mjs
// through stdin/stdout. It prints "boot" when a machine starts, then
// "line: <text>" for each input line, and "end: <message>" once onError
// reports the end of input (then exits 0 after a pause, so a second onError
// would show). With --reboot yes, the line "reboot" reboots the machine,
// leaving the rest of the input unread. The line "exit" exits 0 at once
// (a terminal has no end of input). With --close yes, it closes the
// Serial at once and waits for nothing: the program must end by itself.
// With --slow yes, it reads one line per millisecond instead of on onReadable.
import Serial from "embedded:io/serial";
import Timer from "timer";
import { exit, option, reboot } from "host/platform";

const PAUSE_BEFORE_EXIT_MS = 50;
const SLOW_LINE_INTERVAL_MS = 1;

function send(serial: Serial, text: string): void {
	serial.write(ArrayBuffer.fromString(text));
}

let line = "";
let rebooting = false;

// Reads bytes up to the end of one line and answers it; false when no
// complete line is waiting. One byte at a time, so a reboot leaves the rest
// of the input unread.
function answerLine(serial: Serial): boolean {
	while (!rebooting) {
		const byte = serial.read(1) as ArrayBuffer | undefined;
		if (!byte) return false;
		const char = String.fromArrayBuffer(byte);
		if (char !== "\n") {
			line += char;
			continue;
		}
		send(serial, `line: ${line}\n`);
		if (line === "exit") exit(0);
		if (line === "reboot" && option("reboot") === "yes") {
			rebooting = true;
			reboot();
		}
		line = "";
		return true;
	}
	return false;
}

const slow = option("slow") === "yes";
const serial: Serial = new Serial({
	baud: 115200,
	port: 0,
	receive: 44,
	transmit: 43,
	format: "buffer",
	onReadable(this: Serial) {
		if (!slow) while (answerLine(this));
	},
	onError(error: Error) {
		send(serial, `end: ${error.message}\n`);
		Timer.set(() => exit(0), PAUSE_BEFORE_EXIT_MS);
	},
} as ConstructorParameters<typeof Serial>[0]);
// A slow reader takes one line per millisecond, so input piles up and fills
// the host's buffer.
if (slow) Timer.repeat(() => answerLine(serial), SLOW_LINE_INTERVAL_MS);
send(serial, "boot\n");
if (option("close") === "yes") serial.close();
