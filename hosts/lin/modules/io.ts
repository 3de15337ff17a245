// host/io on the lin host (declaration: typings/shared/io.d.ts): ECMA-419's
// I2C, Analog, PWM and Serial over simulated devices, declared in the storage's
// io/devices.json (read again at every open, so an edit applies at once; the
// defaults below when it is missing). The state the devices keep (EEPROM bytes,
// UART bytes, PWM records, a stepped waveform's position) is this machine's and
// lasts until reset() or the end of the process.
//
//   {"i2c": {"held_low": false, "devices": [
//      {"type": "sht3x", "address": 68, "temperature_c": 22.5, "humidity_pct": 45},
//      {"type": "eeprom", "address": 80, "size": 256}]},
//    "adc": [{"pin": 1, "waveform": "sine", "min_mv": 500, "max_mv": 2000, "period_ms": 60000},
//            {"pin": 2, "waveform": "constant", "mv": 1650},
//            {"pin": 3, "waveform": "steps", "mv": [100, 200, 300]}],
//    "uart": {"loopback": true}}
//
// The SHT3x-like sensor answers the single-shot measurement commands (0x2400,
// 0x240B, 0x2416, 0x2C06, 0x2C0D, 0x2C10) with 6 bytes: temperature and
// humidity, each with its CRC-8 (poly 0x31, init 0xFF), the status read
// (0xF32D) and soft reset (0x30A2); it NACKs any other command and a read with
// no measurement pending, as the real one does. The EEPROM takes a one-byte
// memory address (two bytes above 256 bytes of size); reads and writes wrap at
// its end. A bus "held_low" fails every transfer with a timeout. Errors read as
// the SDK's ("write failed", "read failed") with the reason after a colon.
import { files, type Directory } from "util/io";
import { crc8 } from "util/crc8";
import { decodeText, readWhole } from "util/files";
import { IO_DEVICES_FILE_MAX_BYTES, PWM_RECORDS_MAX, UART_RX_BUFFER_BYTES } from "budgets";
import type { Bytes, I2COptions, PwmRecord, SerialOptions, Simulation } from "host/io";

const PATH = "io/devices.json";
const ADC_BITS = 12;
export const analogFullScaleMv = 2450;
const ADC_PINS_MAX = 20;          // the ESP32-S3's ADC1 (GPIO 1-10) and ADC2 (11-20)
const PIN_MAX = 48;
const PWM_MIN_HZ: readonly number[] = [68, 34, 17, 9, 5, 3, 2]; // the SDK's esp32s3 table, 8..14 bits

interface Sht3x { type: "sht3x"; address: number; temperature_c: number; humidity_pct: number }
interface Eeprom { type: "eeprom"; address: number; size: number }
type I2CSim = Sht3x | Eeprom;
interface AdcSim { pin: number; waveform: "sine" | "constant" | "steps"; min_mv?: number; max_mv?: number; period_ms?: number; mv?: number | number[] }
interface Devices {
	i2c: { held_low: boolean; devices: I2CSim[] };
	adc: AdcSim[];
	uart: { loopback: boolean };
}

const DEFAULTS: Devices = {
	i2c: { held_low: false, devices: [
		{ type: "sht3x", address: 0x44, temperature_c: 22.5, humidity_pct: 45 },
		{ type: "eeprom", address: 0x50, size: 256 },
	] },
	adc: [
		{ pin: 1, waveform: "sine", min_mv: 500, max_mv: 2000, period_ms: 60_000 },
		{ pin: 2, waveform: "constant", mv: 1650 },
	],
	uart: { loopback: true },
};

function fail(detail: string): never {
	throw new Error(`${PATH}: ${detail}; fix the file or delete it for the defaults`);
}

function address(value: unknown, where: string): number {
	const n = typeof value === "string" && /^0x[0-9a-f]{1,2}$/i.test(value) ? parseInt(value, 16) : value;
	if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 0x7F) fail(`${where}.address must be a 7-bit address (0-127 or "0x44")`);
	return n;
}

