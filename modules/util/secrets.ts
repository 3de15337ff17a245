// util/secrets: the one way a secret is shown to a person or a log. Which
// values are secret is declared where they are defined: a setting by its
// `secret` flag in config/settings; a tool call's arguments, which the model
// writes freely, by the secret-looking names of their fields (SECRET_FIELD).
//
// Known limit: a secret passed in a field with an innocent name, or inside a
// free-text argument, is not recognised in a tool call.

const MASK_SHOWN_CHARS = 4;          // the tail of a long secret that helps tell keys apart
const MASK_MIN_CHARS_FOR_TAIL = 12;  // shorter secrets are fully masked

// A JSON field named like a credential: api_key, password, bot_token, app_secret, auth ...
// (whole words between separators, so max_tokens and keyword are not secrets).
const SECRET_FIELD = /(^|[_\-.])(api_?key|key|token|secret|passw(or)?d|pass|credentials?|auth(orization)?)($|[_\-.])/i;

/** A secret as it may be shown: "****abcd", or "********" when short. */
export function maskSecret(value: string): string {
	return value.length >= MASK_MIN_CHARS_FOR_TAIL ? "****" + value.slice(-MASK_SHOWN_CHARS) : "********";
}

/**
 * JSON text as it may be shown: string and number values of secret-looking
 * fields masked with maskSecret; text that is not JSON is shown only as its
 * length (nothing tells which part of it is secret). Not cut short.
 */
export function maskedJson(text: string): string {
	try {
		return JSON.stringify(JSON.parse(text), (key, value) =>
			key && SECRET_FIELD.test(key) && (typeof value === "string" || typeof value === "number") ? maskSecret(String(value)) : value);
	} catch {
		return `(${text.length} characters of invalid JSON)`;
	}
}
