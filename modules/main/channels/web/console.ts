// channels/web/console: the web console's routes (issue 30): the page and its
// files, and the JSON APIs behind it. Every API but /api/session, /api/login and
// the setup flow needs a session (channels/web/auth); every change also needs
// the page's origin and its current CSRF token, and answers with the next one.
// Secrets are write-only: the settings API says "set" or "not set", never a
// value or its length; console output shown here comes from commands that
// print none (status, session list, tools list, cron list, script). The setup
// flow (no Wi-Fi configured yet: the board's setup network is the gate) takes
// the LLM, Telegram and QQ settings, tests the LLM and joins the network; then
// it is gone and logins are needed.
import { WEB_CHAT_TEXT_MAX_CHARS, WEB_LOGIN_FAIL_DELAY_MS, WIFI_SCAN_MAX_RESULTS } from "budgets";
import { SETTINGS, effectiveSetting, findSetting, ruleOf, settingOf } from "config/settings";
import { builtInDefaults, presetSetting } from "llm/profiles";
import type { OutEvent } from "core/types";
import type { AgentEvent } from "core/types";
import { decodeUtf8 } from "net/utf8";
import type { EventStream, HttpRequest, HttpResponse, Route } from "httpd/types";
import { checkOrigin, type Refusal, type Session, type WebAuth } from "channels/web/auth";
import { APP_JS, PAGE_HTML, STYLE_CSS } from "channels/web/assets";
import type { ChannelContext } from "channels/types";
import { logTail } from "util/log";
import { messageOf } from "util/errors";

export const WEB_CHANNEL = "web";
/** The owner's one chat on the web console. */
export const WEB_CHAT = "owner";
export const PAGES = ["/", "/login", "/setup", "/chat", "/settings", "/sessions", "/tools", "/schedules", "/log"];
/** Where phones and laptops check for a captive portal (Android, Apple, Windows, Firefox): on the setup network, sent to the setup page. */
export const PORTAL_PROBES = ["/generate_204", "/gen_204", "/hotspot-detect.html", "/library/test/success.html", "/connecttest.txt", "/ncsi.txt", "/success.txt", "/canonical.html"];
const JSON_TYPE = { "Content-Type": "application/json; charset=utf-8" };
const SETUP_FIELDS: Record<string, string> = {
	provider: "llm.provider", base_url: "llm.base_url", api_key: "llm.api_key", model: "llm.model",
	telegram_token: "telegram.token", qq_app_id: "qq.app_id", qq_app_secret: "qq.app_secret",
};

export interface WebConsoleOptions {
	context: ChannelContext;
	auth: WebAuth;
	/** The setup network's name while no Wi-Fi is configured; undefined once it is. */
	setupNetwork(): string | undefined;
	/** The setup page's address on the setup network while it is open (a phone's connectivity check is sent there). */
	portalUrl(): string | undefined;
	/** Networks in range (the setup page's list). */
	scan(): Promise<string[]>;
	timers: { set(callback: () => void, ms: number): unknown };
}

export interface WebConsole {
	routes: Route[];
	/** The router's events for the web chat. */
	deliver(event: OutEvent): void;
	/** Closes the chat's event streams (the server stops). */
	close(): void;
}

function json(response: HttpResponse, status: number, value: unknown, headers?: Record<string, string>): void {
	response.send(status, JSON.stringify(value), headers ? { ...JSON_TYPE, ...headers } : JSON_TYPE);
}

function refuse(response: HttpResponse, refusal: Refusal): void {
	json(response, refusal.status, { error: refusal.error, ...(refusal.csrf ? { stale: true } : {}) });
}

/** The JSON object a change sent; a sentence when it is not one. */
function bodyObject(request: HttpRequest): Record<string, unknown> | string {
	if (!/^application\/json\b/i.test(request.header("content-type") ?? "")) return "send JSON (Content-Type: application/json)";
	try {
		const value = JSON.parse(decodeUtf8(request.body));
		return value && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : "send a JSON object";
	} catch {
		return "the body is not JSON";
	}
}

