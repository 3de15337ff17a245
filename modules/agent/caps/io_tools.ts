// caps/io_tools: the tools and console commands of the board's buses (caps/io).
// Group "io", hidden until a skill (temperature, dimmer, voltage_log, board_io)
// shows it, so a conversation that never touches the buses does not carry eight
// more schemas. Reading (i2c_scan, i2c_read, adc_read, uart_read) is open to
// every role; driving (i2c_write, pwm_set, pwm_stop, uart_write) is owner-only
// and marked cron, so an owner's schedule may drive as it may gpio_write.
import {
	ADC_SAMPLES_MAX, I2C_DELAY_MAX_MS, I2C_TRANSFER_MAX_BYTES, PWM_HZ_MAX, PWM_HZ_MIN,
	UART_TIMEOUT_MAX_MS, UART_TRANSFER_MAX_BYTES,
} from "budgets";
import type { Capability } from "caps/types";
import { I2C_ADDRESS_MAX, I2C_ADDRESS_MIN, IO_SETTINGS, parseHex, type IoBoard } from "caps/io";
import { UsageError, words, type Command } from "console/types";
import { utf8 } from "util/files";
import type { JsonObject } from "llm/types";

export const IO_GROUP = "io";

const ADDRESS = { type: "integer", minimum: I2C_ADDRESS_MIN, maximum: I2C_ADDRESS_MAX, description: "the device's 7-bit address, e.g. 68 (0x44)" } as const;
const REGISTER = { type: "integer", minimum: 0, maximum: 0xFFFF, description: "written before the transfer: a register, a command (an SHT3x's 0x2400 is 9216) or a memory address" } as const;
const REGISTER_BYTES: JsonObject = { type: "integer", enum: [1, 2], description: "bytes of register, high first (default: 2 above 255, else 1)" };
const PIN = { type: "integer", minimum: 0, maximum: 48 } as const;

function tool(name: string, description: string, properties: JsonObject, required: string[], run: Capability["run"], drives = false): Capability {
	return {
		group: IO_GROUP,
		hidden: true,
		...(drives ? { restricted: true, cron: true } : {}),
		definition: { type: "function", function: { name, description, parameters: { type: "object", properties, required, additionalProperties: false } } },
		run,
	};
}

const optional = (args: JsonObject, name: string): number | undefined => typeof args[name] === "number" ? args[name] as number : undefined;

export function ioTools(board: IoBoard): Capability[] {
	return [
		tool("i2c_scan", "List the addresses that answer on the I2C bus (the bus is used only when the owner allowed an address).", {}, [], () => board.i2cScan()),
		tool("i2c_read", `Read up to ${I2C_TRANSFER_MAX_BYTES} bytes from an allowed I2C device, optionally after writing a register or command. decode "sht3x" turns an SHT3x's 6-byte measurement into °C and %RH (checking its CRCs).`, {
			address: ADDRESS, register: REGISTER, register_bytes: REGISTER_BYTES,
			length: { type: "integer", minimum: 1, maximum: I2C_TRANSFER_MAX_BYTES },
			delay_ms: { type: "integer", minimum: 0, maximum: I2C_DELAY_MAX_MS, description: "wait between the register write and the read (a measurement's conversion time; an SHT3x needs 20)" },
			decode: { type: "string", enum: ["bytes", "sht3x"] },
		}, ["address", "length"], (args) => board.i2cRead({
			address: Number(args.address), register: optional(args, "register"), registerBytes: optional(args, "register_bytes") as 1 | 2 | undefined,
			length: Number(args.length), delayMs: optional(args, "delay_ms"), decode: args.decode === "sht3x" ? "sht3x" : "bytes",
		})),
		tool("i2c_write", `Write bytes (at most ${I2C_TRANSFER_MAX_BYTES}) to an allowed I2C device, after an optional register or memory address.`, {
			address: ADDRESS, register: REGISTER, register_bytes: REGISTER_BYTES,
			data: { type: "array", items: { type: "integer", minimum: 0, maximum: 255 }, minItems: 0, maxItems: I2C_TRANSFER_MAX_BYTES },
		}, ["address", "data"], (args) => board.i2cWrite(Number(args.address), (args.data as number[]).map(Number), optional(args, "register"), optional(args, "register_bytes") as 1 | 2 | undefined), true),
		tool("adc_read", `Read an allowed ADC pin's voltage in millivolts, averaged over samples reads (default 8).`, {
			pin: PIN, samples: { type: "integer", minimum: 1, maximum: ADC_SAMPLES_MAX },
		}, ["pin"], (args) => board.adcText(Number(args.pin), optional(args, "samples") ?? 8)),
		tool("pwm_set", `Drive an allowed pin with PWM: frequency in Hz (${PWM_HZ_MIN}-${PWM_HZ_MAX}) and duty in percent (0-100); it runs until pwm_stop. Dims an LED, sets a motor's speed.`, {
			pin: PIN, frequency: { type: "integer", minimum: PWM_HZ_MIN, maximum: PWM_HZ_MAX }, duty: { type: "number", minimum: 0, maximum: 100 },
		}, ["pin", "frequency", "duty"], (args) => board.pwmSet(Number(args.pin), Number(args.frequency), Number(args.duty)), true),
		tool("pwm_stop", "Stop the PWM on a pin (it goes low).", { pin: PIN }, ["pin"], (args) => board.pwmStop(Number(args.pin)), true),
		tool("uart_write", `Send text, or bytes given as hex, on the allowed UART (at most ${UART_TRANSFER_MAX_BYTES} bytes).`, {
			text: { type: "string", maxLength: UART_TRANSFER_MAX_BYTES }, hex: { type: "string", maxLength: UART_TRANSFER_MAX_BYTES * 3 },
		}, [], (args) => {
			if ((args.text === undefined) === (args.hex === undefined)) throw new Error("give either text or hex, not both and not neither");
			return board.uartWrite(typeof args.text === "string" ? new Uint8Array(utf8(args.text)) : parseHex(String(args.hex)));
		}, true),
		tool("uart_read", `Read what arrived on the allowed UART: at most max_bytes (default 256, at most ${UART_TRANSFER_MAX_BYTES}), waiting up to timeout_ms (default 1000, at most ${UART_TIMEOUT_MAX_MS}) for the first bytes.`, {
			max_bytes: { type: "integer", minimum: 1, maximum: UART_TRANSFER_MAX_BYTES }, timeout_ms: { type: "integer", minimum: 0, maximum: UART_TIMEOUT_MAX_MS },
		}, [], (args) => board.uartRead(optional(args, "max_bytes") ?? 256, optional(args, "timeout_ms") ?? 1000)),
	];
}

