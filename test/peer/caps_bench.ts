// The XS side of tools/bench/caps.mjs: times the capability layer and traces one
// `BENCH {"name", "ms"}` line per sample.
//   --calls N     caps.call_overhead_ms: one call of a tool that does nothing, through
//                 the whole registry path (parse, schema, policy, hooks, log line)
//   --scripts N   caps.script_bound_ms: run_script of `for (;;) {}` until its step bound
//                 stops it (the longest a runaway script holds the agent)
import { exit, now, option } from "host/platform";
import { SCRIPT_MAX_STEPS } from "budgets";
import { GpioBank } from "caps/gpio";
import { Registry } from "caps/registry";
import { runScript } from "caps/script";
import type { AgentRequest } from "core/types";
import { Aborter } from "net/abort";
import { parseTimeZone } from "util/tz";

const count = (name: string, fallback: number) => Number(option(name) ?? fallback);
const report = (name: string, ms: number) => trace(`BENCH ${JSON.stringify({ name, ms })}\n`);
lockdown();

const request: AgentRequest = { request_id: 1, flags: 0, session_id: "", user_text: "bench", source: { channel: "console", chat_id: "", sender_id: "", message_id: "", cap: "" } };
const registry = new Registry([{
	group: "bench",
	definition: { type: "function", function: { name: "noop", description: "", parameters: { type: "object", properties: { pin: { type: "integer", minimum: 0, maximum: 48 }, label: { type: "string", maxLength: 32 } }, required: ["pin"] } } },
	run: () => "ok",
}], { log: () => {}, hooks: [{ before: () => undefined, after: () => undefined }] });
const context = { request, signal: new Aborter().signal, progress() {} };
const BATCH = 100;
for (let i = 0; i < count("calls", 30); i++) {
	const start = now();
	for (let k = 0; k < BATCH; k++) await registry.callCap({ id: "c", name: "noop", arguments: `{"pin": ${k % 48}, "label": "bench"}` }, context);
	report("caps.call_overhead_ms", (now() - start) / BATCH);
}
const deps = { settings: { get: () => undefined }, gpio: new GpioBank({ get: () => undefined }), wallClockMs: () => Date.now(), zone: () => parseTimeZone("UTC") };
for (let i = 0; i < count("scripts", 10); i++) {
	const start = now();
	try {
		runScript("for (;;) {}", deps, []);
	} catch {
		// stopped after SCRIPT_MAX_STEPS, as expected
	}
	report("caps.script_bound_ms", now() - start);
}
trace(`caps bench: ${SCRIPT_MAX_STEPS} steps\n`);
exit(0);
