// What the lin host's serial and digital do differently from the device
// ("host/pins", the simulated bank's outside world: typings/shared/pins.d.ts).
//
// "embedded:io/serial" and "embedded:io/digital" keep @moddable/typings'
// declarations. What the lin host adds or does differently:
// - Serial is the console: stdin/stdout, port 0 only, one open at a time.
//   baud, port, receive and transmit are checked but ignored, and all are optional.
//   Default format is "number", as on the device.
//   onError(error) is called once, with error.message "end of input", when stdin
//   has ended and every byte has been read: a console exits 0 on it. (The SDK
//   typings have no onError option: pass it in an object typed loosely.)
//   Unread input survives reboot(): the next Serial's onReadable fires on the
//   first loop turn with the rest. onWritable always reports 4096 bytes.
//   flush() discards unread input. When stdin is a terminal (host/platform's
//   consoleKind "tty"), the open Serial holds it in character mode: keys arrive
//   one by one, unechoed (Ctrl-D is byte 4; Ctrl-C still raises SIGINT). The
//   terminal's mode is put back when the Serial closes or the program ends.
// - Digital simulates pins 0..48: mode constants Input 0, InputPullUp 1,
//   InputPullDown 2, InputPullUpDown 3, Output 8, OutputOpenDrain 9; edges
//   Rising 1, Falling 2 (the SDK's values). onReadable is called with no
//   argument. write() accepts only 0 or 1, and only in an output mode.

