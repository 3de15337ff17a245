/*
 * bytes.h — "host/bytes": the byte searches the parsers on the response path
 * (net/sse, net/chunked, net/response, net/utf8, llm/scan) would otherwise run
 * as JavaScript loops over a Uint8Array, one property access per byte.
 *
 * One C file (bytes.c) for both targets, written against xsmc.h: the lin host
 * installs these callbacks on __xsclaw.Bytes (hosts/lin/src/bytes_lin.c), the
 * device build reaches them by name (native("xs_bytes_...") in
 * hosts/esp32/bytes.ts). The JavaScript API is typings/shared/bytes.d.ts.
 *
 * Every entry point takes (bytes, from, end, ...): bytes a Uint8Array (or
 * another 1-byte typed array) or an ArrayBuffer, and whole numbers with
 * 0 <= from <= end <= its byte length; anything else throws a TypeError or a
 * RangeError naming the function and the argument. Nothing is read outside
 * [from, end) and nothing is written but the out of jsonMembers, jsonFields,
 * jsonTextInto, sseEvent and copy;
 * no entry point allocates but jsonText (the string it returns).
 */
#ifndef XSCLAW_BYTES_H
#define XSCLAW_BYTES_H

#include <stddef.h>   /* before xs.h, which uses size_t without including it */
#include "xs.h"

/* find(bytes, from, end, a[, b]): index of the first byte equal to a (or b) in
 * [from, end), else -1. */
void xs_bytes_find(xsMachine *the);
/* jsonStringStop(bytes, from, end): index of the first byte in [from, end) that
 * a JSON string's plain run stops at: a quote, a backslash or a control
 * character (below 0x20); else -1. */
void xs_bytes_jsonStringStop(xsMachine *the);
/* utf8Invalid(bytes, from, end, mode): index of the first byte in [from, end)
 * where net/utf8's repair must start for mode "wire" (any sequence that is not
 * valid UTF-8, cut by end included) or "xs" (the same, plus a 00 byte); else -1. */
void xs_bytes_utf8Invalid(xsMachine *the);
/* jsonSkip(bytes, from, end, levels): the index after the JSON value at or
 * after whitespace from `from`, checked all through as llm/scan checks it, with
 * at most levels (0..1024) containers open; a negative number is an error code
 * (typings/shared/bytes.d.ts). */
void xs_bytes_jsonSkip(xsMachine *the);
/* jsonMembers(bytes, from, end, levels, names, out): walks the JSON object at
 * or after whitespace from `from` (checked as jsonSkip checks it), writing into
 * out (4 bytes, native order, per name: an Int32Array's buffer) where the value
 * of the last member named by each packed name starts, -1 for none; returns the
 * index after the object or a negative code, -14 when the value is no object. */
void xs_bytes_jsonMembers(xsMachine *the);
/* jsonFields(bytes, from, end, levels, program, out): walks the JSON object at
 * or after whitespace from `from` (checked as jsonSkip checks it) and the
 * objects under it that program names (llm/scan FieldProgram: nodes of fields,
 * each a name, a slot of out, the kinds of value noted, a child node), writing
 * into out's slots where the last member of each name starts when its value is
 * of a kind noted, else -1; returns the index after the object or a negative
 * code, -14 when the value is no object. */
void xs_bytes_jsonFields(xsMachine *the);
/* jsonText(bytes, from, end): the JSON string whose quote is at from, whole in
 * [from, end), decoded into a new string, when its raw bytes are valid UTF-8
 * and no escape is a \u of a surrogate; else undefined (nothing allocated). */
void xs_bytes_jsonText(xsMachine *the);
/* jsonTextInto(bytes, from, end, out, at): the string jsonText would make,
 * written as its bytes (XS's form) into out from index at: the index after
 * them; -1 when jsonText would give undefined, -2 when out has no room for them
 * (nothing written either way). */
void xs_bytes_jsonTextInto(xsMachine *the);
/* sseEvent(bytes, from, end, out): the server-sent event starting at from (a
 * line start) as net/sse reads it for a data sink: the index after its blank
 * line, its one data line's value range in out (two Int32, -1 when none); -1
 * when it does not end before end, -2 when it has more data lines. */
void xs_bytes_sseEvent(xsMachine *the);
/* equal(bytes, from, end, other): whether bytes[from, end) are exactly the bytes
 * of other (a Uint8Array or an ArrayBuffer). */
void xs_bytes_equal(xsMachine *the);
/* crc32(bytes, from, end[, crc]): CRC-32 (IEEE 802.3, as zlib) of bytes[from, end),
 * continuing crc (a previous result; 0, the default, starts one): an unsigned
 * 32-bit number. */
void xs_bytes_crc32(xsMachine *the);
/* copy(bytes, from, end, out, at): bytes[from, end) written into out (a writable
 * Uint8Array or ArrayBuffer) from index at, as TypedArray set() of a subarray
 * would (overlapping ranges of one buffer too): the index after them; a
 * RangeError when out has no room for them (nothing written). */
void xs_bytes_copy(xsMachine *the);

#endif
