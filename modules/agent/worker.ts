// agent/worker: the agent machine's main module, run by `new Worker("agent/worker", ...)`
// (agent/supervisor). It only installs the port: the machine opens its parts when
// the main machine's "start" message brings the settings (agent/service), so the
// Worker constructor, which blocks the main machine until this module has run,
// returns at once.
import { openAgent } from "agent/machine";
import { serveAgent } from "agent/service";
import { AGENT_PORT_TEXT_MAX_CHARS } from "budgets";
import { consoleKind } from "host/platform";
import { keepHeadroom } from "util/heap";
import { setLogSink } from "util/log";

// The worker machine's global port (onmessage, postMessage). The lin typings
// declare it (typings/lin/worker.d.ts); the SDK's, which the device build uses,
// do not, so it is declared here for both targets.
declare const self: { onmessage: unknown; postMessage(message: unknown): void };
// The machine is locked down first (XS lockdown(): frozen built-ins), so that a
// script the agent runs in a Compartment (caps/script) cannot change them or
// reach this machine's globals. Both hosts define lockdown() (the lin host at
// start; the board when host/sandbox, which agent/machine's imports load first,
// installs it); a build without it runs unlocked, and caps/script refuses.
if (typeof lockdown === "function") lockdown();

// On the board this machine's log lines go to main, which writes them to the
// console (util/log): trace() reaches no one there in a release build.
if (consoleKind === "uart") setLogSink((line) => self.postMessage({ type: "log", line: line.length > AGENT_PORT_TEXT_MAX_CHARS ? line.slice(0, AGENT_PORT_TEXT_MAX_CHARS) : line }));

const serve = serveAgent({
	post: (message) => self.postMessage(message),
	open: (settings, publish, online, channels) => openAgent(settings, publish, online, channels),
});
// Room for the next message: it is copied in without collecting (util/heap).
self.onmessage = (message: unknown) => {
	serve(message);
	keepHeadroom();
};
