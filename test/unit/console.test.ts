// The serial console: line assembly, history, the command table, the REPL's
// dispatch and busy handling, and the help/status/reboot/config commands.
import { CONSOLE_COLUMNS, CONSOLE_HISTORY_LINES, CONSOLE_LINE_MAX_BYTES, CONSOLE_PENDING_LINES } from "budgets";
import { Config, type KeyValueStore } from "config/store";
import { configCommands } from "config/commands";
import { LineEditor, type LineEvent } from "console/line";
import { PROMPT, Repl } from "console/repl";
import { systemCommands, formatUptime } from "console/system";
import { CommandTable } from "console/table";
import { UsageError, words, type Command } from "console/types";
import { lines as textLines } from "util/text";
import type { ConsoleKind } from "host/platform";
import { assert, test } from "testing";
import Timer from "timer";
import { generator, seedFor } from "test/fuzz";

/** Where this file's random input starts (--seed N replays another run). */
const SEED = seedFor(7);

// Lets every pending promise job run.
const settle = () => new Promise((resolve) => Timer.set(resolve, 0));

function bytes(text: string): Uint8Array {
	return new Uint8Array(ArrayBuffer.fromString(text));
}

function feedAll(editor: LineEditor, input: Uint8Array | number[]): LineEvent[] {
	const events: LineEvent[] = [];
	for (const b of input) {
		const event = editor.feed(b);
		if (event) events.push(event);
	}
	return events;
}

function editor(echo?: (text: string) => void): LineEditor {
	return new LineEditor({ maxBytes: CONSOLE_LINE_MAX_BYTES, historyLines: CONSOLE_HISTORY_LINES, prompt: PROMPT, echo });
}

const lines = (events: LineEvent[]) => events.map((e) => (e.type === "line" ? e.text : `<${e.type}>`));

class MemoryStore implements KeyValueStore {
	entries = new Map<string, ArrayBuffer>();
	read(key: string) { return this.entries.get(key); }
	write(key: string, value: ArrayBuffer) { this.entries.set(key, value); }
	delete(key: string) { this.entries.delete(key); }
	[Symbol.iterator]() { return this.entries.keys(); }
}

// A console wired as main.ts wires it, with fake IO.
function harness(extra: Command[] = [], consoleKind: ConsoleKind = "pipe") {
	const table = new CommandTable();
	const state = { out: "", ended: 0, rebooted: 0, rooms: 0, collections: 0 };
	const config = new Config(new MemoryStore());
	const repl: Repl = new Repl({ table, consoleKind, write: (t) => (state.out += t), onEnd: () => state.ended++, onRoom: () => state.rooms++ });
	table.add(
		...systemCommands({
			table,
			firmware: { name: "xsclaw", version: "9.9.9", platform: "test" },
			now: () => 3_723_000,
			bootMs: 0,
			heap: () => ({ chunkUsed: 2048 - 1024 * state.collections, chunkPeak: 4096, chunkSize: 8192, slotUsed: 1024, slotPeak: 1536, slotSize: 16384, sockets: 2 }),
			collect: () => void state.collections++,
			pools: () => ({ psram: { used: 4096, peak: 8192, size: 8 * 1024 * 1024, count: 1, fallbacks: 0 } }),
			statusLines: [(options) => `queue: 0 waiting${options.collect ? " (collected)" : ""}`],
			reboot: () => { repl.stop(); state.rebooted++; },
		}),
		...configCommands(config),
		...extra,
	);
	const type = (text: string) => repl.receive(bytes(text));
	return { table, repl, state, config, type };
}

// ---- line assembly ----

test("CR, LF and CRLF each end one line; blank lines are lines too", () => {
	assert.deepEqual(lines(feedAll(editor(), bytes("a\rb\nc\r\nd\n\n\r\n"))), ["a", "b", "c", "d", "", ""]);
});

test("backspace and DEL erase one character, including a multi-byte one", () => {
	assert.deepEqual(lines(feedAll(editor(), bytes("helpx\b\nnxé\x7f\x7fo\n\b\bok\n"))), ["help", "no", "ok"]);
});

