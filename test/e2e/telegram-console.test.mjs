// The console on a real terminal (a pty) while a channel prints on it: a line the
// Telegram channel prints (here "connected", delayed by the mock Bot API running
// as its own process, held until the test has typed half a command and seen it
// echoed) while a person is half-way through typing a command goes on
// a line of its own, and the half-typed command is drawn again after it and runs
// intact.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { APP_MAP, ROOT } from "../../tools/build.mjs";
import { runOnPty, see, touch, type } from "./pty.mjs";

const TOKEN = "7000001:AAHsecretTelegramBotTokenForTests0123";

/** What a terminal shows for output: each \r goes back to the line's start, ESC[K clears to its end. */
function screenLines(output) {
	const lines = [];
	for (const raw of output.replace(/\r\n/g, "\n").split("\n")) {
		let line = "";
		let column = 0;
		for (let i = 0; i < raw.length; i++) {
			if (raw[i] === "\r") column = 0;
			else if (raw.startsWith("\x1b[K", i)) {
				line = line.slice(0, column);
				i += 2;
			} else {
				line = line.slice(0, column) + raw[i] + line.slice(column + 1);
				column++;
			}
		}
		lines.push(line);
	}
	return lines;
}

test("a channel's line printed while a command is half typed leaves the typed text intact on its own line", async () => {
	const dir = mkdtempSync(join(tmpdir(), "xsclaw-tgpty-"));
	const release = join(dir, "release-getMe");
	const mock = spawn(process.execPath, [join(ROOT, "tools", "mock-telegram", "cli.mjs"), "--token", TOKEN, "--hold", `getMe=${release}`], { stdio: ["ignore", "pipe", "inherit"] });
	try {
		const [first] = await once(mock.stdout, "data");
		const { url } = JSON.parse(String(first).split("\n")[0]);
		const run = runOnPty(["--modules", APP_MAP, "--data", join(dir, "data")], [
			see("xsclaw> "),
			type(`config set telegram.base_url ${url}\r`), see("ok: telegram.base_url"),
			type(`config set telegram.token ${TOKEN}\r`), see("ok: telegram.token"),
			type("sta"), see("sta"), touch(release),
			see("telegram: connected as @xsclaw_test_bot"),
			type("tus\r"), see("uptime"),
			type("\x04"),
		]);
		assert.equal(run.failure, null, run.output + run.stderr);
		const lines = screenLines(run.output);
		assert.ok(lines.includes("telegram: connected as @xsclaw_test_bot"), `the notice has a line of its own:\n${lines.join("\n")}`);
		const notice = lines.indexOf("telegram: connected as @xsclaw_test_bot");
		assert.ok(lines.slice(notice + 1).includes("xsclaw> status"), `the half-typed command is drawn again and completed intact:\n${lines.join("\n")}`);
		assert.ok(lines.some((l) => /uptime/.test(l)), "status ran");
	} finally {
		mock.kill("SIGTERM");
		rmSync(dir, { recursive: true, force: true });
	}
});
