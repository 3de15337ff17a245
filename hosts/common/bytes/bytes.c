/*
 * bytes.c — "host/bytes" (bytes.h): byte searches for the parsers on the
 * response path, shared by the lin host and the ESP32-S3.
 *
 * Why native: XS 13.3 reads a typed array element through a generic getter per
 * access (and has no TextDecoder), so a JavaScript loop over a reply's bytes
 * cost about 1 µs a byte on the lin host; these scans replace the loops that
 * find line ends, colons, the end of a JSON string's plain run and the first
 * byte a UTF-8 repair must start at, so the common case is one call per line,
 * string or decode and only unusual input (escapes, broken UTF-8) runs a
 * JavaScript loop, over the few bytes that need it.
 *
 * Safety: every entry point checks its arguments before reading a byte (see
 * bytes.h); the scans read only [from, end) of memory XS says is the buffer's.
 * No entry point allocates or calls JavaScript, so the buffer's address stays
 * valid for the whole call even in the relocatable chunk heap.
 */
#include "bytes.h"
#include <stdint.h>
#include <string.h>
#include "xsmc.h"

/* ---- the scans -------------------------------------------------------- */

static long bytesFind2(const uint8_t *data, size_t from, size_t end, uint8_t a, uint8_t b)
{
	if (from >= end)
		return -1;
	if (a == b) {
		const uint8_t *at = memchr(data + from, a, end - from);
		return at ? (long)(at - data) : -1;
	}
	for (size_t i = from; i < end; i++) {
		uint8_t c = data[i];
		if (c == a || c == b)
			return (long)i;
	}
	return -1;
}

static long bytesJsonStringStop(const uint8_t *data, size_t from, size_t end)
{
	for (size_t i = from; i < end; i++) {
		uint8_t c = data[i];
		if (c == '"' || c == '\\' || c < 0x20)
			return (long)i;
	}
	return -1;
}

#define ASCII_MASK 0x8080808080808080ULL
#define ONES 0x0101010101010101ULL

/* The validator of net/utf8 (step() and isClean()), unit by unit: a sequence
 * cut by end is invalid, as are overlongs, surrogates (ED A0..BF) and code
 * points above U+10FFFF. Eight ASCII bytes at a time where it can. */
static long bytesUtf8Invalid(const uint8_t *data, size_t from, size_t end, int nulInvalid)
{
	size_t i = from;
	while (i < end) {
		if (end - i >= 8) {
			uint64_t word;
			memcpy(&word, data + i, 8);
			/* All ASCII, and (xs mode) no 00 byte among them. */
			if (!(word & ASCII_MASK) && !(nulInvalid && ((word - ONES) & ~word & ASCII_MASK))) {
				i += 8;
				continue;
			}
		}
		uint8_t lead = data[i];
		if (lead < 0x80) {
			if (!lead && nulInvalid)
				return (long)i;
			i++;
			continue;
		}
		size_t length;
		if (lead >= 0xC2 && lead <= 0xDF)
			length = 2;
		else if (lead >= 0xE0 && lead <= 0xEF)
			length = 3;
		else if (lead >= 0xF0 && lead <= 0xF4)
			length = 4;
		else
			return (long)i;
		if (end - i < 2)
			return (long)i;
		uint8_t second = data[i + 1];
		uint8_t low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
		uint8_t high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
		if (second < low || second > high)
			return (long)i;
		for (size_t n = 2; n < length; n++)
			if (i + n >= end || (data[i + n] & 0xC0) != 0x80)
				return (long)i;
		i += length;
	}
	return -1;
}

/* ---- arguments -------------------------------------------------------- */

/* XS buffer lengths and the indexes returned fit a 32-bit integer. */
#define BYTES_INDEX_MAX 0x7FFFFFFF

/* The bytes of argument index (a 1-byte typed array, an ArrayBuffer, a DataView
 * or a host buffer) and their count; throws for anything else or a detached one. */
static const uint8_t *bufferArgument(xsMachine *the, const char *fn, int index, size_t *length)
{
	void *data = NULL;
	xsUnsignedValue count = 0;
	if (xsmcArgc <= index || xsmcTypeOf(xsArg(index)) != xsReferenceType)
		xsTypeError("bytes: %s: argument %d must be a Uint8Array or an ArrayBuffer", fn, index + 1);
	xsTry {
		xsmcGetBufferReadable(xsArg(index), &data, &count);
	}
	xsCatch {
		xsTypeError("bytes: %s: argument %d must be a Uint8Array or an ArrayBuffer, not detached", fn, index + 1);
	}
	*length = count;
	return data;
}

