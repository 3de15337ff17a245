// caps/io: the board's buses for the agent: I2C, ADC, PWM and a UART, through
// host/io's ECMA-419 classes (the SDK's on the board, simulated devices on lin).
// One IoBoard does every transfer; the tools (caps/io_tools) and the console's
// `i2c`, `adc`, `pwm` and `uart` commands go through it, so what the settings
// allow is checked in one place, at each call (a `config set` applies at once):
//
//   i2c.allow   the I2C addresses that may be read and written ("0x44,0x50");
//               none: the bus is not used at all (not even scanned)
//   adc.allow   the ADC pins adc_read may sample (ADC1: GPIO 1-10)
//   pwm.allow   the pins pwm_set may drive
//   uart.allow  the UART port the agent may use: 1 or 2 (port 0 is the console)
//   i2c.sda, i2c.scl, i2c.hz, uart.tx, uart.rx, uart.baud: the wiring, with
//               the DevKitC-1's defaults (the SDK's esp32s3 I2C pins 4/5; UART1 17/18)
//
// The console's pins (UART0 43/44, USB 19/20) and an N16R8's flash and octal
// PSRAM pins (26-37) are never allowed, in any of these settings or as wiring.
//
// An I2C device is opened for one call and closed after it, whatever happens:
// a device that does not answer (NACK) or a bus held low fails that call with a
// sentence, and the next call opens the bus afresh. A PWM output runs until
// pwm_stop (or a restart); the UART stays open once used, so bytes that arrive
// between calls wait (on the board in the UART's 128-byte FIFO; caps/NOTES.md).
import Timer from "timer";
import { Analog, I2C, PWM, Serial, analogFullScaleMv, type I2CDevice, type PWMOutput, type SerialPort } from "host/io";
import {
	ADC_SAMPLES_MAX, I2C_TIMEOUT_MS, PWM_HZ_MAX, PWM_HZ_MIN, PWM_OUTPUTS_MAX, PWM_RESOLUTION_BITS,
	UART_POLL_MS, UART_TIMEOUT_MAX_MS, UART_TRANSFER_MAX_BYTES,
} from "budgets";
import { RESERVED_PINS, findSetting } from "config/settings";
import { crc8 } from "util/crc8";
import { messageOf } from "util/errors";
import { decodeText } from "util/files";

export const IO_SETTINGS = Object.freeze({
	i2cAllow: "i2c.allow", i2cSda: "i2c.sda", i2cScl: "i2c.scl", i2cHz: "i2c.hz",
	adcAllow: "adc.allow", pwmAllow: "pwm.allow",
	uartAllow: "uart.allow", uartTx: "uart.tx", uartRx: "uart.rx", uartBaud: "uart.baud",
});

/** The ESP32-S3's ADC1 pins: ADC2 (11-20) belongs to the Wi-Fi radio while it runs. */
export const ADC_PIN_MIN = 1, ADC_PIN_MAX = 10;
/** 7-bit addresses a device may have (0-7 and 0x78-0x7F are reserved by the I2C specification). */
export const I2C_ADDRESS_MIN = 0x08, I2C_ADDRESS_MAX = 0x77;
const PIN_MAX = 48;

export interface SettingsReader {
	get(name: string): string | undefined;
}

export const hex2 = (n: number): string => `0x${n.toString(16).padStart(2, "0")}`;
const hexBytes = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");

function usablePin(pin: number, setting: string): void {
	const why = RESERVED_PINS.get(pin);
	if (why) throw new Error(`the setting ${setting} names pin ${pin}, which is ${why}: it is never allowed; use another pin`);
}

