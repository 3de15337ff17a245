/* Shim of the Moddable SDK's modTimer.h (the same declarations) for tls_esp32.c
 * on the lin host: implemented over the host loop's timers in boardtls.c. */
#ifndef XSCLAW_BOARDTLS_MODTIMER_H
#define XSCLAW_BOARDTLS_MODTIMER_H
typedef struct modTimerRecord modTimerRecord;
typedef struct modTimerRecord *modTimer;
typedef void (*modTimerCallback)(modTimer timer, void *refcon, int refconSize);
modTimer modTimerAdd(int firstInterval, int secondInterval, modTimerCallback cb, void *refcon, int refconSize);
void modTimerRemove(modTimer timer);
#endif
