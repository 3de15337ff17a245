// udp on the lin host: the native class of hosts/lin/src/udp.c (embedded:io/socket/udp's shape, plus port).
const UDP = __xsclaw.UDP;
export default UDP;
