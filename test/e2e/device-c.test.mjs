// The C half of npm run check:device (tools/device-c.mjs), its logic without
// the SDK or the ESP-IDF kit: what it reads from mcconfig's makefile, the
// sdkconfig agreement, the natives the JS names. CI runs the check itself on
// the tree and on broken copies (npm run check:device -- --broken-copies).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makefileCFiles, makefileDirectories, makefileValue, sdkconfigAgreement, sdkconfigDefines, treeCFiles, undefinedNatives } from "../../tools/device-c.mjs";
import { treeBudgets } from "../../tools/build.mjs";
import { ROOT } from "../../tools/build.mjs";

const MAKEFILE = `C_FLAGS_SUBPLATFORM = -includexsclaw_metering.h
DIRECTORIES =\\
\t-I/x/hosts/esp32\\
\t-I/kit/esp-idf/components/lwip/include/
HEADERS =
$(TMP_DIR)/random_esp32.c.o: /x/hosts/esp32/random_esp32.c
$(TMP_DIR)/sandbox.c.o: /x/hosts/common/sandbox/sandbox.c
$(TMP_DIR)/modTimer.c.o: $(MODDABLE)/modules/base/timer/modTimer.c
`;

test("the makefile's include folders, C files and C_FLAGS_SUBPLATFORM are read as mcconfig wrote them", () => {
	assert.deepEqual(makefileDirectories(MAKEFILE), ["/x/hosts/esp32", "/kit/esp-idf/components/lwip/include/"]);
	assert.deepEqual(makefileCFiles(MAKEFILE), ["/x/hosts/esp32/random_esp32.c", "/x/hosts/common/sandbox/sandbox.c", "$(MODDABLE)/modules/base/timer/modTimer.c"]);
	assert.equal(makefileValue(MAKEFILE, "C_FLAGS_SUBPLATFORM"), "-includexsclaw_metering.h");
	assert.deepEqual(treeCFiles(MAKEFILE, "/x"), ["/x/hosts/common/sandbox/sandbox.c", "/x/hosts/esp32/random_esp32.c"]);
});

const GOOD = `#define CONFIG_LWIP_MAX_SOCKETS 16
#define CONFIG_LWIP_MAX_ACTIVE_TCP 64
#define CONFIG_MBEDTLS_SSL_PROTO_TLS1_3 1
#define CONFIG_MBEDTLS_HAVE_TIME_DATE 1
#define CONFIG_MBEDTLS_EXTERNAL_MEM_ALLOC 1
#define CONFIG_ESP_TASK_WDT_EN 1
#define CONFIG_ESP_TASK_WDT_INIT 1
`;

test("sdkconfig agrees with the budgets and the code, and each disagreement is named", async () => {
	const budgets = await treeBudgets(ROOT);
	assert.ok(budgets.SOCKETS_MAX >= 8 && budgets.SOCKETS_MAX <= 253, `SOCKETS_MAX ${budgets.SOCKETS_MAX}`);
	assert.ok(budgets.SOCKETS_TCP_MAX < budgets.SOCKETS_MAX && budgets.SOCKETS_TCP_MAX <= 64);
	const good = GOOD.replace("16", String(budgets.SOCKETS_MAX));
	assert.deepEqual(sdkconfigAgreement(sdkconfigDefines(good), budgets), []);
	const four = sdkconfigAgreement(sdkconfigDefines(good.replace(/LWIP_MAX_SOCKETS \d+/, "LWIP_MAX_SOCKETS 4")), budgets);
	assert.equal(four.length, 1);
	assert.match(four[0], new RegExp(`CONFIG_LWIP_MAX_SOCKETS is 4, but modules/budgets.ts allows ${budgets.SOCKETS_MAX} sockets`));
	for (const [name, said] of [["MBEDTLS_SSL_PROTO_TLS1_3", /TLS 1\.3 is off/], ["MBEDTLS_HAVE_TIME_DATE", /dates/], ["MBEDTLS_EXTERNAL_MEM_ALLOC", /PSRAM/], ["ESP_TASK_WDT_EN", /watchdog is off/]]) {
		const problems = sdkconfigAgreement(sdkconfigDefines(good.replace(new RegExp(`^#define CONFIG_${name} 1\n`, "m"), "")), budgets);
		assert.equal(problems.length, 1, name);
		assert.match(problems[0], said);
	}
});

