// The peers' CA certificates arrive as --name <hex of the DER> options: one
// decoder for every peer (tls, tls-matrix, http, http-bench, websocket).
import { option } from "host/platform";

/** The bytes of a hex string (two digits a byte). */
export function fromHex(hex: string): ArrayBuffer {
	const bytes = new Uint8Array(hex.length >> 1);
	for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
	return bytes.buffer;
}

/** The DER bytes of the certificate given as --name HEX (empty when the option is absent). */
export function derOption(name: string): ArrayBuffer {
	return fromHex(option(name) ?? "");
}
