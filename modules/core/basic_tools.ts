// core/basic_tools: the built-in tools that need nothing but the clock and the
// heap (SPEC §7): get_time and system_info. Their inputs come in as BasicToolDeps,
// so tests give fixed clocks and heap figures. Results are short: get_time a
// small JSON object, system_info three lines of text with heap figures in KiB.
// Every byte of a tool result is sent again with each later round of the request
// (and kept in the session), so field names and escaped quotes cost more than
// they tell the model.
//
// Known limits: no time zone yet (the scheduler brings one): times are UTC. The
// device's wall clock is unset until SNTP ran; get_time says so instead of
// answering 1970.
import type { HeapFigures } from "host/platform";
import type { ToolSpec } from "core/types";

export interface BasicToolDeps {
	/** Wall-clock milliseconds since the epoch (Date.now). */
	wallClockMs(): number;
	/** Monotonic milliseconds, and its value when the firmware started. */
	now(): number;
	bootMs: number;
	heap(): HeapFigures;
	firmware: { name: string; version: string; platform: string };
}

// Before this (2024-01-01T00:00:00Z) the clock has not been set: the board boots at 1970.
const CLOCK_SET_AFTER_MS = Date.UTC(2024, 0, 1);

const NO_ARGUMENTS = { type: "object", properties: {} } as const;

function uptimeSeconds(deps: BasicToolDeps): number {
	return Math.floor((deps.now() - deps.bootMs) / 1000);
}

/** Whole KiB, rounded up, so a little in use never reads as 0. */
function kib(bytes: number): number {
	return Math.ceil(bytes / 1024);
}

export function basicTools(deps: BasicToolDeps): ToolSpec[] {
	return [
		{
			definition: {
				type: "function",
				function: {
					name: "get_time",
					description: "The current date and time (UTC, ISO 8601) and how long the board has been running.",
					parameters: NO_ARGUMENTS,
				},
			},
			run() {
				const wall = deps.wallClockMs();
				const clockSet = wall >= CLOCK_SET_AFTER_MS;
				return JSON.stringify({
					utc: clockSet ? new Date(wall).toISOString() : null,
					clock_set: clockSet,
					...(clockSet ? {} : { note: "the clock is not set yet (no network time): the date is unknown" }),
					uptime_s: uptimeSeconds(deps),
				});
			},
		},
		{
			definition: {
				type: "function",
				function: {
					name: "system_info",
					description: "The firmware's name and version, the platform, uptime, JavaScript heap use and open sockets.",
					parameters: NO_ARGUMENTS,
				},
			},
			run() {
				const h = deps.heap();
				const { name, version, platform } = deps.firmware;
				return [
					`${name} ${version} on ${platform}, up ${uptimeSeconds(deps)} s`,
					`JS heap: chunks ${kib(h.chunkUsed)}/${kib(h.chunkSize)} KiB used (peak ${kib(h.chunkPeak)}), slots ${kib(h.slotUsed)}/${kib(h.slotSize)} KiB (peak ${kib(h.slotPeak)})`,
					`open sockets: ${h.sockets}`,
				].join("\n");
			},
		},
	];
}
