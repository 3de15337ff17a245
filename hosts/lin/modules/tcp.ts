// tcp on the lin host: the native class of hosts/lin/src/tcp.c.
const TCP = __xsclaw.TCP;
export default TCP;
