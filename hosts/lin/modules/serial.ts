// embedded:io/serial on the lin host: the native class of hosts/lin/src/serial.c,
// the console on stdin/stdout. See typings/lin/io.d.ts for what differs from a UART.
const Serial = __xsclaw.Serial;
export default Serial;
