// The HTTP client end to end: test/peer/http.ts runs inside the lin host on the
// real TCP/TLS sockets and PSRAM buffers, against the mock LLM over TLS (test CA)
// on 127.0.0.1. A plain-HTTP control server lets the peer script the mock, read
// what the server saw (TLS handshakes, whether a response was cut short), and
// fetch chunked bodies of any size.
import { test } from "node:test";
import { freePort, withMockOverTLS } from "../../tools/peers.mjs";
import { TLS_VARIANTS, runXsTests } from "./xs.mjs";

for (const variant of TLS_VARIANTS) {
	test(`HTTP client against the mock LLM over TLS [${variant}]`, async (t) => {
		await withMockOverTLS("xsclaw-http-", async ({ ca, mock, control }) => {
			await runXsTests(t, "test/peer/http", {
				variant,
				options: {
					"mock-url": `https://localhost:${mock.port}`,
					"control-url": control.url,
					"ca-der-hex": ca.ca.der.toString("hex"),
					"refused-port": await freePort(),
				},
			});
		});
	});
}
