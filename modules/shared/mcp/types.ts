// mcp/types: the shapes of the MCP settings and the protocol's fixed names,
// read by both machines: the client's servers (mcp.servers, agent machine), the
// grants of remote tools to other roles (mcp.grants), and the server's tokens
// (mcp.tokens, main machine). config/settings checks a value with these when
// it is set, and masks each token inside one on its own (secretParts).
//
//   mcp.servers  NAME URL [TOKEN], ...   e.g. "home https://ha.local/mcp abc123, files http://10.0.0.5:8000/mcp"
//   mcp.grants   NAME__tool, NAME__*, ... remote tools users may run too (default: owner only)
//   mcp.tokens   ROLE TOKEN, ...          e.g. "owner 6f0c...e1, user 99aa...07" (role owner or user)
import { MCP_SERVERS_MAX, MCP_SERVER_NAME_MAX_CHARS, MCP_TOKENS_MAX, MCP_TOKEN_MIN_CHARS } from "budgets";
import type { ChatRole } from "core/types";

/** The protocol revisions spoken, newest first: the client asks for the first, both accept any. */
export const PROTOCOL_VERSIONS: readonly string[] = Object.freeze(["2025-11-25", "2025-06-18", "2025-03-26"]);
export const LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0];

/** The headers of the Streamable HTTP transport (lower case, as net/http gives response headers). */
export const SESSION_HEADER = "mcp-session-id";
export const VERSION_HEADER = "mcp-protocol-version";

/** A remote tool's name on the board: the server's name, two underscores, the tool's. */
export const TOOL_SEPARATOR = "__";

export const SERVERS_SETTING = "mcp.servers";
export const GRANTS_SETTING = "mcp.grants";
export const TOKENS_SETTING = "mcp.tokens";

export interface ServerEntry {
	name: string;
	url: string;
	/** The bearer token, when the server needs one. */
	token?: string;
}

const SERVER_NAME = /^[a-z][a-z0-9_]*$/;
// RFC 6750's token68: what a bearer token may hold.
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const URL = /^https?:\/\/[^/\s?#]+\S*$/i;

function entries(value: string): string[][] {
	return value.split(",").map((entry) => entry.match(/\S+/g) ?? []).filter((fields) => fields.length > 0);
}

/** The servers of an mcp.servers value; throws a sentence that never quotes a token. */
export function parseServers(value: string): ServerEntry[] {
	const servers: ServerEntry[] = [];
	for (const fields of entries(value)) {
		const [name, url, token] = fields;
		const where = `server ${servers.length + 1}`;
		if (fields.length < 2 || fields.length > 3) throw new RangeError(`mcp.servers: ${where} must be NAME URL [TOKEN] (entries separated by commas)`);
		if (!SERVER_NAME.test(name) || name.length > MCP_SERVER_NAME_MAX_CHARS || name.includes(TOOL_SEPARATOR))
			throw new RangeError(`mcp.servers: ${where}: a name is 1 to ${MCP_SERVER_NAME_MAX_CHARS} lowercase letters, digits and single _, starting with a letter`);
		if (servers.some((s) => s.name === name)) throw new RangeError(`mcp.servers: ${where} has the name of an earlier one`);
		if (!URL.test(url)) throw new RangeError(`mcp.servers: ${where}: the URL must start with http:// or https://`);
		if (token !== undefined && !TOKEN.test(token)) throw new RangeError(`mcp.servers: ${where}: the token has characters a bearer token cannot have`);
		servers.push(token === undefined ? { name, url } : { name, url, token });
	}
	if (servers.length > MCP_SERVERS_MAX) throw new RangeError(`mcp.servers: at most ${MCP_SERVERS_MAX} servers`);
	return servers;
}

/** The tokens inside an mcp.servers value (each masked on its own); none when it does not parse. */
export function serverTokens(value: string): string[] {
	try {
		return parseServers(value).map((s) => s.token).filter((t): t is string => t !== undefined);
	} catch {
		return [];
	}
}

/** The grants of an mcp.grants value: NAME__tool or NAME__* patterns; throws a sentence. */
export function parseGrants(value: string): string[] {
	const grants = value.split(/[\s,]+/).filter((g) => g);
	for (const grant of grants) {
		if (!/^[a-z][a-z0-9_]*__([A-Za-z0-9_-]+|\*)$/.test(grant)) throw new RangeError(`mcp.grants: "${grant.slice(0, 80)}" is not NAME__tool or NAME__*`);
	}
	return grants;
}

/** Whether a remote tool's name is granted by one of grants. */
export function isGranted(name: string, grants: readonly string[]): boolean {
	for (const grant of grants) {
		if (grant === name) return true;
		if (grant.endsWith("__*") && name.startsWith(grant.slice(0, -1))) return true;
	}
	return false;
}

/** A token's role: a chat's (core/types ChatRole). */
export type TokenRole = ChatRole;

export interface TokenEntry {
	role: TokenRole;
	token: string;
}

/** The tokens of an mcp.tokens value; throws a sentence that never quotes a token. */
export function parseTokens(value: string): TokenEntry[] {
	const tokens: TokenEntry[] = [];
	for (const fields of entries(value)) {
		const [role, token] = fields;
		const where = `token ${tokens.length + 1}`;
		if (fields.length !== 2 || (role !== "owner" && role !== "user")) throw new RangeError(`mcp.tokens: ${where} must be ROLE TOKEN, the role owner or user (entries separated by commas)`);
		if (!TOKEN.test(token) || token.length < MCP_TOKEN_MIN_CHARS) throw new RangeError(`mcp.tokens: ${where} must be at least ${MCP_TOKEN_MIN_CHARS} characters of letters, digits and -._~+/`);
		if (tokens.some((t) => t.token === token)) throw new RangeError(`mcp.tokens: ${where} is given twice`);
		tokens.push({ role, token });
	}
	if (tokens.length > MCP_TOKENS_MAX) throw new RangeError(`mcp.tokens: at most ${MCP_TOKENS_MAX} tokens`);
	return tokens;
}

/** The tokens inside an mcp.tokens value; none when it does not parse. */
export function roleTokens(value: string): string[] {
	try {
		return parseTokens(value).map((t) => t.token);
	} catch {
		return [];
	}
}
