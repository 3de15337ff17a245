// "host/bytes": byte searches in C for the parsers on the response path (net/sse,
// net/chunked, net/response, net/utf8, llm/scan) and the store's CRC-32, where a JavaScript loop reads
// each byte through XS's generic typed-array getter. One C file for both targets
// (hosts/common/bytes/bytes.c); the lin host installs it in hosts/lin/src/bytes_lin.c
// (hosts/lin/modules/bytes.ts), the device reaches it by name (hosts/esp32/bytes.ts).
//
// Every function takes bytes (a Uint8Array or an ArrayBuffer) and a range
// [from, end) of whole numbers with 0 <= from <= end <= bytes' byte length; else
// it throws TypeError or RangeError("bytes: <function>: ..."). Indexes are of
// bytes itself (a Uint8Array's own, not its buffer's). None allocates but
// jsonText (the string it returns).
declare module "host/bytes" {
	/** The index of the first byte equal to a (or b) in bytes[from, end), or -1. */
	export function find(bytes: Uint8Array | ArrayBuffer, from: number, end: number, a: number, b?: number): number;
	/**
	 * The index of the first byte in bytes[from, end) where a JSON string's run of
	 * plain bytes stops: a quote (0x22), a backslash (0x5C) or a control character
	 * (below 0x20); -1 when there is none.
	 */
	export function jsonStringStop(bytes: Uint8Array | ArrayBuffer, from: number, end: number): number;
	/**
	 * The index of the first byte in bytes[from, end) that is not part of valid
	 * UTF-8 (a sequence cut by end, an overlong form, an encoded surrogate, a code
	 * point above U+10FFFF, a stray byte), or in mode "xs" also a 00 byte; -1
	 * when all of it is clean for the mode (net/utf8).
	 */
	export function utf8Invalid(bytes: Uint8Array | ArrayBuffer, from: number, end: number, mode: "wire" | "xs"): number;
	/**
	 * The index after the JSON value that starts at from (after JSON whitespace),
	 * checked all through by llm/scan's grammar (RFC 8259; invalid UTF-8 inside a
	 * string is left to the decoder, a byte of 0x80 or more outside one is an
	 * error), with at most levels (0..1024) objects and arrays open. A negative
	 * number is the first error met: -1 end of data, -2 an unexpected character,
	 * -3 an unterminated string, -4 a control character in a string, -5 a bad \u
	 * escape, -6 a bad escape, -7 a bad number, -8 a bad literal, -9 nested deeper
	 * than levels, -10 expected , or } in an object, -11 expected a key, -12
	 * expected : after a key, -13 expected , or ] in an array.
	 */
	export function jsonSkip(bytes: Uint8Array | ArrayBuffer, from: number, end: number, levels: number): number;
	/**
	 * Walks the JSON object at or after whitespace from `from`, checked all through
	 * as jsonSkip checks it (the object is one of the levels), and notes where
	 * members start: names packs key names (each a length of 1..255, then its
	 * ASCII bytes); out is the buffer of an Int32Array with a slot per name, where
	 * out[k] becomes the index at which the value of the last member whose key
	 * (escapes decoded) is the k-th name starts, or -1. Returns the index after
	 * the object, or jsonSkip's negative codes, or -14 when the value there is no
	 * object (nothing else read).
	 */
	export function jsonMembers(bytes: Uint8Array | ArrayBuffer, from: number, end: number, levels: number, names: Uint8Array | ArrayBuffer, out: ArrayBuffer): number;
	/**
	 * Walks the JSON object at or after whitespace from `from`, checked all through
	 * as jsonSkip checks it (the object is one of the levels), and the objects
	 * under it that program names, in one call: out is the buffer of an Int32Array
	 * of slots, each -1 unless the walk notes a position there. program (llm/scan's
	 * FieldProgram packs it; at most 1,024 bytes) is nodes one after the other, the
	 * first the object at from. A node: its field count (1..255), the slot where
	 * its own object's position goes (255: none), then per field: its name's length
	 * (1..255) and ASCII bytes, its slot (255: none), the kinds of value it is noted
	 * for (bits: 1 string, 2 number, 4 object, 8 array, 16 true, 32 false, 64 null),
	 * and its child: the offset of a node further on (2 bytes, little-endian; 0:
	 * none), walked over the field's value when that is an object and kinds has 4,
	 * or over the first item of the field's value when that is an array (kinds has
	 * 8) whose first item is an object. For the last member whose key (escapes
	 * decoded) is a field's name, the field's slot gets where its value starts when
	 * the value's kind is one of its kinds, else -1 (and its child's slots restart
	 * at -1). Returns the index after the object, or jsonSkip's negative codes, or
	 * -14 when the value there is no object (nothing else read).
	 */
	export function jsonFields(bytes: Uint8Array | ArrayBuffer, from: number, end: number, levels: number, program: Uint8Array | ArrayBuffer, out: ArrayBuffer): number;
	/**
	 * The JSON string whose opening quote is bytes[from], whole in [from, end),
	 * decoded (as JSON.parse would, in XS's own form: U+0000 as C0 80), when its
	 * raw bytes are valid UTF-8 and none of its escapes is a \u of a surrogate;
	 * else undefined, with nothing allocated (no string at from, a syntax error,
	 * invalid UTF-8, a surrogate escape: the caller decodes it itself).
	 */
	export function jsonText(bytes: Uint8Array | ArrayBuffer, from: number, end: number): string | undefined;
	/**
	 * The string jsonText(bytes, from, end) would make, written as its bytes (XS's
	 * form, which String.fromArrayBuffer takes back) into out from index at (0 <=
	 * at <= out's length): the index after them. -1 when jsonText would give
	 * undefined, -2 when out has no room for them; nothing is written either way.
	 * Its decoded length is never more than the string's raw length (end - from
	 * is always room enough).
	 */
	export function jsonTextInto(bytes: Uint8Array | ArrayBuffer, from: number, end: number, out: Uint8Array | ArrayBuffer, at: number): number;
	/**
	 * The server-sent event that starts at from (a line start, nothing of it read
	 * before) as net/sse reads it for a data sink (lines end in LF, CR or CRLF;
	 * comments and fields other than "data" skipped; a data value loses one
	 * leading space): the index after its blank line, and in out (the buffer of an
	 * Int32Array of at least 2) its one data line's value [out[0], out[1]), or -1
	 * and -1 when it has none. -1 when the event does not end before end (a CR
	 * as the range's last byte may be half a CRLF), -2 when it has more than one
	 * data line: net/sse reads those itself.
	 */
	export function sseEvent(bytes: Uint8Array | ArrayBuffer, from: number, end: number, out: ArrayBuffer): number;
	/** Whether bytes[from, end) are exactly the bytes of other. */
	export function equal(bytes: Uint8Array | ArrayBuffer, from: number, end: number, other: Uint8Array | ArrayBuffer): boolean;
	/**
	 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib) of bytes[from, end),
	 * continuing crc (a previous result, a whole number 0..0xFFFFFFFF; 0, the default,
	 * starts one): an unsigned 32-bit number. The check of every session record
	 * (store) and of memory's records file (util/crc32).
	 */
	export function crc32(bytes: Uint8Array | ArrayBuffer, from: number, end: number, crc?: number): number;
	/**
	 * bytes[from, end) written into out from index at (at + (end - from) <= out's
	 * length, else RangeError, nothing written), as out.set(bytes.subarray(from, end), at)
	 * would, overlapping ranges of one buffer too, with no view made: the index after them.
	 */
	export function copy(bytes: Uint8Array | ArrayBuffer, from: number, end: number, out: Uint8Array | ArrayBuffer, at: number): number;
}
