/*
 * bytes_lin.c — installs "host/bytes" (hosts/common/bytes/bytes.c, shared with
 * the ESP32-S3) on the lin host: __xsclaw.Bytes, read by hosts/lin/modules/bytes.ts.
 * The functions keep no state: every machine (main and workers) gets its own.
 */
#include "host.h"
#include "bytes.h"

void hostInstallBytes(xsMachine *the, xsSlot *native)
{
	xsVars(1);
	xsVar(0) = xsNewObject();
	hostDefineFunction(the, &xsVar(0), "find", xs_bytes_find, 5);
	hostDefineFunction(the, &xsVar(0), "jsonStringStop", xs_bytes_jsonStringStop, 3);
	hostDefineFunction(the, &xsVar(0), "utf8Invalid", xs_bytes_utf8Invalid, 4);
	hostDefineFunction(the, &xsVar(0), "jsonSkip", xs_bytes_jsonSkip, 4);
	hostDefineFunction(the, &xsVar(0), "jsonMembers", xs_bytes_jsonMembers, 6);
	hostDefineFunction(the, &xsVar(0), "jsonFields", xs_bytes_jsonFields, 6);
	hostDefineFunction(the, &xsVar(0), "jsonText", xs_bytes_jsonText, 3);
	hostDefineFunction(the, &xsVar(0), "jsonTextInto", xs_bytes_jsonTextInto, 5);
	hostDefineFunction(the, &xsVar(0), "sseEvent", xs_bytes_sseEvent, 4);
	hostDefineFunction(the, &xsVar(0), "equal", xs_bytes_equal, 4);
	hostDefineFunction(the, &xsVar(0), "crc32", xs_bytes_crc32, 4);
	hostDefineFunction(the, &xsVar(0), "copy", xs_bytes_copy, 5);
	xsDefine(*native, xsID("Bytes"), xsVar(0), xsDontEnum);
}