test("Ctrl-U clears the line; control bytes are ignored; a tab is a space", () => {
	const input = [...bytes("junk\x15sta"), 0x00, 0x07, ...bytes("tus\tnow\n")];
	assert.deepEqual(lines(feedAll(editor(), input)), ["status now"]);
});

test("a line longer than the bound is dropped whole and the next line is intact", () => {
	const e = editor();
	const events = feedAll(e, bytes("x".repeat(CONSOLE_LINE_MAX_BYTES + 10) + "\r\nhelp\n"));
	assert.deepEqual(lines(events), ["<too_long>", "help"]);
	assert.deepEqual(lines(feedAll(e, bytes("y".repeat(CONSOLE_LINE_MAX_BYTES) + "\n"))), ["y".repeat(CONSOLE_LINE_MAX_BYTES)], "exactly the bound fits");
});

test("a line that is not UTF-8 is reported, not passed on", () => {
	assert.deepEqual(lines(feedAll(editor(), [0x61, 0xff, 0x62, 0x0a])), ["<bad_utf8>"]);
});

test("flush returns the unfinished line at end of input", () => {
	const e = editor();
	feedAll(e, bytes("status"));
	assert.deepEqual(lines([e.flush()!]), ["status"]);
	assert.equal(e.flush(), undefined);
});

test("up and down arrows recall history and come back to the draft", () => {
	const e = editor();
	e.remember("first");
	e.remember("second");
	assert.deepEqual(lines(feedAll(e, bytes("dra\x1b[A\x1b[A\n"))), ["first"]);
	assert.deepEqual(lines(feedAll(e, bytes("dra\x1b[A\x1b[A\x1b[B\x1b[Bft\n"))), ["draft"]);
	assert.deepEqual(lines(feedAll(e, bytes("\x1b[A\x1b[A\x1b[A\x1b[C\n"))), ["first"], "stops at the oldest; other sequences ignored");
	assert.deepEqual(lines(feedAll(e, bytes("\x1bOA\x1bOA\x1bOB\n"))), ["second"], "application-mode arrows (ESC O A) too");
});

test("Ctrl-D on an empty line ends input where asked; on a typed line, or unasked, it is ignored", () => {
	let shown = "";
	const tty = new LineEditor({ maxBytes: 64, historyLines: 4, prompt: PROMPT, echo: (t) => (shown += t), lineEnd: "\n", endOnCtrlD: true });
	assert.deepEqual(lines(feedAll(tty, bytes("sta\x04tus\n\x04"))), ["status", "<end>"]);
	assert.equal(shown, "status\n\n", "the end is drawn as a line end, the ignored Ctrl-D as nothing");
	assert.deepEqual(lines(feedAll(editor(), bytes("\x04help\n\x04"))), ["help"]);
});

test("history keeps the most recent lines, no blanks, no immediate repeats", () => {
	const e = editor();
	for (let i = 0; i < CONSOLE_HISTORY_LINES + 5; i++) e.remember(`line ${i}`);
	e.remember(`line ${CONSOLE_HISTORY_LINES + 4}`);
	e.remember("  ");
	assert.equal(e.history().length, CONSOLE_HISTORY_LINES);
	assert.equal(e.history()[0], "line 5");
	assert.equal(e.history().at(-1), `line ${CONSOLE_HISTORY_LINES + 4}`);
});

test("with echo, typed characters, erasures and recalled lines are drawn", () => {
	let shown = "";
	const e = editor((t) => (shown += t));
	e.remember("status");
	feedAll(e, bytes("hé\bx\x1b[A\r"));
	assert.equal(shown, "hé\b \bx\r\x1b[K" + PROMPT + "status\r\n");
});

// ---- command table ----

test("the table resolves two-word names first, then one word, with the rest as args", () => {
	const { table } = harness();
	const r = table.resolve("  config   set   llm.model   gpt 4o  ");
	assert.ok("command" in r && r.command.name === "config set" && r.args === "llm.model   gpt 4o", JSON.stringify(r));
	const s = table.resolve("status extra");
	assert.ok("command" in s && s.command.name === "status" && s.args === "extra");
});

