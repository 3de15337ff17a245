// caps/agents: the spawn_subagent tool. The subagents themselves (their cores,
// slots and reports) belong to core/agents' AgentManager; this is only the
// table entry that asks it to start one.
import { MAX_SUBAGENTS, SUBAGENT_TASK_MAX_CHARS } from "budgets";
import type { Capability } from "caps/types";
import type { AgentRequest } from "core/types";

/** The name of the tool that starts a subagent. */
export const SPAWN_SUBAGENT = "spawn_subagent";

/**
 * The spawn_subagent tool: starts a subagent on a task through spawn (normally
 * AgentManager.spawn) and answers at once with its agent id; the result comes
 * back later into the same conversation. Restricted: subagents and cron requests
 * neither see nor run it. A refusal (all slots busy, no subagent profile) is an
 * is_error result whose sentence tells the model to do the task itself.
 */
export function spawnSubagentTool(spawn: (task: string, parent: AgentRequest) => Promise<string>): Capability {
	return {
		group: "agents",
		definition: {
			type: "function",
			function: {
				name: SPAWN_SUBAGENT,
				description: `Start a helper agent on a self-contained task that needs several tool calls, so you can answer now. It has your tools except this one, no conversation history and no memory of this chat: put everything it needs in the task. Returns its agent id at once; its result arrives later in this conversation as a <subagent_completed agent_id="..."> message. At most ${MAX_SUBAGENTS} run at a time.`,
				parameters: {
					type: "object",
					properties: {
						task: { type: "string", minLength: 1, maxLength: SUBAGENT_TASK_MAX_CHARS, description: "What the helper should do and report back, in full sentences." },
					},
					required: ["task"],
					additionalProperties: false,
				},
			},
		},
		restricted: true,
		async run(args, context) {
			const agentId = await spawn(String(args.task), context.request);
			return `started subagent ${agentId}; its result will arrive in this conversation as a <subagent_completed agent_id="${agentId}"> message. Tell the person it is being worked on; do not wait for it.`;
		},
	};
}
