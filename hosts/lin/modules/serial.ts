// serial on the lin host: the native class of hosts/lin/src/serial.c.
const Serial = __xsclaw.Serial;
export default Serial;
