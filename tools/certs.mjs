#!/usr/bin/env node
// The root CA certificates the board trusts, as DER, from Debian's
// ca-certificates package (/usr/share/ca-certificates/mozilla): writes
// hosts/esp32/certs/<name>.der (resources of the esp32 build, manifest.json)
// and hosts/esp32/CERTS.md listing each with its expiry and SHA-256.
// Public data, committed so a new machine builds without this step; run it
// again to refresh them (test/e2e/certs.test.mjs checks they match Debian's
// copies where the package is installed, and that none expires within 90 days).
//
//   node tools/certs.mjs [--check]
import { X509Certificate, createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const CERTS = join(ROOT, "hosts", "esp32", "certs");
export const DEBIAN = "/usr/share/ca-certificates/mozilla";

// Each root, the file Debian names it by, and who it serves. Which CA a service
// chains to was taken from what those services are known to use; it cannot be
// checked from this machine (no internet): on a networked one,
// `openssl s_client -connect HOST:443 -showcerts` shows the chain's root.
export const ROOTS = [
	{ name: "gts-root-r1", debian: "GTS_Root_R1.crt", serves: "Google Trust Services: api.openai.com, api.anthropic.com, openrouter.ai (Cloudflare)" },
	{ name: "gts-root-r4", debian: "GTS_Root_R4.crt", serves: "Google Trust Services ECDSA: the same Cloudflare-fronted APIs" },
	{ name: "isrg-root-x1", debian: "ISRG_Root_X1.crt", serves: "Let's Encrypt RSA: Cloudflare's other issuer, many custom servers" },
	{ name: "isrg-root-x2", debian: "ISRG_Root_X2.crt", serves: "Let's Encrypt ECDSA" },
	{ name: "digicert-global-root-g2", debian: "DigiCert_Global_Root_G2.crt", serves: "DigiCert: api.deepseek.com, QQ (api.sgroup.qq.com, bots.qq.com)" },
	{ name: "digicert-global-root-ca", debian: "DigiCert_Global_Root_CA.crt", serves: "DigiCert's older root, still in Tencent and other chains" },
	{ name: "globalsign-root-ca", debian: "GlobalSign_Root_CA.crt", serves: "GlobalSign: DeepSeek and QQ alternates" },
	{ name: "go-daddy-root-g2", debian: "Go_Daddy_Root_Certificate_Authority_-_G2.crt", serves: "Go Daddy: api.telegram.org" },
	{ name: "usertrust-rsa", debian: "USERTrust_RSA_Certification_Authority.crt", serves: "Sectigo: common for self-hosted OpenAI-compatible servers" },
];

export function derOf(pem) {
	const body = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem);
	if (!body) throw new Error("no PEM certificate");
	return Buffer.from(body[1].replace(/\s+/g, ""), "base64");
}

export function describe(der) {
	const certificate = new X509Certificate(der);
	return { subject: certificate.subject.replace(/\n/g, ", "), validTo: new Date(certificate.validTo), sha256: createHash("sha256").update(der).digest("hex") };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	if (!existsSync(DEBIAN)) {
		console.error(`certs: ${DEBIAN} is missing: apt-get install ca-certificates`);
		process.exit(1);
	}
	for (const file of readdirSync(CERTS).filter((f) => f.endsWith(".der"))) rmSync(join(CERTS, file));
	const rows = [];
	for (const root of ROOTS) {
		const der = derOf(readFileSync(join(DEBIAN, root.debian), "utf8"));
		writeFileSync(join(CERTS, `${root.name}.der`), der);
		const { subject, validTo, sha256 } = describe(der);
		rows.push(`| \`${root.name}.der\` | ${subject} | ${validTo.toISOString().slice(0, 10)} | ${root.serves} | \`${sha256.slice(0, 16)}…\` |`);
	}
	writeFileSync(join(CERTS, "..", "CERTS.md"), `# Root CA certificates of the board

DER files from Debian's \`ca-certificates\` package (${DEBIAN}), written by
\`node tools/certs.mjs\`; the esp32 build carries them as resources
(manifest.json). They are public data. Which CA each service chains to is what
those services are known to use; it was not checked against the live servers
from the machine these were made on (no internet). Check on a networked machine
with \`openssl s_client -connect HOST:443 -showcerts\`, and add the root here when
a service moves. \`test/e2e/certs.test.mjs\` checks each file against Debian's copy
and that none expires within 90 days.

| file | subject | expires | serves | SHA-256 |
|---|---|---|---|---|
${rows.join("\n")}
`);
	console.log(`certs: ${ROOTS.length} roots written to ${CERTS}`);
}
