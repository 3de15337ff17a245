// timer on the lin host: the native Timer of hosts/lin/src/timer.c.
const Timer = __xsclaw.Timer;
export default Timer;