test("hosts/esp32/sdkconfig.defaults sets what the agreement wants", async () => {
	const { readFileSync } = await import("node:fs");
	const text = readFileSync(`${ROOT}/hosts/esp32/sdkconfig.defaults`, "utf8");
	const budgets = await treeBudgets(ROOT);
	assert.ok(Number(/^CONFIG_LWIP_MAX_SOCKETS=(\d+)$/m.exec(text)?.[1]) >= budgets.SOCKETS_MAX);
	assert.ok(Number(/^CONFIG_LWIP_MAX_ACTIVE_TCP=(\d+)$/m.exec(text)?.[1]) >= budgets.SOCKETS_TCP_MAX);
	for (const line of ["CONFIG_MBEDTLS_SSL_PROTO_TLS1_3=y", "CONFIG_MBEDTLS_HAVE_TIME_DATE=y", "CONFIG_MBEDTLS_EXTERNAL_MEM_ALLOC=y", "CONFIG_ESP_TASK_WDT_EN=y", "CONFIG_ESP_TASK_WDT_INIT=y"])
		assert.match(text, new RegExp(`^${line}$`, "m"));
});

test("a native the JS names without a C function is found", () => {
	const files = new Map([
		["/a.c", "void xs_one(xsMachine *the)\n{\n}\nvoid xs_gone_destructor(void *data)\n{\n}\n"],
	]);
	const js = [["mod/a", 'const f = native("xs_one"); class A extends Native("xs_gone_destructor") {}'], ["mod/b", 'native("xs_two")()']];
	assert.deepEqual(undefinedNatives(js, ["/a.c"], (path) => files.get(path)), ["mod/b names the native xs_two, which no C file of the image defines"]);
});

test("the flashing guide's first build is a release build, since in a debug build xsbug holds UART0, the console's port", async () => {
	const { readFileSync } = await import("node:fs");
	const guide = readFileSync(`${ROOT}/docs/device.md`, "utf8");
	const first = /^\s*(mcconfig .*-m .*)$/m.exec(guide)?.[1];
	assert.ok(first, "the guide has an mcconfig ... -m command");
	assert.doesNotMatch(first, /(^|\s)-d(\s|$)/, `the first build is a debug build: ${first}`);
	assert.match(guide, /xsbug owns UART0/);
	for (const needed of ["UPLOAD_PORT", "erase_flash", "N16R8", "CONFIG_SPIRAM_MODE_QUAD", "idf.py", "monitor", "What it cannot see"]) assert.ok(guide.includes(needed), needed);
	const port = readFileSync(`${ROOT}/modules/main/console/port.ts`, "utf8");
	assert.match(port, /const UART0 = \{ port: 0,/, "the console is on UART0 (if it moves off it, a debug build may come first)");
});

test("on the board log lines reach the console (trace() reaches no one in a release build): main writes its own and the agent machine's, which cross the port", async () => {
	const { readFileSync } = await import("node:fs");
	const main = readFileSync(`${ROOT}/main.ts`, "utf8");
	const worker = readFileSync(`${ROOT}/modules/agent/worker.ts`, "utf8");
	const client = readFileSync(`${ROOT}/modules/main/agent/client.ts`, "utf8");
	assert.match(main, /if \(consoleKind === "uart"\) setLogSink\(\(line\) => output\.line\(line\)\);/);
	assert.match(worker, /if \(consoleKind === "uart"\) setLogSink\(\(line\) => self\.postMessage\(\{ type: "log", line:/);
	assert.match(client, /case "log":\s*logRelayed\(reply\.line\);/);
	const platform = readFileSync(`${ROOT}/hosts/esp32/platform.ts`, "utf8");
	assert.match(platform, /export const consoleKind: ConsoleKind = "uart";/);
});

test("on the board the heap figures come from the machine (a native), not from instrumentation, which a release build lacks", async () => {
	const { readFileSync } = await import("node:fs");
	const platform = readFileSync(`${ROOT}/hosts/esp32/platform.ts`, "utf8");
	assert.match(platform, /native\("xs_platform_heap"\)/);
	assert.doesNotMatch(platform, /XS Chunk Heap Used|XS Slot Heap Used/);
	const c = readFileSync(`${ROOT}/hosts/esp32/platform.c`, "utf8");
	assert.match(c, /void xs_platform_heap\(xsMachine \*the\)[^]*currentChunksSize[^]*currentHeapCount/);
});
