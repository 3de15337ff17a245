// router/types: the contract between channels, the event router and the agent
// (SPEC §8). Channels publish in_message events; the router decides, by rules and
// then its fallback, what each one starts; outbound events of the agent come back
// through the router to the binding of their channel.
//
// AgentPort is the part of the agent port (modules/shared/agent's AgentClient, in the
// main machine) that channels and the router use. It is declared here, narrowly,
// so the router and the channels do not depend on how the agent is reached: the
// port's client satisfies it as it is, and main.ts adapts whatever runs the agent.
import type { AgentEvent, OutEvent } from "core/types";

/** Who may ask: from a channel's pairing (SPEC §8: owner, user; cron and subagent come from elsewhere). */
export type Role = "owner" | "user";

/** A message a channel received from a person it lets through (paired). */
export interface InMessage {
	type: "in_message";
	channel: string;
	chat_id: string;
	sender_id: string;
	message_id: string;
	text: string;
	role: Role;
}

// The request, chat, submit options and command result are the agent port's own.
export type { ChatRef, PortRequest } from "agent/protocol";
export type { CommandResult, SubmitOptions } from "agent/client";
import type { ChatRef, PortRequest } from "agent/protocol";
import type { CommandResult, SubmitOptions } from "agent/client";

/** What channels and the router need of the agent. Every method rejects with a sentence for a person. */
export interface AgentPort {
	/** Queues a request nobody waits for here; resolves with its id (its answer comes as an out event). */
	submit(request: PortRequest, options: SubmitOptions): Promise<number>;
	/** Cancels a request (0: the one in flight); resolves with the id cancelled, 0 when nothing matched. */
	cancel(requestId: number): Promise<number>;
	/** Hears outbound events; returns the removal. Listeners must not throw. */
	onOut(listener: (event: OutEvent) => void): () => void;
	/** Runs one of the agent's console commands ("session", "session new", ...) for a chat. */
	command(name: string, args: string, chat: ChatRef): Promise<CommandResult>;
}

/** A channel's side of an outbound binding. deliver must not throw; failures are the channel's to log. */
export interface OutboundSink {
	deliver(event: OutEvent): void;
}

/** Runs a capability (tool) without the LLM for a call_cap rule; resolves with its result text, rejects with a sentence. */
export type CapRunner = (name: string, args: Record<string, unknown>, message: InMessage) => Promise<string>;

/** What a published in_message started. */
export type RouteOutcome =
	| { kind: "agent"; request_id: number; rule?: string }
	| { kind: "cap"; rule?: string }
	| { kind: "sent"; rule?: string }
	| { kind: "failed"; error: string; rule?: string };
