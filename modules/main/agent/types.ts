// agent/types: the agent as the main machine's modules see it: what the router
// and the channels need of the agent port (AgentPort), and the options and
// results of its calls. agent/client (the port's one client) implements it;
// tests and benches give their own.
import type { AgentEvent, AgentResponse, OutEvent } from "core/types";
import type { ChatRef, PortRequest, WatchableEvent } from "agent/protocol";

export interface SubmitOptions {
	/** How long to wait for room in the agent's request queue. */
	waitMs: number;
	/** Event types of this request to hear through onEvent. */
	events?: WatchableEvent[];
	onEvent?(event: AgentEvent): void;
}

export interface AskOptions extends SubmitOptions {
	/** How long the agent waits for the answer before it cancels the request. */
	responseMs: number;
	/** Told the request's id once it is queued (for `cancel N`). */
	onAccepted?(requestId: number): void;
}

export interface CommandResult {
	lines: string[];
	/** The command failed with this sentence (after printing lines). */
	error?: string;
	/** The arguments did not fit the command's usage. */
	usage?: boolean;
}

/** What channels and the router need of the agent. Every method rejects with a sentence for a person. */
export interface AgentPort {
	/** Queues a request and waits for its answer (the console's ask); rejects when it cannot be queued. */
	ask(request: PortRequest, options: AskOptions): Promise<AgentResponse>;
	/** Queues a request nobody waits for here; resolves with its id (its answer comes as an out event). */
	submit(request: PortRequest, options: SubmitOptions): Promise<number>;
	/** Cancels a request (0: the one in flight); resolves with the id cancelled, 0 when nothing matched. */
	cancel(requestId: number): Promise<number>;
	/** Hears outbound events; returns the removal. Listeners must not throw. */
	onOut(listener: (event: OutEvent) => void): () => void;
	/** Runs one of the agent's console commands ("session", "session new", ...) for a chat. */
	command(name: string, args: string, chat: ChatRef): Promise<CommandResult>;
}
