// llm/console: the `llm status` and `llm test` console commands, as table entries.
// Status never shows the key unmasked; test sends one short request without tools
// and prints the latency and the reply (or the error, as a sentence).
import { LLM_TEST_MAX_TOKENS } from "budgets";
import type { Command, Output } from "console/types";
import { UsageError } from "console/types";
import type { Llm } from "llm/runtime";
import { messageOf } from "util/errors";
import { clip, oneLine } from "util/text";

const TEST_PROMPT = "Reply with one short sentence to confirm you can hear me.";
const REPLY_SHOWN_CHARS = 200;

function limit(n: number): string {
	return n > 0 ? String(n) : "no limit";
}

export function llmCommands(llm: Llm): Command[] {
	return [
		{
			name: "llm status",
			usage: "",
			help: "LLM backend, model, base URL, key (masked), calls and tokens today",
			run(args: string, out: Output): void {
				if (args) throw new UsageError();
				const s = llm.status();
				out.line(`provider:  ${s.provider}${s.backend ? ` (${s.backend})` : ""}`);
				out.line(`model:     ${s.model || "(not set)"}`);
				out.line(`base URL:  ${s.base_url || "(not set)"}`);
				out.line(`API key:   ${s.api_key}`);
				if (s.configured) out.line(`streaming: ${s.stream ? "on" : "off"}`);
				out.line(`calls:     ${s.usage.callsThisHour}/${s.limits.callsPerHour} this hour, ${s.usage.callsToday}/${s.limits.callsPerDay} today`);
				out.line(`tokens:    ${s.usage.tokensToday} today (limit ${limit(s.limits.tokensPerDay)})`);
				if (s.problem) out.line(`note:      ${s.problem}`);
			},
		},
		{
			name: "llm test",
			usage: "",
			help: "send one short request to the LLM and print the latency and the reply",
			async run(args: string, out: Output): Promise<void> {
				if (args) throw new UsageError();
				let response;
				try {
					response = await llm.chat({ messages: [{ role: "user", content: TEST_PROMPT }], max_tokens: LLM_TEST_MAX_TOKENS });
				} catch (error) {
					throw new Error(`the LLM test failed: ${messageOf(error)}`);
				}
				const shown = clip(oneLine(response.message.content ?? ""), REPLY_SHOWN_CHARS + 1);
				const u = response.usage;
				out.line(`ok in ${Math.round(response.elapsed_ms)} ms (${response.model}, ${response.attempts} attempt${response.attempts === 1 ? "" : "s"}, ${u.input_tokens} tokens in, ${u.output_tokens} out)`);
				out.line(`reply: ${shown || "(empty)"}`);
			},
		},
	];
}
