// host/bytes on the lin host (declaration: typings/shared/bytes.d.ts): the C of
// hosts/common/bytes/bytes.c, shared with the device, installed on __xsclaw.Bytes
// by hosts/lin/src/bytes_lin.c. The functions are exported as they are: no
// JavaScript frame between a parser and the scan.
import type * as Bytes from "host/bytes";

const native = __xsclaw.Bytes;

export const find: typeof Bytes.find = native.find;
export const jsonStringStop: typeof Bytes.jsonStringStop = native.jsonStringStop;
export const utf8Invalid: typeof Bytes.utf8Invalid = native.utf8Invalid;
export const jsonSkip: typeof Bytes.jsonSkip = native.jsonSkip;
export const jsonMembers: typeof Bytes.jsonMembers = native.jsonMembers;
export const jsonFields: typeof Bytes.jsonFields = native.jsonFields;
export const jsonText: typeof Bytes.jsonText = native.jsonText;
export const jsonTextInto: typeof Bytes.jsonTextInto = native.jsonTextInto;
export const sseEvent: typeof Bytes.sseEvent = native.sseEvent;
export const equal: typeof Bytes.equal = native.equal;
export const crc32: typeof Bytes.crc32 = native.crc32;
export const copy: typeof Bytes.copy = native.copy;
