// host/bytes on the ESP32-S3 (declaration: typings/shared/bytes.d.ts): the C of
// hosts/common/bytes/bytes.c, shared with the lin host, reached by name. The
// functions are exported as they are: no JavaScript frame between a parser and
// the scan.
import type * as Bytes from "host/bytes";

export const find: typeof Bytes.find = native("xs_bytes_find");
export const jsonStringStop: typeof Bytes.jsonStringStop = native("xs_bytes_jsonStringStop");
export const utf8Invalid: typeof Bytes.utf8Invalid = native("xs_bytes_utf8Invalid");
export const jsonSkip: typeof Bytes.jsonSkip = native("xs_bytes_jsonSkip");
export const jsonMembers: typeof Bytes.jsonMembers = native("xs_bytes_jsonMembers");
export const jsonFields: typeof Bytes.jsonFields = native("xs_bytes_jsonFields");
export const jsonText: typeof Bytes.jsonText = native("xs_bytes_jsonText");
export const jsonTextInto: typeof Bytes.jsonTextInto = native("xs_bytes_jsonTextInto");
export const sseEvent: typeof Bytes.sseEvent = native("xs_bytes_sseEvent");
export const equal: typeof Bytes.equal = native("xs_bytes_equal");
export const crc32: typeof Bytes.crc32 = native("xs_bytes_crc32");
export const copy: typeof Bytes.copy = native("xs_bytes_copy");
