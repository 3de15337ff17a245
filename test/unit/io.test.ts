// caps/io and caps/io_tools against the lin host's simulated devices (host/io):
// every tool through the registry (schema, policy, handler), each bad input the
// issue names (an address that does not answer, a bus held low, a read past the
// bound, a pin not allowed, a frequency out of range) with its sentence, and the
// bus usable after it; the console commands; the settings' checks.
import { simulation } from "host/io";
import { I2C_TRANSFER_MAX_BYTES, PWM_HZ_MAX, PWM_HZ_MIN, UART_TRANSFER_MAX_BYTES } from "budgets";
import { IoBoard, decodeSht3x, parseAddresses, parsePins } from "caps/io";
import { ioCommands, ioTools } from "caps/io_tools";
import { Registry } from "caps/registry";
import { checkSetting, settingOf } from "config/settings";
import type { AgentRequest, ToolContext } from "core/types";
import { Aborter } from "net/abort";
import { crc8 } from "util/crc8";
import { freshDirectory, Lines, writeRaw } from "./memory_fakes";
import { assert, test } from "testing";

function request(role?: AgentRequest["role"], channel = "console"): AgentRequest {
	return { request_id: 1, flags: 0, session_id: "", user_text: "hi", source: { channel, chat_id: "c1", sender_id: "", message_id: "", cap: "" }, ...(role ? { role } : {}) };
}
const context = (r: AgentRequest): ToolContext => ({ request: r, signal: new Aborter().signal, progress() {} });

const sim = simulation!;

/** A registry of the io tools over settings, with a fresh devices folder (devices: io/devices.json's text, or the defaults). */
function setup(settings: Record<string, string>, devices?: object) {
	const folder = freshDirectory("io");
	folder.createDirectory("io");
	if (devices) writeRaw(folder, sim.path, JSON.stringify(devices));
	sim.useFolder(folder);
	sim.reset();
	const config = new Map(Object.entries(settings));
	const board = new IoBoard({ get: (name) => config.get(name) });
	const registry = new Registry(ioTools(board));
	const call = (name: string, args: object, r = request()) => registry.callCap({ id: "c", name, arguments: JSON.stringify(args) }, context(r));
	const devicesFile = (value: object) => writeRaw(folder, sim.path, JSON.stringify(value));
	return { config, board, registry, call, folder, devicesFile };
}

const SENSOR = { type: "sht3x", address: 0x44, temperature_c: 23.4, humidity_pct: 51.2 };
const EEPROM = { type: "eeprom", address: 0x50, size: 256 };
const DEVICES = { i2c: { devices: [SENSOR, EEPROM] }, adc: [{ pin: 1, waveform: "constant", mv: 1200 }, { pin: 3, waveform: "steps", mv: [100, 300] }], uart: { loopback: true } };
const READ_SENSOR = { address: 0x44, register: 0x2400, length: 6, decode: "sht3x" };

test("crc8 is Sensirion's (0xBEEF -> 0x92), and an SHT3x frame decodes or fails its CRC", () => {
	assert.equal(crc8([0xBE, 0xEF]), 0x92);
	const frame = new Uint8Array([0x66, 0x6c, 0, 0x73, 0x33, 0]);
	frame[2] = crc8(frame.subarray(0, 2));
	frame[5] = crc8(frame.subarray(3, 5));
	const { temperatureC, humidityPct } = decodeSht3x(frame);
	assert.equal(temperatureC.toFixed(2), "25.02");
	assert.equal(humidityPct.toFixed(1), "45.0");
	frame[4] ^= 1;
	assert.throws(() => decodeSht3x(frame), /the SHT3x reading failed its CRC \(bytes 66 6c .*\): noise on the bus/);
});

