// console/port: the console on the board's serial port (`embedded:io/serial`:
// UART0 on the device, stdin/stdout on the lin host), wired to a Repl.
//
// Bytes are read one at a time (format "number") and only while the Repl takes
// input: after `reboot` the rest stays unread in the port, and the restarted
// firmware's console runs it (the lin host keeps unread input across a reboot).
// At end of input (onError "end of input", lin only) the Repl finishes its
// lines and calls onEnd.
import Serial from "embedded:io/serial";
import { CONSOLE_BAUD } from "budgets";
import { Repl, type ReplOptions } from "console/repl";
import { messageOf } from "util/errors";

const END_OF_INPUT = "end of input";

// ESP32-S3 UART0 (device.Serial.default); the lin host checks these and ignores them.
const UART0 = { port: 0, receive: 44, transmit: 43, baud: CONSOLE_BAUD };

/** Opens the console port and returns its Repl, not yet started. */
export function openConsole(options: Omit<ReplOptions, "write">): Repl {
	const byte = new Uint8Array(1);
	// The SDK's typings lack onError; the lin host and ECMA-419 both call it.
	const serialOptions = {
		...UART0,
		format: "number" as const,
		onReadable(this: Serial) {
			while (repl.accepting) {
				const value = this.read();
				if (typeof value !== "number") return;
				byte[0] = value;
				repl.receive(byte);
			}
		},
		onError(error: unknown) {
			const message = messageOf(error);
			if (message !== END_OF_INPUT) repl.output.line(`console: ${message}`);
			repl.end();
		},
	};
	const serial = new Serial(serialOptions);
	const repl: Repl = new Repl({ ...options, write: (text) => serial.write(ArrayBuffer.fromString(text)) });
	return repl;
}