/** The pins of an allow setting ("2,4,5"); throws a sentence for a bad one. */
export function parsePins(text: string | undefined, setting: string, range: [number, number] = [0, PIN_MAX]): number[] {
	if (text === undefined || !text.trim()) return [];
	const pins = new Set<number>();
	for (const item of text.split(",")) {
		const word = item.trim();
		if (!/^\d{1,2}$/.test(word) || Number(word) > PIN_MAX) throw new Error(`the setting ${setting} has "${word}", which is not a pin 0-${PIN_MAX}; set it to pins like 2,4`);
		const pin = Number(word);
		usablePin(pin, setting);
		if (pin < range[0] || pin > range[1]) throw new Error(`the setting ${setting} has pin ${pin}, but only pins ${range[0]}-${range[1]} can do this (ADC1; ADC2 belongs to the Wi-Fi radio)`);
		pins.add(pin);
	}
	return [...pins].sort((a, b) => a - b);
}

/** The addresses of i2c.allow ("0x44,0x50" or decimal); throws a sentence for a bad one. */
export function parseAddresses(text: string | undefined): number[] {
	if (text === undefined || !text.trim()) return [];
	const found = new Set<number>();
	for (const item of text.split(",")) {
		const word = item.trim();
		const value = /^0x[0-9a-f]{1,2}$/i.test(word) ? parseInt(word, 16) : /^\d{1,3}$/.test(word) ? Number(word) : NaN;
		if (!(value >= I2C_ADDRESS_MIN && value <= I2C_ADDRESS_MAX)) throw new Error(`the setting ${IO_SETTINGS.i2cAllow} has "${word}", which is not a 7-bit device address ${hex2(I2C_ADDRESS_MIN)}-${hex2(I2C_ADDRESS_MAX)}; set it to addresses like 0x44,0x50`);
		found.add(value);
	}
	return [...found].sort((a, b) => a - b);
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => Timer.set(() => resolve(), ms));
}

/** What an SHT3x's 6-byte measurement says: each word checked by its CRC. */
export function decodeSht3x(bytes: Uint8Array): { temperatureC: number; humidityPct: number } {
	if (bytes.length < 6) throw new Error(`an SHT3x measurement is 6 bytes, not ${bytes.length}; read length 6`);
	for (const at of [0, 3]) {
		if (crc8(bytes.subarray(at, at + 2)) !== bytes[at + 2]) throw new Error(`the SHT3x reading failed its CRC (bytes ${hexBytes(bytes.subarray(0, 6))}): noise on the bus, or not an SHT3x at that address; read again`);
	}
	const t = (bytes[0] << 8) | bytes[1], h = (bytes[3] << 8) | bytes[4];
	return { temperatureC: -45 + 175 * t / 65535, humidityPct: 100 * h / 65535 };
}

export interface I2CReadRequest {
	address: number;
	register?: number;
	registerBytes?: 1 | 2;
	length: number;
	delayMs?: number;
	decode?: "bytes" | "sht3x";
}

export class IoBoard {
	readonly #settings: SettingsReader;
	readonly #pwm = new Map<number, { output: PWMOutput; hz: number; duty: number }>();
	#uart: { port: SerialPort; key: string } | undefined;
	#uartBusy = false;

	constructor(settings: SettingsReader) {
		this.#settings = settings;
	}

