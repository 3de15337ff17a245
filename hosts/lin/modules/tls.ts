// tls on the lin host: the native class of hosts/lin/src/tls.c (its mbedtls half
// is hosts/common/tls, shared with the board).
import type { TLSMemory } from "embedded:io/socket/tcp/tls";

const native = __xsclaw;
const TLS = native.TLS;
export default TLS;
export function memory(resetPeak = false): TLSMemory { return native.tlsMemory(resetPeak); }
export function forgetSessions(): void { native.tlsForgetSessions(); }
