// Capability figures (issue 14), measured by test/peer/caps_bench.ts inside the lin host:
//   caps.call_overhead_ms   one tool call through the registry's whole path (parse, schema
//                           check, role x tool policy, before/after hooks, masked log line)
//                           for a tool that does nothing: what the layer adds to every call
//   caps.script_bound_ms    run_script of `for (;;) {}` until SCRIPT_MAX_STEPS stops it: the
//                           longest a runaway script holds the agent on lin
export const title = "capabilities: registry call overhead, a runaway script's bound";

export async function run({ runXs }) {
	const samples = await runXs("test/peer/caps_bench", { calls: 30, scripts: 10 });
	const figure = (name) => ({ name, unit: "ms", values: samples.filter((s) => s.name === name).map((s) => s.ms) });
	return [figure("caps.call_overhead_ms"), figure("caps.script_bound_ms")];
}
