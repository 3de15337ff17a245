// httpd/routes: the table of routes a server serves (httpd/types' RouteTable).
// An exact path wins over a prefix ("/static/*"), a longer prefix over a
// shorter; a path served for other methods only answers 405 with Allow.
import { WEB_BODY_LIMIT_MAX_BYTES, WEB_ROUTES_MAX } from "budgets";
import type { Route, RouteMatch, RouteTable } from "httpd/types";

const METHOD = /^[A-Z]{1,16}$/;

export class HttpRoutes implements RouteTable {
	#routes: Route[] = [];

	add(route: Route): () => void {
		if (!METHOD.test(route.method)) throw new Error(`httpd: route method must be upper-case letters: ${route.method}`);
		if (route.path.charCodeAt(0) !== 0x2f || route.path.indexOf("*") >= 0 && !route.path.endsWith("/*")) throw new Error(`httpd: a route path starts with / and may end with /*: ${route.path}`);
		const limit = route.bodyMaxBytes;
		if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0 && limit <= WEB_BODY_LIMIT_MAX_BYTES)) throw new Error(`httpd: bodyMaxBytes must be 0 to ${WEB_BODY_LIMIT_MAX_BYTES}`);
		if (this.#routes.some((r) => r.method === route.method && r.path === route.path)) throw new Error(`httpd: ${route.method} ${route.path} is served already`);
		if (this.#routes.length >= WEB_ROUTES_MAX) throw new Error(`httpd: more than ${WEB_ROUTES_MAX} routes`);
		this.#routes.push(route);
		return () => {
			const at = this.#routes.indexOf(route);
			if (at >= 0) this.#routes.splice(at, 1);
		};
	}

	match(method: string, path: string): RouteMatch {
		let best: Route | undefined, bestLength = -1;
		let allowed: string[] | undefined;
		for (const route of this.#routes) {
			const length = covers(route.path, path);
			if (length < 0) continue;
			if (route.method !== method) {
				(allowed ??= []).includes(route.method) || allowed.push(route.method);
				continue;
			}
			if (length > bestLength) {
				best = route;
				bestLength = length;
			}
		}
		return best ? { route: best } : { allowed };
	}
}

/** How specific routePath is for path: its length + 1 when exact, its prefix's length when a prefix; -1 when it does not cover path. */
function covers(routePath: string, path: string): number {
	if (routePath.endsWith("/*")) {
		const prefix = routePath.slice(0, -1);
		return path.startsWith(prefix) && path.length > prefix.length ? prefix.length : -1;
	}
	return routePath === path ? routePath.length + 1 : -1;
}
