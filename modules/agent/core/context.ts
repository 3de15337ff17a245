// core/context: the context builder. Each iteration asks the providers (in
// order; REQUEST_START_ONLY ones once per request) and lays the prompt out for
// the providers' prompt caches (see NOTES.md "Prompt-cache order"):
//   [system: framework prompt + stable ## sections]      (cache breakpoint)
//   [history]                                            (breakpoint on its last message)
//   [current user text + the volatile block]
//   [this request's runtime messages: tool rounds, interrupts]
// so iteration N+1's messages extend iteration N's byte for byte.
import { CORE_PROMPT_SPARE_MESSAGES } from "budgets";
import { ProviderFlag, REQUEST_CONTEXT_MARK, type ContextContent, type ContextProvider } from "core/types";
import type { ChatRequest, Message, ToolDefinition } from "llm/types";
import { RequestFailure, failureText, untilAborted, type HistoryPart, type Part, type Run } from "core/request";
import { isObject } from "util/values";

/** "2026-11-30 05:31 UTC": the volatile block's time, at minute resolution so a request's rounds repeat it. */
export function minuteOf(ms: number): string {
	const iso = new Date(ms).toISOString();
	return iso.slice(0, 10).concat(" ", iso.slice(11, 16), " UTC");
}

function isEmpty(content: ContextContent): boolean {
	if (!isObject(content)) return true;
	if (content.kind === "system_prompt") return typeof content.content !== "string" || !content.content;
	if (content.kind === "messages" || content.kind === "tools") return !Array.isArray(content.content) || !content.content.length;
	return true;
}

type Collected = ContextContent | undefined;

/**
 * What the pass of the first round hands the providers to push their messages
 * onto: the prompt, its first slot kept for the system message (set once the
 * stable sections are known).
 */
const SYSTEM_SLOT: Message = Object.freeze({ role: "system", content: "" }) as Message;

/**
 * The user message's slot, pushed onto that prompt as soon as a provider has
 * pushed its messages, before anything else is made: XS grows an array in place
 * only while its storage is the newest chunk, so the user message pushed later
 * (after the other providers and the layout made strings and arrays) would copy
 * the whole prompt (~10 KiB for a full window on lin). Taken off while the next
 * provider is asked (the storage keeps its room), replaced by the layout.
 */
const USER_SLOT: Message = Object.freeze({ role: "user", content: "" }) as Message;

/**
 * Reserves the user message's slot after a provider that pushed (or when it was
 * reserved before), and room for CORE_PROMPT_SPARE_MESSAGES more: pushed and
 * taken off again, the storage keeps the room, so the tool rounds' messages
 * later fit without a copy.
 */
function reserve(into: Message[] | undefined, reserved: boolean, from: number): void {
	if (!into || !(reserved || into.length > from)) return;
	for (let i = 0; i <= CORE_PROMPT_SPARE_MESSAGES; i++) into.push(USER_SLOT);
	for (let i = 0; i < CORE_PROMPT_SPARE_MESSAGES; i++) into.pop();
}

/**
 * One provider's content for this iteration; a throw or empty content fails the
 * request naming it. A promise only when the provider answered with one: a
 * provider that answers at once costs no promise, no closure and no await (each
 * costs heap in XS, per provider per iteration). into: the prompt being filled,
 * offered to the providers in the first round (see ContextProvider.collect).
 */
function collect(run: Run, provider: ContextProvider, into: Message[] | undefined): Part | Promise<Part> {
	const startOnly = ((provider.flags ?? 0) & ProviderFlag.REQUEST_START_ONLY) !== 0;
	if (startOnly && run.startCache.has(provider.name)) return run.startCache.get(provider.name);
	const reserved = into !== undefined && into[into.length - 1] === USER_SLOT;
	if (reserved) into.pop();
	const from = into ? into.length : 0;
	let answer: Collected | Promise<Collected>;
	try {
		answer = provider.collect(run.request, into);
	} catch (error) {
		throw providerFailed(provider, error);
	}
	if (!(answer instanceof Promise)) {
		reserve(into, reserved, from);
		return checked(run, provider, answer, startOnly, into, from);
	}
	// Raced with cancel: a provider stuck on flash must not hold a cancelled request.
	return untilAborted(answer, run.aborter.signal).then(
		(content) => {
			reserve(into, reserved, from);
			return checked(run, provider, content, startOnly, into, from);
		},
		(error) => { throw providerFailed(provider, error); },
	);
}

