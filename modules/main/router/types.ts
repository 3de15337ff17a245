// router/types: the contract between channels, the event router and the agent
// (SPEC §8). Channels publish in_message events; the router decides, by rules and
// then its fallback, what each one starts; outbound events of the agent come back
// through the router to the binding of their channel.
//
// AgentPort (agent/types) is the part of the agent port's client (agent/client)
// that channels and the router use, declared narrowly so they do not depend on
// how the agent is reached.
import type { AgentEvent, ChatRole, OutEvent } from "core/types";

/** Who may ask from a channel: its pairing's role (core/types ChatRole, the owner|user part of Role; cron and subagent come from elsewhere). */
export type { ChatRole } from "core/types";

/** A message a channel received from a person it lets through (paired). */
export interface InMessage {
	type: "in_message";
	channel: string;
	chat_id: string;
	sender_id: string;
	message_id: string;
	text: string;
	role: ChatRole;
}

// The request, chat, submit options, command result and the agent itself are the agent port's own.
export type { ChatRef, PortRequest } from "agent/protocol";
export type { AgentPort, CommandResult, SubmitOptions } from "agent/types";
import type { SubmitOptions } from "agent/types";

/** What a publisher wants to hear of an agent request it starts. */
export type Watch = Pick<SubmitOptions, "events" | "onEvent">;

/** A channel's side of an outbound binding. deliver must not throw; failures are the channel's to log. */
export interface OutboundSink {
	deliver(event: OutEvent): void;
}

/** Runs a stored script without the LLM for a run_script rule; resolves with its result text, rejects with why it did not run or failed. */
export type ScriptRunner = (name: string, message: InMessage) => Promise<string>;

/** Runs a capability (tool) without the LLM for a call_cap rule; resolves with its result text, rejects with a sentence. */
export type CapRunner = (name: string, args: Record<string, unknown>, message: InMessage) => Promise<string>;

/** What a published in_message started. */
export type RouteOutcome =
	| { kind: "agent"; request_id: number; rule?: string }
	| { kind: "cap"; rule?: string }
	| { kind: "script"; rule?: string }
	| { kind: "sent"; rule?: string }
	| { kind: "failed"; error: string; rule?: string };
