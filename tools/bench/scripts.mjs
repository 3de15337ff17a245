// Script and automation figures (issue 28), measured by test/peer/scripts_bench.ts inside the lin host:
//   script.meter_overhead_ratio     a fixed workload inside host/sandbox's run() / the same run
//                                   plainly, thread CPU time (the engine counts steps either way;
//                                   this is what the bounds' checks add)
//   automation.trigger_to_run_ms    a GPIO edge (the simulated bank driven from outside) to the
//                                   first step of the stored script its trigger runs
export const title = "scripts: the meter's overhead, a GPIO edge to its script's first step";

export async function run({ runXs }) {
	const samples = await runXs("test/peer/scripts_bench", { pairs: 15, edges: 30 });
	const figure = (name, unit) => ({ name, unit, values: samples.filter((s) => s.name === name).map((s) => s.value) });
	return [figure("script.meter_overhead_ratio", "ratio"), figure("automation.trigger_to_run_ms", "ms")];
}
