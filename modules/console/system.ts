// console/system: the console commands about the firmware itself — help, status,
// reboot. Other areas add lines to `status` through statusLines (the agent
// machine's heap and phase, ...), which may be asked for across the agent port.
import type { HeapFigures } from "host/platform";
import type { CommandTable } from "console/table";
import type { Command } from "console/types";
import { messageOf } from "util/errors";

export interface SystemDeps {
	table: CommandTable;
	firmware: { name: string; version: string; platform: string };
	/** Monotonic milliseconds, and its value when the firmware started. */
	now(): number;
	bootMs: number;
	heap(): HeapFigures;
	/** Extra `status` lines, asked each time, printed in order. A rejection prints as an error line. */
	statusLines: Array<() => string | string[] | Promise<string | string[]>>;
	/** Stops the console and the agent machine, then restarts the firmware (the data is kept). */
	reboot(): void | Promise<void>;
}

const KIB = 1024;

function kib(bytes: number): string {
	return `${(bytes / KIB).toFixed(1)} KiB`;
}

/** One machine's XS heap use, as `status` shows it. */
export function heapLine(h: HeapFigures): string {
	return `chunks ${kib(h.chunkUsed)} of ${kib(h.chunkSize)} (peak ${kib(h.chunkPeak)}), slots ${kib(h.slotUsed)} of ${kib(h.slotSize)} (peak ${kib(h.slotPeak)})`;
}

/** "2d 03:04:05" */
export function formatUptime(ms: number): string {
	const seconds = Math.floor(ms / 1000);
	const two = (n: number) => String(n).padStart(2, "0");
	const days = Math.floor(seconds / 86400);
	return `${days}d ${two(Math.floor(seconds / 3600) % 24)}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
}

export function systemCommands(deps: SystemDeps): Command[] {
	return [
		{
			name: "help",
			usage: "",
			help: "list the commands",
			run(_args, out) {
				const rows = deps.table.list().map((c) => [c.usage ? `${c.name} ${c.usage}` : c.name, c.help]);
				const width = Math.max(...rows.map(([left]) => left.length));
				for (const [left, help] of rows) out.line(`  ${left.padEnd(width)}  ${help}`);
			},
		},
		{
			name: "status",
			usage: "",
			help: "firmware version, uptime and heap use",
			concurrent: true,
			run(_args, out) {
				const { name, version, platform } = deps.firmware;
				out.line(`firmware: ${name} ${version} (${platform})`);
				out.line(`uptime: ${formatUptime(deps.now() - deps.bootMs)}`);
				out.line(`heap: ${heapLine(deps.heap())}`);
				// Asked all at once; printed in order, at once when none has to wait.
				const answers = deps.statusLines.map((line) => {
					try {
						return line();
					} catch (error) {
						return Promise.reject(error);
					}
				});
				const print = (answer: string | string[]) => { for (const text of [answer].flat()) out.line(text); };
				if (!answers.some((a) => a instanceof Promise)) return void answers.forEach((a) => print(a as string | string[]));
				return (async () => {
					for (const answer of answers) {
						try {
							print(await answer);
						} catch (error) {
							out.line(`error: ${messageOf(error)}`);
						}
					}
				})();
			},
		},
		{
			name: "reboot",
			usage: "",
			help: "restart the firmware (settings and data are kept)",
			restarts: true,
			async run(_args, out) {
				out.line("rebooting…");
				await deps.reboot();
			},
		},
	];
}
