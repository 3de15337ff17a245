// httpd/types: what a route on the firmware's HTTP server is (issue 30). The
// server (httpd/server) parses each request, finds its route in an HttpRoutes
// (httpd/routes) and calls it with the request and a response to answer
// through, once: a whole body (send) or a stream of server-sent events
// (events). The web console registers its pages and APIs; the MCP server
// registers /mcp. A route checks its own access (the web console's session
// cookie and CSRF token, MCP's bearer token): the server checks only the
// shape and size of what arrives.

/** One request, parsed and bounded (httpd/parser). */
export interface HttpRequest {
	/** Upper-case token: GET, POST, ... */
	readonly method: string;
	/** The path, percent-decoded, starting with "/", without "." or ".." segments. */
	readonly path: string;
	/** The raw query after "?" ("" when none). */
	readonly query: string;
	/** The value of a header (name in any case), the first when it came more than once; undefined when absent. */
	header(name: string): string | undefined;
	/** Every header as [lower-case name, value], in order. */
	readonly headers: readonly (readonly [string, string])[];
	/** The body (empty when none): at most the route's bodyMaxBytes. */
	readonly body: Uint8Array;
	/** The peer's address. */
	readonly remote: string;
}

export type HttpHeaders = Readonly<Record<string, string>>;

/** A stream of server-sent events (text/event-stream), closed by end() or by the client. */
export interface EventStream {
	/** Queues one event (data split into data: lines); false when the stream is closed or the client is too slow (it is then closed). */
	send(data: string, event?: string): boolean;
	/** A comment line (keeps proxies and the browser's timer content). */
	comment(text: string): boolean;
	/** Ends the stream once what is queued is written. */
	end(): void;
	readonly closed: boolean;
	/** Called once when the stream closes for any reason (the client went, end(), the server stopped). */
	onClose?: () => void;
}

/** How a route answers: exactly one of send or events, once. */
export interface HttpResponse {
	/**
	 * A whole response. A string body is sent as UTF-8; content-type defaults
	 * to text/plain; charset=utf-8. The server adds Content-Length, Date-free
	 * security headers (nosniff, no framing, no referrer, no-store unless the
	 * route sets Cache-Control) and Connection.
	 */
	send(status: number, body?: string | Uint8Array, headers?: HttpHeaders): void;
	/** Starts a text/event-stream answer (status 200); the connection is closed when it ends. */
	events(headers?: HttpHeaders): EventStream;
	/** Whether the answer was given (or the connection is gone). */
	readonly done: boolean;
}

export interface Route {
	/** GET, POST, ... */
	readonly method: string;
	/** An exact path ("/api/status"), or a prefix when it ends in "/*" ("/static/*"). */
	readonly path: string;
	/** The largest body this route takes (default WEB_BODY_MAX_BYTES, at most WEB_BODY_LIMIT_MAX_BYTES). */
	readonly bodyMaxBytes?: number;
	/** Answers through response; a throw or a rejected promise gets 500 (the error is logged, never sent). */
	handle(request: HttpRequest, response: HttpResponse): void | Promise<void>;
}

export interface RouteMatch {
	route?: Route;
	/** The methods the path is served for, when none is this method's (405). */
	allowed?: string[];
}

/** The routes a server serves (httpd/routes); others add theirs (the MCP server: POST /mcp). */
export interface RouteTable {
	/** Adds a route; throws when one is there for the same method and path or the table is full. Returns its removal. */
	add(route: Route): () => void;
	/** The route for a request: an exact path before a prefix, a longer prefix before a shorter. */
	match(method: string, path: string): RouteMatch;
}
