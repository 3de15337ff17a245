// caps/script: the run_script tool (our answer to esp-claw's Lua scripts): the
// model runs a short JavaScript snippet in a fresh XS Compartment whose globals
// are the language's built-ins plus only what the owner granted in the setting
// script.grants (default "time,math"):
//   time  time.now() (ms), time.iso() (UTC), time.local() (in time.timezone)
//   gpio  gpio.read(pin), gpio.write(pin, 0|1), on the gpio.allow pins only
//   math  Math
// Without a grant, Date and Math are not there either. There is no network, no
// files, no config and no console in a script; Promise, Compartment, lockdown,
// harden and FinalizationRegistry are shadowed, and a snippet using async,
// await or import is refused, so no part of it runs after the call returns.
// The call is bounded by host/sandbox in steps (SCRIPT_MAX_STEPS), chunk heap
// (SCRIPT_MAX_CHUNK_BYTES) and slots (SCRIPT_MAX_SLOTS), past the script's own
// try/catch; its result (a string, or JSON) or its error is the tool result.
//
// Isolation needs the machine locked down (XS lockdown(): frozen built-ins, no
// Function constructor reaching the real global): agent/worker calls lockdown() at
// boot, and this tool refuses to run in a machine that is not. Restricted: the
// owner only. On a build whose XS has no metering (the device, today) the tool
// is not offered at all (scriptTools returns none) — see hosts/esp32/sandbox.ts.
import { metered, run as sandboxed, stopped } from "host/sandbox";
import { SCRIPT_MAX_CHUNK_BYTES, SCRIPT_MAX_KEYS, SCRIPT_MAX_SLOTS, SCRIPT_MAX_STEPS, SCRIPT_RESULT_MAX_CHARS, SCRIPT_SOURCE_MAX_CHARS } from "budgets";
import type { Capability } from "caps/types";
import type { GpioBank } from "caps/gpio";
import { formatLocal, type TimeZone } from "util/tz";
import { messageOf } from "util/errors";

export const SCRIPT_GRANTS_SETTING = "script.grants";
export const GRANTS = ["time", "gpio", "math"] as const;
export type Grant = (typeof GRANTS)[number];
const DEFAULT_GRANTS = "time,math";
const REFUSED_SYNTAX = /\b(async|await|import)\b/;

export interface ScriptDeps {
	settings: { get(name: string): string | undefined };
	gpio: GpioBank;
	wallClockMs(): number;
	zone(): TimeZone;
}

/** The global each grant gives a script. */
const GRANT_GLOBALS: Readonly<Record<Grant, string>> = { time: "time", gpio: "gpio", math: "Math" };

/** How run_script's snippets get a grant: the setting. fix: the grants with the missing one. */
const GRANTED_BY_SETTING = (fix: string) => `the owner grants it with: config set ${SCRIPT_GRANTS_SETTING} ${fix}`;

/** Stands for a global not granted: any use of it throws the sentence saying how to grant it. */
function notGranted(grant: Grant, grants: readonly Grant[], grantedBy: (fix: string) => string): object {
	const fix = [...grants, grant].join(",");
	const refuse = (): never => {
		throw new Error(`${GRANT_GLOBALS[grant]} is not granted to this script; ${grantedBy(fix)}`);
	};
	return new Proxy(Object.freeze({}), { get: refuse, set: refuse, has: refuse, apply: refuse, construct: refuse, ownKeys: refuse, getOwnPropertyDescriptor: refuse, defineProperty: refuse, deleteProperty: refuse });
}

export function parseGrants(text: string | undefined): Grant[] {
	const out: Grant[] = [];
	for (const word of (text ?? DEFAULT_GRANTS).split(",").map((w) => w.trim()).filter((w) => w.length > 0)) {
		if (!(GRANTS as readonly string[]).includes(word)) throw new Error(`the setting ${SCRIPT_GRANTS_SETTING} has "${word}"; the grants are ${GRANTS.join(", ")}`);
		out.push(word as Grant);
	}
	return out;
}

/** True when this machine's built-ins are frozen (lockdown() ran). */
export function lockedDown(): boolean {
	return Object.isFrozen(Array.prototype) && Object.isFrozen(Function.prototype);
}

/**
 * Runs code; returns its result as text, or throws a sentence (its error, or the
 * bound it hit). extra: more globals (a stored script's trigger, notify, ask);
 * started: called inside the bounds just before the script's first step;
 * grantedBy: how a missing grant is given (default: the setting script.grants).
 */
