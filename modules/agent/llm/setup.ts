// llm/setup: the firmware's LLM service, assembled from the board's storage: call
// and token counts persist in the key-value namespace "llm" (NVS on the device, a
// file under the data directory on lin), and images are read from the files root.
// main.ts passes the config, the shared HTTP client and the board's big-buffer
// pool (the one the HTTP client uses), and adds the returned console commands to
// its table.
import { files, openKeyValue } from "util/io";
import type { Command } from "console/types";
import type { HttpTransport } from "net/types";
import type { BufferPool } from "util/buffers";
import { llmCommands } from "llm/console";
import type { UsageStore } from "llm/limits";
import { fileReader } from "llm/media";
import { Llm, type ConfigSource } from "llm/runtime";
import { messageOf } from "util/errors";

const USAGE_NAMESPACE = "llm";

function openUsageStore(): { store?: UsageStore; warning?: string } {
	try {
		const kv = openKeyValue(USAGE_NAMESPACE);
		return {
			store: {
				read: (key) => {
					const value = kv.read(key);
					return value instanceof ArrayBuffer ? value : undefined;
				},
				write: (key, value) => kv.write(key, value),
			},
		};
	} catch (error) {
		const message = messageOf(error);
		return { warning: `LLM usage cannot be stored (${message}), so call limits count from zero after a restart` };
	}
}

export interface LlmSetup {
	llm: Llm;
	/** `llm status` and `llm test`. */
	commands: Command[];
	/** A sentence for the console when something works only partly. */
	warning?: string;
}

export function openLlm({ config, transport, buffers }: { config: ConfigSource; transport: HttpTransport; buffers: BufferPool }): LlmSetup {
	const { store, warning } = openUsageStore();
	const llm = new Llm({
		config,
		transport,
		usageStore: store,
		files: fileReader(files),
		buffers,
	});
	return { llm, commands: llmCommands(llm), warning };
}
