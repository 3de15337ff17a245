// instrumentation on the lin host: the Moddable shape over the native heap figures.
const names = ["XS Chunk Heap Used", "XS Slot Heap Used", "XS Chunk Heap Peak", "XS Slot Heap Peak", "Network Sockets"] as const;

function figures(): number[] {
	const h = __xsclaw.heap();
	return [h.chunkUsed, h.slotUsed, h.chunkPeak, h.slotPeak, h.sockets];
}

const Instrumentation = {
	get(what: number | undefined): number | undefined {
		return what === undefined || what < 1 || what > names.length ? undefined : figures()[what - 1];
	},
	map(name: string): number | undefined {
		const index = names.indexOf(name as (typeof names)[number]);
		return index < 0 ? undefined : index + 1;
	},
	name(what: number | undefined): string | undefined {
		return what === undefined ? undefined : names[what - 1];
	},
};
export default Instrumentation;
