// caps/board: the board's own tools: get_time (UTC and the local time in the
// configured zone, time.timezone) and system_info (firmware, uptime, the XS heap,
// the PSRAM and internal buffer pools, open sockets, the network). Their inputs
// come in as BoardDeps, so tests give fixed clocks and figures. Results are
// short: every byte of a tool result is sent again with each later round.
//
// The device's wall clock is unset until SNTP ran; get_time says so instead of
// answering 1970. Known limit: system_info shows the heap of the machine the
// tools run in (the agent machine once the agent port lands); the main machine's
// heap is on the console's `status`.
import type { HeapFigures } from "host/platform";
import type { PoolStats } from "psram";
import { CAPS_TIME_ZONES_CACHED } from "budgets";
import type { Capability } from "caps/types";
import { formatLocal, parseTimeZone, type TimeZone } from "util/tz";

export interface BoardDeps {
	/** Wall-clock milliseconds since the epoch (Date.now). */
	wallClockMs(): number;
	/** Monotonic milliseconds, and its value when the firmware started. */
	now(): number;
	bootMs: number;
	heap(): HeapFigures;
	/** Host buffer pools ("psram", "internal"), when the platform has them. */
	pools?(): Record<string, PoolStats>;
	/** One line about the network ("Wi-Fi MyNet, 192.168.1.20" / "host network"). */
	network?(): string;
	/** The configured zone (time.timezone). */
	zone(): TimeZone;
	firmware: { name: string; version: string; platform: string };
}

// Before this (2024-01-01T00:00:00Z) the clock has not been set: the board boots at 1970.
export const CLOCK_SET_AFTER_MS = Date.UTC(2024, 0, 1);

const CLOCK_NOT_SET = "the clock is not set yet (no network time): the date is unknown";

const NO_ARGUMENTS = { type: "object", properties: {}, additionalProperties: false } as const;

function uptimeSeconds(deps: BoardDeps): number {
	return Math.floor((deps.now() - deps.bootMs) / 1000);
}

/** Whole KiB, rounded up, so a little in use never reads as 0. */
function kib(bytes: number): number {
	return Math.ceil(bytes / 1024);
}

export function boardTools(deps: BoardDeps): Capability[] {
	// The zones calls named, each parsed once (a model asks in the same few zones
	// again and again; parsing one runs its regular expressions): the newest
	// CAPS_TIME_ZONES_CACHED, oldest dropped first. A name that is not a zone throws and is not kept.
	const named = new Map<string, TimeZone>();
	const zoneNamed = (text: string): TimeZone => {
		const name = text.trim();
		let zone = named.get(name);
		if (!zone) {
			zone = parseTimeZone(name);
			if (named.size >= CAPS_TIME_ZONES_CACHED) named.delete(named.keys().next().value as string);
			named.set(name, zone);
		}
		return zone;
	};
	return [
		{
			group: "time",
			definition: {
				type: "function",
				function: {
					name: "get_time",
					description: "The current date and time: UTC (ISO 8601), the local time in the board's time zone (or the one given), and how long the board has been running.",
					parameters: {
						type: "object",
						properties: { timezone: { type: "string", minLength: 1, maxLength: 64, description: "e.g. Europe/Berlin, +08:00, CET-1CEST,M3.5.0,M10.5.0/3" } },
						additionalProperties: false,
					},
				},
			},
			run(args) {
				const zone = typeof args.timezone === "string" ? zoneNamed(args.timezone) : deps.zone();
				const wall = deps.wallClockMs();
				const clockSet = wall >= CLOCK_SET_AFTER_MS;
				// {utc, local, timezone, clock_set, [note], uptime_s} as JSON, in one concat:
				// no object and no stringify of it per call (the ISO and local times need no escaping).
				const uptime = JSON.stringify(uptimeSeconds(deps));
				if (!clockSet) return '{"utc":null,"local":null,"timezone":'.concat(JSON.stringify(zone.name), ',"clock_set":false,"note":"', CLOCK_NOT_SET, '","uptime_s":', uptime, "}");
				return '{"utc":"'.concat(new Date(wall).toISOString(), '","local":"', formatLocal(wall, zone), '","timezone":', JSON.stringify(zone.name), ',"clock_set":true,"uptime_s":', uptime, "}");
			},
		},
		{
			group: "system",
			definition: {
				type: "function",
				function: {
					name: "system_info",
					description: "The firmware's name and version, the platform, uptime, JavaScript heap use, buffer pools (PSRAM, internal RAM), open sockets and the network.",
					parameters: NO_ARGUMENTS,
				},
			},
			run() {
				const h = deps.heap();
				const { name, version, platform } = deps.firmware;
				const lines = [
					`${name} ${version} on ${platform}, up ${uptimeSeconds(deps)} s`,
					`JS heap: chunks ${kib(h.chunkUsed)}/${kib(h.chunkSize)} KiB used (peak ${kib(h.chunkPeak)}), slots ${kib(h.slotUsed)}/${kib(h.slotSize)} KiB (peak ${kib(h.slotPeak)})`,
				];
				const pools = deps.pools?.();
				if (pools) lines.push(`buffers: ${Object.entries(pools).map(([pool, s]) => `${pool} ${kib(s.used)}/${kib(s.size)} KiB (peak ${kib(s.peak)}, ${s.count} live)`).join(", ")}`);
				lines.push(`open sockets: ${h.sockets}`);
				if (deps.network) lines.push(`network: ${deps.network()}`);
				return lines.join("\n");
			},
		},
	];
}