test("an unknown command gets a one-line hint with the nearest name for a typo, a bare group lists its subcommands", () => {
	const { table } = harness();
	assert.deepEqual(table.resolve("foo bar"), { hint: "unknown command: foo — type help" });
	assert.deepEqual(table.resolve("config"), { hint: "config needs one of: get, set, unset, show, describe — type help config" });
	assert.deepEqual(table.resolve("config frob x"), { hint: "config needs one of: get, set, unset, show, describe — type help config" });
	assert.deepEqual(table.resolve("config sett x"), { hint: "config needs one of: get, set, unset, show, describe — did you mean config set? — type help config" });
	assert.deepEqual(table.resolve("stauts"), { hint: "unknown command: stauts — did you mean status? — type help" });
	assert.deepEqual(table.resolve("rebot now"), { hint: "unknown command: rebot — did you mean reboot? — type help" });
	assert.deepEqual(table.resolve("cnfig show"), { hint: "unknown command: cnfig — did you mean config? — type help" });
	assert.deepEqual(table.resolve("xyzzy"), { hint: "unknown command: xyzzy — type help" }, "no guess when nothing is close");
	assert.deepEqual(table.resolve("q"), { hint: "unknown command: q — type help" }, "a single letter is no typo of a word");
});

test("the table refuses duplicate and malformed names and adds none of a bad batch", () => {
	const table = new CommandTable();
	const cmd = (name: string): Command => ({ name, usage: "", help: "h", run() {} });
	table.add(cmd("llm status"));
	assert.throws(() => table.add(cmd("llm test"), cmd("llm status")), "already in the table");
	assert.throws(() => table.add(cmd("Bad")), "one or two lowercase words");
	assert.throws(() => table.add(cmd("a b c")), "one or two lowercase words");
	assert.deepEqual(table.list().map((c) => c.name), ["llm status"]);
});

// ---- the REPL ----

test("help lists every command with its usage, each line within CONSOLE_COLUMNS; help NAME gives a command or a group in full", () => {
	const long: Command = { name: "cron add", usage: "every SECONDS TEXT | in SECONDS TEXT | at YYYY-MM-DDTHH:MM TEXT | cron \"M H D MON WD\" TEXT", help: "schedule a request to the agent; ".repeat(4), run() {} };
	const { repl, state, type, table } = harness([long], "tty");
	repl.start();
	type("help\n");
	assert.ok(state.out.startsWith(PROMPT + "help\n"));
	const listed = state.out.slice((PROMPT + "help\n").length, state.out.lastIndexOf(PROMPT)).split("\n").filter((l) => l);
	for (const line of listed) assert.ok(line.length <= CONSOLE_COLUMNS, `${line.length} columns: ${line}`);
	for (const c of table.list()) assert.ok(listed.some((l) => l.startsWith(`  ${c.name}`)), c.name);
	assert.ok(listed.some((l) => l.includes("config set KEY VALUE") && l.includes("change a setting")), "usage and text on one line");
	assert.match(listed.at(-1)!, /^help COMMAND shows a command in full/);
	assert.ok(state.out.endsWith(PROMPT), "prompt after the command");

	const from = state.out.length;
	type("help config\n");
	const group = state.out.slice(from).split("\n").slice(1, -1);
	assert.deepEqual(group.filter((l) => !l.startsWith("    ")), ["  config get KEY", "  config set KEY VALUE", "  config unset KEY", "  config show", "  config describe [KEY]"], "only the group's commands");
	for (const line of group) assert.ok(line.length <= CONSOLE_COLUMNS, line);
	const cron = state.out.length;
	type("help cron add\n");
	const whole = state.out.slice(cron).split("\n").slice(1, -1);
	assert.equal(whole[0], `  cron add ${long.usage}`, "the whole usage");
	assert.equal(whole.slice(1).map((l) => l.trim()).join(" "), long.help.trim(), "the whole text, wrapped");
	const typo = state.out.length;
	type("help stauts\n");
	assert.match(state.out.slice(typo), /error: unknown command: stauts — did you mean status\? — help lists them all/);
});