function text(value: unknown): string {
	return typeof value === "string" ? value : "";
}

/** A value a setting may take from a form: no control characters. */
function cleanValue(value: string): string | undefined {
	return /[\u0000-\u001f\u007f]/.test(value) ? undefined : value.trim();
}

export function webConsole(options: WebConsoleOptions): WebConsole {
	const { context, auth } = options;
	const streams = new Set<EventStream>();
	const requests = new Set<number>();
	let messages = 0;

	const broadcast = (event: string, data: unknown) => {
		const payload = JSON.stringify(data);
		for (const stream of [...streams]) if (!stream.send(payload, event)) streams.delete(stream);
	};

	/** The session of a reading request, or the refusal sent. */
	const reader = (request: HttpRequest, response: HttpResponse): Session | undefined => {
		const session = auth.session(request);
		if (!session) json(response, 401, { error: "log in first" });
		return session;
	};
	/** A change: its session and JSON body, or the refusal sent. */
	const changer = (request: HttpRequest, response: HttpResponse): { session: Session; body: Record<string, unknown> } | undefined => {
		const body = bodyObject(request);
		if (typeof body === "string") {
			json(response, 400, { error: body });
			return undefined;
		}
		const session = auth.change(request);
		if ("status" in session) {
			refuse(response, session);
			return undefined;
		}
		return { session, body };
	};
	const lines = (line: string | string[]) => async (request: HttpRequest, response: HttpResponse) => {
		if (!reader(request, response)) return;
		const out: string[] = [];
		for (const one of Array.isArray(line) ? line : [line]) {
			const result = await context.console.run(one);
			out.push(...result.lines);
			if (result.error) out.push(result.error);
		}
		json(response, 200, { lines: out });
	};
	const shownSetting = (name: string): string => {
		const spec = settingOf(name);
		const get = (n: string) => context.config.get(n);
		if (spec.secret) return get(name) === undefined ? "not set" : "set";
		try {
			const effective = effectiveSetting(get, name, (n) => presetSetting(get, n, builtInDefaults));
			return effective ? `${effective.value} (${effective.origin})` : "not set";
		} catch (error) {
			return `${get(name) ?? ""} (set, but ${messageOf(error)})`;
		}
	};
	/** Sets (or with "" unsets) a declared setting through the console's config commands; the error sentence, never a secret's value. */
	const setSetting = async (name: string, value: string): Promise<string | undefined> => {
		const spec = findSetting(name);
		if (!spec) return "not a setting of this firmware";
		const clean = cleanValue(value);
		if (clean === undefined) return "a value may not hold control characters";
		const result = await context.console.run(clean === "" ? `config unset ${name}` : `config set ${name} ${clean}`);
		if (!result.error) return undefined;
		return spec.secret && clean && result.error.includes(clean) ? `the value does not fit: ${ruleOf(spec)}` : result.error;
	};
	const setupOnly = (request: HttpRequest, response: HttpResponse): boolean => {
		if (!options.setupNetwork()) {
			json(response, 403, { error: "the board is set up: log in to change its settings" });
			return false;
		}
		const origin = checkOrigin(request);
		if (origin && request.method !== "GET") {
			refuse(response, origin);
			return false;
		}
		return true;
	};
	let pendingWifi: { ssid: string; password: string } | undefined;

	const page = (path: string): Route => ({
		method: "GET", path,
		handle: (_request, response) => response.send(200, PAGE_HTML, { "Content-Type": "text/html; charset=utf-8" }),
	});
	const probe = (path: string): Route => ({
		method: "GET", path,
		handle(_request, response) {
			const setup = options.portalUrl();
			if (setup) response.send(302, "", { Location: setup });
			else json(response, 404, { error: "not found" });
		},
	});
	const routes: Route[] = [
		...PAGES.map(page),
		...PORTAL_PROBES.map(probe),
		{ method: "GET", path: "/app.css", handle: (_q, r) => r.send(200, STYLE_CSS, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "max-age=300" }) },
		{ method: "GET", path: "/app.js", handle: (_q, r) => r.send(200, APP_JS, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "max-age=300" }) },
		{
			method: "GET", path: "/api/session",
			handle(request, response) {
				const session = auth.session(request);
				json(response, 200, { setup: options.setupNetwork() !== undefined, logged_in: session !== undefined, ...(session ? { csrf: session.csrf } : {}) });
			},
		},
		{
			method: "POST", path: "/api/login", bodyMaxBytes: 256,
			handle(request, response) {
				const origin = checkOrigin(request);
				if (origin) return refuse(response, origin);
				const body = bodyObject(request);
				if (typeof body === "string") return json(response, 400, { error: body });
				const result = auth.login(text(body.code));
				if ("status" in result) {
					// Slowed: a wrong code's answer waits.
					options.timers.set(() => refuse(response, result), WEB_LOGIN_FAIL_DELAY_MS);
					return;
				}
				context.log("web: the owner logged in");
				json(response, 200, { csrf: result.csrf }, { "Set-Cookie": auth.cookie(result) });
			},
		},
		{
			method: "POST", path: "/api/logout", bodyMaxBytes: 256,
			handle(request, response) {
				const change = changer(request, response);
				if (!change) return;
				auth.logout(change.session);
				json(response, 200, { ok: true }, { "Set-Cookie": auth.cookie() });
			},
		},
		{ method: "GET", path: "/api/status", handle: lines("status") },
		{ method: "GET", path: "/api/sessions", handle: lines("session list") },
		{ method: "GET", path: "/api/tools", handle: lines("tools list") },
		{ method: "GET", path: "/api/schedules", handle: lines(["cron list", "script"]) },
		{
			method: "GET", path: "/api/log",
			handle(request, response) {
				if (reader(request, response)) json(response, 200, { lines: [...logTail()] });
			},
		},
		{
			method: "GET", path: "/api/settings",
			handle(request, response) {
				if (!reader(request, response)) return;
				const get = (n: string) => context.config.get(n);
				const settings = SETTINGS.map((spec) => {
					const entry: Record<string, unknown> = { name: spec.name, description: spec.description, rule: ruleOf(spec), secret: spec.secret === true };
					if (spec.default !== undefined) entry.default = spec.default;
					if (spec.secret) entry.set = get(spec.name) !== undefined;
					else {
						try {
							const effective = effectiveSetting(get, spec.name, (n) => presetSetting(get, n, builtInDefaults));
							if (effective) {
								entry.value = effective.value;
								entry.origin = effective.origin;
							}
						} catch (error) {
							entry.value = get(spec.name);
							entry.origin = `set, but ${messageOf(error)}`;
						}
					}
					return entry;
				});
				json(response, 200, { settings });
			},
		},
		{
			method: "POST", path: "/api/settings", bodyMaxBytes: 4096,
			async handle(request, response) {
				const change = changer(request, response);
				if (!change) return;
				const name = text(change.body.name), value = text(change.body.value);
				const error = await setSetting(name, value);
				if (error) return json(response, 422, { error, csrf: change.session.csrf });
				json(response, 200, { shown: shownSetting(name), csrf: change.session.csrf });
			},
		},
		{
			method: "GET", path: "/api/chat/events",
			handle(request, response) {
				if (!reader(request, response)) return;
				const stream = response.events();
				if (stream.closed) return;
				streams.add(stream);
				stream.onClose = () => void streams.delete(stream);
				stream.comment("the web chat's events");
			},
		},
		{
			method: "POST", path: "/api/chat", bodyMaxBytes: WEB_CHAT_TEXT_MAX_CHARS * 4 + 256,
			async handle(request, response) {
				const change = changer(request, response);
				if (!change) return;
				const said = text(change.body.text).trim();
				if (!said || said.length > WEB_CHAT_TEXT_MAX_CHARS) return json(response, 422, { error: `a message is 1 to ${WEB_CHAT_TEXT_MAX_CHARS} characters`, csrf: change.session.csrf });
				const outcome = await context.router.publish({
					type: "in_message", channel: WEB_CHANNEL, chat_id: WEB_CHAT, sender_id: WEB_CHAT, message_id: String(++messages), text: said, role: "owner",
				}, {
					events: ["message_start", "message_update", "tool_execution_start", "agent_end"],
					onEvent: (event: AgentEvent) => {
						if (event.type === "message_update" && event.delta.type === "text") broadcast("delta", { request: event.request_id, text: event.delta.text });
						else if (event.type === "tool_execution_start") broadcast("tool", { request: event.request_id, name: event.call.name });
						else if (event.type === "agent_end") requests.delete(event.request_id);
					},
				});
				if (outcome.kind === "failed") return json(response, 503, { error: outcome.error, csrf: change.session.csrf });
				if (outcome.kind === "agent") requests.add(outcome.request_id);
				json(response, 200, { request: outcome.kind === "agent" ? outcome.request_id : 0, csrf: change.session.csrf });
			},
		},
		{
			method: "POST", path: "/api/chat/stop", bodyMaxBytes: 256,
			async handle(request, response) {
				const change = changer(request, response);
				if (!change) return;
				let stopped = 0;
				for (const id of [...requests]) {
					const result = await context.router.cancel(id).catch(() => 0);
					if (result) stopped++;
					requests.delete(id);
				}
				json(response, 200, { stopped, csrf: change.session.csrf });
			},
		},
		{
			method: "GET", path: "/api/setup",
			async handle(request, response) {
				if (!setupOnly(request, response)) return;
				const networks = (await options.scan()).slice(0, WIFI_SCAN_MAX_RESULTS);
				json(response, 200, { ap: options.setupNetwork(), networks, providers: settingOf("llm.provider").choices ?? [] });
			},
		},
		{
			method: "POST", path: "/api/setup", bodyMaxBytes: 4096,
			async handle(request, response) {
				if (!setupOnly(request, response)) return;
				const body = bodyObject(request);
				if (typeof body === "string") return json(response, 400, { error: body });
				const out: string[] = [];
				for (const field in SETUP_FIELDS) {
					const value = text(body[field]).trim();
					if (!value) continue;
					const error = await setSetting(SETUP_FIELDS[field], value);
					if (error) return json(response, 422, { error: `${SETUP_FIELDS[field]}: ${error}` });
					out.push(`saved ${SETUP_FIELDS[field]}`);
				}
				const ssid = text(body.ssid).trim();
				if (ssid) pendingWifi = { ssid, password: text(body.wifi_password) };
				const test = await context.console.run("llm test");
				out.push(...test.lines);
				if (test.error) out.push(test.error);
				json(response, 200, { lines: out });
			},
		},
		{
			method: "POST", path: "/api/setup/join", bodyMaxBytes: 256,
			async handle(request, response) {
				if (!setupOnly(request, response)) return;
				const wifi = pendingWifi;
				if (!wifi) return json(response, 422, { error: "choose the Wi-Fi network first" });
				const password = wifi.password ? await setSetting("wifi.password", wifi.password) : undefined;
				if (password) return json(response, 422, { error: `wifi.password: ${password}` });
				const error = await setSetting("wifi.ssid", wifi.ssid);
				if (error) return json(response, 422, { error: `wifi.ssid: ${error}` });
				pendingWifi = undefined;
				context.notify(`web: set up from the setup page: joining ${wifi.ssid}; type web login for a code to log in`);
				json(response, 200, { message: `The board joins ${wifi.ssid} and its setup network stops. Open the web console on your network and log in with a code from web login.` });
			},
		},
	];

	return {
		routes,
		deliver(event: OutEvent) {
			if (event.type === "out_message") broadcast("answer", { request: event.request_id, text: event.text });
			else broadcast("stage", { text: event.text });
		},
		close() {
			for (const stream of [...streams]) stream.end();
			streams.clear();
		},
	};
}