const number = (word: string): number => /^0x[0-9a-f]+$/i.test(word) ? parseInt(word, 16) : /^\d+$/.test(word) ? Number(word) : NaN;

/** `i2c scan`, `i2c read`, `i2c write`, `adc PIN [SAMPLES]`, `pwm [PIN HZ DUTY | PIN stop]`, `uart write TEXT`, `uart read [MAX [TIMEOUT_MS]]`: the owner's, as the tools. */
export function ioCommands(board: IoBoard): Command[] {
	return [
		{
			name: "i2c scan",
			usage: "",
			help: "list the addresses that answer on the I2C bus",
			run(args, out) {
				if (args.trim()) throw new UsageError();
				out.line(board.i2cScan());
			},
		},
		{
			name: "i2c read",
			usage: "ADDR [REG] LEN",
			help: `read LEN bytes of an I2C device (after writing REG); addresses on ${IO_SETTINGS.i2cAllow}`,
			async run(args, out) {
				const values = words(args).map(number);
				if (values.length < 2 || values.length > 3 || values.some(Number.isNaN)) throw new UsageError();
				out.line(await board.i2cRead({ address: values[0], register: values.length === 3 ? values[1] : undefined, length: values[values.length - 1] }));
			},
		},
		{
			name: "i2c write",
			usage: "ADDR BYTE...",
			help: `write bytes to an I2C device (addresses on ${IO_SETTINGS.i2cAllow})`,
			run(args, out) {
				const values = words(args).map(number);
				if (values.length < 2 || values.some(Number.isNaN) || values.slice(1).some((b) => b > 255)) throw new UsageError();
				out.line(board.i2cWrite(values[0], values.slice(1)));
			},
		},
		{
			name: "adc",
			usage: "PIN [SAMPLES]",
			help: `read an ADC pin in millivolts (pins on ${IO_SETTINGS.adcAllow})`,
			run(args, out) {
				const parts = words(args);
				if (parts.length < 1 || parts.length > 2 || parts.some((p) => !/^\d{1,3}$/.test(p))) throw new UsageError();
				out.line(board.adcText(Number(parts[0]), parts.length === 2 ? Number(parts[1]) : 8));
			},
		},
		{
			name: "pwm",
			usage: "[PIN HZ DUTY | PIN stop]",
			help: `list the PWM outputs, drive one (DUTY in percent), or stop one (pins on ${IO_SETTINGS.pwmAllow})`,
			run(args, out) {
				const parts = words(args);
				if (!parts.length) {
					const lines = board.pwmLines();
					if (!lines.length) out.line("no PWM output runs");
					for (const line of lines) out.line(line);
				} else if (parts.length === 2 && parts[1] === "stop" && /^\d{1,2}$/.test(parts[0])) out.line(board.pwmStop(Number(parts[0])));
				else if (parts.length === 3 && /^\d{1,2}$/.test(parts[0]) && /^\d+$/.test(parts[1]) && /^\d+(\.\d+)?$/.test(parts[2])) out.line(board.pwmSet(Number(parts[0]), Number(parts[1]), Number(parts[2])));
				else throw new UsageError();
			},
		},
		{
			name: "uart write",
			usage: "TEXT",
			help: `send a line of text on the allowed UART (port on ${IO_SETTINGS.uartAllow})`,
			run(args, out) {
				if (!args.trim()) throw new UsageError();
				out.line(board.uartWrite(new Uint8Array(utf8(args.trim()))));
			},
		},
		{
			name: "uart read",
			usage: "[MAX [TIMEOUT_MS]]",
			help: "read what arrived on the allowed UART, waiting up to TIMEOUT_MS (default 1000)",
			async run(args, out) {
				const parts = words(args);
				if (parts.length > 2 || parts.some((p) => !/^\d+$/.test(p))) throw new UsageError();
				out.line(await board.uartRead(parts[0] ? Number(parts[0]) : 256, parts[1] ? Number(parts[1]) : 1000));
			},
		},
	];
}