test("exit and quit end the firmware on lin as the end of input does (no line after them runs); on a board they say how to leave", async () => {
	let exits = 0;
	const table = new CommandTable();
	let out = "";
	const repl: Repl = new Repl({ table, consoleKind: "pipe", write: (t) => (out += t), onEnd: () => {} });
	const deps = { table, firmware: { name: "x", version: "1", platform: "lin" }, now: () => 0, bootMs: 0, heap: () => ({ chunkUsed: 0, chunkPeak: 0, chunkSize: 1, slotUsed: 0, slotPeak: 0, slotSize: 1, sockets: 0 }), collect() {}, statusLines: [], reboot() {} };
	table.add(...systemCommands({ ...deps, exit: async () => { repl.stop(); exits++; } }));
	repl.receive(bytes("quit\nstatus\n"));
	await settle();
	assert.equal(exits, 1);
	assert.ok(!out.includes("firmware:"), `nothing after quit ran: ${out}`);
	const board = new CommandTable();
	board.add(...systemCommands({ ...deps, table: board }));
	const lines: string[] = [];
	const exit = board.list().find((c) => c.name === "exit")!;
	await exit.run("", { line: (l: string) => void lines.push(l) });
	assert.match(lines[0], /the firmware keeps running on the board; to leave, close the serial monitor/);
	assert.equal(exit.restarts, false, "on a board the console reads on");
});

test("status shows firmware, uptime, heap and the extra status lines", () => {
	const { state, type } = harness();
	type("status\n");
	assert.match(state.out, /firmware: xsclaw 9\.9\.9 \(test\)\n/);
	assert.match(state.out, /uptime: 0d 01:02:03\n/);
	assert.match(state.out, /heap: chunks 2\.0 KiB of 8\.0 KiB \(peak 4\.0 KiB\), slots 1\.0 KiB of 16\.0 KiB \(peak 1\.5 KiB\)\n/);
	assert.match(state.out, /queue: 0 waiting\n/);
	assert.match(state.out, /buffers: psram 4\.0 KiB of 8192\.0 KiB \(peak 8\.0 KiB, 1 live\); open sockets: 2\n/, "the pools and sockets come last");
	assert.equal(state.collections, 0, "a plain status collects nothing");
	assert.equal(formatUptime(2 * 86_400_000 + 5_000), "2d 00:00:05");
});

test("status gc collects both machines' garbage before reading the heap; other arguments print the usage", () => {
	const { state, type } = harness();
	type("status gc\n");
	assert.equal(state.collections, 1);
	assert.match(state.out, /heap: chunks 1\.0 KiB of 8\.0 KiB/, "the heap read after the collection");
	assert.match(state.out, /queue: 0 waiting \(collected\)\n/, "the other machine's line is asked to collect too");
	const from = state.out.length;
	type("status now\n");
	assert.match(state.out.slice(from), /usage: status \[gc\]/);
	assert.equal(state.collections, 1);
});

test("an unknown command prints the hint and the console carries on", () => {
	const { state, type } = harness();
	type("frobnicate now\nstatus\n");
	assert.ok(state.out.includes("unknown command: frobnicate — type help\n"));
	assert.ok(state.out.includes("firmware: xsclaw"));
});

test("config set, get, unset and show work through the console; secrets are masked", () => {
	const { state, type, config } = harness();
	type("config set llm.model gpt 4o mini\nconfig get llm.model\nconfig set llm.api_key sk-secret-1234\nconfig show\nconfig get llm.api_key\nconfig unset llm.model\nconfig get llm.model\n");
	assert.equal(config.get("llm.model"), undefined);
	assert.equal(config.get("llm.api_key"), "sk-secret-1234");
	assert.ok(state.out.includes("ok: llm.model = gpt 4o mini\n"));
	assert.ok(state.out.includes("\nllm.model = gpt 4o mini (set)\n"), "get prints the value and its origin");
	assert.ok(state.out.includes("\nllm.api_key = ****1234 (set)\n"), "show masks");
	assert.ok(state.out.endsWith("\nllm.api_key = ****1234 (set)\nok: llm.model removed\nllm.model is not set: config set llm.model VALUE sets it.\n"), "get masks");
	assert.ok(state.out.includes("ok: llm.model removed\n"));
	assert.ok(state.out.includes("llm.model is not set"));
	assert.ok(!state.out.includes("sk-secret"), "the secret never appears");
});

