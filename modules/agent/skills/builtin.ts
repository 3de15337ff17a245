// skills/builtin: the skills that ship with the firmware (in the firmware image,
// so in flash on the device). Same format as a skills/<name>.md file on the
// storage (skills/catalog), which can add more or replace one of these by name.
export const BUILTIN_SKILLS: Readonly<Record<string, string>> = {
	blink: `# Blink a pin
summary: Blink an allowed GPIO pin (an LED) a few times, with a short script or with gpio_write.
groups: gpio, script

Use this when someone asks to blink, flash or test an LED or another output pin.

1. The pin must be on the owner's allow-list (setting gpio.allow). If gpio_write says it is not,
   tell the person the exact config command the error gives; do not try other pins.
2. For a few blinks, call run_script with code like:
     for (let i = 0; i < 3; i++) { gpio.write(PIN, 1); gpio.write(PIN, 0); }
     "blinked " + PIN
   (a script has no timers: it toggles as fast as it runs; for visible blinks with pauses,
   call gpio_write yourself, once per change.)
3. Leave the pin at 0 unless the person asked for it to stay on, and say what you did.
`,
	automation: `# An automation that runs without you
summary: Propose a stored script the board runs by itself on a pin's edge, a schedule, a router rule or at boot, with no LLM call.
groups: gpio, script

Use this when someone wants the board to react by itself: "when the button on pin 5 is pressed,
turn on pin 4 and tell me", "every morning at 7 switch the relay".

1. Write the script as for run_script: plain JavaScript, its last expression is its result, no
   async, no timers. Its globals: time, gpio, Math (as granted), trigger (what fired it:
   {kind: "gpio", pin, level}, {kind: "cron", schedule}, {kind: "router", text, channel, chat_id},
   {kind: "boot"}, {kind: "manual"}), notify(text) (a message to this chat) and ask(text) (a
   request to you, which costs an LLM call: use it only when a person's judgement is needed).
2. script_save it with a name, what it is for, its grants (gpio to drive pins) and its triggers:
   on ["gpio 5 rising"] (or falling, both), ["boot"], ["router"]; a schedule with cron
   "MM HH * * *" or every_seconds. Pins must be on the allow-list (gpio.allow).
3. It is saved as a proposal: tell the person it runs once the owner confirms it on the console
   with: script confirm NAME (after reading it with script show NAME). script_run tests it then.
4. A script that fails is reported to this chat once, and disabled after repeated failures.
`,
	reminder: `# A daily reminder
summary: Set up, list or cancel a reminder that fires every day (or once) and messages this chat.
groups: sched

Use this when someone asks to be reminded of something, daily or at a time.

1. Ask for the time if it is missing; times are in the board's time zone unless the person names one.
2. Daily: schedule_create with kind "cron" and cron "MM HH * * *" (minute first!), e.g. "30 7 * * *"
   for 07:30 every day; weekdays only: "30 7 * * 1-5". Once: kind "once" with at "YYYY-MM-DDTHH:MM".
3. The text is what you will be told when it fires, written as an instruction to yourself, e.g.
   "Remind the person to take their medicine; keep it to one friendly sentence."
4. Confirm with the schedule's id and its next time. schedule_list shows all; schedule_delete cancels one.
`,
	plants: `# Plant-watering routine
summary: Water plants with a pump on a GPIO pin, now or on a schedule, and keep a log file.
groups: gpio, sched, files

Use this when someone wants plants watered by the board: a pump or valve on an allowed pin.

1. Ask which pin drives the pump if you do not know it (it must be on the allow-list, gpio.allow).
2. To water now: gpio_write the pin to 1, then to 0 (a request cannot wait in between; one
   round of on/off is one short burst). Say that a longer burst needs a timer relay.
3. To water regularly: schedule_create kind "cron", e.g. "0 7 * * *", with a text like
   "Water the plants: gpio_write pin 5 to 1, then to 0, and append the date to watering.log."
4. Keep a log: file_write watering.log with append true, one line per watering with the date
   (get_time gives it). file_read watering.log answers "when were they last watered?".
`,
	temperature: `# Read a temperature sensor
summary: Read the temperature and humidity from an SHT3x-like sensor on the I2C bus and explain it.
groups: io

Use this when someone asks for the temperature or humidity, or whether it is warm, cold, damp or dry.

1. The sensor's address must be on the owner's allow-list (setting i2c.allow; an SHT3x is 0x44,
   or 0x45 with its ADDR pin high). If i2c_read says it is not, tell the person the config command
   the error gives. i2c_scan lists what answers.
2. Call i2c_read with address 68 (0x44), register 9216 (the single-shot command 0x2400), length 6,
   delay_ms 20 and decode "sht3x": the result gives the temperature in °C and the humidity in %RH.
3. Answer with the values as the tool gave them (one decimal is enough), and a short word on what
   they mean (comfortable indoors is about 19-24 °C and 30-60 %RH). A CRC or NACK error: say so
   and suggest checking the wiring; do not invent a value.
`,
	dimmer: `# Dim an LED
summary: Dim or brighten an LED (or set a fan's speed) on an allowed pin with PWM, or switch it off.
groups: io

Use this when someone asks to dim, brighten, fade or set the brightness of a light, or a motor's speed.

1. The pin must be on the owner's allow-list (setting pwm.allow); if pwm_set says it is not, give the
   person the exact config command the error gives; do not try other pins.
2. Call pwm_set with the pin, frequency 1000 (LEDs; 20000 for a motor, above hearing) and duty in
   percent: 100 is full brightness, 0 is off. Perceived brightness is not linear: 10% looks about
   half as bright as 100%.
3. pwm_stop switches it off for good. Say what you set it to.
`,
	voltage_log: `# Log a voltage every few minutes
summary: Read a voltage on an ADC pin now, or log it to a file every N minutes with a schedule.
groups: io, sched, files

Use this when someone wants a battery, a solar panel or a sensor's voltage read or logged.

1. The pin must be on the owner's allow-list (setting adc.allow; ADC1 pins 1-10). adc_read gives
   millivolts, averaged over its samples. A divider on the pin: multiply by its ratio, and say so.
2. To log: schedule_create kind "every" with every_seconds N*60 (at least 60), and a text like
   "Read adc_read pin 1 and append one line 'TIME mV' to volts.log (get_time for the time)."
   Each firing: adc_read, then file_write with append true, one line per reading.
3. file_read volts.log answers "what were the readings?"; schedule_delete stops the log.
`,
	board_io: `# The board's buses: I2C, ADC, PWM, UART
summary: Scan, read and write I2C devices, read ADC voltages, drive PWM, talk on a UART.
groups: io

Use this for any other question about what is wired to the board's buses.

- i2c_scan lists the addresses that answer; i2c_read and i2c_write only reach addresses on
  i2c.allow. A register or command goes in register (two bytes above 255).
- adc_read reads millivolts on adc.allow's pins; pwm_set and pwm_stop drive pwm.allow's pins.
- uart_write sends text or hex on the allowed UART (uart.allow); uart_read returns what arrived,
  waiting up to timeout_ms.
- Errors say what is wrong (not allowed, no answer, bus held low): pass the owner's config command on.
`,
};
