// The peer side of the peer comparison (tools/bench/peer.mjs): one Node process
// running @mariozechner/pi-agent-core's Agent against the mock LLM, driven line
// by line, so the bench can take its CPU time and resident memory from outside,
// exactly as it does for the firmware.
//
//   node tools/bench/peer/pi-agent.mjs CONFIG_JSON
//
// CONFIG_JSON: {protocol: "openai"|"anthropic", baseUrl, model, apiKey,
// systemPrompt, tools: [{name, description, parameters}]}. The tools are the
// firmware's own definitions (taken from its first request), so both sides send
// the model the same prompt and tool list; get_time answers as the firmware's
// does, and any other tool is refused (the scripted conversation calls none).
//
// Standard input: one question a line. For each, the Agent runs its prompt
// (streamed; every tool round) and one JSON line goes to standard output:
// {text, toolCalls: [{name, arguments}], stopReason, error}: the final
// assistant message's text and every tool call of the turn. `ready` is printed
// once the agent is set up; end of input ends the process.
import { Agent } from "@mariozechner/pi-agent-core";
import { createInterface } from "node:readline";

const config = JSON.parse(process.argv[2] ?? "{}");
const API = { openai: "openai-completions", anthropic: "anthropic-messages" }[config.protocol];
if (!API || !config.baseUrl || !config.model) {
	console.error("pi-agent: the config needs protocol (openai or anthropic), baseUrl and model");
	process.exit(64);
}

const model = {
	id: config.model,
	name: config.model,
	api: API,
	provider: `xsclaw-bench-${config.protocol}`,
	baseUrl: config.baseUrl,
	reasoning: false,
	input: ["text"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 200_000,
	maxTokens: 8192,
	// As the firmware sends it: max_tokens, system role, usage in the stream.
	...(API === "openai-completions" ? { compat: { maxTokensField: "max_tokens", supportsDeveloperRole: false, supportsStore: false } } : {}),
};

const started = Date.now();

/** The firmware's get_time (modules/agent/caps/board.ts), for the zones the bench asks about. */
function getTime({ timezone = "UTC" } = {}) {
	const offset = /^([+-])(\d\d):(\d\d)$/.exec(timezone);
	if (timezone !== "UTC" && !offset) throw new Error(`unknown time zone ${timezone}: use UTC or an offset such as +08:00`);
	const wall = Date.now();
	const shiftMs = offset ? (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
	const local = new Date(wall + shiftMs).toISOString().slice(0, 19).replace("T", " ");
	return JSON.stringify({ utc: new Date(wall).toISOString(), local: `${local} ${timezone}`, timezone, clock_set: true, uptime_s: Math.floor((wall - started) / 1000) });
}

const tools = (config.tools ?? []).map((t) => ({
	name: t.name,
	label: t.name,
	description: t.description ?? "",
	parameters: t.parameters ?? { type: "object", properties: {} },
	async execute(_id, params) {
		if (t.name !== "get_time") throw new Error(`${t.name} is not available in this benchmark`);
		return { content: [{ type: "text", text: getTime(params) }], details: {} };
	},
}));

const agent = new Agent({
	initialState: { systemPrompt: config.systemPrompt ?? "", model, tools, thinkingLevel: "off" },
	getApiKey: () => config.apiKey ?? "bench-key",
	toolExecution: "sequential",
});

let turn = null;
agent.subscribe((event) => {
	if (!turn) return;
	if (event.type === "tool_execution_start") turn.toolCalls.push({ name: event.toolName, arguments: event.args });
	if (event.type === "message_end" && event.message.role === "assistant") turn.last = event.message;
});

async function ask(question) {
	turn = { toolCalls: [], last: null };
	let error = null;
	try {
		await agent.prompt(question);
	} catch (e) {
		error = e?.message ?? String(e);
	}
	const last = turn.last;
	const text = last ? last.content.filter((c) => c.type === "text").map((c) => c.text).join("") : null;
	return { text, toolCalls: turn.toolCalls, stopReason: last?.stopReason ?? null, error: error ?? last?.errorMessage ?? agent.state.errorMessage ?? null };
}

const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
for await (const line of lines) {
	if (!line) continue;
	process.stdout.write(`${JSON.stringify(await ask(line))}\n`);
}
