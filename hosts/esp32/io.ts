// host/io on the board (declaration: typings/shared/io.d.ts): the Moddable SDK's
// ECMA-419 classes, as caps/io uses them. The SDK's typings leave out close()
// on I2C, Analog and PWM (the classes have it) and type the options loosely, so
// each is handed on under the shape host/io declares. No simulation here.
import I2CClass from "embedded:io/i2c";
import AnalogClass from "embedded:io/analog";
import PWMClass from "embedded:io/pwm";
import SerialClass from "embedded:io/serial";
import type { AnalogInput, I2CDevice, I2COptions, PWMOutput, SerialOptions, SerialPort, Simulation } from "host/io";

export const I2C = I2CClass as unknown as new (options: I2COptions) => I2CDevice;
export const Analog = AnalogClass as unknown as new (options: { pin: number }) => AnalogInput;
export const PWM = PWMClass as unknown as new (options: { pin: number; hz: number; resolution: number }) => PWMOutput;
export const Serial = SerialClass as unknown as new (options: SerialOptions) => SerialPort;
// modules/io/analog/esp32: calibrated samples at the default 12 dB attenuation span 0..2450 mV.
export const analogFullScaleMv = 2450;
export const simulation: Simulation | undefined = undefined;
