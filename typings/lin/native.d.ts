// The hidden object through which the lin host's platform modules reach their
// native classes (hosts/lin/src). Only hosts/lin/modules/* may read it.
declare const __xsclaw: {
	exit(code: number): void;
	reboot(): void;
	option(name: string): string | undefined;
	dataDirectory(): string;
	now(): number;
	/** CPU time of the calling thread (its machine), ms: benchmarks only (test/peer). */
	threadCpuMs(): number;
	heap(): import("host/platform").HeapFigures;
	gc(): void;
	resetPeak(): void;
	/** Whether stdin is a terminal (hosts/lin/src/serial.c). */
	stdinIsTerminal(): boolean;
	[name: string]: any;
};
