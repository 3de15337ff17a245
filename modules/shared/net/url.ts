// net/url: the small part of URL parsing the HTTP client needs (XS 13.3 has no
// URL class): scheme, host, port and request target of an http(s) URL.
// User info ("user:pass@") is refused rather than sent in the clear; the
// fragment is dropped. Invalid URLs throw HttpError kind "protocol".
import { HttpError } from "net/types";

export interface ParsedUrl {
	secure: boolean;
	/** Lower-case host name or IP literal, without IPv6 brackets. */
	host: string;
	port: number;
	/** Pool key: scheme, host and port. */
	origin: string;
	/** Value of the Host header. */
	hostHeader: string;
	/** Request target: path and query, at least "/". */
	target: string;
}

const URL_SHAPE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function invalid(url: string, why: string): HttpError {
	return new HttpError("protocol", `invalid URL ${JSON.stringify(url.slice(0, 80))}: ${why}`);
}

export function parseUrl(url: string): ParsedUrl {
	const match = URL_SHAPE.exec(url);
	if (!match) throw invalid(url, "expected http://host/path or https://host/path");
	const scheme = match[1].toLowerCase();
	if (scheme !== "http" && scheme !== "https") throw invalid(url, `unsupported scheme ${scheme}`);
	const secure = scheme === "https";
	const authority = match[2];
	if (authority.includes("@")) throw invalid(url, "user info in URLs is not supported; send credentials in a header");
	let host: string, portText: string | undefined;
	let bracketed = false;
	if (authority.startsWith("[")) {
		const close = authority.indexOf("]");
		if (close < 0) throw invalid(url, "unclosed IPv6 bracket");
		host = authority.slice(1, close);
		bracketed = true;
		const rest = authority.slice(close + 1);
		if (rest && !rest.startsWith(":")) throw invalid(url, "junk after the IPv6 address");
		portText = rest ? rest.slice(1) : undefined;
		if (!/^[0-9A-Fa-f:.]+$/.test(host)) throw invalid(url, "bad IPv6 address");
	} else {
		const colon = authority.lastIndexOf(":");
		host = colon >= 0 ? authority.slice(0, colon) : authority;
		portText = colon >= 0 ? authority.slice(colon + 1) : undefined;
		if (!/^[A-Za-z0-9._~-]+$/.test(host)) throw invalid(url, "bad host name");
	}
	host = host.toLowerCase();
	const defaultPort = secure ? 443 : 80;
	let port = defaultPort;
	if (portText !== undefined && portText !== "") {
		if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) throw invalid(url, "bad port");
		port = Number(portText);
	}
	let target = match[3] || "/";
	if (target[0] === "?") target = "/" + target;
	if (/[\x00-\x20\x7F]/.test(target)) throw invalid(url, "spaces or control characters in the path");
	const shownHost = bracketed ? `[${host}]` : host;
	return {
		secure, host, port,
		origin: `${scheme}://${shownHost}:${port}`,
		hostHeader: port === defaultPort ? shownHost : `${shownHost}:${port}`,
		target,
	};
}

/** The address to connect to without DNS: IP literals as they are, "localhost" as 127.0.0.1. */
export function literalAddress(host: string): string | undefined {
	if (host === "localhost") return "127.0.0.1";
	const v4 = IPV4.exec(host);
	if (v4) return v4.slice(1).every((part) => Number(part) <= 255) ? host : undefined;
	if (host.includes(":")) return host;
	return undefined;
}

/** True for this machine's own addresses (localhost, 127.x, ::1): traffic that never crosses a network. */
export function isLoopback(host: string): boolean {
	return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
