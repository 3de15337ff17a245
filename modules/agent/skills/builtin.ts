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
};
