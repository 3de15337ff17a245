// tls on the lin host: the native class of hosts/lin/src/tls.c.
const TLS = __xsclaw.TLS;
export default TLS;
