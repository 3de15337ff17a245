// channels/web/setup: the web channel's definition (channels/all): the
// firmware's HTTP server (httpd/server) on the ECMA-419 listener, serving the
// routes of the channel context: the web console's (channels/web/console) and
// what others add there (/mcp). Settings (config/settings):
//   web.enabled  "false" turns the server off
//   web.port     the board's port (default WEB_PORT_DEFAULT); on lin the server
//                runs only when the host was started with --http PORT
//                (127.0.0.1 only; port 0: one the system picks, printed)
// A change of either restarts it. Console: `web status`, `web login` (a
// one-time login code, printed and sent to the owner's private chats on
// Telegram and QQ, never a user's or a group), `wifi ap` (the setup network and
// its password).
// While no Wi-Fi is configured (wifi.ssid unset) the setup page is open and the
// setup network's name and password are printed at start (channels/web/ap).
// The setup network (host/network's access point, WPA2) opens with the server
// then, with a captive-portal DNS answer (wifi/portal: every name is the
// board, so a phone's connectivity check lands on the setup page); both close
// once Wi-Fi is configured and the board is online, and mDNS then claims
// xsclaw.local for the console. On lin there is no radio: the access point is
// simulated, the captive DNS answers on 127.0.0.1 at a port the system picks
// (printed), and so does the simulated mDNS (only xsclaw.local).
import Timer from "timer";
import { name as platformName, option } from "host/platform";
import UDP from "embedded:io/socket/udp";
import { WEB_DNS_PORT, WEB_LOG_TAIL_LINES, WEB_PORT_DEFAULT } from "budgets";
import * as network from "host/network";
import { settingValue } from "config/settings";
import type { Command } from "console/types";
import { HttpServer } from "httpd/server";
import { ServerTcp, TcpListener } from "httpd/sockets";
import type { ChannelContext, ChannelDefinition, ChatChannel } from "channels/types";
import { WebAuth } from "channels/web/auth";
import { setupNetworkCredentials, type SetupNetworkCredentials } from "channels/web/ap";
import { WEB_CHANNEL, WEB_CHAT, webConsole } from "channels/web/console";
import { DnsAnswerer, type UdpConstructor } from "wifi/portal";
import { messageOf } from "util/errors";
import { openKeyValue } from "util/io";
import { keepLogTail } from "util/log";

export const WEB_SETTINGS = Object.freeze(["web.enabled", "web.port"]);
const AP_NAMESPACE = "setup_ap";
/** The board's name by mDNS: http://xsclaw.local/. */
export const MDNS_HOST = "xsclaw";
const SIMULATED = network.kind === "host";

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

