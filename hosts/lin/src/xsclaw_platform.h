/*
 * Platform header for the XS engine on the xsclaw lin host.
 * Included by every XS source file through -DXSPLATFORM; keep it minimal.
 */
#ifndef XSCLAW_PLATFORM_H
#define XSCLAW_PLATFORM_H

#undef mxLinux
#define mxLinux 1

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <stdbool.h>
#include <arpa/inet.h>

#define mxUseGCCAtomics 1
#define mxUsePOSIXThreads 1

#define mxUseDefaultBuildKeys 1
/* XS's heaps come from xsheap.c (faulted in whole when made). */
#define mxUseDefaultChunkAllocation 0
#define mxUseDefaultSlotAllocation 0
#define mxUseDefaultParseScript 1
#define mxUseDefaultSharedChunks 1
#define mxUseDefaultDebug 1
/* fxCStackLimit is machine.c's: once per thread, not at every compile. */
#define mxUseDefaultCStackLimit 0

/* The waiter fields are used by xsAtomics.c; promiseJobs is set by fxQueuePromiseJobs. */
#define mxMachinePlatform \
	void* host; \
	int promiseJobs; \
	void* waiterCondition; \
	void* waiterData; \
	void* waiterLink;

#endif
