// A worker for test/unit/worker.test.ts: echoes every message back, and obeys
// a few commands sent as {command}.
import Timer from "timer";
import { collectGarbage } from "host/platform";

let received = 0;
self.onmessage = function (message: any) {
	received++;
	if (message && typeof message === "object" && typeof message.command === "string") {
		switch (message.command) {
			case "count": self.postMessage({ received }); return;
			case "literal": self.postMessage({ literal: "a string literal of the worker's own code" }); return;
			case "close": self.postMessage({ closing: true }); self.close(); return;
			case "throw": throw new Error("thrown in the worker on purpose");
			case "reject":
				Promise.reject(new Error("rejected in the worker on purpose"));
				// XS reports a rejection nobody handled once its promise is collected.
				Timer.set(() => collectGarbage(), 0);
				return;
			case "big":
				try {
					self.postMessage(new ArrayBuffer(message.bytes));
				} catch (error) {
					self.postMessage({ refused: (error as Error).message });
				}
				return;
			case "grow": { const hoard: string[] = []; for (;;) hoard.push("x".repeat(1024) + hoard.length); }
			case "grow-later":
				// In a promise job, not in the onmessage callback itself.
				Promise.resolve().then(() => { const hoard: string[] = []; for (;;) hoard.push("x".repeat(1024) + hoard.length); });
				return;
			case "block": Timer.delay(message.ms); self.postMessage({ blocked: message.ms }); return;
			case "burst": for (let i = 0; i < message.count; i++) self.postMessage(i); return;
			case "later": Timer.set(() => self.postMessage({ later: message.ms }), message.ms); return;
		}
	}
	self.postMessage(message);
};
self.postMessage({ ready: true });
