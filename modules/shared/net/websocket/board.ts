// net/websocket/board: WebSockets on the board's wiring, as net/board does HTTP:
// TCP, TLS (the firmware's CA set), the resolver gated by the Wi-Fi station, the
// PSRAM pool for received messages, and the board's RNG (host/random through
// util/random: the hardware RNG on the device, getrandom on lin) for the
// handshake key and every frame's mask. Only the main machine (the QQ channel) imports it, so the agent
// machine's heap holds no WebSocket code.
import Timer from "timer";
import { gatedResolver } from "net/board";
import type { OnlineGate } from "net/online";
import type { AbortSignalLike } from "net/types";
import { WebSocketClient } from "net/websocket/client";
import type { BufferPool } from "util/buffers";
import { DnsResolver, TcpSocket, TlsSocket } from "net/sockets";
import { randomFill } from "util/random";

/** Opens a WebSocket on the board's sockets (what the QQ gateway asks for). */
export type BoardWebSocket = (url: string, onMessage: (data: string | Uint8Array) => void, signal?: AbortSignalLike) => WebSocketClient;

/** buffers: the board's PSRAM pool (net/board's boardHttp gives it); online: the station's gate. */
export function boardWebSocket(buffers: BufferPool, online?: OnlineGate): BoardWebSocket {
	const Resolver = online ? gatedResolver(DnsResolver, online) : DnsResolver;
	return (url, onMessage, signal) => new WebSocketClient({
		url, TCP: TcpSocket, TLS: TlsSocket, Resolver, Timer, buffers, random: randomFill, onMessage, ...(signal ? { signal } : {}),
	});
}