function providerFailed(provider: ContextProvider, error: unknown): RequestFailure {
	return new RequestFailure(`the context provider "${provider.name}" failed: ${failureText(error)}`);
}

/** The content checked, messages as a part (where they are, and the last one as given). */
function checked(run: Run, provider: ContextProvider, content: Collected, startOnly: boolean, into: Message[] | undefined, from: number): Part {
	const pushed = into !== undefined && isObject(content) && content.kind === "messages" && content.content === into;
	// (into.length counts the user message's slot reserved after the pushes)
	if (content !== undefined && (pushed ? into.length <= from + 1 : isEmpty(content))) {
		throw new RequestFailure(`the context provider "${provider.name}" returned empty or unknown content (a bug: "nothing this time" must be undefined)`);
	}
	let part: Part = content as Exclude<Collected, { kind: "messages" }>;
	if (content !== undefined && content.kind === "messages") {
		const messages = content.content, to = pushed ? messages.length - 1 : messages.length;
		part = { kind: "history", messages, from: pushed ? from : 0, to, last: messages[to - 1] };
	}
	if (startOnly) run.startCache.set(provider.name, part);
	return part;
}
const VOLATILE_NOTE = "note: your final answer is delivered to the user automatically; do not send it again with a messaging tool.";

/**
 * The current user message's text: the user's text, then the volatile block
 * (time, source, the delivery note, VOLATILE sections). One concat: in XS a
 * template literal or an array joined makes every intermediate string (~2 KiB
 * for this text on lin, where one concat makes the result alone).
 */
function userContent(run: Run, sections: string[]): string {
	const source = run.request.source;
	const head = run.request.user_text.concat(
		REQUEST_CONTEXT_MARK, "time: ", run.time,
		"\nsource: channel ", source.channel || "(none)", ", chat ", source.chat_id || "(none)", ", sender ", source.sender_id || "(none)",
		"\n", VOLATILE_NOTE,
	);
	return sections.length ? head.concat("\n", sections.join("\n")) : head;
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
	/** The one tools provider's own array (not copied), or a copy once a second one adds to it. */
	tools: ToolDefinition[] | undefined;
	toolsCopied: boolean;
	histories: HistoryPart[];
	/** The prompt filled while collecting (the first round), else undefined. */
	into: Message[] | undefined;
}

function add(run: Run, provider: ContextProvider, part: Part, into: Collection): void {
	if (part === undefined) return;
	if (!run.providersUsed.includes(provider.name)) run.providersUsed.push(provider.name);
	switch (part.kind) {
		case "system_prompt":
			((provider.flags ?? 0) & ProviderFlag.VOLATILE ? into.volatile : into.stable).push(provider.name, part.content);
			break;
		case "history":
			into.histories.push(part);
			// Messages of a provider that gave its own array go into the prompt now, in provider order.
			if (into.into && part.messages !== into.into) {
				const reserved = into.into[into.into.length - 1] === USER_SLOT;
				if (reserved) into.into.pop();
				pushPart(into.into, part);
				into.into.push(USER_SLOT);
			}
			break;
		case "tools":
			if (!into.tools) into.tools = part.content;
			else {
				if (!into.toolsCopied) into.tools = into.tools.slice();
				into.toolsCopied = true;
				for (const tool of part.content) into.tools.push(tool);
			}
			break;
	}
}

/** Pushes a part's messages, its last one as the provider gave it (the prompt's copy may be the marked one). */
function pushPart(messages: Message[], part: HistoryPart): void {
	for (let i = part.from; i < part.to - 1; i++) messages.push(part.messages[i]);
	messages.push(part.last);
}

/**
 * Builds this iteration's chat request. Records which providers gave content in
 * run.providersUsed. What the providers give again unchanged is not rebuilt: the
 * system message of the previous iteration or request (run.system), and within a
 * request the prompt itself (run.prompt): one array per request, which the first
 * round's providers push the history onto and later rounds extend with their tool
 * rounds (a new system or user message replaces the old in place), so neither a
 * tool round nor the next request makes a new copy of the history, the system
 * prompt or the volatile block. A promise only when a provider answered with one.
 */