function openWeb(context: ChannelContext): ChatChannel {
	let server: HttpServer | undefined;
	let off: string | undefined = "off (not started yet)";
	const auth = new WebAuth(context.now);
	let credentials: SetupNetworkCredentials | undefined;
	let apWarning: string | undefined;
	try {
		credentials = setupNetworkCredentials(openKeyValue(AP_NAMESPACE));
	} catch (error) {
		apWarning = `the setup network's password cannot be kept (${messageOf(error)}), so the setup page stays closed`;
	}
	const configured = () => context.config.get("wifi.ssid") !== undefined;
	// The setup network's address while it is open, its captive DNS, and mDNS once online.
	let accessPoint: string | undefined;
	let captive: DnsAnswerer | undefined;
	let mdns: (() => void) | undefined;
	const web = webConsole({
		context, auth, timers: Timer,
		setupNetwork: () => (configured() || !credentials ? undefined : credentials.ssid),
		portalUrl: () => (accessPoint && server && !configured() ? `http://${accessPoint}${server.port === WEB_PORT_DEFAULT ? "" : `:${server.port}`}/setup` : undefined),
		scan: () => new Promise((resolve) => network.scan((found) => resolve((found ?? []).map((n) => n.ssid)))),
	});
	for (const route of web.routes) context.routes.add(route);
	const apLine = () => credentials
		? `wifi: setup network ${credentials.ssid}, WPA2 password ${credentials.password}${platformName === "lin" ? " (simulated on lin)" : ""}: ${!configured() ? "join it and open the web console" : accessPoint ? "open until the board is online" : "off (Wi-Fi is configured)"}`
		: `wifi: no setup network: ${apWarning}`;

	const answerer = (port: number, address: string, answers?: (name: string) => boolean) =>
		new DnsAnswerer({ UDP: UDP as unknown as UdpConstructor, port, ...(SIMULATED ? { listen: "127.0.0.1" } : {}), address, ...(answers ? { answers } : {}) });
	const openSetupNetwork = () => {
		if (!credentials) return;
		if (!accessPoint) {
			try {
				accessPoint = network.openAccessPoint(credentials.ssid, credentials.password);
			} catch (error) {
				context.notify(`wifi: no setup network: ${messageOf(error)}`);
				return;
			}
		}
		if (captive) return;
		try {
			captive = answerer(SIMULATED ? 0 : WEB_DNS_PORT, accessPoint);
			context.notify(`web: captive-portal DNS${SIMULATED ? " (simulated on lin)" : ""} on ${SIMULATED ? "127.0.0.1" : accessPoint}:${captive.port}: every name is ${accessPoint}`);
		} catch (error) {
			context.notify(`web: no captive-portal DNS (${messageOf(error)}): open http://${accessPoint}/ on the setup network`);
		}
	};
	const closeSetupNetwork = (why: string) => {
		captive?.close();
		captive = undefined;
		if (!accessPoint) return;
		accessPoint = undefined;
		network.closeAccessPoint();
		context.notify(`wifi: setup network closed (${why})`);
	};
	const startMdns = (port: number) => {
		if (mdns) return;
		const name = `${MDNS_HOST}.local`;
		if (!SIMULATED) {
			mdns = network.advertise(MDNS_HOST, port, (message) => context.notify(`web: mDNS: ${message}`));
			context.notify(`web: mDNS: http://${name}${port === WEB_PORT_DEFAULT ? "" : `:${port}`}/`);
			return;
		}
		try {
			const simulated = answerer(0, "127.0.0.1", (asked) => asked === name);
			mdns = () => simulated.close();
			context.notify(`web: mDNS ${name} (simulated on lin: answered on 127.0.0.1:${simulated.port})`);
		} catch (error) {
			context.notify(`web: no mDNS (${messageOf(error)})`);
		}
	};
	/** The setup network while no Wi-Fi is configured (with the server); once online, mDNS instead. */
	const reconcile = () => {
		const online = configured() && context.link.up();
		if (online) closeSetupNetwork("the board is online");
		else if (!configured() && server) openSetupNetwork();
		if (!server) {
			captive?.close();
			captive = undefined;
		}
		if (server && online) startMdns(server.port);
		else {
			mdns?.();
			mdns = undefined;
		}
	};
	context.link.watch(() => reconcile());

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
		keepLogTail(WEB_LOG_TAIL_LINES);
		context.notify(`web: serving http://${platformName === "lin" ? "127.0.0.1" : "<board address>"}:${candidate.port}/`);
		if (!configured()) context.notify(apLine());
		reconcile();
		context.changed();
		return true;
	};
	const stop = () => {
		web.close();
		server?.stop();
		server = undefined;
		off = "off (stopped)";
		reconcile();
		context.changed();
	};
	context.config.onChange((name) => {
		if (name === "wifi.ssid") reconcile();
		if (!WEB_SETTINGS.includes(name) || (!server && off === "off (not started yet)")) return;
		if (name === "web.enabled") auth.clear();
		stop();
		start();
	});
	const commands: Command[] = [
		{
			name: "web status",
			usage: "",
			help: "where the web console serves, its connections, requests and sessions",
			run(_args, out) {
				if (!server) return out.line(`web: ${off}`);
				const s = server.stats();
				out.line(`web: serving on port ${server.port}: ${s.connections} connections, ${s.streams} streams, ${s.requests} requests served, ${s.evicted} idle connections closed for new ones, ${s.refused} refused; ${auth.sessions} logged in`);
				if (captive) out.line(`web: captive-portal DNS on port ${captive.port}: ${captive.answered} answered, ${captive.dropped} dropped`);
				if (mdns) out.line(`web: mDNS ${MDNS_HOST}.local`);
			},
		},
		{
			name: "web login",
			usage: "",
			help: "a one-time code to log in to the web console (valid 10 minutes, once), also sent to the owner's private Telegram/QQ chat",
			run(_args, out) {
				if (!server) return out.line(`web: ${off}`);
				const { code, validMs } = auth.issueCode();
				const valid = `valid ${Math.round(validMs / 60_000)} min, once`;
				// The owner's private chats get it too (a phone away from the serial console); a user's chat or a group never.
				const sent = context.toOwner(`Web console login code: ${code} (${valid}). If you did not ask for one, ignore it: nobody can log in without it.`);
				out.line(`web: login code ${code} (${valid})${sent.length ? `; sent to the owner's ${sent.join(", ")}` : ""}`);
			},
		},
		{
			name: "wifi ap",
			usage: "",
			help: "the setup network (name and WPA2 password) a board with no Wi-Fi opens",
			run: (_args, out) => out.line(apLine()),
		},
	];
	return {
		name: WEB_CHANNEL,
		commands,
		directories: [],
		...(apWarning ? { warning: apWarning } : {}),
		start() {
			if (!server) start();
		},
		async stop() {
			stop();
			closeSetupNetwork("the firmware stops");
		},
		async restart() {
			stop();
			return start();
		},
		info: () => ({ name: WEB_CHANNEL, running: server !== undefined, ...(server ? {} : { off }), chats: server ? [WEB_CHAT] : [] }),
		deliver: (event) => web.deliver(event),
	};
}

export const web: ChannelDefinition = { name: WEB_CHANNEL, open: openWeb };
