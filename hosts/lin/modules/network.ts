// host/network on the lin host (declaration: typings/shared/network.d.ts): no
// radio. The process is on the host's network from the start and the host's
// clock is set, so connect() reports the host's link at once and scan() finds
// nothing to list; modules/main/wifi tells the person what a board would do instead.
// The setup network and mDNS are simulated by the web channel (channels/web/setup)
// on 127.0.0.1: nothing opens here.
import type { AccessPoint, LinkEvent } from "host/network";

export const kind = "host";

export function connect(_ssid: string, _password: string, onLink: (event: LinkEvent) => void): void {
	onLink({ type: "connected", address: "the host's network" });
}
export function disconnect(): void {}
export function scan(onDone: (found: AccessPoint[] | undefined, error?: string) => void): void {
	onDone(undefined, "the lin host has no radio to scan with; on a board this lists the networks in range");
}
export function link(): { ssid: string; address: string; rssi: number } | undefined {
	return undefined;
}
export function syncTime(_host: string, onDone: (error?: string) => void): void {
	onDone();
}
export function clockSet(): boolean {
	return true;
}
export function openAccessPoint(_ssid: string, _password: string): string {
	return "127.0.0.1";
}
export function closeAccessPoint(): void {}
export function advertise(_host: string, _port: number, _onError: (message: string) => void): () => void {
	return () => {};
}