export function buildContext(run: Run, systemPrompt: string, providers: readonly ContextProvider[]): ChatRequest | Promise<ChatRequest> {
	const collection: Collection = { stable: [], volatile: [], tools: undefined, toolsCopied: false, histories: [], into: run.prompt ? undefined : [SYSTEM_SLOT] };
	for (let i = 0; i < providers.length; i++) {
		const answer = collect(run, providers[i], collection.into);
		if (answer instanceof Promise) return collectRest(run, systemPrompt, providers, i, answer, collection);
		add(run, providers[i], answer, collection);
	}
	return layout(run, systemPrompt, collection);
}

/** buildContext from provider i on, whose answer is a promise. */
async function collectRest(run: Run, systemPrompt: string, providers: readonly ContextProvider[], i: number, answer: Promise<Part>, collection: Collection): Promise<ChatRequest> {
	add(run, providers[i], await answer, collection);
	for (let j = i + 1; j < providers.length; j++) {
		const next = collect(run, providers[j], collection.into);
		add(run, providers[j], next instanceof Promise ? await next : next, collection);
	}
	return layout(run, systemPrompt, collection);
}

function sameParts(a: HistoryPart[], b: HistoryPart[]): boolean {
	if (a.length !== b.length) return false;
	for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
	return true;
}

/** The prompt laid out from what the providers gave. */
function layout(run: Run, systemPrompt: string, { stable, volatile, tools, histories, into }: Collection): ChatRequest {
	const last = run.prompt;
	const system = run.system && sameStrings(run.system.stable, stable) ? run.system
		: { stable, message: { role: "system", content: [systemPrompt, ...sectionsOf(stable)].join("\n\n"), cache_breakpoint: true } as Message };
	run.system = system;
	// MESSAGES providers return history from before this request (the contract on
	// ContextProvider; the store's provider ends before this request's USER
	// record): the current message is injected below, exactly once. No dedupe
	// by text here: a person may well have sent the same words last time.
	let lastHistory: Message | undefined = undefined, marked: Message | undefined = undefined;
	for (let h = histories.length - 1; h >= 0 && !lastHistory; h--) lastHistory = histories[h].last;
	if (lastHistory) marked = last && last.lastHistory === lastHistory ? last.marked! : { ...lastHistory, cache_breakpoint: true };
	const user: Message = last && sameStrings(last.volatile, volatile) ? last.user
		: { role: "user", content: userContent(run, sectionsOf(volatile)) };
	let messages: Message[];
	if (last && sameParts(last.histories, histories) && last.messages.length === last.userAt + 1 + last.runtime) {
		// The same history: the last round's prompt, extended by what this request added since.
		messages = last.messages;
		messages[0] = system.message;
		messages[last.userAt] = user;
	} else {
		// One array, filled once: the history (hundreds of messages) is not copied per
		// step. Only pushes, with index loops, while it fills: in XS the array then
		// grows in place, where anything made in between makes each growth a copy
		// (and an array made at its full length and filled by index costs six times
		// the heap).
		if (into) messages = into;
		else {
			messages = [SYSTEM_SLOT];
			for (let h = 0; h < histories.length; h++) pushPart(messages, histories[h]);
		}
		if (messages[messages.length - 1] !== USER_SLOT) messages.push(USER_SLOT);
		messages[0] = system.message;
		if (marked) messages[messages.length - 2] = marked;
		messages[messages.length - 1] = user;
	}
	const userAt = last && messages === last.messages ? last.userAt : messages.length - 1;
	for (let i = messages.length - userAt - 1; i < run.runtime.length; i++) messages.push(run.runtime[i]);
	if (last) {
		last.volatile = volatile;
		last.user = user;
		last.lastHistory = lastHistory;
		last.marked = marked;
		last.histories = histories;
		last.messages = messages;
		last.userAt = userAt;
		last.runtime = run.runtime.length;
	} else {
		run.prompt = { volatile, user, lastHistory, marked, histories, messages, userAt, runtime: run.runtime.length };
	}
	const chatRequest: ChatRequest = { messages };
	if (tools && tools.length) chatRequest.tools = tools;
	return chatRequest;
}