function number(value: unknown, where: string, fallback?: number): number {
	if (value === undefined && fallback !== undefined) return fallback;
	if (typeof value !== "number" || !Number.isFinite(value)) fail(`${where} must be a number`);
	return value;
}

function parseDevices(text: string): Devices {
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		fail("is not JSON");
	}
	if (!json || typeof json !== "object" || Array.isArray(json)) fail("must be an object");
	const root = json as Record<string, unknown>;
	const i2c = (root.i2c ?? {}) as Record<string, unknown>;
	const list = i2c.devices ?? [];
	if (!Array.isArray(list)) fail("i2c.devices must be a list");
	const devices: I2CSim[] = list.map((d: Record<string, unknown>, i) => {
		const where = `i2c.devices[${i}]`;
		if (!d || typeof d !== "object") fail(`${where} must be an object`);
		if (d.type === "sht3x") return { type: "sht3x", address: address(d.address, where), temperature_c: number(d.temperature_c, `${where}.temperature_c`, 22.5), humidity_pct: number(d.humidity_pct, `${where}.humidity_pct`, 45) };
		if (d.type === "eeprom") {
			const size = number(d.size, `${where}.size`, 256);
			if (!Number.isInteger(size) || size < 1 || size > 65536) fail(`${where}.size must be 1-65536 bytes`);
			return { type: "eeprom", address: address(d.address, where), size };
		}
		return fail(`${where}.type must be "sht3x" or "eeprom"`);
	});
	const adc = root.adc ?? [];
	if (!Array.isArray(adc)) fail("adc must be a list");
	for (const [i, a] of (adc as AdcSim[]).entries()) {
		if (!a || typeof a !== "object" || !Number.isInteger(a.pin) || !["sine", "constant", "steps"].includes(a.waveform)) fail(`adc[${i}] needs a pin and a waveform: sine, constant or steps`);
		if (a.waveform === "steps" && (!Array.isArray(a.mv) || !a.mv.length || a.mv.some((v) => typeof v !== "number"))) fail(`adc[${i}].mv must be a list of millivolts`);
	}
	const uart = (root.uart ?? {}) as Record<string, unknown>;
	return { i2c: { held_low: i2c.held_low === true, devices }, adc: adc as AdcSim[], uart: { loopback: uart.loopback !== false } };
}

let root: Directory = files;

/** The declared devices, read now (the defaults when the file is missing). */
function devices(): Devices {
	const read = readWhole(root, PATH, IO_DEVICES_FILE_MAX_BYTES);
	if (read.kind === "missing") return DEFAULTS;
	if (read.kind === "too_big") fail(`is ${read.size} bytes, more than ${IO_DEVICES_FILE_MAX_BYTES}`);
	const text = decodeText(read.bytes);
	if (text === undefined) fail("is not UTF-8 text");
	return parseDevices(text);
}

// ---- the devices' state (this machine's) ----
const eeproms = new Map<number, Uint8Array>();
const pointers = new Map<number, number>();          // an EEPROM's address pointer
const pending = new Map<number, Uint8Array>();       // a sensor's frame waiting to be read
const steps = new Map<number, number>();             // a stepped waveform's next index
const received = new Map<number, number[]>();        // a UART port's bytes not yet read
let records: PwmRecord[] = [];

function word(value: number): number[] {
	const raw = Math.max(0, Math.min(0xFFFF, Math.round(value)));
	const pair = [raw >> 8, raw & 0xFF];
	return [...pair, crc8(pair)];
}

const MEASURE = new Set([0x2400, 0x240B, 0x2416, 0x2C06, 0x2C0D, 0x2C10]);

function memory(device: Eeprom): Uint8Array {
	let bytes = eeproms.get(device.address);
	if (!bytes || bytes.length !== device.size) {
		bytes = new Uint8Array(device.size).fill(0xFF);
		eeproms.set(device.address, bytes);
		pointers.set(device.address, 0);
	}
	return bytes;
}

function bytesOf(value: Bytes): Uint8Array {
	return value instanceof Uint8Array ? value : new Uint8Array(value);
}

class I2C {
	#options: I2COptions | undefined;