export function runScript(
	code: string, deps: ScriptDeps, grants: readonly Grant[], extra?: Record<string, unknown>, started?: () => void, grantedBy = GRANTED_BY_SETTING,
): string {
	if (!metered) throw new Error("scripts cannot be bounded on this build, so they do not run; use the other tools");
	if (!lockedDown()) throw new Error("scripts run only in a locked-down machine (lockdown() at boot), which this one is not; use the other tools");
	if (code.length > SCRIPT_SOURCE_MAX_CHARS) throw new Error(`the script has ${code.length} characters; keep it under ${SCRIPT_SOURCE_MAX_CHARS}`);
	const refused = REFUSED_SYNTAX.exec(code);
	if (refused) throw new Error(`a script may not use ${refused[1]}: it must finish within its call; write it without ${refused[1]}`);
	const globals: Record<string, unknown> = {
		Date: undefined, Math: undefined, Promise: undefined, Compartment: undefined,
		lockdown: undefined, harden: undefined, FinalizationRegistry: undefined, WeakRef: undefined, trace: undefined,
	};
	// A name the owner did not grant is there, but says which setting grants it when used.
	for (const grant of GRANTS) if (!grants.includes(grant)) globals[GRANT_GLOBALS[grant]] = notGranted(grant, grants, grantedBy);
	if (grants.includes("math")) globals.Math = Math;
	if (grants.includes("time")) {
		globals.time = Object.freeze({
			now: () => deps.wallClockMs(),
			iso: () => new Date(deps.wallClockMs()).toISOString(),
			local: () => formatLocal(deps.wallClockMs(), deps.zone()),
		});
	}
	if (grants.includes("gpio")) {
		globals.gpio = Object.freeze({
			read: (pin: unknown) => deps.gpio.read(Number(pin)),
			write: (pin: unknown, value: unknown) => deps.gpio.write(Number(pin), value ? 1 : 0),
		});
	}
	if (extra) Object.assign(globals, extra);
	let text: string;
	try {
		// The value is read after the script's promise jobs ran, inside its bounds (its getters are its code).
		text = sandboxed(() => {
			const compartment = new Compartment({ globals });
			started?.();
			return compartment.evaluate(code);
		}, SCRIPT_MAX_STEPS, SCRIPT_MAX_CHUNK_BYTES, SCRIPT_MAX_SLOTS, (value: unknown) => {
			if (typeof value === "string") return value;
			if (value === undefined) return "(no result: the script's last expression was undefined)";
			return JSON.stringify(value) ?? String(value);
		});
	} catch (error) {
		// Which bound stopped it, from the sandbox itself: the script's own error may carry any message.
		switch (stopped()) {
			case "steps": throw new Error(`the script was stopped after ${SCRIPT_MAX_STEPS} steps (a loop that does not end?); make it shorter or bounded`);
			case "memory": throw new Error(`the script was stopped: it used more than ${SCRIPT_MAX_CHUNK_BYTES} bytes or ${SCRIPT_MAX_SLOTS} values of memory`);
			case "stack": throw new Error("the script was stopped: its calls nest too deep (endless recursion?)");
			case "keys": throw new Error(`the script was stopped: it made more than ${SCRIPT_MAX_KEYS} new property names, or the machine has too few left (reboot to free them)`);
			default: throw new Error(`the script failed: ${messageOf(error)}`);
		}
	}
	return text.length > SCRIPT_RESULT_MAX_CHARS ? `${text.slice(0, SCRIPT_RESULT_MAX_CHARS)}… (cut at ${SCRIPT_RESULT_MAX_CHARS} characters)` : text;
}

export function scriptTools(deps: ScriptDeps): Capability[] {
	if (!metered) return [];
	return [
		{
			group: "script",
			// Offered once a skill that needs it (blink) is activated: most requests never run a script.
			hidden: true,
			restricted: true,
			runsAlone: true,
			definition: {
				type: "function",
				function: {
					name: "run_script",
					description: `Run a short JavaScript snippet on the board; its last expression is the result. Globals besides the built-ins: only what the owner granted (time.now()/iso()/local(), gpio.read(pin)/write(pin, v), Math). No network, files, timers, async or import. Stopped after ${SCRIPT_MAX_STEPS} steps or ${SCRIPT_MAX_CHUNK_BYTES} bytes.`,
					parameters: { type: "object", properties: { code: { type: "string", minLength: 1, maxLength: SCRIPT_SOURCE_MAX_CHARS } }, required: ["code"], additionalProperties: false },
				},
			},
			run(args) {
				return runScript(String(args.code), deps, parseGrants(deps.settings.get(SCRIPT_GRANTS_SETTING)));
			},
		},
	];
}
