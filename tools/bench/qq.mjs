// QQ channel figures, on loopback: the firmware (release host), the mock QQ
// platform (tools/mock-qq) and the mock LLM answering at once.
//   qq.reply_ms    a paired user's C2C message sent by the mock -> the passive
//                  reply accepted by the mock: gateway frame, parse, pairing,
//                  router, the agent machine's request (LLM mock), the reply
//                  POST with a fresh-enough token
//   qq.resume_ms   the gateway socket dropped -> the session resumed (Resume
//                  accepted): dominated by the first back-off, QQ_BACKOFF_START_MS
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APP_MAP } from "../build.mjs";
import { startMockLLM } from "../mock-llm/index.mjs";
import { startMockQQ } from "../mock-qq/index.mjs";
import { setSettings, startFirmware } from "../../test/e2e/firmware.mjs";

export const title = "QQ channel: message to passive reply, drop to resumed session";

const REPLY_RUNS = 30;
const RESUME_RUNS = 5;

export async function run() {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-bench-qq-"));
	const llm = await startMockLLM({});
	const qq = await startMockQQ({ appId: "1", secret: "bench-secret-0123456789" });
	const fw = startFirmware(["--modules", APP_MAP, "--data", dir], "release");
	try {
		await fw.until(/type help for the commands/);
		await setSettings(fw, [
			"config set llm.provider custom", `config set llm.base_url ${llm.url}/v1`, "config set llm.model gpt-mock", "config set llm.api_key sk-bench",
			"config set llm.calls_per_hour 1000", `config set qq.api_url ${qq.url}`, `config set qq.token_url ${qq.tokenUrl}`,
			"config set qq.app_id 1", "config set qq.app_secret bench-secret-0123456789",
		]);
		await fw.until(/qq: connected as/);
		const from = fw.stdout.length;
		fw.send("qq pair");
		await fw.until(/qq: pairing code ([A-Z0-9]+)/, { from });
		const code = /qq: pairing code ([A-Z0-9]+)/.exec(fw.printed(from))[1];
		const paired = qq.say({ user: "BENCH1", text: `/pair ${code}` });
		await qq.waitFor(() => qq.replies("c2c:BENCH1").some((r) => r.msg_id === paired), 30_000, "the pairing");

		const reply = [];
		llm.script(...Array.from({ length: REPLY_RUNS }, (_, i) => ({ type: "text", text: `answer ${i}` })));
		for (let i = 0; i < REPLY_RUNS; i++) {
			const start = process.hrtime.bigint();
			const id = qq.say({ user: "BENCH1", text: `question ${i}` });
			await qq.waitFor(() => qq.replies("c2c:BENCH1").some((r) => r.msg_id === id), 30_000, "a reply");
			reply.push(Number(process.hrtime.bigint() - start) / 1e6);
		}
		const resume = [];
		for (let i = 0; i < RESUME_RUNS; i++) {
			const before = qq.record.resume.length;
			const start = process.hrtime.bigint();
			qq.drop();
			await qq.waitFor(() => qq.record.resume.length > before && qq.live, 60_000, "the resumed session");
			resume.push(Number(process.hrtime.bigint() - start) / 1e6);
		}
		return [
			{ name: "qq.reply_ms", unit: "ms", values: reply },
			{ name: "qq.resume_ms", unit: "ms", values: resume, p99: false },
		];
	} finally {
		await fw.kill();
		await qq.stop();
		await llm.close();
		rmSync(dir, { recursive: true, force: true });
	}
}
