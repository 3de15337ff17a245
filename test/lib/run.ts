// test/run: main for unit tests on the lin host. Imports the module named by
// --test, runs its tests one by one and prints one line per test:
//   ok <name>  /  not ok <name> # <message> (<the file's seed, when it drew one>)
// then "# pass N fail M". Exits 0 when all pass, 1 otherwise.
import Timer from "timer";
import { exit, option } from "host/platform";
import { failureNote, tests, type TestCase } from "testing";

function withTimeout(t: TestCase): Promise<void> {
	return new Promise((resolve, reject) => {
		const timer = Timer.set(() => reject(new Error(`timed out after ${t.timeoutMs} ms`)), t.timeoutMs);
		Promise.resolve()
			.then(t.fn)
			.then(
				() => { Timer.clear(timer); resolve(); },
				(error) => { Timer.clear(timer); reject(error); },
			);
	});
}

function oneLine(error: unknown): string {
	const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
	return text.replace(/\s+/g, " ");
}

const specifier = option("test");
if (!specifier) {
	trace("test/run: --test <specifier> is required\n");
	exit(64);
} else {
	await import(specifier);
	const only = option("only");
	let pass = 0, fail = 0;
	for (const t of tests) {
		if (only && t.name !== only) continue;
		try {
			await withTimeout(t);
			pass++;
			trace(`ok ${t.name}\n`);
		} catch (error) {
			fail++;
			const note = failureNote();
			trace(`not ok ${t.name} # ${oneLine(error)}${note ? ` (${note})` : ""}\n`);
		}
	}
	trace(`# pass ${pass} fail ${fail}\n`);
	exit(fail || !(pass + fail) ? 1 : 0);
}
