// channels/web/setup: the web channel's definition (channels/all): the
// firmware's HTTP server (httpd/server) on the ECMA-419 listener, serving the
// routes of the channel context (the web console's pages and APIs, and what
// others add there: /mcp). Settings (config/settings):
//   web.enabled  "false" turns the server off
//   web.port     the board's port (default WEB_PORT_DEFAULT); on lin the server
//                runs only when the host was started with --http PORT
//                (127.0.0.1 only; port 0: one the system picks, printed)
// A change of either restarts it. `web status` says where it serves and what
// it holds.
import Timer from "timer";
import { name as platformName, option } from "host/platform";
import { settingValue } from "config/settings";
import type { Command } from "console/types";
import { HttpServer } from "httpd/server";
import { ServerTcp, TcpListener } from "httpd/sockets";
import type { ChannelContext, ChannelDefinition, ChatChannel } from "channels/types";
import { messageOf } from "util/errors";

export const WEB_SETTINGS = Object.freeze(["web.enabled", "web.port"]);
const NAME = "web";

/** The port to serve on, or why the server stays off. */
function portOf(context: ChannelContext): number | string {
	const setting = (name: string) => settingValue((n) => context.config.get(n), name);
	if (setting("web.enabled") === "false") return "off (web.enabled is false)";
	if (platformName === "lin") {
		const given = option("http");
		if (given === undefined) return "off (on lin the web console runs when started with --http PORT)";
		const port = Number(given);
		if (!/^[0-9]{1,5}$/.test(given) || port > 65535) return `off (--http ${given} is not a port number)`;
		return port;
	}
	return Number(setting("web.port"));
}

const HOME = "<!doctype html><meta charset=utf-8><title>xsclaw</title><p>xsclaw: the web console\n";

function openWeb(context: ChannelContext): ChatChannel {
	context.routes.add({ method: "GET", path: "/", handle: (_request, response) => response.send(200, HOME, { "Content-Type": "text/html; charset=utf-8" }) });
	let server: HttpServer | undefined;
	let off: string | undefined = "off (not started yet)";

	const start = (): boolean => {
		const port = portOf(context);
		if (typeof port === "string") {
			off = port;
			context.changed();
			return false;
		}
		const candidate = new HttpServer({
			Listener: TcpListener, TCP: ServerTcp, timers: Timer, now: context.now, routes: context.routes, port, log: context.log,
		});
		try {
			candidate.start();
		} catch (error) {
			off = `off (it cannot listen on port ${port}: ${messageOf(error)})`;
			context.notify(`web: ${off}`);
			context.changed();
			return false;
		}
		server = candidate;
		off = undefined;
		context.notify(`web: serving http://${platformName === "lin" ? "127.0.0.1" : "<board address>"}:${candidate.port}/`);
		context.changed();
		return true;
	};
	const stop = () => {
		server?.stop();
		server = undefined;
		off = "off (stopped)";
		context.changed();
	};
	context.config.onChange((name) => {
		if (!WEB_SETTINGS.includes(name) || (!server && off === "off (not started yet)")) return;
		stop();
		start();
	});
	const commands: Command[] = [{
		name: "web status",
		usage: "",
		help: "where the web console serves, its connections and requests",
		run(_args, out) {
			if (!server) return out.line(`web: ${off}`);
			const s = server.stats();
			out.line(`web: serving on port ${server.port}: ${s.connections} connections, ${s.streams} streams, ${s.requests} requests served, ${s.evicted} idle connections closed for new ones, ${s.refused} refused`);
		},
	}];
	return {
		name: NAME,
		commands,
		directories: [],
		start() {
			if (!server) start();
		},
		async stop() {
			stop();
		},
		async restart() {
			stop();
			return start();
		},
		info: () => ({ name: NAME, running: server !== undefined, ...(server ? {} : { off }), chats: [] }),
		deliver(event) {
			context.log(`web: no chat ${event.chat_id} to deliver to (dropped)`);
		},
	};
}

export const web: ChannelDefinition = { name: NAME, open: openWeb };
