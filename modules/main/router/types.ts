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
export type { AgentPort, AskOptions, CommandResult, SubmitOptions } from "agent/types";
import type { ChatRef } from "agent/protocol";
import type { AskOptions, CommandResult, SubmitOptions } from "agent/types";

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

/**
 * The way in for every channel, the console too: what a person sent
 * (publish; the console's ask, which waits for the answer), a chat's /stop
 * (cancel) and its commands (/session ...). The router sees all of it; a channel
 * holds no other way to the agent.
 */
export interface RouteIn {
	publish(message: InMessage, watch?: Watch): Promise<RouteOutcome>;
	/** The console's ask: the rules apply as to any channel's message; a run_agent rule or the fallback asks the agent and waits for its answer. */
	ask(message: InMessage, options: Omit<AskOptions, "waitMs"> & { waitMs?: number }): Promise<AskOutcome>;
	/** A request a chat started, cancelled (its /stop; 0: the one in flight); the id cancelled, 0 when none. */
	cancel(requestId: number): Promise<number>;
	/** One of the agent's commands for a chat (/session ..., the console's proxies). */
	command(name: string, args: string, chat: ChatRef): Promise<CommandResult>;
}

/** What the console's ask ended in: the agent's answer, or a rule's text (call_cap, run_script, send_message), or why it failed. */
export type AskOutcome =
	| { kind: "answer"; ok: boolean; text: string; error?: string; rule?: string }
	| { kind: "failed"; error: string; rule?: string };

/** What a published in_message started. */
export type RouteOutcome =
	| { kind: "agent"; request_id: number; rule?: string }
	| { kind: "cap"; rule?: string }
	| { kind: "script"; rule?: string }
	| { kind: "sent"; rule?: string }
	| { kind: "failed"; error: string; rule?: string };
