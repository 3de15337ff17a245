// core/context: the context builder. Each iteration asks the providers (in
// order; REQUEST_START_ONLY ones once per request) and lays the prompt out for
// the providers' prompt caches (see NOTES.md "Prompt-cache order"):
//   [system: framework prompt + stable ## sections]      (cache breakpoint)
//   [history]                                            (breakpoint on its last message)
//   [current user text + the volatile block]
//   [this request's runtime messages: tool rounds, interrupts]
// so iteration N+1's messages extend iteration N's byte for byte.
import { ProviderFlag, type ContextContent, type ContextProvider } from "core/types";
import type { ChatRequest, Message, ToolDefinition } from "llm/types";
import { RequestFailure, failureText, untilAborted, type Run } from "core/request";
import { isObject } from "util/values";

/** "2026-11-30 05:31 UTC": the volatile block's time, at minute resolution so a request's rounds repeat it. */
export function minuteOf(ms: number): string {
	const iso = new Date(ms).toISOString();
	return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function isEmpty(content: ContextContent): boolean {
	if (!isObject(content)) return true;
	if (content.kind === "system_prompt") return typeof content.content !== "string" || !content.content;
	if (content.kind === "messages" || content.kind === "tools") return !Array.isArray(content.content) || !content.content.length;
	return true;
}

/** One provider's content for this iteration; a throw or empty content fails the request naming it. */
async function collect(run: Run, provider: ContextProvider): Promise<ContextContent | undefined> {
	const startOnly = ((provider.flags ?? 0) & ProviderFlag.REQUEST_START_ONLY) !== 0;
	if (startOnly && run.startCache.has(provider.name)) return run.startCache.get(provider.name);
	let content: ContextContent | undefined;
	try {
		// Raced with cancel: a provider stuck on flash must not hold a cancelled request.
		content = await untilAborted(Promise.resolve().then(() => provider.collect(run.request)), run.aborter.signal);
	} catch (error) {
		throw new RequestFailure(`the context provider "${provider.name}" failed: ${failureText(error)}`);
	}
	if (content !== undefined && isEmpty(content)) {
		throw new RequestFailure(`the context provider "${provider.name}" returned empty or unknown content (a bug: "nothing this time" must be undefined)`);
	}
	if (startOnly) run.startCache.set(provider.name, content);
	return content;
}

/** The volatile block at the end of the current user message: time, source, the delivery note, VOLATILE sections. */
function volatileBlock(run: Run, sections: string[]): string {
	const source = run.request.source;
	return [
		"[request context]",
		`time: ${run.time}`,
		`source: channel ${source.channel || "(none)"}, chat ${source.chat_id || "(none)"}, sender ${source.sender_id || "(none)"}`,
		"note: your final answer is delivered to the user automatically; do not send it again with a messaging tool.",
		...sections,
	].join("\n");
}

/** Builds this iteration's chat request from scratch. Records which providers gave content in run.providersUsed. */
export async function buildContext(run: Run, systemPrompt: string, providers: readonly ContextProvider[]): Promise<ChatRequest> {
	const stable: string[] = [systemPrompt];
	const volatile: string[] = [];
	const tools: ToolDefinition[] = [];
	const histories: Message[][] = [];
	for (const provider of providers) {
		const content = await collect(run, provider);
		if (content === undefined) continue;
		if (!run.providersUsed.includes(provider.name)) run.providersUsed.push(provider.name);
		switch (content.kind) {
			case "system_prompt": {
				const section = `## ${provider.name}\n${content.content}`;
				if ((provider.flags ?? 0) & ProviderFlag.VOLATILE) volatile.push(section);
				else stable.push(section);
				break;
			}
			case "messages":
				histories.push(content.content);
				break;
			case "tools":
				tools.push(...content.content);
				break;
		}
	}
	// MESSAGES providers return history from before this request (the contract on
	// ContextProvider; the store's provider ends before this request's USER
	// record): the current message is injected below, exactly once. No dedupe
	// by text here: a person may well have sent the same words last time.
	// One array, filled once: the history (hundreds of messages) is not copied per step.
	const messages: Message[] = [{ role: "system", content: stable.join("\n\n"), cache_breakpoint: true }];
	for (const history of histories) for (const message of history) messages.push(message);
	if (messages.length > 1) messages[messages.length - 1] = { ...messages[messages.length - 1], cache_breakpoint: true };
	messages.push({ role: "user", content: `${run.request.user_text}\n\n${volatileBlock(run, volatile)}` });
	for (const message of run.runtime) messages.push(message);
	const chatRequest: ChatRequest = { messages };
	if (tools.length) chatRequest.tools = tools;
	return chatRequest;
}
