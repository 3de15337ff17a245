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
};
