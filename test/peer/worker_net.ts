// The worker for test/peer/worker-net.ts: TCP sockets and timers on the
// worker's own loop, against the e2e test's echo server on 127.0.0.1.
import TCP from "embedded:io/socket/tcp";
import Timer from "timer";
import { heap } from "host/platform";
import { connect, roundTrip, type Link, type StreamClass } from "./stream";

const Socket = TCP as unknown as StreamClass;
const held: Link[] = [];

self.onmessage = async function (message: any) {
	try {
		switch (message.command) {
			case "echo": {
				// A timer first: the worker's loop runs timers and sockets alike.
				await new Promise((resolve) => Timer.set(resolve, 20));
				const link = await connect(Socket, { address: "127.0.0.1", port: message.port });
				const echoed = await roundTrip(link, message.text);
				link.socket.close();
				self.postMessage({ echoed });
				return;
			}
			case "hold": {
				for (let i = 0; i < message.count; i++) held.push(await connect(Socket, { address: "127.0.0.1", port: message.port }));
				self.postMessage({ holding: held.length, sockets: heap().sockets });
				return;
			}
			case "grow": {
				const hoard: string[] = [];
				for (;;) hoard.push("w".repeat(1024) + hoard.length);
			}
		}
	} catch (error) {
		self.postMessage({ error: (error as Error).message });
	}
};