test("a secret-setting line is kept out of history; others are remembered", () => {
	const { repl, type } = harness();
	type("config set llm.api_key sk-secret-1234\nconfig set LLM.API_KEY sk-secret-1234\nconfig set llm.model x\nstatus\n");
	assert.deepEqual(repl.history, ["config set llm.model x", "status"]);
});

test("wrong arguments print the usage; a failing command prints its error and the prompt", () => {
	const { state, type } = harness([], "tty");
	type("config set llm.model\nconfig get\nconfig set LLM x\n");
	assert.ok(state.out.includes("usage: config set KEY VALUE\n"));
	assert.ok(state.out.includes("usage: config get KEY\n"));
	assert.ok(state.out.includes("error: \"LLM\" is not a valid config name"));
	assert.equal(state.out.split(PROMPT).length - 1, 3, "a prompt after each line");
});

test("a UART gets echo and CRLF line ends, a tty echo and LF, a pipe neither", () => {
	const uart = harness([], "uart");
	uart.type("status\r");
	assert.ok(uart.state.out.startsWith("status\r\nfirmware: xsclaw 9.9.9 (test)\r\n"), JSON.stringify(uart.state.out.slice(0, 60)));
	const tty = harness([], "tty");
	tty.type("statux\x7fs\r");
	assert.ok(tty.state.out.startsWith("statux\b \bs\nfirmware: xsclaw 9.9.9 (test)\n"), JSON.stringify(tty.state.out.slice(0, 60)));
	const pipe = harness();
	pipe.type("status\n");
	assert.ok(pipe.state.out.startsWith("firmware: "), "no echo");
});

test("Ctrl-D on a tty ends the console after the running command; later input is left unread", async () => {
	let release!: () => void;
	const slow: Command = { name: "slow", usage: "", help: "waits", run: () => new Promise<void>((r) => (release = r)) };
	const { state, type, repl } = harness([slow], "tty");
	assert.equal(type("slow\n\x04status\n"), "slow\n\x04".length);
	assert.equal(repl.accepting, false);
	assert.equal(state.ended, 0, "not while a command runs");
	release();
	await settle();
	assert.equal(state.ended, 1);
	assert.ok(!state.out.includes("firmware:"), "the line after Ctrl-D did not run");
	const uart = harness([], "uart");
	uart.type("\x04status\r");
	assert.equal(uart.state.ended, 0, "a UART has no end of input");
	assert.ok(uart.state.out.includes("firmware:"));
});

test("lines typed while an async command runs wait their turn; concurrent ones run at once", async () => {
	let release!: () => void;
	const order: string[] = [];
	const slow: Command = {
		name: "slow", usage: "", help: "waits",
		run: (_a, out) => new Promise<void>((resolve) => { release = () => { out.line("slow done"); resolve(); }; }),
	};
	const { state, type, repl } = harness([slow], "tty");
	repl.start();
	type("slow\nconfig set llm.model c\nstatus\n");
	order.push(state.out.includes("firmware:") ? "status ran" : "status waited");
	order.push(state.out.includes("ok: llm.model") ? "set ran" : "set waited");
	release();
	await settle();
	assert.deepEqual(order, ["status ran", "set waited"]);
	assert.ok(state.out.indexOf("slow done") < state.out.indexOf("ok: llm.model = c"), state.out);
	assert.ok(state.out.endsWith(PROMPT));
});

test("only cancel and status run at once: help, llm status and the rest answer in input order", async () => {
	let release!: () => void;
	const slow: Command = {
		name: "slow", usage: "", help: "waits",
		run: (_a, out) => new Promise<void>((resolve) => { release = () => { out.line("slow done"); resolve(); }; }),
	};
	const { state, type, table } = harness([slow]);
	assert.deepEqual(table.list().filter((c) => c.concurrent).map((c) => c.name), ["status"], "of these commands, only status");
	type("slow\nhelp\n");
	assert.ok(!state.out.includes("list the commands"), "help waits for the command before it");
	release();
	await settle();
	assert.ok(state.out.indexOf("slow done") < state.out.indexOf("list the commands"), state.out);
});

