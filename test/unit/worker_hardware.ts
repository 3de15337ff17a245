// A worker for test/unit/worker.test.ts that holds the board's shared things:
// a Digital input waiting for edges, PSRAM buffers, a file, a timer; and tries
// what belongs to the main machine.
import Digital from "embedded:io/digital";
import Serial from "embedded:io/serial";
import files from "embedded:storage/files";
import Timer from "timer";
import { allocate } from "psram";
import { exit } from "host/platform";

const D = Digital as unknown as { new (options: object): Digital; Input: number; Rising: number };
const held: unknown[] = [];

function refusal(fn: () => void): string {
	try {
		fn();
		return "allowed";
	} catch (error) {
		return (error as Error).message;
	}
}

self.onmessage = function (message: any) {
	switch (message.command) {
		case "watch": {
			let edges = 0;
			held.push(new D({ pin: message.pin, mode: D.Input, edge: D.Rising, onReadable(this: Digital) { self.postMessage({ edge: ++edges, level: this.read() }); } }));
			self.postMessage({ watching: message.pin });
			return;
		}
		case "hold": {
			held.push(allocate(message.bytes, "psram"));
			const file = files.openFile({ path: "worker-held.bin", mode: "w+" });
			file.write(new ArrayBuffer(16), 0);
			held.push(file);
			held.push(Timer.repeat(() => {}, 1000));
			self.postMessage({ holding: message.bytes });
			return;
		}
		case "refusals":
			self.postMessage({
				serial: refusal(() => new (Serial as any)({})),
				exit: refusal(() => exit(3)),
			});
			return;
		case "grow": {
			const hoard: string[] = [];
			for (;;) hoard.push("z".repeat(1024) + hoard.length);
		}
	}
};
