// npm run size (tools/size.mjs) reports the web console's pages in the image
// (issue 30): their text, byte for byte the strings channels/web/assets serves,
// within WEB_ASSETS_MAX_BYTES, and the bytecode of the module holding them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { WEB_ASSETS_MODULE, bytecodeSizes, webPagesLine, webPagesSize } from "../../tools/size.mjs";

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
});
