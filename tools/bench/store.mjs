// Session store figures (SPEC §11), measured by test/peer/store_bench.ts inside
// the lin host on its files (a temporary --data directory, so flush is a real
// fsync of whatever disk holds it):
//   store.append_ms             one ~300-byte record as a turn's last batch: data write + flush +
//                               index write (the index is flushed every 32nd append)
//   store.turn_ms               a tool turn persisted as the core does it (question, a tool round
//                               with a 1 KB result, answer): three appends, one data flush
//   store.read_last24_ms_10k    the last 24 records of a ~10 KiB session, through the index
//   store.read_last24_ms_150k   the same from a ~150 KiB session: about equal to the 10k figure,
//                               because the read does not grow with the file
//   store.compact_150k_ms       compaction of a ~150 KiB session (temp files, two flushes, two renames)
//   store.open_150k_ms          SessionFile.open of a clean ~150 KiB session (once per session per
//                               boot): its index proves the layout, so one read of the index and two
//                               frame headers, not the data file
export const title = "session store: append, read through the index, compaction";

export async function run({ runXs }) {
	const samples = await runXs("test/peer/store_bench", { appends: 50, turns: 50, reads: 30, compacts: 5, opens: 10 });
	const figure = (name, p99 = true) => ({ name, unit: "ms", values: samples.filter((s) => s.name === name).map((s) => s.ms), p99 });
	return [
		figure("store.append_ms"),
		figure("store.turn_ms"),
		figure("store.read_last24_ms_10k"),
		figure("store.read_last24_ms_150k"),
		figure("store.compact_150k_ms", false),
		figure("store.open_150k_ms", false),
	];
}
