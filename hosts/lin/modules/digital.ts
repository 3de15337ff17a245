// digital on the lin host: the native class of hosts/lin/src/digital.c.
const Digital = __xsclaw.Digital;
export default Digital;
