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

type Collected = ContextContent | undefined;

/**
 * One provider's content for this iteration; a throw or empty content fails the
 * request naming it. A promise only when the provider answered with one: a
 * provider that answers at once costs no promise, no closure and no await (each
 * costs heap in XS, per provider per iteration).
 */
function collect(run: Run, provider: ContextProvider): Collected | Promise<Collected> {
	const startOnly = ((provider.flags ?? 0) & ProviderFlag.REQUEST_START_ONLY) !== 0;
	if (startOnly && run.startCache.has(provider.name)) return run.startCache.get(provider.name);
	let answer: Collected | Promise<Collected>;
	try {
		answer = provider.collect(run.request);
	} catch (error) {
		throw providerFailed(provider, error);
	}
	if (!(answer instanceof Promise)) return checked(run, provider, answer, startOnly);
	// Raced with cancel: a provider stuck on flash must not hold a cancelled request.
	return untilAborted(answer, run.aborter.signal).then(
		(content) => checked(run, provider, content, startOnly),
		(error) => { throw providerFailed(provider, error); },
	);
}

function providerFailed(provider: ContextProvider, error: unknown): RequestFailure {
	return new RequestFailure(`the context provider "${provider.name}" failed: ${failureText(error)}`);
}

function checked(run: Run, provider: ContextProvider, content: Collected, startOnly: boolean): Collected {
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

/** Provider sections ("## name\ntext") from name, text pairs. */
function sectionsOf(pairs: string[]): string[] {
	const out: string[] = [];
	for (let i = 0; i < pairs.length; i += 2) out.push(`## ${pairs[i]}\n${pairs[i + 1]}`);
	return out;
}

function sameStrings(a: string[], b: string[]): boolean {
	if (a.length !== b.length) return false;
	for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
	return true;
}

/** What the providers gave this iteration, sorted by kind. */
interface Collection {
	stable: string[];     // name, text pairs
	volatile: string[];
	tools: ToolDefinition[];
	histories: Message[][];
}

function add(run: Run, provider: ContextProvider, content: Collected, into: Collection): void {
	if (content === undefined) return;
	if (!run.providersUsed.includes(provider.name)) run.providersUsed.push(provider.name);
	switch (content.kind) {
		case "system_prompt":
			((provider.flags ?? 0) & ProviderFlag.VOLATILE ? into.volatile : into.stable).push(provider.name, content.content);
			break;
		case "messages":
			into.histories.push(content.content);
			break;
		case "tools":
			for (const tool of content.content) into.tools.push(tool);
			break;
	}
}

/**
 * Builds this iteration's chat request from scratch. Records which providers
 * gave content in run.providersUsed. What the providers give again unchanged is
 * not rebuilt: the system message of the previous iteration or request
 * (run.system), the marked last history message and the user message of the
 * previous iteration (run.prompt), so neither a tool round nor the next request
 * makes a new copy of the system prompt, nor a round of the volatile block.
 * A promise only when a provider answered with one.
 */
export function buildContext(run: Run, systemPrompt: string, providers: readonly ContextProvider[]): ChatRequest | Promise<ChatRequest> {
	const collection: Collection = { stable: [], volatile: [], tools: [], histories: [] };
	for (let i = 0; i < providers.length; i++) {
		const answer = collect(run, providers[i]);
		if (answer instanceof Promise) return collectRest(run, systemPrompt, providers, i, answer, collection);
		add(run, providers[i], answer, collection);
	}
	return layout(run, systemPrompt, collection);
}

/** buildContext from provider i on, whose answer is a promise. */
async function collectRest(run: Run, systemPrompt: string, providers: readonly ContextProvider[], i: number, answer: Promise<Collected>, collection: Collection): Promise<ChatRequest> {
	add(run, providers[i], await answer, collection);
	for (let j = i + 1; j < providers.length; j++) {
		const next = collect(run, providers[j]);
		add(run, providers[j], next instanceof Promise ? await next : next, collection);
	}
	return layout(run, systemPrompt, collection);
}

/** The prompt laid out from what the providers gave. */
function layout(run: Run, systemPrompt: string, { stable, volatile, tools, histories }: Collection): ChatRequest {
	const last = run.prompt;
	const system = run.system && sameStrings(run.system.stable, stable) ? run.system
		: { stable, message: { role: "system", content: [systemPrompt, ...sectionsOf(stable)].join("\n\n"), cache_breakpoint: true } as Message };
	run.system = system;
	// MESSAGES providers return history from before this request (the contract on
	// ContextProvider; the store's provider ends before this request's USER
	// record): the current message is injected below, exactly once. No dedupe
	// by text here: a person may well have sent the same words last time.
	let lastHistory: Message | undefined = undefined, marked: Message | undefined = undefined;
	for (let h = histories.length - 1; h >= 0 && !lastHistory; h--) lastHistory = histories[h][histories[h].length - 1];
	if (lastHistory) marked = last && last.lastHistory === lastHistory ? last.marked! : { ...lastHistory, cache_breakpoint: true };
	const user: Message = last && sameStrings(last.volatile, volatile) ? last.user
		: { role: "user", content: `${run.request.user_text}\n\n${volatileBlock(run, sectionsOf(volatile))}` };
	// One array, filled once: the history (hundreds of messages) is not copied per
	// step. Only pushes, with index loops, while it fills: in XS the array then
	// grows in place, where anything made in between makes each growth a copy
	// (and an array made at its full length and filled by index costs six times
	// the heap).
	const messages: Message[] = [system.message];
	for (let h = 0; h < histories.length; h++) {
		const history = histories[h];
		for (let i = 0; i < history.length; i++) messages.push(history[i]);
	}
	if (marked) messages[messages.length - 1] = marked;
	messages.push(user);
	for (let i = 0; i < run.runtime.length; i++) messages.push(run.runtime[i]);
	run.prompt = { volatile, user, lastHistory, marked };
	const chatRequest: ChatRequest = { messages };
	if (tools.length) chatRequest.tools = tools;
	return chatRequest;
}
