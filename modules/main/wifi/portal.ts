// wifi/portal: the DNS answers of the setup network (issue 30). While a board
// with no Wi-Fi configured opens its setup network, every name a phone looks
// up there is the board (a captive portal: the phone's connectivity check
// lands on the setup page). On lin the same answerer runs on 127.0.0.1, on a
// port the system picks, for the simulated setup network, and once set up it
// simulates mDNS: only xsclaw.local is answered (a board claims that name on
// its network through the SDK's embedded:network/dnssd).
//
// A query is read strictly: one question, no answers or authority records, a
// name of labels (no compression), at most WEB_DNS_QUERY_MAX_BYTES. An A (or
// ANY) question of class IN gets one A record with the address, valid
// WEB_DNS_TTL_S; another type gets no data; a name not answered gets NXDOMAIN.
// Anything else is dropped unanswered, never an error out of it:
// test/unit/portal.test.ts fuzzes it.
import { WEB_DNS_NAME_MAX_BYTES, WEB_DNS_QUERY_MAX_BYTES, WEB_DNS_TTL_S } from "budgets";

const TYPE_A = 1, TYPE_ANY = 255, CLASS_IN = 1;
const FLAG_RESPONSE = 0x8000, FLAG_AUTHORITATIVE = 0x0400, FLAG_RECURSION = 0x0100;
const OPCODE_MASK = 0x7800;
const RCODE_NXDOMAIN = 3;

export interface DnsQuestion {
	id: number;
	/** The name asked, lower case, without the final dot ("" for the root). */
	name: string;
	type: number;
	klass: number;
	/** Recursion desired: echoed. */
	recursion: boolean;
	/** Where the question ends in the packet. */
	end: number;
}

/** The question of a standard query; a sentence when the packet is not one to answer. */
export function readQuery(packet: Uint8Array): DnsQuestion | string {
	if (packet.length < 12 || packet.length > WEB_DNS_QUERY_MAX_BYTES) return "not the size of a query";
	const word = (at: number) => (packet[at] << 8) | packet[at + 1];
	const flags = word(2);
	if (flags & FLAG_RESPONSE) return "a response, not a query";
	if (flags & OPCODE_MASK) return "not a standard query";
	if (word(4) !== 1 || word(6) !== 0 || word(8) !== 0) return "not one question alone";
	let at = 12;
	const labels: string[] = [];
	for (;;) {
		if (at >= packet.length) return "the name runs past the packet";
		const length = packet[at];
		if (length === 0) break;
		if (length > 63) return "a compressed or bad label";
		if (at + 1 + length > packet.length || at + 1 + length - 12 >= WEB_DNS_NAME_MAX_BYTES) return "the name is too long";
		let label = "";
		for (let i = at + 1; i <= at + length; i++) {
			const c = packet[i];
			label += String.fromCharCode(c >= 65 && c <= 90 ? c + 32 : c);
		}
		labels.push(label);
		at += 1 + length;
	}
	at++;
	if (at + 4 > packet.length) return "the question has no type and class";
	return { id: word(0), name: labels.join("."), type: word(at), klass: word(at + 2), recursion: (flags & FLAG_RECURSION) !== 0, end: at + 4 };
}

/** An IPv4 address's four bytes; undefined when it is not one. */
export function ipv4Bytes(address: string): number[] | undefined {
	const parts = address.split(".");
	if (parts.length !== 4 || !parts.every((p) => /^[0-9]{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
	return parts.map(Number);
}

/**
 * The answer to a query packet: address for every A question whose name
 * answers accepts (every name when it is not given), no data for other
 * types, NXDOMAIN for a name not accepted. Undefined: drop the packet.
 */
export function answerQuery(packet: Uint8Array, address: number[], answers?: (name: string) => boolean): Uint8Array | undefined {
	const question = readQuery(packet);
	if (typeof question === "string") return undefined;
	const known = !answers || answers(question.name);
	const record = known && question.klass === CLASS_IN && (question.type === TYPE_A || question.type === TYPE_ANY);
	const out = new Uint8Array(question.end + (record ? 16 : 0));
	out.set(packet.subarray(0, question.end));
	const flags = FLAG_RESPONSE | FLAG_AUTHORITATIVE | (question.recursion ? FLAG_RECURSION : 0) | (known ? 0 : RCODE_NXDOMAIN);
	out[2] = flags >> 8;
	out[3] = flags & 0xff;
	out[6] = 0;
	out[7] = record ? 1 : 0;
	out[8] = out[9] = out[10] = out[11] = 0;   // no authority, no additional records (an EDNS record is not echoed)
	if (record) {
		// The name as a pointer to the question's (offset 12), type A, class IN, the TTL, 4 bytes of address.
		out.set([0xc0, 12, 0, TYPE_A, 0, CLASS_IN, (WEB_DNS_TTL_S >>> 24) & 0xff, (WEB_DNS_TTL_S >>> 16) & 0xff, (WEB_DNS_TTL_S >>> 8) & 0xff, WEB_DNS_TTL_S & 0xff, 0, 4, ...address], question.end);
	}
	return out;
}

/** A datagram read from the socket: its bytes, and who sent it. */
export type Datagram = ArrayBuffer & { address: string; port: number };

/** embedded:io/socket/udp's shape as the answerer uses it (lin's adds port: the one bound). */
export interface UdpSocket {
	read(): Datagram | undefined;
	write(buffer: ArrayBuffer, address: string, port: number): void;
	close(): void;
	readonly port?: number;
}
export type UdpConstructor = new (options: { port: number; address?: string; onReadable(this: UdpSocket, packets: number): void }) => UdpSocket;

export interface DnsAnswererOptions {
	UDP: UdpConstructor;
	port: number;
	/** The address to listen on (the board: every interface; lin: 127.0.0.1). */
	listen?: string;
	/** The address every answer gives. */
	address: string;
	/** The names answered (every one when not given). */
	answers?: (name: string) => boolean;
}

/** Answers DNS queries on a UDP port until closed (throws a sentence when the port cannot be bound). */
export class DnsAnswerer {
	readonly port: number;
	answered = 0;
	dropped = 0;
	#socket: UdpSocket;

	constructor(options: DnsAnswererOptions) {
		const address = ipv4Bytes(options.address);
		if (!address) throw new Error(`${options.address} is not an IPv4 address to answer with`);
		const self = this;
		this.#socket = new options.UDP({
			port: options.port,
			...(options.listen ? { address: options.listen } : {}),
			onReadable(packets: number) {
				for (let i = 0; i < packets; i++) {
					const datagram = this.read();
					if (!datagram) break;
					const answer = answerQuery(new Uint8Array(datagram), address, options.answers);
					if (!answer) {
						self.dropped++;
						continue;
					}
					try {
						this.write(answer.buffer as ArrayBuffer, datagram.address, datagram.port);
						self.answered++;
					} catch {
						self.dropped++; // the sender is gone: nothing to do
					}
				}
			},
		});
		this.port = this.#socket.port ?? options.port;
	}

	close(): void {
		this.#socket.close();
	}
}
