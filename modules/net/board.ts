// net/board: the board's HTTP client and WebSockets, wired once: its TCP and TLS sockets, its DNS
// resolver, its timer and clock, and the PSRAM pool for big buffers. main.ts and
// the test peers that talk to real servers use this, so they run the same wiring.
// The sockets come typed from util/io (the one adapter between the targets'
// declarations). `online` holds name lookups (and so every connection to a
// named host) until the board is on a network with its clock set: on the device
// Wi-Fi and SNTP come first, since a certificate cannot be checked in 1970.
import Timer from "timer";
import * as psram from "psram";
import { now, randomBytes } from "host/platform";
import { HttpClient } from "net/http";
import type { OnlineGate } from "net/online";
import type { AbortSignalLike, ResolveRequest, ResolverConstructor, ResolverLike } from "net/types";
import { WebSocketClient } from "net/websocket/client";
import { psramBuffers, type BufferPool } from "util/buffers";
import { DnsResolver, TcpSocket, TlsSocket } from "util/io";

/** Opens a WebSocket on the board's sockets (what the QQ gateway asks for). */
export type BoardWebSocket = (url: string, onMessage: (data: string | Uint8Array) => void, signal?: AbortSignalLike) => WebSocketClient;

export interface BoardHttp {
	http: HttpClient;
	/** The "psram" pool: HTTP bodies, images and request bodies with images. Its
	 * resize lets a chunked HTTP body grow in place instead of by copying. */
	buffers: BufferPool;
	/** WebSockets on the same sockets and pool (boardWebSocket). */
	webSocket: BoardWebSocket;
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
	return { http, buffers, webSocket: boardWebSocket(buffers, online) };
}

/**
 * WebSockets on the same wiring as boardHttp: TCP, TLS (the firmware's CA set),
 * the gated resolver, the PSRAM pool for received messages, and the board's
 * RNG (host/platform randomBytes: the hardware RNG on the device) for the
 * handshake key and every frame's mask.
 */
export function boardWebSocket(buffers: BufferPool, online?: OnlineGate): BoardWebSocket {
	const Resolver = online ? gatedResolver(DnsResolver, online) : DnsResolver;
	return (url, onMessage, signal) => new WebSocketClient({
		url, TCP: TcpSocket, TLS: TlsSocket, Resolver, Timer, buffers, random: randomBytes, onMessage, ...(signal ? { signal } : {}),
	});
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
