// console/port: the console on the board's serial port (`embedded:io/serial`:
// UART0 on the device, stdin/stdout on the lin host), wired to a Repl.
//
// Bytes are read one at a time (format "number", Repl.takeFrom) and only while
// the Repl wants input. While CONSOLE_PENDING_LINES lines wait for a running command, nothing
// is read: on lin the host's input ring fills and it stops reading stdin, so a
// pipe's writer waits and no line is lost; when a line has run, the Repl's
// onRoom reads on. (On the device the UART driver's receive buffer holds what
// comes meanwhile; input beyond it is lost: see docs/device.md.) After `reboot` the
// rest stays unread in the port, and the restarted firmware's console runs it
// (the lin host keeps unread input across a reboot). At end of input (onError
// "end of input", lin only, once every byte was read) the Repl finishes its
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
	// The SDK's typings lack onError; the lin host and ECMA-419 both call it.
	const serialOptions = {
		...UART0,
		format: "number" as const,
		onReadable(this: Serial) {
			pump();
		},
		onError(error: unknown) {
			const message = messageOf(error);
			if (message !== END_OF_INPUT) repl.output.line(`console: ${message}`);
			repl.end();
		},
	};
	const serial = new Serial(serialOptions);
	// Reads while the Repl wants bytes; what is left stays in the port.
	const pump = () => repl.takeFrom(serial);
	const repl: Repl = new Repl({
		...options,
		write: (text) => serial.write(ArrayBuffer.fromString(text)),
		// Not from inside the Repl's own call: a later turn reads on.
		onRoom: () => void Promise.resolve().then(pump),
	});
	return repl;
}
