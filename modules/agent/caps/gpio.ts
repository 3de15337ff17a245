// caps/gpio: GPIO read and write on the pins the owner allowed (the setting
// gpio.allow, e.g. "2,4,5"; empty = none), through embedded:io/digital: the real
// pins on the device, the simulated bank on the lin host. One GpioBank owns every
// pin it opened; the tools (gpio_read, gpio_write) and the console's `gpio`
// command all go through it, so the allow-list is checked in one place.
//
// A written pin stays an output driving its value until the firmware restarts;
// reading a pin the bank drives reads it back; reading another allowed pin opens
// it as an input for the one read. gpio_write is restricted (owner only), and
// marked cron so an owner's schedule (a watering routine) may still drive a pin.
// Known limit: the allow-list is read at each call, so a change applies at once,
// but a pin already driven stays driven after it is removed from the list.
//
// watch(pin, edge, onEdge) opens an allowed pin as an input whose edges call
// onEdge (ECMA-419 Digital onReadable: an interrupt on the board, the simulated
// bank on lin): a stored script's gpio trigger (caps/automations). A watched
// pin cannot be driven, and a driven one cannot be watched. The `pins` command
// (lin only: host/pins' count > 0) drives the simulated bank's inputs from
// outside, as a wire would.
import Digital from "embedded:io/digital";
import * as world from "host/pins";
import { GPIO_PIN_MAX } from "budgets";
import type { Capability } from "caps/types";
import { RESERVED_PINS, pinList } from "config/settings";
import { UsageError, words, type Command } from "console/types";
import { messageOf } from "util/errors";

export const GPIO_ALLOW_SETTING = "gpio.allow";

export interface SettingsReader {
	get(name: string): string | undefined;
}

/** The allowed pins of a gpio.allow value; throws a sentence for a bad one. */
export function parseAllowList(text: string | undefined): number[] {
	if (text === undefined || !text.trim()) return [];
	const pins = pinList(text);
	const reserved = pins?.find((pin) => RESERVED_PINS.has(pin));
	if (reserved !== undefined) throw new Error(`the setting ${GPIO_ALLOW_SETTING} names pin ${reserved}, which is ${RESERVED_PINS.get(reserved)}: it is never allowed; use another pin`);
	if (pins) return pins;
	const word = text.split(",").map((item) => item.trim()).find((item) => !pinList(item));
	throw new Error(`the setting ${GPIO_ALLOW_SETTING} has "${word}", which is not a pin 0-${GPIO_PIN_MAX}; set it to pins like 2,4,5`);
}

export type Edge = "rising" | "falling" | "both";
export const EDGES: readonly Edge[] = ["rising", "falling", "both"];

/** A watch on a pin's edges; close() stops it. */
export interface PinWatch {
	close(): void;
}

interface Watched {
	input: Digital;
	edge: Edge;
	listeners: Set<(level: 0 | 1) => void>;
}

export class GpioBank {
	readonly #settings: SettingsReader;
	readonly #outputs = new Map<number, Digital>();
	readonly #watched = new Map<number, Watched>();

	constructor(settings: SettingsReader) {
		this.#settings = settings;
	}

	allowed(): number[] {
		return parseAllowList(this.#settings.get(GPIO_ALLOW_SETTING));
	}

	#check(pin: number): void {
		const allowed = this.allowed();
		if (!allowed.includes(pin))
			throw new Error(`pin ${pin} is not on the allow-list (${allowed.length ? allowed.join(", ") : "no pins are allowed"}); the owner can allow it with: config set ${GPIO_ALLOW_SETTING} ${[...allowed, pin].sort((a, b) => a - b).join(",")}`);
	}

	read(pin: number): 0 | 1 {
		this.#check(pin);
		const output = this.#outputs.get(pin);
		if (output) return output.read();
		const watched = this.#watched.get(pin);
		if (watched) return watched.input.read();
		const input = new Digital({ pin, mode: Digital.Input });
		try {
			return input.read();
		} finally {
			input.close();
		}
	}

