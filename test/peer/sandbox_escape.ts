// Peer for test/e2e/sandbox.test.mjs: runs one hostile script (--case NAME)
// through caps/script's runScript in a locked-down machine, prints what came
// back, then proves the machine still runs: a timer fires, a collection runs,
// and a second script answers. A script that escaped its bounds (work after
// its call returns, a built-in looping natively) hangs here instead, and the
// test's time limit ends it.
import Timer from "timer";
import { collectGarbage, exit, option } from "host/platform";
import { GpioBank } from "caps/gpio";
import { runScript } from "caps/script";
import { parseTimeZone } from "util/tz";
import { messageOf } from "util/errors";

lockdown();

// The source check refuses the words async, await and import: eval of a string
// built at run time passes it (issue 25).
const ASYNC = `"as" + "ync"`, AWAIT = `"aw" + "ait"`;
const CASES: Record<string, string> = {
	// A promise job the script queues: an endless loop after the call returned.
	"job-loop": `eval("(" + ${ASYNC} + " () => { " + ${AWAIT} + " 0; for (;;) {} })()")`,
	// A promise job that allocates without end.
	"job-alloc": `eval("(" + ${ASYNC} + " () => { " + ${AWAIT} + " 0; const a = []; for (;;) a.push({ n: a.length }) })()")`,
	// A chain of jobs, each queueing the next: no loop in any one of them.
	"job-chain": `eval("(" + ${ASYNC} + " () => { for (;;) " + ${AWAIT} + " 0 })()")`,
	// A rejection nobody handles: on lin an unhandled rejection ends the machine.
	"job-reject": `eval("(" + ${ASYNC} + " () => { throw new Error('unhandled') })()")`,
	// A built-in's own loop over an array-like of 2^53-1 elements.
	"indexOf": "Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)",
	"lastIndexOf": "Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1)",
	"includes": "Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)",
	"join": "Array.prototype.join.call({ length: 2 ** 32 - 1 })",
	"fill": "Array.prototype.fill.call({ length: 2 ** 53 - 1 }, 1)",
	"reverse": "Array.prototype.reverse.call({ length: 2 ** 53 - 1 })",
	"copyWithin": "Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 1, 0)",
	// New property names without end: lin's XS never frees one, and a full key table ends the machine.
	"keys": "const o = {}; for (let i = 0; ; i++) o['k' + i] = i",
	// Recursion: stopped by the script's stack bound, before the machine's stack ends.
	"recursion": "function f(n) { return f(n + 1) + 1 } f(0)",
	// A job that ends normally: it runs inside the call, before the result is read.
	"job-ok": `const o = { done: 0 }; eval("(" + ${ASYNC} + " () => { " + ${AWAIT} + " 0; o.done = 1 })()"); o`,
};

const name = option("case") ?? "";
const code = CASES[name];
if (code === undefined) {
	trace(`sandbox-escape: unknown case "${name}"; cases: ${Object.keys(CASES).join(", ")}\n`);
	exit(64);
}
const deps = { settings: { get: () => undefined }, gpio: new GpioBank({ get: () => undefined }), wallClockMs: () => Date.now(), zone: () => parseTimeZone("UTC") };
let result: string;
try {
	result = `result ${runScript(code, deps, [])}`;
} catch (error) {
	result = `error ${messageOf(error)}`;
}
trace(`sandbox-escape: ${name}: ${result}\n`);
Timer.set(() => {
	collectGarbage();
	trace(`sandbox-escape: alive; next script: ${runScript("6 * 7", deps, [])}\n`);
	exit(0);
}, 50);