	#integer(name: string): number {
		const text = this.#settings.get(name) ?? findSetting(name)?.default ?? "";
		const value = Number(text);
		if (!/^\d+$/.test(text.trim())) throw new Error(`the setting ${name} is "${text}", not a number; set it with: config set ${name} N`);
		return value;
	}

	#wiringPin(name: string): number {
		const pin = this.#integer(name);
		if (pin > PIN_MAX) throw new Error(`the setting ${name} is ${pin}, not a pin 0-${PIN_MAX}`);
		usablePin(pin, name);
		return pin;
	}

	// ---- I2C ----

	i2cAllowed(): number[] {
		return parseAddresses(this.#settings.get(IO_SETTINGS.i2cAllow));
	}

	#bus(): { data: number; clock: number; hz: number } {
		const data = this.#wiringPin(IO_SETTINGS.i2cSda), clock = this.#wiringPin(IO_SETTINGS.i2cScl);
		if (data === clock) throw new Error(`the settings ${IO_SETTINGS.i2cSda} and ${IO_SETTINGS.i2cScl} are both pin ${data}; SDA and SCL need two pins`);
		return { data, clock, hz: this.#integer(IO_SETTINGS.i2cHz) };
	}

	#checkAddress(address: number): void {
		const allowed = this.i2cAllowed();
		if (!allowed.includes(address)) {
			const list = [...allowed, address].sort((a, b) => a - b).map(hex2).join(",");
			throw new Error(`the I2C address ${hex2(address)} is not on the allow-list (${allowed.length ? allowed.map(hex2).join(", ") : "no address is allowed"}); the owner can allow it with: config set ${IO_SETTINGS.i2cAllow} ${list}`);
		}
	}

	/** Opens the device at address for fn and closes it after, whatever happens; errors become sentences. */
	#withDevice<T>(address: number, fn: (device: I2CDevice) => T): T {
		const bus = this.#bus();
		let device: I2CDevice;
		try {
			device = new I2C({ ...bus, address, timeout: I2C_TIMEOUT_MS });
		} catch (error) {
			throw new Error(`the I2C bus cannot be opened on SDA ${bus.data}, SCL ${bus.clock} (${messageOf(error)}); check ${IO_SETTINGS.i2cSda} and ${IO_SETTINGS.i2cScl}`);
		}
		try {
			return fn(device);
		} catch (error) {
			throw this.#i2cError(error, address, bus);
		} finally {
			device.close();
		}
	}

	#i2cError(error: unknown, address: number, bus: { data: number; clock: number }): Error {
		const message = messageOf(error);
		if (/held low|timeout/i.test(message))
			return new Error(`the I2C bus (SDA ${bus.data}, SCL ${bus.clock}) is held low (${message}): nothing was transferred; a device stuck mid-transfer or a short holds it. Check the wiring or power-cycle the device; the bus was released and the next call tries again`);
		if (/acknowledge/i.test(message))
			return new Error(`no device answered at ${hex2(address)} (NACK: ${message}); check the address with i2c_scan, the wiring, and what the device's datasheet says it accepts`);
		return new Error(`the I2C transfer with ${hex2(address)} failed (${message}): the device did not answer (NACK) or the bus is held low; check the address with i2c_scan and the wiring`);
	}

	/** The addresses that answer a probe on the bus, each marked allowed or not. */
	i2cScan(): string {
		const allowed = this.i2cAllowed();
		if (!allowed.length) throw new Error(`the I2C bus is off: no address is allowed; the owner can allow one with: config set ${IO_SETTINGS.i2cAllow} 0x44`);
		const bus = this.#bus();
		const found: number[] = [];
		for (let address = I2C_ADDRESS_MIN; address <= I2C_ADDRESS_MAX; address++) {
			const started = Date.now();
			try {
				this.#withDevice(address, (device) => device.write(new Uint8Array(0)));
				found.push(address);
			} catch (error) {
				const message = messageOf(error);
				// A probe that waited for its timeout (the board's SDK says only "write failed") means a held bus too.
				if (/held low/.test(message) || (!/NACK:/.test(message) && Date.now() - started > I2C_TIMEOUT_MS)) throw error;
			}
		}
		if (!found.length) return `no device answered on the I2C bus (SDA ${bus.data}, SCL ${bus.clock}); check the wiring and the pull-up resistors`;
		return `the I2C bus (SDA ${bus.data}, SCL ${bus.clock}) answered at ${found.map((a) => `${hex2(a)}${allowed.includes(a) ? "" : " (not allowed)"}`).join(", ")}`;
	}

	#registerBytes(register: number, width: 1 | 2 | undefined): number[] {
		const bytes = width ?? (register > 0xFF ? 2 : 1);
		if (register > 0xFF && bytes === 1) throw new Error(`register ${register} does not fit in one byte; give register_bytes 2`);
		return bytes === 2 ? [register >> 8, register & 0xFF] : [register];
	}

	async i2cRead(request: I2CReadRequest): Promise<string> {
		const { address, register, length } = request;
		this.#checkAddress(address);
		const prefix = register === undefined ? [] : this.#registerBytes(register, request.registerBytes);
		if (request.decode === "sht3x" && length < 6) throw new Error(`an SHT3x measurement is 6 bytes, so length must be 6, not ${length}`);
		let bytes: Uint8Array;
		if (prefix.length && request.delayMs) {
			// A conversion between the command and the read: two calls, the bus free in between.
			this.#withDevice(address, (device) => device.write(new Uint8Array(prefix)));
			await sleep(request.delayMs);
			bytes = this.#withDevice(address, (device) => new Uint8Array(device.read(length)));
		} else {
			bytes = this.#withDevice(address, (device) => {
				if (prefix.length) device.write(new Uint8Array(prefix));
				return new Uint8Array(device.read(length));
			});
		}
		const where = `${hex2(address)}${register === undefined ? "" : ` register ${register > 0xFF ? `0x${register.toString(16).padStart(4, "0")}` : hex2(register)}`}`;
		if (request.decode === "sht3x") {
			const { temperatureC, humidityPct } = decodeSht3x(bytes);
			return `${where} (SHT3x): temperature ${temperatureC.toFixed(2)} °C, humidity ${humidityPct.toFixed(1)} %RH (bytes ${hexBytes(bytes)}, CRC ok)`;
		}
		return `${where}: ${bytes.length} bytes ${hexBytes(bytes)}`;
	}

	i2cWrite(address: number, data: number[], register?: number, registerBytes?: 1 | 2): string {
		this.#checkAddress(address);
		const prefix = register === undefined ? [] : this.#registerBytes(register, registerBytes);
		this.#withDevice(address, (device) => device.write(new Uint8Array([...prefix, ...data])));
		return `wrote ${data.length} bytes to ${hex2(address)}${register === undefined ? "" : ` register ${hex2(register)}`}: ${hexBytes(new Uint8Array(data))}`;
	}

	// ---- ADC ----

	adcAllowed(): number[] {
		return parsePins(this.#settings.get(IO_SETTINGS.adcAllow), IO_SETTINGS.adcAllow, [ADC_PIN_MIN, ADC_PIN_MAX]);
	}

	/** The pin's voltage in millivolts, averaged over samples reads. */
	adcRead(pin: number, samples = 8): { mv: number; min: number; max: number } {
		const allowed = this.adcAllowed();
		if (!allowed.includes(pin)) throw new Error(`ADC pin ${pin} is not on the allow-list (${allowed.length ? allowed.join(", ") : "no pins are allowed"}); the owner can allow it with: config set ${IO_SETTINGS.adcAllow} ${[...allowed, pin].sort((a, b) => a - b).join(",")}`);
		if (!(Number.isInteger(samples) && samples >= 1 && samples <= ADC_SAMPLES_MAX)) throw new Error(`samples must be 1-${ADC_SAMPLES_MAX}, not ${samples}`);
		let input;
		try {
			input = new Analog({ pin });
		} catch (error) {
			throw new Error(`pin ${pin} cannot be read as an analog input (${messageOf(error)}); it may be in use by the board`);
		}
		try {
			const top = (1 << input.resolution) - 1;
			let sum = 0, min = Infinity, max = -Infinity;
			for (let i = 0; i < samples; i++) {
				const mv = input.read() * analogFullScaleMv / top;
				sum += mv;
				min = Math.min(min, mv);
				max = Math.max(max, mv);
			}
			return { mv: Math.round(sum / samples), min: Math.round(min), max: Math.round(max) };
		} finally {
			input.close();
		}
	}

	adcText(pin: number, samples = 8): string {
		const { mv, min, max } = this.adcRead(pin, samples);
		return `pin ${pin}: ${mv} mV (average of ${samples} sample${samples === 1 ? "" : "s"}${samples > 1 ? `, ${min}-${max} mV` : ""})`;
	}

	// ---- PWM ----

	pwmAllowed(): number[] {
		return parsePins(this.#settings.get(IO_SETTINGS.pwmAllow), IO_SETTINGS.pwmAllow);
	}

	#checkPwmPin(pin: number): void {
		const allowed = this.pwmAllowed();
		if (!allowed.includes(pin)) throw new Error(`pin ${pin} is not on the PWM allow-list (${allowed.length ? allowed.join(", ") : "no pins are allowed"}); the owner can allow it with: config set ${IO_SETTINGS.pwmAllow} ${[...allowed, pin].sort((a, b) => a - b).join(",")}`);
	}

	/** Drives pin with a square wave of hz at duty percent (0-100). */
	pwmSet(pin: number, hz: number, duty: number): string {
		this.#checkPwmPin(pin);
		if (!(Number.isInteger(hz) && hz >= PWM_HZ_MIN && hz <= PWM_HZ_MAX)) throw new Error(`the frequency ${hz} Hz is out of range: PWM runs at ${PWM_HZ_MIN}-${PWM_HZ_MAX} Hz (whole hertz)`);
		if (!(duty >= 0 && duty <= 100)) throw new Error(`the duty ${duty} is out of range: give a percentage 0-100`);
		let running = this.#pwm.get(pin);
		if (running && running.hz !== hz) {
			running.output.close();
			this.#pwm.delete(pin);
			running = undefined;
		}
		if (!running) {
			if (this.#pwm.size >= PWM_OUTPUTS_MAX) throw new Error(`${PWM_OUTPUTS_MAX} PWM outputs already run (pins ${[...this.#pwm.keys()].join(", ")}); pwm_stop one first`);
			try {
				running = { output: new PWM({ pin, hz, resolution: PWM_RESOLUTION_BITS }), hz, duty };
			} catch (error) {
				throw new Error(`pin ${pin} cannot run PWM at ${hz} Hz (${messageOf(error)}); try another frequency or pin`);
			}
			this.#pwm.set(pin, running);
		}
		const top = (1 << PWM_RESOLUTION_BITS) - 1;
		const value = Math.round(duty * top / 100);
		running.output.write(value);
		running.duty = duty;
		return `pin ${pin}: PWM at ${hz} Hz, duty ${duty}% (${value}/${top})`;
	}

	pwmStop(pin: number): string {
		this.#checkPwmPin(pin);
		const running = this.#pwm.get(pin);
		if (!running) throw new Error(`pin ${pin} runs no PWM; pwm_set starts one`);
		this.#pwm.delete(pin);
		try {
			running.output.write(0);
		} finally {
			running.output.close();
		}
		return `pin ${pin}: PWM stopped`;
	}

	pwmLines(): string[] {
		return [...this.#pwm].map(([pin, { hz, duty }]) => `pin ${pin}: PWM at ${hz} Hz, duty ${duty}%`);
	}

	// ---- UART ----

	#uartPort(): { port: number; transmit: number; receive: number; baud: number } {
		const text = (this.#settings.get(IO_SETTINGS.uartAllow) ?? "").trim();
		if (!text) throw new Error(`the UART is off: no port is allowed; the owner can allow UART1 with: config set ${IO_SETTINGS.uartAllow} 1 (its pins: ${IO_SETTINGS.uartTx} and ${IO_SETTINGS.uartRx})`);
		if (text === "0") throw new Error(`the setting ${IO_SETTINGS.uartAllow} is 0, the console's UART: it is never allowed; use 1 or 2`);
		if (text !== "1" && text !== "2") throw new Error(`the setting ${IO_SETTINGS.uartAllow} is "${text}"; set it to the one port the agent may use: 1 or 2`);
		const transmit = this.#wiringPin(IO_SETTINGS.uartTx), receive = this.#wiringPin(IO_SETTINGS.uartRx);
		if (transmit === receive) throw new Error(`the settings ${IO_SETTINGS.uartTx} and ${IO_SETTINGS.uartRx} are both pin ${transmit}; TX and RX need two pins`);
		return { port: Number(text), transmit, receive, baud: this.#integer(IO_SETTINGS.uartBaud) };
	}

	#serial(): SerialPort {
		const wiring = this.#uartPort();
		const key = JSON.stringify(wiring);
		if (this.#uart?.key === key) return this.#uart.port;
		this.#uart?.port.close();
		this.#uart = undefined;
		try {
			this.#uart = { port: new Serial({ ...wiring, format: "buffer" }), key };
		} catch (error) {
			throw new Error(`UART${wiring.port} cannot be opened on TX ${wiring.transmit}, RX ${wiring.receive} (${messageOf(error)}); check ${IO_SETTINGS.uartTx} and ${IO_SETTINGS.uartRx}`);
		}
		return this.#uart.port;
	}

	uartWrite(bytes: Uint8Array): string {
		if (bytes.length > UART_TRANSFER_MAX_BYTES) throw new Error(`${bytes.length} bytes are more than one write takes (${UART_TRANSFER_MAX_BYTES}); split them`);
		const port = this.#serial();
		port.write(bytes);
		return `wrote ${bytes.length} bytes to UART${this.#uartPort().port}`;
	}

	/** What arrived, up to maxBytes, waiting up to timeoutMs for the first bytes. */
	async uartRead(maxBytes: number, timeoutMs: number): Promise<string> {
		if (!(Number.isInteger(maxBytes) && maxBytes >= 1 && maxBytes <= UART_TRANSFER_MAX_BYTES)) throw new Error(`max_bytes must be 1-${UART_TRANSFER_MAX_BYTES}, not ${maxBytes}`);
		if (!(Number.isInteger(timeoutMs) && timeoutMs >= 0 && timeoutMs <= UART_TIMEOUT_MAX_MS)) throw new Error(`timeout_ms must be 0-${UART_TIMEOUT_MAX_MS}, not ${timeoutMs}`);
		if (this.#uartBusy) throw new Error("another uart_read is waiting; read again after it");
		const port = this.#serial();
		const name = `UART${this.#uartPort().port}`;
		this.#uartBusy = true;
		try {
			const deadline = Date.now() + timeoutMs;
			let got = port.read(maxBytes);
			for (let polls = 0; !got && Date.now() < deadline && polls <= UART_TIMEOUT_MAX_MS / UART_POLL_MS; polls++) {
				await sleep(UART_POLL_MS);
				got = port.read(maxBytes);
			}
			if (!got || !got.byteLength) return `nothing arrived on ${name} within ${timeoutMs} ms`;
			const bytes = new Uint8Array(got);
			const text = decodeText(got);
			const shown = text !== undefined && !/[\x00-\x08\x0e-\x1f\x7f]/.test(text) ? JSON.stringify(text) : `hex ${hexBytes(bytes)}`;
			return `read ${bytes.length} byte${bytes.length === 1 ? "" : "s"} from ${name}: ${shown}`;
		} finally {
			this.#uartBusy = false;
		}
	}

	/** Stops every PWM output and closes the UART (at reboot). */
	close(): void {
		for (const { output } of this.#pwm.values()) output.close();
		this.#pwm.clear();
		this.#uart?.port.close();
		this.#uart = undefined;
	}
}

/** The bytes of "hex" text ("0a ff 10" or "0aff10"); throws a sentence for bad text. */
export function parseHex(text: string): Uint8Array {
	const digits = text.replace(/[\s,:]|0x/gi, "");
	if (!/^([0-9a-f]{2})*$/i.test(digits)) throw new Error(`"${text}" is not hex bytes; give pairs of hex digits like "0a ff 10"`);
	const bytes = new Uint8Array(digits.length / 2);
	for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(digits.slice(i * 2, i * 2 + 2), 16);
	return bytes;
}
