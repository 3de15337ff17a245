// dns on the lin host: the native class of hosts/lin/src/dns.c.
const Resolver = __xsclaw.Resolver;
export default Resolver;
