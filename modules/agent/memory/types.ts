// memory/types: the contract shared by the two long-term memory modes (full:
// records with tags in one checksummed file; light: one MEMORY.md), so the tools,
// the console commands and the context provider never ask which mode is running.
// Every method is synchronous: file IO on both hosts is, and a tool call or a
// console command therefore changes the memory as one step (no interleaving).

export type MemoryMode = "full" | "light";

/** One remembered fact as the tools and the console show it. */
export interface MemoryEntry {
	/** full: "m<number>", never reused; light: the line number in MEMORY.md (shifts when a line above is forgotten). */
	id: string;
	text: string;
	/** Lowercase words without "#". light: the "#word"s found in the line. */
	tags: string[];
	/** Wall-clock ms (Date.now()); 0 when unknown (light mode keeps no dates). */
	created: number;
	updated: number;
}

/** What the store holds against its limits, for `memory mode` and status lines. */
export interface MemoryUsage {
	entries: number;
	/** full: MEMORY_RECORDS_MAX; light: 0 (bounded by bytes only). */
	maxEntries: number;
	bytes: number;
	maxBytes: number;
}

/**
 * A long-term memory. Contract for every method that takes an id or text: a
 * problem a person or the model can fix (unknown id, text too long, store full,
 * nothing to search for) throws an Error whose message is a sentence saying what
 * to do; the memory is then unchanged. A failed file write also throws and also
 * leaves the memory (in RAM and in flash) as it was.
 */
export interface LongTermMemory {
	readonly mode: MemoryMode;
	/** A new entry, or with id the replacement of that entry's text (and tags, when given). */
	write(text: string, tags?: readonly string[], id?: string): MemoryEntry;
	read(id: string): MemoryEntry;
	/**
	 * Ranked matches, best first, at most limit (<= MEMORY_SEARCH_MAX_RESULTS).
	 * query words score by whole-word and substring hits in text and tags; tag
	 * (without "#") keeps only entries carrying it. One of them must be non-empty.
	 */
	search(query: string, tag: string | undefined, limit: number): MemoryEntry[];
	/** Removes an entry and returns it. light: id may also be text that matches one line. */
	forget(id: string): MemoryEntry;
	/** Every entry, oldest first. */
	list(): MemoryEntry[];
	usage(): MemoryUsage;
	/**
	 * The stable prompt section: entries up to budgetBytes of UTF-8, all when they
	 * fit, else the newest; the same for every question until memory changes.
	 * undefined when there is nothing.
	 */
	context(budgetBytes: number): string | undefined;
	/**
	 * The entries relevant to hint that context(stableBudgetBytes) leaves out, up to
	 * budgetBytes: the part that changes with the question, placed after the stable
	 * prefix. undefined when none is.
	 */
	relevant(hint: string, stableBudgetBytes: number, budgetBytes: number): string | undefined;
}

/** The part of config/store's Config that memory reads. */
export interface SettingsSource {
	get(name: string): string | undefined;
}

/** One line to the log (trace on lin). Never given a secret. */
export type Log = (line: string) => void;