test("while the waiting lines are full no more input is taken, and reading goes on when a line has run", async () => {
	let release!: () => void;
	const slow: Command = { name: "slow", usage: "", help: "waits", run: () => new Promise<void>((r) => (release = r)) };
	const { state, type, repl } = harness([slow]);
	const input = "slow\n" + Array.from({ length: CONSOLE_PENDING_LINES + 3 }, (_, i) => `config set llm.model m${i}\n`).join("");
	const firstLines = "slow\n".length + Array.from({ length: CONSOLE_PENDING_LINES }, (_, i) => `config set llm.model m${i}\n`.length).reduce((a, b) => a + b, 0);
	// As console/port reads: one byte at a time (takeFrom a source), while the console wants input.
	const all = bytes(input);
	let used = 0;
	const source = { read: () => (used < all.length ? all[used++] : undefined) };
	const pump = () => repl.takeFrom(source);
	pump();
	assert.equal(used, firstLines, "reading stopped once the waiting lines were full");
	assert.equal(repl.wantsInput, false);
	assert.ok(!state.out.includes("busy"), "no line was refused");
	assert.equal(state.rooms, 0);
	release();
	await settle();
	assert.equal(state.rooms, 1, "the console asked for more input");
	pump();
	assert.equal(used, all.length, "the rest is taken");
	assert.ok(state.out.endsWith(`ok: llm.model = m${CONSOLE_PENDING_LINES + 2}\n`), state.out.slice(-200));
	assert.equal(state.out.split("ok: llm.model").length - 1, CONSOLE_PENDING_LINES + 3, "every line answered");
});

test("no line past a waiting reboot is read: the restarted console runs it", async () => {
	let release!: () => void;
	const slow: Command = { name: "slow", usage: "", help: "waits", run: () => new Promise<void>((r) => (release = r)) };
	const { state, type, repl } = harness([slow]);
	const input = "slow\nreboot\nconfig set llm.model after\n";
	assert.equal(type(input), "slow\nreboot\n".length);
	release();
	await settle();
	assert.equal(state.rebooted, 1);
	assert.equal(repl.accepting, false);
	assert.ok(!state.out.includes("after"));
});

test("on a terminal, output while the prompt shows erases it and draws it again with what was typed; end of input ends the last line", () => {
	const { state, type, repl } = harness([], "tty");
	repl.start();
	type("sta");
	repl.output.line("agent (request 3):");
	assert.ok(state.out.endsWith(`${PROMPT}sta\r\x1b[Kagent (request 3):\n${PROMPT}sta`), JSON.stringify(state.out));
	type("tus\n");
	assert.ok(state.out.includes(`${PROMPT}status\nfirmware:`), JSON.stringify(state.out));
	repl.end();
	assert.ok(state.out.endsWith(`${PROMPT}\n`), "the last line ends with a line end");
	assert.equal(state.ended, 1);
});

test("a pipe gets neither echo nor prompt: only answers, each ending with a line end", () => {
	const { state, type, repl } = harness();
	repl.start();
	type("status\nconfig get llm.model");
	repl.end();
	assert.ok(!state.out.includes(PROMPT), JSON.stringify(state.out));
	assert.ok(state.out.startsWith("firmware: xsclaw"));
	assert.ok(state.out.endsWith("llm.model is not set: config set llm.model VALUE sets it.\n"));
});

test("end of input runs the unfinished line and the waiting ones, then ends once", async () => {
	let release!: () => void;
	const slow: Command = { name: "slow", usage: "", help: "waits", run: () => new Promise<void>((r) => (release = r)) };
	const { state, type, repl } = harness([slow]);
	type("slow\nconfig set llm.model c\nstatus");
	repl.end();
	assert.equal(state.ended, 0, "not while a command runs");
	release();
	await settle();
	assert.ok(state.out.includes("ok: llm.model = c") && state.out.includes("firmware:"), state.out);
	assert.equal(state.ended, 1);
	repl.end();
	assert.equal(state.ended, 1, "only once");
});