/* A whole number in [0, max] at argument index. */
static size_t wholeArgument(xsMachine *the, const char *fn, int index, const char *name, size_t max)
{
	if (xsmcArgc <= index)
		xsTypeError("bytes: %s: %s required", fn, name);
	int type = xsmcTypeOf(xsArg(index));
	if (type == xsIntegerType) {
		xsIntegerValue value = xsmcToInteger(xsArg(index));
		if (value < 0 || (size_t)value > max)
			xsRangeError("bytes: %s: %s %d is outside 0..%u", fn, name, (int)value, (unsigned)max);
		return (size_t)value;
	}
	if (type != xsNumberType)
		xsTypeError("bytes: %s: %s must be a number", fn, name);
	double value = xsmcToNumber(xsArg(index));
	/* NaN fails both comparisons; the cast is in range once they hold. */
	if (!(value >= 0 && value <= (double)max) || value != (double)(size_t)value)
		xsRangeError("bytes: %s: %s must be a whole number in 0..%u", fn, name, (unsigned)max);
	return (size_t)value;
}

/* bytes, from, end: the first three arguments of every entry point. */
static const uint8_t *rangeArguments(xsMachine *the, const char *fn, size_t *from, size_t *end)
{
	size_t length;
	const uint8_t *data = bufferArgument(the, fn, 0, &length);
	if (length > BYTES_INDEX_MAX)
		xsRangeError("bytes: %s: buffer larger than %u bytes", fn, (unsigned)BYTES_INDEX_MAX);
	*from = wholeArgument(the, fn, 1, "from", length);
	*end = wholeArgument(the, fn, 2, "end", length);
	if (*from > *end)
		xsRangeError("bytes: %s: from %u is after end %u", fn, (unsigned)*from, (unsigned)*end);
	return data;
}

static void setIndex(xsMachine *the, long index)
{
	xsmcSetInteger(xsResult, (xsIntegerValue)index);
}

/* ---- entry points ----------------------------------------------------- */

void xs_bytes_find(xsMachine *the)
{
	size_t from, end;
	const uint8_t *data = rangeArguments(the, "find", &from, &end);
	uint8_t a = (uint8_t)wholeArgument(the, "find", 3, "byte", 255);
	uint8_t b = xsmcArgc > 4 && xsmcTypeOf(xsArg(4)) != xsUndefinedType ? (uint8_t)wholeArgument(the, "find", 4, "second byte", 255) : a;
	setIndex(the, bytesFind2(data, from, end, a, b));
}

void xs_bytes_jsonStringStop(xsMachine *the)
{
	size_t from, end;
	const uint8_t *data = rangeArguments(the, "jsonStringStop", &from, &end);
	setIndex(the, bytesJsonStringStop(data, from, end));
}

void xs_bytes_utf8Invalid(xsMachine *the)
{
	size_t from, end;
	const uint8_t *data = rangeArguments(the, "utf8Invalid", &from, &end);
	if (xsmcArgc < 4 || xsmcTypeOf(xsArg(3)) != xsStringType)
		xsTypeError("bytes: utf8Invalid: mode must be \"wire\" or \"xs\"");
	const char *mode = xsmcToString(xsArg(3));
	int nulInvalid = 0;
	if (!strcmp(mode, "xs"))
		nulInvalid = 1;
	else if (!strcmp(mode, "wire"))
		nulInvalid = 0;
	else
		xsRangeError("bytes: utf8Invalid: unknown mode (use \"wire\" or \"xs\")");
	setIndex(the, bytesUtf8Invalid(data, from, end, nulInvalid));
}

void xs_bytes_equal(xsMachine *the)
{
	size_t from, end, length;
	const uint8_t *data = rangeArguments(the, "equal", &from, &end);
	const uint8_t *other = bufferArgument(the, "equal", 3, &length);
	/* rangeArguments read only numbers since data: no collection moved it. */
	xsmcSetBoolean(xsResult, end - from == length && (!length || !memcmp(data + from, other, length)));
}
