// The agent machine of tools/bench/worker.mjs: the firmware's own agent
// (agent/machine's openAgent, behind agent/service) with a zero-cost model that
// answers at once, so a round trip measures the port and the core, not an LLM.
import { openAgent } from "agent/machine";
import { serveAgent } from "agent/service";
import type { ChatModel } from "core/types";

const instant: ChatModel = {
	chat: async () => ({
		message: { role: "assistant", content: "ok" },
		usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 },
		model: "instant", attempts: 1, bytes_sent: 0, bytes_received: 0, elapsed_ms: 0, finish_reason: "stop",
	}),
};

self.onmessage = serveAgent({
	post: (message) => self.postMessage(message),
	open: (settings, publish, online, channels) => openAgent(settings, publish, online, channels, { model: instant }),
	log: () => {},
});
