// worker on the lin host: the native Worker of hosts/lin/src/worker.c (a machine
// on its own thread, as a Moddable Worker is a machine on its own task).
// Declarations: @moddable/typings worker.d.ts plus typings/worker.d.ts (onerror).
import type WorkerClass from "worker";

const Worker: typeof WorkerClass = __xsclaw.Worker;
export default Worker;