	constructor(options: I2COptions) {
		for (const pin of [options.data, options.clock]) if (!Number.isInteger(pin) || pin < 0 || pin > PIN_MAX) throw new RangeError("unusable pins");
		if (options.data === options.clock) throw new RangeError("unusable pins");
		if (!Number.isInteger(options.address) || options.address < 0 || options.address > 127) throw new RangeError("invalid address");
		if (!(options.hz > 0 && options.hz <= 20_000_000)) throw new RangeError("invalid hz");
		this.#options = { ...options };
	}

	#device(what: "write" | "read"): I2CSim {
		if (!this.#options) throw new Error("closed");
		const declared = devices();
		if (declared.i2c.held_low) throw new Error(`${what} failed: timeout, the bus is held low`);
		const address = this.#options.address;
		const device = declared.i2c.devices.find((d) => d.address === address);
		if (!device) throw new Error(`${what} failed: no acknowledge from 0x${address.toString(16).padStart(2, "0")}`);
		return device;
	}

	write(value: Bytes, _stop?: boolean): void {
		const device = this.#device("write");
		const bytes = bytesOf(value);
		if (!bytes.length) return; // a probe: the address was acknowledged
		if (device.type === "sht3x") {
			if (bytes.length !== 2) throw new Error("write failed: no acknowledge (the sensor takes two-byte commands)");
			const command = (bytes[0] << 8) | bytes[1];
			if (MEASURE.has(command)) {
				const t = (device.temperature_c + 45) * 65535 / 175, h = device.humidity_pct * 65535 / 100;
				pending.set(device.address, new Uint8Array([...word(t), ...word(h)]));
			} else if (command === 0xF32D) pending.set(device.address, new Uint8Array(word(0)));
			else if (command === 0x30A2) pending.delete(device.address);
			else throw new Error(`write failed: no acknowledge (the sensor does not know command 0x${command.toString(16).padStart(4, "0")})`);
			return;
		}
		const mem = memory(device);
		const wide = device.size > 256;
		if (bytes.length < (wide ? 2 : 1)) throw new Error("write failed: no acknowledge (the EEPROM needs its memory address)");
		let at = wide ? (bytes[0] << 8) | bytes[1] : bytes[0];
		if (at >= device.size) throw new Error(`write failed: no acknowledge (memory address ${at} is past the EEPROM's ${device.size} bytes)`);
		for (let i = wide ? 2 : 1; i < bytes.length; i++) {
			mem[at] = bytes[i];
			at = (at + 1) % device.size;
		}
		pointers.set(device.address, at);
	}

	read(byteLength: number, _stop?: boolean): ArrayBuffer {
		if (!Number.isInteger(byteLength) || byteLength < 1 || byteLength > 4096) throw new RangeError("invalid byteLength");
		const device = this.#device("read");
		const out = new Uint8Array(byteLength).fill(0xFF);
		if (device.type === "sht3x") {
			const frame = pending.get(device.address);
			if (!frame) throw new Error("read failed: no acknowledge (no measurement pending: write a measurement command first)");
			pending.delete(device.address);
			out.set(frame.subarray(0, byteLength));
			return out.buffer;
		}
		const mem = memory(device);
		let at = pointers.get(device.address) ?? 0;
		for (let i = 0; i < byteLength; i++) {
			out[i] = mem[at];
			at = (at + 1) % device.size;
		}
		pointers.set(device.address, at);
		return out.buffer;
	}

	close(): void {
		this.#options = undefined;
	}
}

class Analog {
	#pin: number | undefined;
	readonly resolution = ADC_BITS;

	constructor(options: { pin: number }) {
		if (!Number.isInteger(options.pin) || options.pin < 1 || options.pin > ADC_PINS_MAX) throw new RangeError("not analog pin");
		this.#pin = options.pin;
	}

