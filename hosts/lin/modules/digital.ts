// embedded:io/digital on the lin host: the native class of hosts/lin/src/digital.c,
// a simulated pin bank (GPIO 0..48) that "host/pins" drives and observes.
const Digital = __xsclaw.Digital;
export default Digital;
