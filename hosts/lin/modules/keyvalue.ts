// keyvalue on the lin host: the native class of hosts/lin/src/keyvalue.c.
const KeyValue = __xsclaw.KeyValue;
export default KeyValue;
