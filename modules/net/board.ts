// net/board: the board's HTTP client, wired once: its TCP and TLS sockets, its DNS
// resolver, its timer and clock, and the PSRAM pool for big buffers. main.ts and
// the test peers that talk to real servers use this, so they run the same wiring.
//
// @moddable/typings declares the socket classes a little differently from what
// the SDK's C (and our lin host) returns (read() may give undefined, write()
// returns a count): they are cast here, once, to the option types net/http uses.
import TCP from "embedded:io/socket/tcp";
import TLS from "embedded:io/socket/tcp/tls";
import Resolver from "embedded:network/dns/resolver/udp";
import Timer from "timer";
import * as psram from "psram";
import { now } from "host/platform";
import { HttpClient } from "net/http";
import type { HttpClientOptions } from "net/types";
import { psramBuffers, type BufferPool } from "util/buffers";

export interface BoardHttp {
	http: HttpClient;
	/** The "psram" pool: HTTP bodies, images and request bodies with images. Its
	 * resize lets a chunked HTTP body grow in place instead of by copying. */
	buffers: BufferPool;
}

/** One HTTP client for every outgoing request (keep-alive per origin). */
export function boardHttp(): BoardHttp {
	const buffers = psramBuffers(psram);
	const http = new HttpClient({
		TCP: TCP as unknown as HttpClientOptions["TCP"],
		TLS: TLS as unknown as HttpClientOptions["TLS"],
		Resolver: Resolver as unknown as HttpClientOptions["Resolver"],
		Timer,
		now,
		buffers,
	});
	return { http, buffers };
}