	read(): number {
		const pin = this.#pin;
		if (pin === undefined) throw new Error("closed");
		const sim = devices().adc.find((a) => a.pin === pin);
		let mv = 0;
		if (sim?.waveform === "constant") mv = typeof sim.mv === "number" ? sim.mv : 0;
		else if (sim?.waveform === "steps" && Array.isArray(sim.mv)) {
			const i = steps.get(pin) ?? 0;
			mv = sim.mv[i % sim.mv.length];
			steps.set(pin, (i + 1) % sim.mv.length);
		} else if (sim?.waveform === "sine") {
			const min = sim.min_mv ?? 0, max = sim.max_mv ?? analogFullScaleMv, period = sim.period_ms || 60_000;
			mv = min + (max - min) * (1 + Math.sin(2 * Math.PI * (Date.now() % period) / period)) / 2;
		}
		const top = (1 << ADC_BITS) - 1;
		return Math.max(0, Math.min(top, Math.round(mv * top / analogFullScaleMv)));
	}

	close(): void {
		this.#pin = undefined;
	}
}

function record(entry: PwmRecord): void {
	records.push(entry);
	if (records.length > PWM_RECORDS_MAX) records = records.slice(-PWM_RECORDS_MAX);
}

class PWM {
	#pin: number | undefined;
	readonly hz: number;
	readonly resolution: number;

	constructor(options: { pin: number; hz: number; resolution: number }) {
		const { pin, hz, resolution } = options;
		if (!Number.isInteger(pin) || pin < 0 || pin > PIN_MAX) throw new RangeError("invalid pin");
		if (!Number.isInteger(hz) || hz <= 0) throw new RangeError("invalid hz");
		if (!Number.isInteger(resolution) || resolution < 8 || resolution > 14) throw new RangeError("invalid resolution");
		if (hz < PWM_MIN_HZ[resolution - 8] || hz > 80_000_000 / (1 << resolution)) throw new RangeError("invalid combination of hz and resolution");
		this.#pin = pin;
		this.hz = hz;
		this.resolution = resolution;
	}

	write(value: number): void {
		if (this.#pin === undefined) throw new Error("closed");
		if (!Number.isInteger(value) || value < 0 || value > (1 << this.resolution) - 1) throw new RangeError("invalid value");
		record({ pin: this.#pin, hz: this.hz, value, resolution: this.resolution });
	}

	close(): void {
		if (this.#pin === undefined) return;
		record({ pin: this.#pin, hz: this.hz, value: undefined, resolution: this.resolution });
		this.#pin = undefined;
	}
}

class Serial {
	#port: number | undefined;

	constructor(options: SerialOptions) {
		if (options.port === 0) throw new Error("port 0 is the console");
		if (options.port !== 1 && options.port !== 2) throw new RangeError("invalid port");
		for (const pin of [options.transmit, options.receive]) if (!Number.isInteger(pin) || pin < 0 || pin > PIN_MAX) throw new RangeError("invalid pin");
		if (!(options.baud > 0)) throw new RangeError("invalid baud");
		if (options.format !== "buffer") throw new RangeError("invalid format");
		this.#port = options.port;
	}

	write(value: Bytes): void {
		const port = this.#port;
		if (port === undefined) throw new Error("closed");
		if (!devices().uart.loopback) return;
		const queue = received.get(port) ?? [];
		const bytes = bytesOf(value);
		// As the driver's buffer: bytes past its room are lost.
		for (let i = 0; i < bytes.length && queue.length < UART_RX_BUFFER_BYTES; i++) queue.push(bytes[i]);
		received.set(port, queue);
	}

	read(byteLength?: number): ArrayBuffer | undefined {
		const port = this.#port;
		if (port === undefined) throw new Error("closed");
		const queue = received.get(port);
		if (!queue?.length) return undefined;
		const taken = queue.splice(0, byteLength ?? queue.length);
		return new Uint8Array(taken).buffer;
	}

	close(): void {
		this.#port = undefined;
	}
}

export { I2C, Analog, PWM, Serial };

export const simulation: Simulation = {
	path: PATH,
	pwmRecords: () => records.map((r) => ({ ...r })),
	eeprom: (at) => eeproms.get(at)?.slice(),
	reset() {
		eeproms.clear();
		pointers.clear();
		pending.clear();
		steps.clear();
		received.clear();
		records = [];
	},
	useFolder(directory: object) {
		root = directory as Directory;
	},
};
