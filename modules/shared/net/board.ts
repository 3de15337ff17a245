// net/board: the board's HTTP client, wired once: its TCP and TLS sockets, its DNS
// resolver, its timer and clock, and the PSRAM pool for big buffers. main.ts and
// the test peers that talk to real servers use this, so they run the same wiring.
// The sockets come typed from net/sockets (the one adapter between the targets'
// declarations); net/websocket/board wires WebSockets the same way (a module of
// its own, so the agent machine, which loads this one, does not load the
// WebSocket client). `online` holds name lookups (and so every connection to a
// named host) until the board is on a network with its clock set: on the device
// Wi-Fi and SNTP come first, since a certificate cannot be checked in 1970.
import Timer from "timer";
import * as psram from "psram";
import { now } from "host/platform";
import { HttpClient } from "net/http";
import type { OnlineGate } from "net/online";
import type { ResolveRequest, ResolverConstructor, ResolverLike } from "net/types";
import { psramBuffers, type BufferPool } from "util/buffers";
import { DnsResolver, TcpSocket, TlsSocket } from "net/sockets";

export interface BoardHttp {
	http: HttpClient;
	/** The "psram" pool: HTTP bodies, images and request bodies with images. Its
	 * resize lets a chunked HTTP body grow in place instead of by copying. */
	buffers: BufferPool;
}

/** One HTTP client for every outgoing request (keep-alive per origin). */
export function boardHttp(online?: OnlineGate): BoardHttp {
	const buffers = psramBuffers(psram);
	const http = new HttpClient({
		TCP: TcpSocket,
		TLS: TlsSocket,
		Resolver: online ? gatedResolver(DnsResolver, online) : DnsResolver,
		Timer,
		now,
		buffers,
	});
	return { http, buffers };
}

/** A resolver whose lookups wait for the gate; a closed gate fails them with its sentence. */
export function gatedResolver(Base: ResolverConstructor, online: OnlineGate): ResolverConstructor {
	return class GatedResolver implements ResolverLike {
		#base: ResolverLike;
		#closed = false;
		constructor(options: object) {
			this.#base = new Base(options);
		}
		resolve(request: ResolveRequest): void {
			online(
				() => { if (!this.#closed) this.#base.resolve(request); },
				() => { if (!this.#closed) request.onError(request.host); },
			);
		}
		close(): void {
			this.#closed = true;
			this.#base.close?.();
		}
	};
}
