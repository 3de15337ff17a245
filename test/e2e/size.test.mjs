// npm run size (tools/size.mjs) reports the web console's pages in the image
// (issue 30): their text, byte for byte the strings channels/web/assets serves,
// within WEB_ASSETS_MAX_BYTES, the bytecode of the module holding them, and
// its bytes in the device image that npm run check:device built.
import { test } from "node:test";
import assert from "node:assert/strict";
import { WEB_ASSETS_MODULE, bytecodeSizes, deviceModuleBytes, webPagesLine, webPagesSize } from "../../tools/size.mjs";

test("the web console's pages: their bytes, the budget, and their module's bytecode, which holds them", async () => {
	const sizes = bytecodeSizes();
	const web = await webPagesSize(sizes);
	assert.equal(web.budget, 16 * 1024);
	assert.ok(web.text.html > 200 && web.text.css > 500 && web.text.js > 3000, JSON.stringify(web.text));
	assert.equal(web.text.total, web.text.html + web.text.css + web.text.js);
	assert.ok(web.text.total <= web.budget, `${web.text.total} bytes of ${web.budget}`);
	assert.equal(web.bytecode, sizes.modules.find((m) => m.name === WEB_ASSETS_MODULE).bytes);
	assert.ok(web.bytecode >= web.text.total, "the strings are in the module's bytecode");
	assert.match(webPagesLine(web), new RegExp(`^web console pages: ${web.text.total} bytes of text \\(page ${web.text.html}, style ${web.text.css}, script ${web.text.js}\\) of WEB_ASSETS_MAX_BYTES ${web.budget}; ${web.bytecode} bytes of bytecode in channels/web/assets`));
	// The device image's script table (mc.xs.c, as xsl writes it after npm run check:device): the module's bytes in flash.
	const table = `\t{ NULL, NULL, 0, (txS1*)gxCode171, 4100, NULL, 0, "channels/web/auth", { 1 } },\n\t{ NULL, NULL, 0, (txS1*)gxCode172, 9069, NULL, 0, "channels/web/assets", { 1 } },`;
	assert.equal(deviceModuleBytes(table, WEB_ASSETS_MODULE), 9069);
	assert.equal(deviceModuleBytes(table, "channels/web/console"), undefined);
	assert.match(webPagesLine({ ...web, device: 9069 }), /; 9069 bytes of it in the device image's flash \(esp32\/esp32s3\)$/);
	assert.match(webPagesLine({ ...web, device: null }), /in the device image: run npm run check:device$/);
});