test("reboot prints a line, stops the console and leaves the rest of the input unread", () => {
	const { state, type, repl } = harness();
	const input = "status\nreboot\nconfig show\n";
	const used = type(input);
	assert.equal(state.rebooted, 1);
	assert.equal(used, "status\nreboot\n".length, "bytes after the reboot line are not consumed");
	assert.ok(state.out.includes("rebooting…\n"));
	assert.ok(!state.out.includes("no settings yet"), "nothing ran after reboot");
	assert.equal(repl.accepting, false);
	repl.end();
	assert.equal(state.ended, 0, "a stopped console does not end the program");
});

test("a command that throws, at once or later, shows its error or its usage", async () => {
	const boom: Command = { name: "boom", usage: "", help: "fails", run() { throw new Error("the widget is unplugged: plug it in."); } };
	const late: Command = { name: "late", usage: "", help: "fails later", run: async () => { throw new UsageError(); } };
	const { state, type } = harness([boom, late]);
	type("boom\n");
	assert.ok(state.out.includes("error: the widget is unplugged: plug it in.\n"));
	type("late\n");
	await settle();
	assert.ok(state.out.includes("usage: late\n"), state.out);
});

test("lines and words split as split(/\\r?\\n/) and split(/\\s+/) did, without a regular expression run at every character", () => {
	const samples = ["", "one", "a\r\nb\nc", "a\r", "a\rb\n", "\n\n", "Turn 1: 東京 is 09:00 — ok\r\nnext line ✓\n", "x\r\r\ny"];
	for (const text of samples) assert.deepEqual(textLines(text), text.split(/\r?\n/), JSON.stringify(text));
	for (const text of ["", "  ", "a", "  a  b\tc ", "config set llm.model  m1", "\u00a0é ü\n x"]) {
		assert.deepEqual(words(text), text.split(/\s+/).filter((w) => w.length > 0), JSON.stringify(text));
	}
	const table = new CommandTable();
	const run = () => {};
	table.add({ name: "config set", usage: "", help: "", run }, { name: "ask", usage: "", help: "", run });
	const found = (line: string) => {
		const r = table.resolve(line);
		return "command" in r ? `${r.command.name}|${r.args}` : r.hint;
	};
	assert.equal(found("  config   set llm.model  m1 "), "config set|llm.model  m1");
	assert.equal(found("ask what time is it in 東京?"), "ask|what time is it in 東京?");
	assert.equal(found("ask"), "ask|");
	assert.match(found("config"), /^config needs one of: set/);
});

test("feedFrom gives the events feed gives byte by byte, with and without echo, for 300 seeded random inputs", () => {
	const random = generator(SEED);
	// Text, line ends, backspace, Ctrl-U, tabs, escapes, arrows, Ctrl-D, bytes of multi-byte characters and stray ones.
	const alphabet = [0x61, 0x62, 0x20, 0x7a, 0x0a, 0x0d, 0x08, 0x7f, 0x15, 0x09, 0x1b, 0x5b, 0x41, 0x42, 0x04, 0xc3, 0xa9, 0xe2, 0x80, 0xff, 0x01];
	for (let n = 0; n < 300; n++) {
		const input = Array.from({ length: random(120) }, () => random(4) ? 0x61 + random(26) : alphabet[random(alphabet.length)]);
		for (const echoing of [false, true]) {
			let shownA = "", shownB = "";
			const maxBytes = 16 + random(3);   // lines overflow too
			const small = (echo?: (t: string) => void) => new LineEditor({ maxBytes, historyLines: 3, prompt: PROMPT, echo, endOnCtrlD: true });
			const a = small(echoing ? (t) => (shownA += t) : undefined);
			const b = small(echoing ? (t) => (shownB += t) : undefined);
			const expected = feedAll(a, input);
			let at = 0;
			const source = { read: () => (at < input.length ? input[at++] : undefined) };
			const got: LineEvent[] = [];
			for (let event = b.feedFrom(source); event || at < input.length; event = b.feedFrom(source)) if (event) got.push(event);
			assert.deepEqual(lines(got), lines(expected), `case ${n} (seed ${random.seed}), echo ${echoing}`);
			assert.equal(shownB, shownA, `case ${n}: the same echo`);
			assert.equal(b.typed(), a.typed(), `case ${n}: the same unfinished line`);
		}
	}
});
