// Network specifiers @moddable/typings lacks or types poorly, declared as the lin
// host implements them (hosts/lin/src/tls.c, dns.c); test/peer/tls.ts and
// test/unit/dns.test.ts check these shapes against what the C returns.
// "embedded:io/socket/tcp" comes from @moddable/typings; where our TCP differs
// from it (read() may return undefined, write() returns the bytes still
// writable, onError gets a message) TLS below states the real shape, which TCP
// shares.

declare module "embedded:io/socket/tcp/tls" {
	import type { Buffer } from "embedded:io/_common";

	export interface SecureOptions {
		/** Name to send as SNI and verify; defaults to `host`. */
		serverName?: string;
		/** One DER CA certificate to trust instead of the configured ones. */
		certificate?: ArrayBuffer | ArrayBufferView;
		/** Verify the server's certificate and name (default true). */
		verify?: boolean;
		/** Milliseconds the connection and handshake may take before onError (default 30000). */
		handshakeTimeout?: number;
	}

	/** What mbedtls holds, counted through the TLS core's allocator. */
	export interface TLSMemory {
		bytes: number;
		peakBytes: number;
		allocations: number;
		/** The Mbed TLS version built in, e.g. "2.28.3", "4.0.0". */
		library: string;
	}
	/** The counters; resetPeak starts a new peak from what is held now. */
	export function memory(resetPeak?: boolean): TLSMemory;
	/** Forgets the sessions kept for resumption: the next handshakes are full ones. */
	export function forgetSessions(): void;

	export interface Options {
		/** An IP literal: resolve names first (embedded:network/dns/resolver/udp). */
		address: string;
		port: number;
		/** The server's name: SNI and the name its certificate must carry. Required unless secure.verify is false. */
		host?: string;
		secure?: SecureOptions;
		nodelay?: boolean;
		format?: "buffer" | "number";
		target?: unknown;
		/** Bytes available to read. */
		onReadable?: (this: TLS, bytes: number) => void;
		/** Bytes that may be written: after the handshake, then whenever the output queue drains. */
		onWritable?: (this: TLS, bytes: number) => void;
		/** Once, after the data received before the failure has been read. */
		onError?: (this: TLS, message: string) => void;
	}

	export default class TLS {
		constructor(options: Options);
		readonly remoteAddress: string;
		readonly remotePort: number;
		format: "buffer" | "number";
		target?: unknown;
		/** "buffer" format: the bytes available (up to byteLength); "number": one byte. undefined when none. */
		read(byteLength?: number): ArrayBuffer | number | undefined;
		/** Fills buffer with up to its length; returns the count, undefined when none. */
		read(buffer: Buffer): number | undefined;
		/** Returns the bytes still writable; throws when more than that is written. */
		write(value: Buffer | number): number;
		/** Idempotent; nothing calls back afterwards. */
		close(): void;
		/** Whether the handshake resumed a kept session (no certificate was exchanged). */
		readonly resumed: boolean;
		/** "TLSv1.2" or "TLSv1.3" once the handshake is done, "" before. */
		readonly protocol: string;
	}
}

declare module "embedded:network/dns/resolver/udp" {
	export interface Options {
		/** Device options, ignored on the lin host (the system resolver answers). */
		servers?: string[];
		socket?: unknown;
	}

	export interface ResolveOptions {
		host: string;
		/** address: an IPv4 address when the name has one, else IPv6. */
		onResolved?: (this: Resolver, host: string, address: string) => void;
		onError?: (this: Resolver, host: string, message: string) => void;
	}

	export default class Resolver {
		constructor(options?: Options);
		/** Answers on a later loop turn, never from inside resolve(). */
		resolve(options: ResolveOptions): void;
		/** Idempotent; pending callbacks never come. */
		close(): void;
	}
}
