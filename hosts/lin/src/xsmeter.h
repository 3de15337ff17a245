/*
 * xsmeter.h — force-included (-include) into the XS 13.3 sources of the
 * built-ins by hosts/lin/Makefile (XS_BUILTINS), so that their own loops are
 * bounded inside host/sandbox's run() (issue 25): XS 13.3 counts steps there
 * (mxMeterOne on every push, mxMeterSome in the array and string loops) but
 * checks the meter only in the interpreter, so
 * Array.prototype.indexOf.call({length: 2**53-1}, 1) ran forever. Here every
 * count is also a check, as XS 17 does in its built-ins (mxCheckMetering).
 *
 * It includes xsAll.h first (whose include guard then skips the source's own
 * #include), and redefines the two counting macros after it. The check costs a
 * compare while no sandboxed call runs (meterInterval is 0). The interpreter
 * (xsRun.c) and the collector (xsMemory.c) are not built with it.
 */
#ifndef XSCLAW_XSMETER_H
#define XSCLAW_XSMETER_H
#include "xsAll.h"
#include "sandbox.h"

#ifndef mxMetering
#error "xsmeter.h is for an XS built with mxMetering"
#endif

#undef mxMeterOne
#undef mxMeterSome
#define mxSandboxCheck() \
	((the->meterInterval && (the->meterIndex > the->meterCount)) ? sandboxMeterBuiltin(the) : (void)0)
#define mxMeterOne() \
	(the->meterIndex++, mxSandboxCheck())
#define mxMeterSome(_COUNT) \
	(the->meterIndex += (_COUNT), mxSandboxCheck())
#endif
