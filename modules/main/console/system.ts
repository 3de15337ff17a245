// console/system: the console commands about the firmware itself — help, status,
// reboot, exit (and quit). `help` fits CONSOLE_COLUMNS: one line a command, its
// text cut; `help NAME` (a command or a group) gives the commands in full. Other
// areas add lines to `status` through statusLines (the agent machine's heap and
// phase, ...), which may be asked for across the agent port.
import type { HeapFigures } from "host/platform";
import type { PoolStats } from "psram";
import { CONSOLE_COLUMNS, CONSOLE_HELP_USAGE_COLUMNS } from "budgets";
import type { CommandTable } from "console/table";
import { UsageError, words, type Command, type Output } from "console/types";
import { messageOf } from "util/errors";
import { clip, wrap } from "util/text";

export interface SystemDeps {
	table: CommandTable;
	firmware: { name: string; version: string; platform: string };
	/** Monotonic milliseconds, and its value when the firmware started. */
	now(): number;
	bootMs: number;
	heap(): HeapFigures;
	/** Collects this machine's garbage (`status gc`). */
	collect(): void;
	/** The host buffer pools ("psram", "internal"): the board's, shared by both machines. */
	pools?(): Record<string, PoolStats>;
	/** Extra `status` lines, asked each time, printed in order (collect: `status gc`, collect first). A rejection prints as an error line. */
	statusLines: Array<(options: StatusOptions) => string | string[] | Promise<string | string[]>>;
	/** Stops the console and the agent machine, then restarts the firmware (the data is kept). */
	reboot(): void | Promise<void>;
	/**
	 * `exit` and `quit`: stop the firmware as the end of input does (lin). Absent
	 * where leaving means closing the serial monitor (a board keeps running): they say so.
	 */
	exit?(): Promise<void>;
}

export interface StatusOptions {
	/** Garbage-collect before reading heap figures, so they are what is live. */
	collect: boolean;
}

const KIB = 1024;

function kib(bytes: number): string {
	return `${(bytes / KIB).toFixed(1)} KiB`;
}

/** One machine's XS heap use, as `status` shows it. */
export function heapLine(h: HeapFigures): string {
	return `chunks ${kib(h.chunkUsed)} of ${kib(h.chunkSize)} (peak ${kib(h.chunkPeak)}), slots ${kib(h.slotUsed)} of ${kib(h.slotSize)} (peak ${kib(h.slotPeak)})`;
}

/** The buffer pools and open sockets, as `status` shows them. */
export function poolsLine(pools: Record<string, PoolStats>, sockets: number): string {
	const each = Object.entries(pools).map(([pool, s]) => `${pool} ${kib(s.used)} of ${kib(s.size)} (peak ${kib(s.peak)}, ${s.count} live)`);
	return `buffers: ${each.join(", ")}; open sockets: ${sockets}`;
}

/** "2d 03:04:05" */
export function formatUptime(ms: number): string {
	const seconds = Math.floor(ms / 1000);
	const two = (n: number) => String(n).padStart(2, "0");
	const days = Math.floor(seconds / 86400);
	return `${days}d ${two(Math.floor(seconds / 3600) % 24)}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
}

const INDENT = "  ";
const GAP = "  ";

const usageOf = (c: Command) => (c.usage ? `${c.name} ${c.usage}` : c.name);

/** `help`: one line a command, the usage in its column and the text cut to CONSOLE_COLUMNS. */
function listCommands(commands: readonly Command[], out: Output): void {
	const textColumns = CONSOLE_COLUMNS - INDENT.length - CONSOLE_HELP_USAGE_COLUMNS - GAP.length;
	for (const c of commands) {
		const usage = usageOf(c);
		if (usage.length <= CONSOLE_HELP_USAGE_COLUMNS) out.line(`${INDENT}${usage.padEnd(CONSOLE_HELP_USAGE_COLUMNS)}${GAP}${clip(c.help, textColumns)}`);
		else out.line(`${INDENT}${clip(usage, CONSOLE_COLUMNS - INDENT.length)}`); // help NAME shows the rest
	}
}

/** `help NAME`: each command's usage, then its whole text wrapped below it. */
function describeCommands(commands: readonly Command[], out: Output): void {
	for (const c of commands) {
		out.line(`${INDENT}${usageOf(c)}`);
		for (const line of wrap(c.help, CONSOLE_COLUMNS - 2 * INDENT.length)) out.line(`${INDENT}${INDENT}${line}`);
	}
}

export function systemCommands(deps: SystemDeps): Command[] {
	const leave = (_args: string, out: Output) => {
		if (deps.exit) return deps.exit();
		out.line("the firmware keeps running on the board; to leave, close the serial monitor (idf.py monitor: Ctrl-])");
	};
	return [
		{
			name: "help",
			usage: "[COMMAND]",
			help: "list the commands; help COMMAND (or a group: help config) shows them in full",
			run(args, out) {
				const given = words(args);
				const all = deps.table.list();
				if (!given.length) {
					listCommands(all, out);
					out.line(`help COMMAND shows a command in full, e.g. help config`);
					return;
				}
				const name = given.join(" ");
				const found = all.filter((c) => c.name === name || c.name.startsWith(name + " "));
				if (found.length) return describeCommands(found, out);
				const resolution = deps.table.resolve(name);
				if ("command" in resolution) return describeCommands([resolution.command], out);
				throw new Error(resolution.hint.replace(/ — type help.*$/, " — help lists them all"));
			},
		},
		{
			name: "status",
			usage: "[gc]",
			help: "firmware version, uptime, heap use (gc: of both machines after collecting their garbage) and buffer pools",
			concurrent: true,
			run(args, out) {
				const given = words(args);
				if (given.length > 1 || (given.length === 1 && given[0] !== "gc")) throw new UsageError();
				const options: StatusOptions = { collect: given.length === 1 };
				if (options.collect) deps.collect();
				const { name, version, platform } = deps.firmware;
				out.line(`firmware: ${name} ${version} (${platform})`);
				out.line(`uptime: ${formatUptime(deps.now() - deps.bootMs)}`);
				out.line(`heap: ${heapLine(deps.heap())}`);
				// Asked all at once; printed in order, at once when none has to wait.
				const answers = deps.statusLines.map((line) => {
					try {
						return line(options);
					} catch (error) {
						return Promise.reject(error);
					}
				});
				const print = (answer: string | string[]) => { for (const text of [answer].flat()) out.line(text); };
				// Last, so that with gc they count what both machines' collections freed.
				const pools = () => { if (deps.pools) out.line(poolsLine(deps.pools(), deps.heap().sockets)); };
				if (!answers.some((a) => a instanceof Promise)) {
					answers.forEach((a) => print(a as string | string[]));
					return pools();
				}
				return (async () => {
					for (const answer of answers) {
						try {
							print(await answer);
						} catch (error) {
							out.line(`error: ${messageOf(error)}`);
						}
					}
					pools();
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
		{
			name: "exit",
			usage: "",
			help: deps.exit ? "stop the firmware, as the end of input (Ctrl-D) does" : "how to leave the console (the board keeps running)",
			restarts: deps.exit !== undefined,
			run: leave,
		},
		{
			name: "quit",
			usage: "",
			help: "the same as exit",
			restarts: deps.exit !== undefined,
			run: leave,
		},
	];
}
