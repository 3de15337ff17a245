// embedded:storage/key-value on the lin host: the frozen {open} object of
// hosts/lin/src/keyvalue.c (one file per namespace in <data>/nvs), as the
// Moddable SDK exports it.
import type { KeyValue } from "embedded:storage/key-value";

const keyValue: KeyValue = Object.freeze(__xsclaw.keyValue as KeyValue);
export default keyValue;
