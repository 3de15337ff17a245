// The board's root certificates (hosts/esp32/certs, tools/certs.mjs): each file
// listed is there, parses, is a CA, matches Debian's copy byte for byte, and
// is valid for at least 90 days more; the esp32 manifest carries them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../tools/build.mjs";
import { CERTS, DEBIAN, ROOTS, derOf } from "../../tools/certs.mjs";

const DAY_MS = 86_400_000;

test("every listed root is committed as DER, is a CA valid 90 days more, and equals Debian's copy", () => {
	assert.deepEqual(readdirSync(CERTS).filter((f) => f.endsWith(".der")).sort(), ROOTS.map((r) => `${r.name}.der`).sort());
	for (const root of ROOTS) {
		const der = readFileSync(join(CERTS, `${root.name}.der`));
		const certificate = new X509Certificate(der);
		assert.ok(certificate.ca, `${root.name} is a CA`);
		assert.ok(new Date(certificate.validTo).getTime() > Date.now() + 90 * DAY_MS, `${root.name} expires ${certificate.validTo}: replace it (node tools/certs.mjs)`);
		assert.ok(certificate.checkIssued(certificate), `${root.name} is self-signed (a root)`);
		assert.deepEqual(der, derOf(readFileSync(join(DEBIAN, root.debian), "utf8")), `${root.name} matches ${root.debian}`);
	}
	const readme = readFileSync(join(CERTS, "..", "CERTS.md"), "utf8");
	for (const root of ROOTS) assert.ok(readme.includes(`\`${root.name}.der\``), `CERTS.md lists ${root.name}`);
});

test("the esp32 manifest carries the certificates as resources", () => {
	const manifest = JSON.parse(readFileSync(join(ROOT, "manifest.json"), "utf8"));
	assert.deepEqual(manifest.platforms["esp32/*"].resources, { "*": "./hosts/esp32/certs/*" });
});
