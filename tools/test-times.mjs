// A node --test reporter that npm test (tools/test.mjs) adds beside the TAP one:
// one line per top-level test, "SECONDS FILE", so the run can end by naming
// its slowest files (the CI budget for the whole suite is well under 15 minutes).
import { relative } from "node:path";

export default async function* times(source) {
	for await (const event of source) {
		if ((event.type === "test:pass" || event.type === "test:fail") && event.data.nesting === 0 && event.data.file)
			yield `${(event.data.details.duration_ms / 1000).toFixed(1)} ${relative(process.cwd(), event.data.file)}\n`;
	}
}
