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
 * No entry point calls JavaScript, and only jsonText allocates (its string,
 * after which it reads the buffer's address again), so the buffer's address
 * stays valid for the whole scan even in the relocatable chunk heap.
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

/* ---- JSON: one whole value, checked, as llm/scan's skip() reads it ---- */

/* Errors, returned negated; llm/scan names them (SKIP_ERRORS) in the order of
 * typings/shared/bytes.d.ts. The first error met is the one llm/scan's own
 * reader would meet at the same byte. */
enum {
	JSON_END = 1, JSON_UNEXPECTED, JSON_UNTERMINATED, JSON_CONTROL, JSON_BAD_UNICODE, JSON_BAD_ESCAPE,
	JSON_BAD_NUMBER, JSON_BAD_LITERAL, JSON_TOO_DEEP, JSON_OBJECT_COMMA, JSON_KEY, JSON_COLON, JSON_ARRAY_COMMA,
};

/* Containers one call may keep open: one bit each (object 1, array 0) on the C stack. */
#define BYTES_JSON_LEVELS_MAX 1024

static size_t jsonSpace(const uint8_t *data, size_t i, size_t end)
{
	while (i < end && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
		i++;
	return i;
}

static int isHex(uint8_t c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int isDigitAt(const uint8_t *data, size_t i, size_t end)
{
	return i < end && data[i] >= '0' && data[i] <= '9';
}

/* The string whose quote is at data[i]: the index after its closing quote, or -error. */
static long jsonString(const uint8_t *data, size_t i, size_t end)
{
	i++;
	for (;;) {
		long stop = bytesJsonStringStop(data, i, end);
		if (stop < 0)
			return -JSON_UNTERMINATED;
		i = (size_t)stop;
		uint8_t c = data[i];
		if (c == '"')
			return (long)(i + 1);
		if (c < 0x20)
			return -JSON_CONTROL;
		if (i + 1 >= end)
			return -JSON_UNTERMINATED;
		uint8_t e = data[i + 1];
		if (e == 'u') {
			if (end - i < 6)
				return -JSON_UNTERMINATED;
			for (size_t k = 2; k < 6; k++)
				if (!isHex(data[i + k]))
					return -JSON_BAD_UNICODE;
			i += 6;
		}
		else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't')
			i += 2;
		else
			return -JSON_BAD_ESCAPE;
	}
}

/* The number at data[i] (JSON's grammar): the index after it, or -error. */
static long jsonNumber(const uint8_t *data, size_t i, size_t end)
{
	if (data[i] == '-')
		i++;
	if (!isDigitAt(data, i, end))
		return -JSON_BAD_NUMBER;
	if (data[i] == '0')
		i++;
	else
		while (isDigitAt(data, i, end))
			i++;
	if (i < end && data[i] == '.') {
		i++;
		if (!isDigitAt(data, i, end))
			return -JSON_BAD_NUMBER;
		while (isDigitAt(data, i, end))
			i++;
	}
	if (i < end && (data[i] | 0x20) == 'e') {
		i++;
		if (i < end && (data[i] == '+' || data[i] == '-'))
			i++;
		if (!isDigitAt(data, i, end))
			return -JSON_BAD_NUMBER;
		while (isDigitAt(data, i, end))
			i++;
	}
	return (long)i;
}

/* A key, its colon and the whitespace after: data[i] must be its quote. */
static long jsonKey(const uint8_t *data, size_t i, size_t end)
{
	if (i >= end || data[i] != '"')
		return -JSON_KEY;
	long after = jsonString(data, i, end);
	if (after < 0)
		return after;
	i = jsonSpace(data, (size_t)after, end);
	if (i >= end || data[i] != ':')
		return -JSON_COLON;
	return (long)(i + 1);
}

/* The value at or after whitespace from data[i], nesting at most levels
 * containers: the index after it, or -error. */
static long bytesJsonSkip(const uint8_t *data, size_t i, size_t end, size_t levels)
{
	uint32_t isObject[BYTES_JSON_LEVELS_MAX / 32];
	size_t depth = 0;
	long next;
	for (;;) {
		/* One value, or the opening of a container. */
		i = jsonSpace(data, i, end);
		if (i >= end)
			return -JSON_END;
		uint8_t c = data[i];
		if (c == '"')
			next = jsonString(data, i, end);
		else if (c == '-' || (c >= '0' && c <= '9'))
			next = jsonNumber(data, i, end);
		else if (c == 't' || c == 'f' || c == 'n') {
			const char *literal = c == 't' ? "true" : c == 'f' ? "false" : "null";
			size_t n = strlen(literal);
			next = end - i >= n && !memcmp(data + i, literal, n) ? (long)(i + n) : -JSON_BAD_LITERAL;
		}
		else if (c == '{' || c == '[') {
			if (depth >= levels)
				return -JSON_TOO_DEEP;
			uint32_t bit = 1u << (depth & 31);
			if (c == '{')
				isObject[depth >> 5] |= bit;
			else
				isObject[depth >> 5] &= ~bit;
			depth++;
			i = jsonSpace(data, i + 1, end);
			if (c == '{') {
				if (i < end && data[i] == '}') {
					depth--;
					next = (long)(i + 1);
				}
				else {
					next = jsonKey(data, i, end);
					if (next < 0)
						return next;
					i = (size_t)next;
					continue;   /* the member's value */
				}
			}
			else if (i < end && data[i] == ']') {
				depth--;
				next = (long)(i + 1);
			}
			else
				continue;   /* the first item */
		}
		else
			return -JSON_UNEXPECTED;
		if (next < 0)
			return next;
		i = (size_t)next;
		/* After a value: the next member or item of the open container, or its end. */
		for (;;) {
			if (!depth)
				return (long)i;
			int object = (isObject[(depth - 1) >> 5] >> ((depth - 1) & 31)) & 1;
			i = jsonSpace(data, i, end);
			if (i < end && data[i] == (object ? '}' : ']')) {
				depth--;
				i++;
				continue;
			}
			if (i >= end || data[i] != ',')
				return object ? -JSON_OBJECT_COMMA : -JSON_ARRAY_COMMA;
			i++;
			if (object) {
				next = jsonKey(data, jsonSpace(data, i, end), end);
				if (next < 0)
					return next;
				i = (size_t)next;
			}
			break;
		}
	}
}

/* ---- JSON: the members of one object, found by name ------------------ */

/* The value at data[i] is not an object (returned negated, after the codes above). */
#define JSON_NOT_OBJECT 14
/* Longest key compared with the names: a name is at most 255 bytes. */
#define BYTES_NAME_MAX 255

/* The key data[start, end) (inside its quotes, already checked) with its escapes
 * decoded into key, when that fits and stays ASCII (names are ASCII: a key that
 * decodes to anything else matches none); its length, or -1. */
static long jsonKeyDecoded(const uint8_t *data, size_t start, size_t end, uint8_t *key)
{
	size_t n = 0;
	for (size_t i = start; i < end; n++) {
		if (n >= BYTES_NAME_MAX)
			return -1;
		uint8_t c = data[i];
		if (c != '\\') {
			key[n] = c;
			i++;
			continue;
		}
		uint8_t e = data[i + 1];   /* checked: an escape is whole */
		if (e == 'u') {
			unsigned unit = 0;
			for (size_t k = 2; k < 6; k++) {
				uint8_t h = data[i + k];
				unit = unit * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
			}
			if (unit >= 0x80)
				return -1;
			key[n] = (uint8_t)unit;
			i += 6;
			continue;
		}
		key[n] = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
		i += 2;
	}
	return (long)n;
}

/* Which packed name (length byte, then its bytes; names[0, namesLength) checked)
 * the key data[start, end) is, or -1. */
/* The key data[start, end) (inside its quotes, checked) as bytes to compare
 * with names: itself, or decoded into decoded when it has escapes; its length
 * in *length, or NULL when it cannot be a name (jsonKeyDecoded). */
static const uint8_t *jsonKeyBytes(const uint8_t *data, size_t start, size_t end, uint8_t *decoded, long *length)
{
	*length = (long)(end - start);
	if (!memchr(data + start, '\\', end - start))
		return data + start;
	*length = jsonKeyDecoded(data, start, end, decoded);
	return *length < 0 ? NULL : decoded;
}

static long jsonNameIndex(const uint8_t *data, size_t start, size_t end, const uint8_t *names, size_t namesLength)
{
	uint8_t decoded[BYTES_NAME_MAX];
	long length;
	const uint8_t *key = jsonKeyBytes(data, start, end, decoded, &length);
	if (!key)
		return -1;
	long index = 0;
	for (size_t at = 0; at < namesLength; index++) {
		size_t n = names[at++];
		if ((long)n == length && !memcmp(names + at, key, n))
			return index;
		at += n;
	}
	return -1;
}

/* What a walk over an object's members does with one: its key data[keyStart,
 * keyEnd) (inside its quotes, checked) and its value at data[value] (after
 * whitespace), which may nest levels containers; returns the index after the
 * value, or -error. */
typedef long (*MemberVisit)(const uint8_t *data, size_t keyStart, size_t keyEnd, size_t value, size_t end, size_t levels, void *context);

/* The object at data[i] (its '{'), checked all through as bytesJsonSkip checks
 * it (the object is one of levels), each member handed to visit: the index
 * after the object, or -error. */
static long jsonObjectWalk(const uint8_t *data, size_t i, size_t end, size_t levels, MemberVisit visit, void *context)
{
	if (!levels)
		return -JSON_TOO_DEEP;
	i = jsonSpace(data, i + 1, end);
	if (i < end && data[i] == '}')
		return (long)(i + 1);
	for (;;) {
		if (i >= end || data[i] != '"')
			return -JSON_KEY;
		size_t keyStart = i + 1;
		long after = jsonString(data, i, end);
		if (after < 0)
			return after;
		size_t keyEnd = (size_t)after - 1;
		i = jsonSpace(data, (size_t)after, end);
		if (i >= end || data[i] != ':')
			return -JSON_COLON;
		i = jsonSpace(data, i + 1, end);
		long valueEnd = visit(data, keyStart, keyEnd, i, end, levels - 1, context);
		if (valueEnd < 0)
			return valueEnd;
		i = jsonSpace(data, (size_t)valueEnd, end);
		if (i < end && data[i] == '}')
			return (long)(i + 1);
		if (i >= end || data[i] != ',')
			return -JSON_OBJECT_COMMA;
		i = jsonSpace(data, i + 1, end);
	}
}

struct MembersContext { const uint8_t *names; size_t namesLength; uint8_t *out; size_t outCount; };

/* jsonMembers' member: the value skipped, its position noted when the key is a name. */
static long membersVisit(const uint8_t *data, size_t keyStart, size_t keyEnd, size_t value, size_t end, size_t levels, void *context)
{
	const struct MembersContext *members = context;
	long valueEnd = bytesJsonSkip(data, value, end, levels);
	if (valueEnd < 0)
		return valueEnd;
	long which = jsonNameIndex(data, keyStart, keyEnd, members->names, members->namesLength);
	if (which >= 0 && (size_t)which < members->outCount) {
		int32_t at = (int32_t)value;
		memcpy(members->out + 4 * (size_t)which, &at, 4);
	}
	return valueEnd;
}

/* The object at or after whitespace from data[i], checked all through as
 * bytesJsonSkip checks it (the object is one of levels): for each member whose
 * key is the k-th packed name, out[k] = where its value starts (the last such
 * member wins), others -1. The index after the object, or -error. */
static long bytesJsonMembers(const uint8_t *data, size_t i, size_t end, size_t levels,
	const uint8_t *names, size_t namesLength, uint8_t *out, size_t outCount)
{
	for (size_t k = 0; k < outCount; k++) {
		int32_t none = -1;
		memcpy(out + 4 * k, &none, 4);
	}
	i = jsonSpace(data, i, end);
	if (i >= end || data[i] != '{')
		return -JSON_NOT_OBJECT;
	struct MembersContext members = { names, namesLength, out, outCount };
	return jsonObjectWalk(data, i, end, levels, membersVisit, &members);
}

/* ---- JSON: the fields of an object tree, found by a program ---------- */

/* A program (llm/scan's FieldProgram packs it; checked by fieldsProgramCheck):
 * nodes one after the other, the first the object walked. A node: its field
 * count (1..255), the slot where its own object's position goes (255: none),
 * then per field: its name's length (1..255) and ASCII bytes, its slot (255:
 * none), the kinds of value it is noted for (FIELD_KIND_* bits), and its child:
 * the offset of a later node (2 bytes, little-endian; 0: none), walked over
 * the field's value when that is an object (kinds has FIELD_KIND_OBJECT) or
 * over the first item of the field's value when that is an array whose first
 * item is an object (FIELD_KIND_ARRAY). A slot is an Int32 of out. */
#define FIELD_KIND_STRING 1
#define FIELD_KIND_NUMBER 2
#define FIELD_KIND_OBJECT 4
#define FIELD_KIND_ARRAY 8
#define FIELD_KIND_TRUE 16
#define FIELD_KIND_FALSE 32
#define FIELD_KIND_NULL 64
#define FIELD_NO_SLOT 255
/* Longest program: nodes are walked recursively, one C frame per node at most
 * (a child is always further on), so this bounds the C stack too. */
#define FIELDS_PROGRAM_MAX 1024

static int fieldKind(const uint8_t *data, size_t i, size_t end)
{
	if (i >= end)
		return 0;
	switch (data[i]) {
	case '"': return FIELD_KIND_STRING;
	case '{': return FIELD_KIND_OBJECT;
	case '[': return FIELD_KIND_ARRAY;
	case 't': return FIELD_KIND_TRUE;
	case 'f': return FIELD_KIND_FALSE;
	case 'n': return FIELD_KIND_NULL;
	default: return data[i] == '-' || (data[i] >= '0' && data[i] <= '9') ? FIELD_KIND_NUMBER : 0;
	}
}

static void fieldSet(uint8_t *out, uint8_t slot, int32_t value)
{
	if (slot != FIELD_NO_SLOT)
		memcpy(out + 4 * (size_t)slot, &value, 4);
}

/* The child offset of the field at program[field] (its name's length first). */
static size_t fieldChild(const uint8_t *program, size_t field)
{
	size_t n = program[field];
	return (size_t)program[field + 3 + n] | ((size_t)program[field + 4 + n] << 8);
}

/* Every slot of the node at program[node] and of the nodes under it back to -1
 * (a later member of the same name replaces what an earlier one noted). */
static void fieldsReset(const uint8_t *program, size_t node, uint8_t *out)
{
	size_t count = program[node];
	fieldSet(out, program[node + 1], -1);
	size_t field = node + 2;
	for (size_t k = 0; k < count; k++) {
		size_t n = program[field];
		fieldSet(out, program[field + 1 + n], -1);
		size_t child = fieldChild(program, field);
		if (child)
			fieldsReset(program, child, out);
		field += 5 + n;
	}
}

/* The field of node whose name is the key data[start, end) (escapes decoded as
 * jsonNameIndex decodes them): its offset in program, or 0. */
static size_t fieldsFind(const uint8_t *data, size_t start, size_t end, const uint8_t *program, size_t node)
{
	uint8_t decoded[BYTES_NAME_MAX];
	long length;
	const uint8_t *key = jsonKeyBytes(data, start, end, decoded, &length);
	if (!key)
		return 0;
	size_t count = program[node];
	size_t field = node + 2;
	for (size_t k = 0; k < count; k++) {
		size_t n = program[field];
		if ((long)n == length && !memcmp(program + field + 1, key, n))
			return field;
		field += 5 + n;
	}
	return 0;
}

static long fieldsObject(const uint8_t *data, size_t i, size_t end, size_t levels, const uint8_t *program, size_t node, uint8_t *out);

/* The array at data[i] ('['), checked as bytesJsonSkip checks it within levels;
 * its first item, when an object, walked as the node at program[child]. */
static long fieldsFirstItem(const uint8_t *data, size_t i, size_t end, size_t levels, const uint8_t *program, size_t child, uint8_t *out)
{
	if (!levels)
		return -JSON_TOO_DEEP;
	i = jsonSpace(data, i + 1, end);
	if (i < end && data[i] == ']')
		return (long)(i + 1);
	long next = i < end && data[i] == '{'
		? fieldsObject(data, i, end, levels - 1, program, child, out)
		: bytesJsonSkip(data, i, end, levels - 1);
	for (;;) {
		if (next < 0)
			return next;
		i = jsonSpace(data, (size_t)next, end);
		if (i < end && data[i] == ']')
			return (long)(i + 1);
		if (i >= end || data[i] != ',')
			return -JSON_ARRAY_COMMA;
		next = bytesJsonSkip(data, i + 1, end, levels - 1);
	}
}

struct FieldsContext { const uint8_t *program; size_t node; uint8_t *out; };

/* jsonFields' member: when its key is a field of the node, its value walked as
 * the field's child (an object, or an array's first item) or skipped, and its
 * position noted when of a kind the field takes; else skipped. */
static long fieldsVisit(const uint8_t *data, size_t keyStart, size_t keyEnd, size_t value, size_t end, size_t levels, void *context)
{
	const struct FieldsContext *fields = context;
	const uint8_t *program = fields->program;
	size_t field = fieldsFind(data, keyStart, keyEnd, program, fields->node);
	if (!field)
		return bytesJsonSkip(data, value, end, levels);
	size_t n = program[field];
	uint8_t slot = program[field + 1 + n], kinds = program[field + 2 + n];
	size_t child = fieldChild(program, field);
	int kind = fieldKind(data, value, end);
	long valueEnd;
	if (child)
		fieldsReset(program, child, fields->out);
	if (child && kind == FIELD_KIND_OBJECT && (kinds & FIELD_KIND_OBJECT))
		valueEnd = fieldsObject(data, value, end, levels, program, child, fields->out);
	else if (child && kind == FIELD_KIND_ARRAY && (kinds & FIELD_KIND_ARRAY))
		valueEnd = fieldsFirstItem(data, value, end, levels, program, child, fields->out);
	else
		valueEnd = bytesJsonSkip(data, value, end, levels);
	if (valueEnd >= 0)
		fieldSet(fields->out, slot, kinds & kind ? (int32_t)value : -1);
	return valueEnd;
}

/* The object at data[i] ('{'), checked all through as bytesJsonSkip checks it
 * (the object is one of levels), its members noted by the node at
 * program[node]: the index after it, or -error. */
static long fieldsObject(const uint8_t *data, size_t i, size_t end, size_t levels, const uint8_t *program, size_t node, uint8_t *out)
{
	if (levels)
		fieldSet(out, program[node + 1], (int32_t)i);
	struct FieldsContext fields = { program, node, out };
	return jsonObjectWalk(data, i, end, levels, fieldsVisit, &fields);
}

/* Why program[0, length) is no program for out's count slots, or NULL. */
static const char *fieldsProgramCheck(const uint8_t *program, size_t length, size_t slots)
{
	uint8_t starts[FIELDS_PROGRAM_MAX / 8];
	if (!length || length > FIELDS_PROGRAM_MAX)
		return "program must be 1..1024 bytes";
	memset(starts, 0, sizeof(starts));
	/* Pass 1: the nodes and their fields fill the program exactly; slots and kinds valid. */
	for (size_t node = 0; node < length;) {
		if (length - node < 2 || !program[node])
			return "program: a node needs a field count of 1..255 and its slot";
		starts[node >> 3] |= (uint8_t)(1u << (node & 7));
		if (program[node + 1] != FIELD_NO_SLOT && program[node + 1] >= slots)
			return "program: a node's slot is outside out";
		size_t field = node + 2;
		for (size_t k = 0; k < program[node]; k++) {
			if (field >= length || !program[field] || length - field < 5 + (size_t)program[field])
				return "program: a field needs a name of 1..255 bytes, its slot, kinds and child";
			size_t n = program[field];
			uint8_t slot = program[field + 1 + n], kinds = program[field + 2 + n];
			if (slot != FIELD_NO_SLOT && slot >= slots)
				return "program: a field's slot is outside out";
			if (!kinds || kinds > 127)
				return "program: a field's kinds must be 1..127";
			field += 5 + n;
		}
		node = field;
	}
	/* Pass 2: each child is a node further on, reached from a field that takes objects or arrays. */
	for (size_t node = 0; node < length;) {
		size_t field = node + 2;
		for (size_t k = 0; k < program[node]; k++) {
			size_t n = program[field];
			size_t child = fieldChild(program, field);
			uint8_t kinds = program[field + 2 + n];
			if (child) {
				if (child <= node || child >= length || !(starts[child >> 3] & (1u << (child & 7))))
					return "program: a field's child must be a node further on";
				if (!(kinds & (FIELD_KIND_OBJECT | FIELD_KIND_ARRAY)))
					return "program: a field with a child must take an object or an array";
			}
			field += 5 + n;
		}
		node = field;
	}
	return NULL;
}

/* ---- JSON: a string's value --------------------------------------------- */

/* The string whose quote is data[from] when XS can take it as decoded here:
 * escapes other than \u of a surrogate, raw bytes valid UTF-8. Its closing
 * quote's index, and in *length its decoded length in XS's form (U+0000 as
 * C0 80); else -1. */
static long jsonTextMeasure(const uint8_t *data, size_t from, size_t end, size_t *length)
{
	size_t i = from + 1, n = 0;
	for (;;) {
		long stop = bytesJsonStringStop(data, i, end);
		if (stop < 0)
			return -1;
		n += (size_t)stop - i;
		i = (size_t)stop;
		uint8_t c = data[i];
		if (c == '"')
			break;
		if (c < 0x20 || i + 1 >= end)
			return -1;
		uint8_t e = data[i + 1];
		if (e == 'u') {
			if (end - i < 6)
				return -1;
			unsigned unit = 0;
			for (size_t k = 2; k < 6; k++) {
				uint8_t h = data[i + k];
				if (!isHex(h))
					return -1;
				unit = unit * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
			}
			if (unit >= 0xD800 && unit <= 0xDFFF)
				return -1;
			n += unit == 0 ? 2 : unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
			i += 6;
		}
		else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
			n++;
			i += 2;
		}
		else
			return -1;
	}
	/* Escapes are ASCII, never part of a sequence: one check over the raw bytes. */
	if (bytesUtf8Invalid(data, from + 1, i, 0) >= 0)
		return -1;
	*length = n;
	return (long)i;
}

/* Writes the string measured by jsonTextMeasure (data[from] its quote, data[close]
 * its closing one) decoded into to. */
static void jsonTextWrite(const uint8_t *data, size_t from, size_t close, uint8_t *to)
{
	size_t i = from + 1;
	while (i < close) {
		uint8_t c = data[i];
		if (c != '\\') {
			*to++ = c;
			i++;
			continue;
		}
		uint8_t e = data[i + 1];
		if (e != 'u') {
			*to++ = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
			i += 2;
			continue;
		}
		unsigned unit = 0;
		for (size_t k = 2; k < 6; k++) {
			uint8_t h = data[i + k];
			unit = unit * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
		}
		if (unit == 0) {
			*to++ = 0xC0;
			*to++ = 0x80;
		}
		else if (unit < 0x80)
			*to++ = (uint8_t)unit;
		else if (unit < 0x800) {
			*to++ = (uint8_t)(0xC0 | (unit >> 6));
			*to++ = (uint8_t)(0x80 | (unit & 0x3F));
		}
		else {
			*to++ = (uint8_t)(0xE0 | (unit >> 12));
			*to++ = (uint8_t)(0x80 | ((unit >> 6) & 0x3F));
			*to++ = (uint8_t)(0x80 | (unit & 0x3F));
		}
		i += 6;
	}
}

/* ---- server-sent events: one event's data line -------------------------- */

/* The event that starts at data[i] (a line start, nothing pending), read as
 * net/sse reads it for a data sink (only "data" fields count; comments and
 * other fields are skipped): the index after its blank line, with its one data
 * line's value in [*valueStart, *valueEnd) (-1 when it has none); -1 when the
 * event does not end before end (or a CR ends the range: it may be half a
 * CRLF), -2 when it has more than one data line (net/sse joins them). */
static long bytesSseEvent(const uint8_t *data, size_t i, size_t end, long *valueStart, long *valueEnd)
{
	*valueStart = *valueEnd = -1;
	for (;;) {
		long at = bytesFind2(data, i, end, '\n', '\r');
		if (at < 0)
			return -1;
		size_t j = (size_t)at, next = j + 1;
		if (data[j] == '\r') {
			if (next >= end)
				return -1;
			if (data[next] == '\n')
				next++;
		}
		if (j == i)
			return (long)next;
		if (data[i] != ':') {
			long colon = bytesFind2(data, i, j, ':', ':');
			size_t nameEnd = colon < 0 ? j : (size_t)colon;
			if (nameEnd - i == 4 && !memcmp(data + i, "data", 4)) {
				if (*valueStart >= 0)
					return -2;
				size_t value = nameEnd + 1;
				if (value < j && data[value] == ' ')
					value++;
				if (value > j)
					value = j;
				*valueStart = (long)value;
				*valueEnd = (long)j;
			}
		}
		i = next;
	}
}

/* ---- arguments -------------------------------------------------------- */

/* XS buffer lengths and the indexes returned fit a 32-bit integer. */
#define BYTES_INDEX_MAX 0x7FFFFFFF

/* The bytes of argument index (a 1-byte typed array, an ArrayBuffer, a DataView
 * or a host buffer; writable: one XS lets us write) and their count; throws for
 * anything else or a detached one. */
static uint8_t *bufferArgumentOf(xsMachine *the, const char *fn, int index, size_t *length, int writable)
{
	void *data = NULL;
	xsUnsignedValue count = 0;
	if (xsmcArgc <= index || xsmcTypeOf(xsArg(index)) != xsReferenceType)
		xsTypeError("bytes: %s: argument %d must be a Uint8Array or an ArrayBuffer", fn, index + 1);
	xsTry {
		if (writable)
			xsmcGetBufferWritable(xsArg(index), &data, &count);
		else
			xsmcGetBufferReadable(xsArg(index), &data, &count);
	}
	xsCatch {
		xsTypeError("bytes: %s: argument %d must be a %sUint8Array or an ArrayBuffer, not detached", fn, index + 1, writable ? "writable " : "");
	}
	*length = count;
	return data;
}

static const uint8_t *bufferArgument(xsMachine *the, const char *fn, int index, size_t *length)
{
	return bufferArgumentOf(the, fn, index, length, 0);
}

static uint8_t *writableArgument(xsMachine *the, const char *fn, int index, size_t *length)
{
	return bufferArgumentOf(the, fn, index, length, 1);
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

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib) four bits at a
 * time: a 64-byte table in flash, no state. Continues crc (a previous result, 0
 * to start) over data[from, end). */
static const uint32_t crcNibbles[16] = {
	0x00000000, 0x1DB71064, 0x3B6E20C8, 0x26D930AC, 0x76DC4190, 0x6B6B51F4, 0x4DB26158, 0x5005713C,
	0xEDB88320, 0xF00F9344, 0xD6D6A3E8, 0xCB61B38C, 0x9B64C2B0, 0x86D3D2D4, 0xA00AE278, 0xBDBDF21C,
};

static uint32_t bytesCrc32(const uint8_t *data, size_t from, size_t end, uint32_t crc)
{
	uint32_t c = ~crc;
	for (size_t i = from; i < end; i++) {
		c ^= data[i];
		c = crcNibbles[c & 0x0F] ^ (c >> 4);
		c = crcNibbles[c & 0x0F] ^ (c >> 4);
	}
	return ~c;
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

void xs_bytes_jsonSkip(xsMachine *the)
{
	size_t from, end;
	const uint8_t *data = rangeArguments(the, "jsonSkip", &from, &end);
	size_t levels = wholeArgument(the, "jsonSkip", 3, "levels", BYTES_JSON_LEVELS_MAX);
	setIndex(the, bytesJsonSkip(data, from, end, levels));
}

void xs_bytes_equal(xsMachine *the)
{
	size_t from, end, length;
	const uint8_t *data = rangeArguments(the, "equal", &from, &end);
	const uint8_t *other = bufferArgument(the, "equal", 3, &length);
	/* rangeArguments read only numbers since data: no collection moved it. */
	xsmcSetBoolean(xsResult, end - from == length && (!length || !memcmp(data + from, other, length)));
}

void xs_bytes_jsonMembers(xsMachine *the)
{
	size_t from, end, namesLength, outLength;
	const uint8_t *data = rangeArguments(the, "jsonMembers", &from, &end);
	size_t levels = wholeArgument(the, "jsonMembers", 3, "levels", BYTES_JSON_LEVELS_MAX);
	const uint8_t *names = bufferArgument(the, "jsonMembers", 4, &namesLength);
	uint8_t *out = (uint8_t *)bufferArgument(the, "jsonMembers", 5, &outLength);
	/* The names: each a length of 1..255, then that many bytes, the last ending the buffer. */
	size_t count = 0;
	for (size_t at = 0; at < namesLength; count++) {
		size_t n = names[at];
		if (!n || n > namesLength - at - 1)
			xsRangeError("bytes: jsonMembers: names must be packed as a length of 1..255 and that many bytes, each");
		at += 1 + n;
	}
	if (outLength < 4 * count)
		xsRangeError("bytes: jsonMembers: out has room for %u positions, not the %u names", (unsigned)(outLength / 4), (unsigned)count);
	/* The arguments since data were numbers and buffers: no collection moved it. */
	setIndex(the, bytesJsonMembers(data, from, end, levels, names, namesLength, out, count));
}

void xs_bytes_crc32(xsMachine *the)
{
	size_t from, end;
	const uint8_t *data = rangeArguments(the, "crc32", &from, &end);
	uint32_t crc = xsmcArgc > 3 && xsmcTypeOf(xsArg(3)) != xsUndefinedType ? (uint32_t)wholeArgument(the, "crc32", 3, "crc", 0xFFFFFFFFu) : 0;
	/* The arguments after data are numbers: no collection moved it. */
	xsmcSetNumber(xsResult, (double)bytesCrc32(data, from, end, crc));
}

void xs_bytes_jsonFields(xsMachine *the)
{
	size_t from, end, programLength, outLength;
	const uint8_t *data = rangeArguments(the, "jsonFields", &from, &end);
	size_t levels = wholeArgument(the, "jsonFields", 3, "levels", BYTES_JSON_LEVELS_MAX);
	const uint8_t *program = bufferArgument(the, "jsonFields", 4, &programLength);
	uint8_t *out = (uint8_t *)bufferArgument(the, "jsonFields", 5, &outLength);
	size_t slots = outLength / 4;
	const char *why = fieldsProgramCheck(program, programLength, slots < FIELD_NO_SLOT ? slots : FIELD_NO_SLOT);
	if (why)
		xsRangeError("bytes: jsonFields: %s", why);
	/* The arguments since data were numbers and buffers: no collection moved it. */
	for (size_t k = 0; k < slots; k++) {
		int32_t none = -1;
		memcpy(out + 4 * k, &none, 4);
	}
	size_t i = jsonSpace(data, from, end);
	if (i >= end || data[i] != '{')
		setIndex(the, -JSON_NOT_OBJECT);
	else
		setIndex(the, fieldsObject(data, i, end, levels, program, 0, out));
}

void xs_bytes_jsonText(xsMachine *the)
{
	size_t from, end, length;
	const uint8_t *data = rangeArguments(the, "jsonText", &from, &end);
	if (from >= end || data[from] != '"') {
		xsmcSetUndefined(xsResult);
		return;
	}
	long close = jsonTextMeasure(data, from, end, &length);
	if (close < 0 || length > BYTES_INDEX_MAX) {
		xsmcSetUndefined(xsResult);
		return;
	}
	/* The string is allocated first: that may collect and move the buffer, so its address is read again after. */
	xsmcSetStringBuffer(xsResult, NULL, (xsIntegerValue)length);
	size_t count;
	data = bufferArgument(the, "jsonText", 0, &count);
	if (count < (size_t)close + 1)
		xsRangeError("bytes: jsonText: the buffer changed while its string was made");
	jsonTextWrite(data, from, (size_t)close, (uint8_t *)xsmcToString(xsResult));
}

void xs_bytes_jsonTextInto(xsMachine *the)
{
	size_t from, end, outLength, length;
	const uint8_t *data = rangeArguments(the, "jsonTextInto", &from, &end);
	uint8_t *out = writableArgument(the, "jsonTextInto", 3, &outLength);
	size_t at = wholeArgument(the, "jsonTextInto", 4, "at", outLength);
	/* The arguments since data were buffers and numbers: no collection moved it. */
	long close = from < end && data[from] == '"' ? jsonTextMeasure(data, from, end, &length) : -1;
	if (close < 0)
		setIndex(the, -1);
	else if (length > outLength - at)
		setIndex(the, -2);
	else if (out + at < data + close && data + from < out + at + length)
		xsRangeError("bytes: jsonTextInto: out overlaps the string it is written from");
	else {
		jsonTextWrite(data, from, (size_t)close, out + at);
		setIndex(the, (long)(at + length));
	}
}

void xs_bytes_sseEvent(xsMachine *the)
{
	size_t from, end, outLength;
	const uint8_t *data = rangeArguments(the, "sseEvent", &from, &end);
	uint8_t *out = writableArgument(the, "sseEvent", 3, &outLength);
	if (outLength < 8)
		xsRangeError("bytes: sseEvent: out has room for %u positions, not 2", (unsigned)(outLength / 4));
	/* The arguments since data were buffers: no collection moved it. */
	long valueStart, valueEnd;
	long next = bytesSseEvent(data, from, end, &valueStart, &valueEnd);
	int32_t range[2] = { (int32_t)valueStart, (int32_t)valueEnd };
	memcpy(out, range, 8);
	setIndex(the, next);
}

void xs_bytes_copy(xsMachine *the)
{
	size_t from, end, outLength;
	const uint8_t *data = rangeArguments(the, "copy", &from, &end);
	uint8_t *out = writableArgument(the, "copy", 3, &outLength);
	size_t at = wholeArgument(the, "copy", 4, "at", outLength);
	/* The arguments since data were buffers and numbers: no collection moved it. */
	size_t count = end - from;
	if (count > outLength - at)
		xsRangeError("bytes: copy: out has room for %u bytes at %u, not %u", (unsigned)(outLength - at), (unsigned)at, (unsigned)count);
	if (count)
		memmove(out + at, data + from, count);   /* the same buffer may be both */
	setIndex(the, (long)(at + count));
}
