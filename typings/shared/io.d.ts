// host/io: the board's buses in ECMA-419's shapes (I2C, Analog, PWM, Serial), as
// caps/io uses them. On the board (hosts/esp32/io.ts) they are the Moddable SDK's
// embedded:io/i2c, embedded:io/analog, embedded:io/pwm and embedded:io/serial;
// on the lin host (hosts/lin/modules/io.ts) the same shapes over simulated
// devices declared in the storage's io/devices.json (docs/tools.md), with
// `simulation` to observe them. Only what caps/io relies on is declared.
declare module "host/io" {
	export type Bytes = ArrayBuffer | Uint8Array;

	/** One device on an I2C bus (ECMA-419 I2C: one instance per address). */
	export interface I2CDevice {
		/** Reads byteLength bytes; throws when the device does not answer or the bus is stuck. */
		read(byteLength: number, stop?: boolean): ArrayBuffer;
		/** Writes bytes (none: a probe, the address alone); throws as read does. */
		write(bytes: Bytes, stop?: boolean): void;
		close(): void;
	}
	export interface I2COptions {
		data: number;
		clock: number;
		hz: number;
		address: number;
		/** Milliseconds a transfer waits for a held clock. */
		timeout?: number;
	}
	export const I2C: new (options: I2COptions) => I2CDevice;

	/** An ADC input (ECMA-419 Analog): read() is a raw sample of resolution bits, 0 .. 2^resolution - 1 over 0 .. analogFullScaleMv. */
	export interface AnalogInput {
		readonly resolution: number;
		read(): number;
		close(): void;
	}
	export const Analog: new (options: { pin: number }) => AnalogInput;
	/** The millivolts of a full-scale sample (the SDK's default 12 dB attenuation, calibrated: 2450 mV). */
	export const analogFullScaleMv: number;

	/** A PWM output (ECMA-419 PWM): write(value) sets the duty, 0 .. 2^resolution - 1. */
	export interface PWMOutput {
		readonly resolution: number;
		readonly hz: number;
		write(value: number): void;
		close(): void;
	}
	export const PWM: new (options: { pin: number; hz: number; resolution: number }) => PWMOutput;

	/** A UART (ECMA-419 Serial, format "buffer"): read() takes what arrived, undefined when nothing did. */
	export interface SerialPort {
		read(byteLength?: number): ArrayBuffer | undefined;
		write(bytes: Bytes): void;
		close(): void;
	}
	export interface SerialOptions {
		port: number;
		transmit: number;
		receive: number;
		baud: number;
		format: "buffer";
	}
	export const Serial: new (options: SerialOptions) => SerialPort;

	/** What the lin host's simulated PWM outputs were set to, newest last. */
	export interface PwmRecord {
		pin: number;
		hz: number;
		/** The duty written, 0 .. 2^resolution - 1; undefined when the output was closed. */
		value: number | undefined;
		resolution: number;
	}
	export interface Simulation {
		/** The file (under the storage root) that declares the simulated devices. */
		readonly path: string;
		/** The PWM writes, oldest first (the newest PWM_RECORDS_MAX). */
		pwmRecords(): PwmRecord[];
		/** A simulated EEPROM's bytes, or undefined when none is at address. */
		eeprom(address: number): Uint8Array | undefined;
		/** Forgets what the devices hold (EEPROM bytes, UART bytes, PWM records, ADC positions). */
		reset(): void;
		/** Reads path from this storage folder (an embedded:storage/files Directory) from now on: tests give each a fresh one. */
		useFolder(directory: object): void;
	}
	/** The lin host's simulated devices; undefined on the board. */
	export const simulation: Simulation | undefined;
}