	write(pin: number, value: 0 | 1): void {
		this.#check(pin);
		if (this.#watched.has(pin)) throw new Error(`pin ${pin} is watched as an input (a script's trigger), so it cannot be driven; use another pin`);
		let output = this.#outputs.get(pin);
		if (!output) {
			try {
				output = new Digital({ pin, mode: Digital.Output });
			} catch (error) {
				throw new Error(`pin ${pin} cannot be made an output (${messageOf(error)}); it may be in use by the board`);
			}
			this.#outputs.set(pin, output);
		}
		output.write(value);
	}

	/**
	 * Calls onEdge(level) on each edge of an allowed pin (both: either way);
	 * throws a sentence when the pin is not allowed, is driven, or is already
	 * watched for another edge.
	 */
	watch(pin: number, edge: Edge, onEdge: (level: 0 | 1) => void): PinWatch {
		this.#check(pin);
		if (this.#outputs.has(pin)) throw new Error(`pin ${pin} is driven as an output, so its edges cannot be watched; use another pin`);
		let watched = this.#watched.get(pin);
		if (watched && watched.edge !== edge) throw new Error(`pin ${pin} is already watched for ${watched.edge} edges; watch it for the same edges, or use another pin`);
		if (!watched) {
			const listeners = new Set<(level: 0 | 1) => void>();
			let input: Digital;
			try {
				input = new Digital({
					pin, mode: Digital.Input, edge: edge === "rising" ? Digital.Rising : edge === "falling" ? Digital.Falling : Digital.Rising | Digital.Falling,
					onReadable() {
						const level = input.read();
						for (const listener of [...listeners]) listener(level);
					},
				});
			} catch (error) {
				throw new Error(`pin ${pin} cannot be watched (${messageOf(error)}); it may be in use by the board`);
			}
			watched = { input, edge, listeners };
			this.#watched.set(pin, watched);
		}
		const entry = watched, listener = (level: 0 | 1) => onEdge(level);
		entry.listeners.add(listener);
		return {
			close: () => {
				if (!entry.listeners.delete(listener) || entry.listeners.size) return;
				entry.input.close();
				if (this.#watched.get(pin) === entry) this.#watched.delete(pin);
			},
		};
	}

	/** Releases every pin (at reboot). */
	close(): void {
		for (const output of this.#outputs.values()) output.close();
		this.#outputs.clear();
		for (const watched of this.#watched.values()) watched.input.close();
		this.#watched.clear();
	}
}

const PIN = { type: "integer", minimum: 0, maximum: GPIO_PIN_MAX } as const;

export function gpioTools(bank: GpioBank): Capability[] {
	return [
		{
			group: "gpio",
			definition: {
				type: "function",
				function: {
					name: "gpio_read",
					description: "Read a GPIO pin's level (0 or 1). Only pins on the owner's allow-list.",
					parameters: { type: "object", properties: { pin: PIN }, required: ["pin"], additionalProperties: false },
				},
			},
			run(args) {
				const pin = Number(args.pin);
				return `pin ${pin} is ${bank.read(pin)}`;
			},
		},
		{
			group: "gpio",
			restricted: true,
			cron: true,
			definition: {
				type: "function",
				function: {
					name: "gpio_write",
					description: "Drive a GPIO pin as an output: value 1 (high) or 0 (low). Only pins on the owner's allow-list.",
					parameters: { type: "object", properties: { pin: PIN, value: { type: "integer", enum: [0, 1] } }, required: ["pin", "value"], additionalProperties: false },
				},
			},
			run(args) {
				const pin = Number(args.pin);
				const value = args.value === 1 ? 1 : 0;
				bank.write(pin, value);
				return `pin ${pin} set to ${value}`;
			},
		},
	];
}

/**
 * `gpio` (the allowed pins and their levels), `gpio PIN` (read), `gpio PIN 0|1`
 * (drive); on the lin host also `pins PIN 0|1|release`: the simulated world
 * drives an input (an edge a watching script sees), as a wire would.
 */
export function gpioCommands(bank: GpioBank): Command[] {
	const simulated: Command[] = world.count > 0 ? [{
		name: "pins",
		usage: "PIN 0|1|release",
		help: "(lin) drive a simulated input pin from outside, as a wire would, or let it go",
		run(args, out) {
			const parts = words(args);
			if (parts.length !== 2 || !/^\d{1,2}$/.test(parts[0]) || Number(parts[0]) >= world.count || !["0", "1", "release"].includes(parts[1])) throw new UsageError();
			const pin = Number(parts[0]);
			if (parts[1] === "release") world.release(pin);
			else world.drive(pin, parts[1] === "1" ? 1 : 0);
			out.line(`pin ${pin} ${parts[1] === "release" ? "released" : `driven to ${parts[1]}`} from outside`);
		},
	}] : [];
	return [
		{
			name: "gpio",
			usage: "[PIN [0|1]]",
			help: "read the allowed pins, read one, or drive one high or low",
			run(args, out) {
				const parts = words(args);
				if (parts.length > 2 || parts.some((p) => !/^\d{1,2}$/.test(p)) || (parts.length === 2 && parts[1] !== "0" && parts[1] !== "1")) throw new UsageError();
				if (parts.length === 0) {
					const allowed = bank.allowed();
					if (!allowed.length) out.line(`no pins are allowed; set some with: config set ${GPIO_ALLOW_SETTING} 2,4`);
					for (const pin of allowed) out.line(`pin ${pin}: ${bank.read(pin)}`);
					return;
				}
				const pin = Number(parts[0]);
				if (parts.length === 2) {
					bank.write(pin, parts[1] === "1" ? 1 : 0);
					out.line(`pin ${pin} set to ${parts[1]}`);
				} else out.line(`pin ${pin}: ${bank.read(pin)}`);
			},
		},
		...simulated,
	];
}
