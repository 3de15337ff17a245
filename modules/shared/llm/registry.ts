// llm/registry: backends by id. The two built-in protocols register themselves in
// llm/backends; a custom backend (another protocol, a test fake) registers the
// same way. Ids are unique: registering one twice is refused, so a typo in a
// custom backend cannot silently replace a built-in one.
import { LlmError, type BackendRegistration } from "llm/types";

const ID_PATTERN = /^[a-z][a-z0-9_]*$/;

export class BackendRegistry {
	#backends = new Map<string, BackendRegistration>();

	/** Throws LlmError("invalid") for a bad or duplicate id. */
	register(backend: BackendRegistration): void {
		const id = backend?.id;
		if (typeof id !== "string" || !ID_PATTERN.test(id))
			throw new LlmError("invalid", `an LLM backend id must be lowercase letters, digits and "_", e.g. my_backend (got ${JSON.stringify(id)})`);
		if (typeof backend.create !== "function") throw new LlmError("invalid", `LLM backend ${id} has no create() function`);
		if (this.#backends.has(id)) throw new LlmError("invalid", `an LLM backend named ${id} is already registered; choose another id`);
		this.#backends.set(id, backend);
	}

	get(id: string): BackendRegistration | undefined {
		return this.#backends.get(id);
	}

	ids(): string[] {
		return [...this.#backends.keys()];
	}
}