test("i2c_read reads the simulated SHT3x (decoded, CRC checked) and its raw bytes; the status register too", async () => {
	const { call } = setup({ "i2c.allow": "0x44,0x50" }, DEVICES);
	assert.deepEqual(await call("i2c_read", READ_SENSOR), { content: "0x44 register 0x2400 (SHT3x): temperature 23.40 °C, humidity 51.2 %RH (bytes 64 0f 79 83 12 ae, CRC ok)" });
	const raw = await call("i2c_read", { address: 0x44, register: 0x2400, length: 6, delay_ms: 5 });
	assert.equal(raw.content, "0x44 register 0x2400: 6 bytes 64 0f 79 83 12 ae");
	assert.equal((await call("i2c_read", { address: 0x44, register: 0xF32D, length: 3 })).content, "0x44 register 0xf32d: 3 bytes 00 00 81");
	// Without a command first the sensor has nothing to say: it NACKs the read.
	const nothing = await call("i2c_read", { address: 0x44, length: 6 });
	assert.equal(nothing.is_error, true);
	assert.match(nothing.content, /^no device answered at 0x44 \(NACK: read failed: no acknowledge \(no measurement pending/);
});

test("i2c_write and i2c_read reach the simulated EEPROM: bytes written at a memory address read back; a user may read but not write", async () => {
	const { call } = setup({ "i2c.allow": "0x50" }, DEVICES);
	assert.deepEqual(await call("i2c_write", { address: 0x50, register: 0x10, data: [1, 2, 3] }), { content: "wrote 3 bytes to 0x50 register 0x10: 01 02 03" });
	assert.deepEqual(Array.from(sim.eeprom(0x50)!.subarray(0x0F, 0x14)), [0xFF, 1, 2, 3, 0xFF]);
	assert.equal((await call("i2c_read", { address: 0x50, register: 0x10, length: 4 })).content, "0x50 register 0x10: 4 bytes 01 02 03 ff");
	// The EEPROM wraps at its end, as a 24C02 does.
	await call("i2c_write", { address: 0x50, register: 0xFF, data: [9, 8] });
	assert.equal((await call("i2c_read", { address: 0x50, register: 0xFF, length: 2 })).content, "0x50 register 0xff: 2 bytes 09 08");
	const user = await call("i2c_write", { address: 0x50, register: 0, data: [0] }, request("user", "telegram"));
	assert.match(user.content, /^the tool i2c_write is only for the owner/);
	assert.equal((await call("i2c_read", { address: 0x50, register: 0x10, length: 1 }, request("user", "telegram"))).content, "0x50 register 0x10: 1 bytes 01");
	const cron = await call("i2c_write", { address: 0x50, register: 0, data: [7] }, request("cron", "cron"));
	assert.equal(cron.content, "wrote 1 bytes to 0x50 register 0x00: 07", "a schedule may drive");
});

test("i2c_scan lists what answers, marking addresses not allowed; with nothing allowed the bus is off", async () => {
	const { call, config } = setup({ "i2c.allow": "0x44" }, DEVICES);
	assert.deepEqual(await call("i2c_scan", {}), { content: "the I2C bus (SDA 4, SCL 5) answered at 0x44, 0x50 (not allowed)" });
	config.set("i2c.sda", "8");
	config.set("i2c.scl", "9");
	assert.equal((await call("i2c_scan", {})).content, "the I2C bus (SDA 8, SCL 9) answered at 0x44, 0x50 (not allowed)", "the wiring comes from the settings");
	config.delete("i2c.allow");
	const off = await call("i2c_scan", {});
	assert.deepEqual(off, { content: "the I2C bus is off: no address is allowed; the owner can allow one with: config set i2c.allow 0x44", is_error: true });
	const empty = setup({ "i2c.allow": "0x44" }, { i2c: { devices: [] } });
	assert.equal((await empty.call("i2c_scan", {})).content, "no device answered on the I2C bus (SDA 4, SCL 5); check the wiring and the pull-up resistors");
});

test("bad I2C input: an address that does not answer (NACK), a bus held low, a read past the bound, an address not allowed; the bus works after each", async () => {
	const { call, devicesFile } = setup({ "i2c.allow": "0x44,0x45" }, DEVICES);
	const nack = await call("i2c_read", { address: 0x45, register: 0x2400, length: 6 });
	assert.deepEqual(nack, { content: "no device answered at 0x45 (NACK: write failed: no acknowledge from 0x45); check the address with i2c_scan, the wiring, and what the device's datasheet says it accepts", is_error: true });
	assert.match((await call("i2c_read", READ_SENSOR)).content, /temperature 23\.40 °C/, "usable after a NACK");
	const unknown = await call("i2c_write", { address: 0x44, register: 0x1234, data: [] });
	assert.match(unknown.content, /^no device answered at 0x44 \(NACK: write failed: no acknowledge \(the sensor does not know command 0x1234\)\)/);

	devicesFile({ ...DEVICES, i2c: { held_low: true, devices: [SENSOR] } });
	const held = await call("i2c_read", READ_SENSOR);
	assert.equal(held.is_error, true);
	assert.equal(held.content, "the I2C bus (SDA 4, SCL 5) is held low (write failed: timeout, the bus is held low): nothing was transferred; a device stuck mid-transfer or a short holds it. Check the wiring or power-cycle the device; the bus was released and the next call tries again");
	assert.match((await call("i2c_scan", {})).content, /^the I2C bus \(SDA 4, SCL 5\) is held low/);
	devicesFile(DEVICES);
	assert.match((await call("i2c_read", READ_SENSOR)).content, /temperature 23\.40 °C/, "usable once the bus is free");

	const past = await call("i2c_read", { address: 0x44, length: I2C_TRANSFER_MAX_BYTES + 1 });
	assert.equal(past.content, `the arguments do not fit the schema of i2c_read: arguments.length must be at most ${I2C_TRANSFER_MAX_BYTES}, not ${I2C_TRANSFER_MAX_BYTES + 1}`);
	const long = await call("i2c_write", { address: 0x44, data: new Array(I2C_TRANSFER_MAX_BYTES + 1).fill(0) });
	assert.match(long.content, /arguments\.data must have at most 32 items, not 33/);
	const notAllowed = await call("i2c_read", { address: 0x50, register: 0, length: 1 });
	assert.equal(notAllowed.content, "the I2C address 0x50 is not on the allow-list (0x44, 0x45); the owner can allow it with: config set i2c.allow 0x44,0x45,0x50");
	const short = await call("i2c_read", { ...READ_SENSOR, length: 2 });
	assert.equal(short.content, "an SHT3x measurement is 6 bytes, so length must be 6, not 2");
	const wide = await call("i2c_read", { address: 0x44, register: 0x2400, register_bytes: 1, length: 6 });
	assert.equal(wide.content, "register 9216 does not fit in one byte; give register_bytes 2");
	assert.match((await call("i2c_read", READ_SENSOR)).content, /humidity 51\.2 %RH/, "and still usable");
});

test("the allow settings: bad values, the console, flash and PSRAM pins never allowed, ADC only on ADC1", async () => {
	assert.deepEqual(parsePins("5, 2,5", "pwm.allow"), [2, 5]);
	assert.throws(() => parsePins("43", "pwm.allow"), /the setting pwm\.allow names pin 43, which is the console's UART0 TX: it is never allowed/);
	for (const pin of [19, 20, 26, 30, 32, 33, 37, 44]) assert.throws(() => parsePins(String(pin), "pwm.allow"), new RegExp(`pin ${pin}, which .*never allowed`));
	assert.throws(() => parsePins("x", "pwm.allow"), /"x", which is not a pin 0-48/);
	assert.throws(() => parsePins("12", "adc.allow", [1, 10]), /only pins 1-10 can do this \(ADC1; ADC2 belongs to the Wi-Fi radio\)/);
	// config set refuses what is not pins, and a UART port other than 1 or 2 (0 is the console's).
	assert.equal(checkSetting(settingOf("pwm.allow"), "6, 5"), "5,6");
	assert.throws(() => checkSetting(settingOf("adc.allow"), "1,x"), /adc\.allow must be comma-separated GPIO numbers/);
	assert.equal(checkSetting(settingOf("uart.allow"), "2"), "2");
	assert.throws(() => checkSetting(settingOf("uart.allow"), "0"), /uart\.allow must be one of 1, 2/);
	assert.deepEqual(parseAddresses("0x50, 68"), [0x44, 0x50]);
	assert.throws(() => parseAddresses("0x80"), /"0x80", which is not a 7-bit device address 0x08-0x77/);
	const { call, config } = setup({ "i2c.allow": "0x44", "i2c.sda": "30" }, DEVICES);
	assert.equal((await call("i2c_read", READ_SENSOR)).content, "the setting i2c.sda names pin 30, which is the flash's SPI bus: it is never allowed; use another pin");
	config.set("i2c.sda", "5");
	assert.equal((await call("i2c_read", READ_SENSOR)).content, "the settings i2c.sda and i2c.scl are both pin 5; SDA and SCL need two pins");
});

test("adc_read: millivolts averaged over samples, on allowed ADC1 pins only", async () => {
	const { call, config } = setup({ "adc.allow": "1,3" }, DEVICES);
	assert.deepEqual(await call("adc_read", { pin: 1 }), { content: "pin 1: 1200 mV (average of 8 samples, 1200-1200 mV)" });
	assert.equal((await call("adc_read", { pin: 3, samples: 4 })).content, "pin 3: 200 mV (average of 4 samples, 100-300 mV)");
	assert.equal((await call("adc_read", { pin: 3, samples: 1 }, request("user", "telegram"))).content, "pin 3: 100 mV (average of 1 sample)", "reading is open to users");
	const no = await call("adc_read", { pin: 2 });
	assert.deepEqual(no, { content: "ADC pin 2 is not on the allow-list (1, 3); the owner can allow it with: config set adc.allow 1,2,3", is_error: true });
	assert.match((await call("adc_read", { pin: 1, samples: 65 })).content, /arguments\.samples must be at most 64, not 65/);
	config.set("adc.allow", "1,15");
	assert.match((await call("adc_read", { pin: 1 })).content, /^the setting adc\.allow has pin 15, but only pins 1-10/);
	// The default devices: pin 1 plays a sine between 500 and 2000 mV.
	const defaults = setup({ "adc.allow": "1" });
	const sine = Number(/^pin 1: (\d+) mV/.exec((await defaults.call("adc_read", { pin: 1, samples: 1 })).content)![1]);
	assert.ok(sine >= 499 && sine <= 2001, String(sine));
});

test("pwm_set records the frequency and duty on the simulated output, pwm_stop stops it; bad frequency, pin and role are refused", async () => {
	const { call, board } = setup({ "pwm.allow": "5,6" }, DEVICES);
	assert.deepEqual(await call("pwm_set", { pin: 5, frequency: 1000, duty: 25 }), { content: "pin 5: PWM at 1000 Hz, duty 25% (256/1023)" });
	assert.deepEqual(sim.pwmRecords().at(-1), { pin: 5, hz: 1000, value: 256, resolution: 10 });
	assert.equal((await call("pwm_set", { pin: 5, frequency: 1000, duty: 100 })).content, "pin 5: PWM at 1000 Hz, duty 100% (1023/1023)");
	assert.equal((await call("pwm_set", { pin: 5, frequency: 20000, duty: 50 })).content, "pin 5: PWM at 20000 Hz, duty 50% (512/1023)");
	assert.deepEqual(sim.pwmRecords().slice(-2), [{ pin: 5, hz: 1000, value: undefined, resolution: 10 }, { pin: 5, hz: 20000, value: 512, resolution: 10 }], "a new frequency reopens the output");
	assert.deepEqual(board.pwmLines(), ["pin 5: PWM at 20000 Hz, duty 50%"]);
	assert.equal((await call("pwm_set", { pin: 5, frequency: PWM_HZ_MIN - 1, duty: 50 })).content, `the arguments do not fit the schema of pwm_set: arguments.frequency must be at least ${PWM_HZ_MIN}, not ${PWM_HZ_MIN - 1}`);
	assert.equal((await call("pwm_set", { pin: 5, frequency: PWM_HZ_MAX + 1, duty: 50 })).content, `the arguments do not fit the schema of pwm_set: arguments.frequency must be at most ${PWM_HZ_MAX}, not ${PWM_HZ_MAX + 1}`);
	assert.throws(() => board.pwmSet(5, 10, 50), /the frequency 10 Hz is out of range: PWM runs at 20-40000 Hz/);
	assert.equal((await call("pwm_set", { pin: 7, frequency: 1000, duty: 50 })).content, "pin 7 is not on the PWM allow-list (5, 6); the owner can allow it with: config set pwm.allow 5,6,7");
	assert.match((await call("pwm_set", { pin: 6, frequency: 1000, duty: 50 }, request("user", "telegram"))).content, /^the tool pwm_set is only for the owner/);
	assert.equal((await call("pwm_set", { pin: 6, frequency: 1000, duty: 10 }, request("cron", "cron"))).content, "pin 6: PWM at 1000 Hz, duty 10% (102/1023)");
	assert.deepEqual(await call("pwm_stop", { pin: 5 }), { content: "pin 5: PWM stopped" });
	assert.deepEqual(sim.pwmRecords().slice(-2), [{ pin: 5, hz: 20000, value: 0, resolution: 10 }, { pin: 5, hz: 20000, value: undefined, resolution: 10 }]);
	assert.equal((await call("pwm_stop", { pin: 5 })).content, "pin 5 runs no PWM; pwm_set starts one");
	board.close();
	assert.deepEqual(board.pwmLines(), []);
	assert.equal(sim.pwmRecords().at(-1)!.value, undefined, "close() stops every output");
});

test("uart_write and uart_read over the simulated loopback: text, hex, a timeout, bounds, the port setting", async () => {
	const { call, config, devicesFile, board } = setup({ "uart.allow": "1" }, DEVICES);
	assert.deepEqual(await call("uart_write", { text: "hello" }), { content: "wrote 5 bytes to UART1" });
	assert.deepEqual(await call("uart_read", { max_bytes: 3 }), { content: "read 3 bytes from UART1: \"hel\"" });
	assert.equal((await call("uart_read", {}, request("user", "telegram"))).content, "read 2 bytes from UART1: \"lo\"");
	assert.equal((await call("uart_write", { hex: "00 ff 10" })).content, "wrote 3 bytes to UART1");
	assert.equal((await call("uart_read", {})).content, "read 3 bytes from UART1: hex 00 ff 10");
	const started = Date.now();
	assert.equal((await call("uart_read", { timeout_ms: 50 })).content, "nothing arrived on UART1 within 50 ms");
	assert.ok(Date.now() - started >= 40, "it waited");
	assert.equal((await call("uart_write", { text: "a", hex: "00" })).content, "give either text or hex, not both and not neither");
	assert.match((await call("uart_write", { hex: "0g" })).content, /"0g" is not hex bytes/);
	assert.match((await call("uart_read", { max_bytes: UART_TRANSFER_MAX_BYTES + 1 })).content, /arguments\.max_bytes must be at most 1024/);
	assert.match((await call("uart_read", { timeout_ms: 5001 })).content, /arguments\.timeout_ms must be at most 5000/);
	assert.match((await call("uart_write", { text: "x" }, request("user", "telegram"))).content, /^the tool uart_write is only for the owner/);
	devicesFile({ ...DEVICES, uart: { loopback: false } });
	await call("uart_write", { text: "lost" });
	assert.equal((await call("uart_read", { timeout_ms: 0 })).content, "nothing arrived on UART1 within 0 ms");
	config.set("uart.allow", "0");
	assert.equal((await call("uart_read", {})).content, "the setting uart.allow is 0, the console's UART: it is never allowed; use 1 or 2");
	config.delete("uart.allow");
	assert.equal((await call("uart_write", { text: "x" })).content, "the UART is off: no port is allowed; the owner can allow UART1 with: config set uart.allow 1 (its pins: uart.tx and uart.rx)");
	config.set("uart.allow", "1");
	config.set("uart.tx", "43");
	assert.equal((await call("uart_write", { text: "x" })).content, "the setting uart.tx names pin 43, which is the console's UART0 TX: it is never allowed; use another pin");
	board.close();
});

test("the console's i2c, adc, pwm and uart commands do what the tools do", async () => {
	const { board } = setup({ "i2c.allow": "0x44,0x50", "adc.allow": "1", "pwm.allow": "5", "uart.allow": "2" }, DEVICES);
	const commands = new Map(ioCommands(board).map((c) => [c.name, c]));
	const out = new Lines();
	await commands.get("i2c scan")!.run("", out);
	await commands.get("i2c write")!.run("0x50 0x20 0xAB", out);
	await commands.get("i2c read")!.run("0x50 0x20 1", out);
	await commands.get("i2c read")!.run("0x44 0x2400 6", out);
	await commands.get("adc")!.run("1 2", out);
	await commands.get("pwm")!.run("5 500 40", out);
	await commands.get("pwm")!.run("", out);
	await commands.get("pwm")!.run("5 stop", out);
	await commands.get("pwm")!.run("", out);
	await commands.get("uart write")!.run("hi there", out);
	await commands.get("uart read")!.run("", out);
	assert.deepEqual(out.all, [
		"the I2C bus (SDA 4, SCL 5) answered at 0x44, 0x50",
		"wrote 2 bytes to 0x50: 20 ab",
		"0x50 register 0x20: 1 bytes ab",
		"0x44 register 0x2400: 6 bytes 64 0f 79 83 12 ae",
		"pin 1: 1200 mV (average of 2 samples, 1200-1200 mV)",
		"pin 5: PWM at 500 Hz, duty 40% (409/1023)",
		"pin 5: PWM at 500 Hz, duty 40%",
		"pin 5: PWM stopped",
		"no PWM output runs",
		"wrote 8 bytes to UART2",
		"read 8 bytes from UART2: \"hi there\"",
	]);
	let usage = 0;
	for (const [name, args] of [["i2c read", "0x44"], ["i2c scan", "zap"], ["adc", "x"], ["pwm", "5 500"], ["uart read", "x"]] as const) {
		try {
			await commands.get(name)!.run(args, out);
		} catch (error) {
			if ((error as Error).name === "UsageError" || /usage/i.test(String(error))) usage++;
			else throw error;
		}
	}
	assert.equal(usage, 5);
	board.close();
});

test("a damaged devices file is named in the error, and the defaults apply without one", async () => {
	const { call, devicesFile } = setup({ "i2c.allow": "0x44" });
	assert.match((await call("i2c_read", READ_SENSOR)).content, /temperature 22\.50 °C, humidity 45\.0 %RH/, "the default sensor");
	devicesFile({ i2c: { devices: [{ type: "thermistor", address: 1 }] } });
	assert.match((await call("i2c_read", READ_SENSOR)).content, /io\/devices\.json: i2c\.devices\[0\]\.type must be "sht3x" or "eeprom"; fix the file or delete it for the defaults/);
});
