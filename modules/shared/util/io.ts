// util/io: the one adapter between modules/ and the ECMA-419 IO modules of
// whichever target is being built. The device build type-checks against the
// Moddable SDK's declarations, the lin build against ours (typings/lin/); where
// the two differ this file bridges them, so nothing else in modules/ casts:
// - embedded:storage/files: the SDK declares no default export (files.js has
//   one, the root Directory);
// - embedded:storage/key-value: the SDK's read() may return number or bigint
//   (numeric formats, which we never open); ours returns ArrayBuffer | string;
// - the sockets: the SDK declares read() as always returning data and write()
//   as void, where the C (and the lin host) return undefined when nothing is
//   there and the writable count; net/http states the real shapes (net/types);
// - the SDK's TLS socket builds its TCP socket from options.TCP (an ECMA-419
//   IO descriptor); the DNS resolver needs servers and a UDP socket, which the
//   board gives (host/platform resolverOptions).
// On the device embedded:io/socket/tcp/tls is our mbedtls module
// (hosts/esp32/tls), which ignores options.TCP; the SDK's JavaScript example
// needed it.
// Only this module imports the embedded:storage and embedded:io/socket specifiers.
import * as filesModule from "embedded:storage/files";
import type { Directory as DirectoryType, File as FileType } from "embedded:storage/files";
import keyValue from "embedded:storage/key-value";
import TCP from "embedded:io/socket/tcp";
import TLS from "embedded:io/socket/tcp/tls";
import Resolver from "embedded:network/dns/resolver/udp";
import { resolverOptions } from "host/platform";
import type { ResolverConstructor, TcpConstructor, TlsConstructor, TlsOptions } from "net/types";

export type Directory = DirectoryType;
export type File = FileType;

/** The root of the storage: littlefs's "storage" partition, or <data>/files on lin. */
export const files: Directory = (filesModule as unknown as { default: Directory }).default;

/** A key-value namespace holding bytes (format "buffer"). */
export interface KeyValueStore {
	/** The stored bytes (a string only if someone else wrote one), or undefined when absent. */
	read(key: string): ArrayBuffer | string | undefined;
	write(key: string, value: ArrayBuffer): void;
	delete(key: string): void;
	[Symbol.iterator](): Iterator<string>;
	close(): void;
}

/** Opens a namespace (NVS on the device). Throws as the store does. */
export function openKeyValue(path: string, mode: "r" | "r+" = "r+"): KeyValueStore {
	const store = keyValue.open({ path, mode });
	return {
		read(key) {
			const value: unknown = store.read(key);
			if (value === undefined || typeof value === "string" || value instanceof ArrayBuffer) return value;
			throw new TypeError(`the entry ${key} holds a ${typeof value}, not bytes`);
		},
		write: (key, value) => store.write(key, value),
		delete: (key) => store.delete(key),
		[Symbol.iterator]: () => store[Symbol.iterator](),
		close: () => store.close(),
	};
}

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
