/* Stand-in: the parts of Moddable's xsHost.h (ESP32) and modTimer.h that tls_esp32.c uses. */
#ifndef XSCLAW_STANDIN_XSHOST_H
#define XSCLAW_STANDIN_XSHOST_H
#include <stdint.h>
typedef struct modTimerRecord modTimerRecord;
typedef struct modTimerRecord *modTimer;
typedef void (*modTimerCallback)(modTimer timer, void *refcon, int refconSize);
modTimer modTimerAdd(int firstInterval, int secondInterval, modTimerCallback cb, void *refcon, int refconSize);
void modTimerRemove(modTimer timer);
enum { NetworkSockets = 1 };
void modInstrumentationAdjustStandIn(int what, int by);
#define modInstrumentationAdjust(WHAT, BY) modInstrumentationAdjustStandIn(WHAT, BY)
#endif
