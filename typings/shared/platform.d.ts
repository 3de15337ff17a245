// host/platform: what the firmware asks of the board it runs on. The lin host
// implements it in hosts/lin/modules/platform.ts, the device in
// hosts/esp32/platform.ts. Both targets type-check modules/ against this
// declaration (the device build names it in manifest.json's typescript types).
declare module "host/platform" {
	export interface HeapFigures {
		chunkUsed: number;   // XS chunk heap bytes in use
		chunkPeak: number;
		chunkSize: number;   // chunk heap capacity
		slotUsed: number;    // XS slot heap bytes in use
		slotPeak: number;
		slotSize: number;
		sockets: number;     // open sockets
		collections?: number; // garbage collections since start (lin; absent where the host does not count them)
	}
	/** Ends the program with an exit code (lin) or restarts the board (device). */
	export function exit(code: number): void;
	/** A clean restart: the JS machine is torn down and created again. */
	export function reboot(): void;
	/** A --name value option from the command line (lin), undefined on the device. */
	export function option(name: string): string | undefined;
	/** Monotonic milliseconds since an arbitrary origin. */
	export function now(): number;
	export function heap(): HeapFigures;
	export function collectGarbage(): void;
	/** Resets the peak heap figures to the current use. */
	export function resetPeak(): void;
	export const name: string;
	/** What the DNS resolver (embedded:network/dns/resolver/udp) needs besides
	 * the host names: the servers to ask and the UDP socket to ask them with
	 * (device); the lin host's resolver asks the system and needs neither. */
	export function resolverOptions(): { servers?: string[]; socket?: unknown };
	/**
	 * What the console's serial port talks to. "uart": the device's UART, whose
	 * terminal program shows nothing by itself and needs CRLF line ends. "tty"
	 * (lin): stdin is a terminal, which the open Serial holds in character mode:
	 * it shows nothing by itself, turns "\n" into CRLF, and Ctrl-D is how a person
	 * ends input. "pipe" (lin): stdin is a pipe, a file or /dev/null.
	 */
	export type ConsoleKind = "uart" | "tty" | "pipe";
	export const consoleKind: ConsoleKind;
}

// host/sandbox: a function call bounded in steps, memory, stack (and, on lin,
// new property names), with the promise jobs it queues run inside the same
// bounds. One C file for both hosts: hosts/common/sandbox/sandbox.c (XS with
// mxMetering and mxLockdown; it does not compile otherwise).
declare module "host/sandbox" {
	/** True when run() really bounds the call (always, where the module exists). */
	export const metered: boolean;
	/**
	 * Calls fn, then runs the promise jobs it queued, then then(result) if given
	 * (and its jobs), all inside the bounds; returns fn's result or then's. Past
	 * `steps` meter units, `chunkBytes` more chunk heap or `slots` more slots
	 * (after a collection), a stack deeper than SCRIPT_STACK_MAX_SLOTS, or (lin)
	 * more than SCRIPT_MAX_KEYS new property names, throws RangeError "sandbox:
	 * step limit" | "sandbox: memory limit" | "sandbox: stack limit" | "sandbox:
	 * key limit", past any try/catch in fn; the jobs it left are dropped, as are
	 * the rejections it left unhandled. fn's own exceptions are rethrown. Which
	 * bound stopped it: stopped().
	 */
	export function run<T, R = T>(fn: () => T, steps: number, chunkBytes: number, slots: number, then?: (result: T) => R): R;
	/** A bound of run(): steps, memory (chunk bytes or slots), stack, keys (lin: new property names). */
	export type SandboxLimit = "steps" | "memory" | "stack" | "keys";
	/**
	 * The bound that stopped this thread's last run(); undefined when it returned
	 * or threw fn's own exception. Decide by this, never by the error's message:
	 * a script can throw any message.
	 */
	export function stopped(): SandboxLimit | undefined;
}

// XS globals @moddable/typings lacks (XS Compartment.md; xsLockdown.c).
declare class Compartment {
	constructor(options?: { globals?: Record<string, unknown>; globalLexicals?: Record<string, unknown> });
	readonly globalThis: Record<string, unknown>;
	/** Evaluates a script in the compartment; returns its completion value. */
	evaluate(source: string): unknown;
}
/** Freezes the built-ins, removes the Function constructors' reach and tames Date and Math.random in compartments. Once per machine. */
declare function lockdown(): void;
declare function harden<T>(value: T): T;
