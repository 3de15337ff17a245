// net/sockets: the one adapter between modules/ and the ECMA-419 socket modules
// of whichever target is being built (util/io is the storage's). Where the SDK's
// declarations and ours (typings/lin/) differ this file bridges them:
// - the SDK declares read() as always returning data and write() as void,
//   where the C (and the lin host) return undefined when nothing is there and
//   the writable count; net/http states the real shapes (net/types);
// - the SDK's TLS socket builds its TCP socket from options.TCP (an ECMA-419
//   IO descriptor); the DNS resolver needs servers and a UDP socket, which the
//   board gives (host/platform resolverOptions).
// On the device embedded:io/socket/tcp/tls is our mbedtls module
// (hosts/esp32/tls), which ignores options.TCP; the SDK's JavaScript example
// needed it.
// Only this module imports the embedded:io/socket and DNS resolver specifiers
// (and httpd/sockets, the server's listener, in the main machine only).
import TCP from "embedded:io/socket/tcp";
import TLS from "embedded:io/socket/tcp/tls";
import Resolver from "embedded:network/dns/resolver/udp";
import { resolverOptions } from "host/platform";
import type { ResolverConstructor, TcpConstructor, TlsConstructor, TlsOptions } from "net/types";

export const TcpSocket = TCP as unknown as TcpConstructor;

const TlsBase = TLS as unknown as TlsConstructor;
/** The TLS socket, told which TCP socket to build on (the SDK's needs it; ours ignores it). */
export const TlsSocket: TlsConstructor = function (options: TlsOptions) {
	return new TlsBase({ ...options, TCP: { io: TCP } } as TlsOptions);
} as unknown as TlsConstructor;

const ResolverBase = Resolver as unknown as ResolverConstructor;
/** The DNS resolver with the board's servers and UDP socket. */
export const DnsResolver: ResolverConstructor = function (options: object) {
	return new ResolverBase({ ...resolverOptions(), ...options });
} as unknown as ResolverConstructor;
