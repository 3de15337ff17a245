// The WebSocket client (modules/shared/net/websocket) end to end: test/peer/websocket.ts
// runs inside the lin host on the real TCP/TLS sockets and PSRAM buffers,
// against the `ws` npm package's server (an independent RFC 6455
// implementation: it refuses unmasked client frames) on 127.0.0.1, over plain
// TCP and over TLS with the test CA. Routes by path:
//   /echo        echoes text as text, binary as binary; "?close" answers the
//                last close code and reason the server received, as JSON
//   /fragments   sends one text message in three fragments, then a ping "hb";
//                echoes "pong:<payload>" when the pong comes back
//   /close       closes at once with 4001 "bye"
//   /big?n=N     sends one binary message of N bytes
//   /badaccept   answers 101 with a wrong Sec-WebSocket-Accept
//   /denied      answers 401
//   /hang        accepts the TCP connection and never answers
//   /mute        completes the handshake (accept key from node:crypto), then
//                reads and answers nothing, not even a close
import { test } from "node:test";
import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer } from "ws";
import { closer, freePort, listen } from "../../tools/peers.mjs";
import { makeTestCA } from "../../tools/testca.mjs";
import { TLS_VARIANTS, runXsTests } from "./xs.mjs";

function startWsServer(server) {
	const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
	let lastClose = null;
	server.on("upgrade", (req, socket, head) => {
		socket.on("error", () => {});
		const url = new URL(req.url, "http://x");
		if (url.pathname === "/denied") return socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
		if (url.pathname === "/badaccept") {
			return socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
				+ "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
		}
		if (url.pathname === "/hang") return;
		if (url.pathname === "/mute") {
			const accept = createHash("sha1").update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
			return socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
		}
		wss.handleUpgrade(req, socket, head, (ws) => {
			ws.on("error", () => {});
			ws.on("close", (code, reason) => { lastClose = { code, reason: reason.toString() }; });
			if (url.pathname === "/echo") {
				ws.on("message", (data, isBinary) => {
					if (!isBinary && data.toString() === "?close") return ws.send(JSON.stringify(lastClose));
					ws.send(data, { binary: isBinary });
				});
			} else if (url.pathname === "/fragments") {
				ws.send("frag", { fin: false });
				ws.send("ment", { fin: false });
				ws.send("ed \u4e16\u754c", { fin: true });
				ws.on("pong", (data) => ws.send(`pong:${data.toString()}`));
				ws.ping("hb");
			} else if (url.pathname === "/close") {
				ws.close(4001, "bye");
			} else if (url.pathname === "/big") {
				ws.send(Buffer.alloc(Number(url.searchParams.get("n")), 0x5a));
			} else ws.close(1008, "unknown path");
		});
	});
	return wss;
}

for (const variant of TLS_VARIANTS) {
	test(`WebSocket client against the ws server, over TCP and TLS [${variant}]`, async (t) => {
		const dir = mkdtempSync(join(tmpdir(), "xsclaw-ws-"));
		const plain = http.createServer((_, res) => res.writeHead(404).end());
		const stopPlain = closer(plain);
		let stopSecure = async () => {};
		try {
			const ca = await makeTestCA(dir);
			const secure = https.createServer({ cert: ca.server.cert, key: ca.server.key }, (_, res) => res.writeHead(404).end());
			stopSecure = closer(secure);
			startWsServer(plain);
			startWsServer(secure);
			const port = await listen(plain);
			const securePort = await listen(secure);
			await runXsTests(t, "test/peer/websocket", {
				variant,
				options: {
					"ws-url": `ws://127.0.0.1:${port}`,
					"wss-url": `wss://localhost:${securePort}`,
					"ca-der-hex": ca.ca.der.toString("hex"),
					"refused-port": await freePort(),
				},
			});
		} finally {
			await stopPlain();
			await stopSecure();
			rmSync(dir, { recursive: true, force: true });
		}
	});
}
