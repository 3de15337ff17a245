// The firmware as a person meets it: npm start, the console on stdin/stdout,
// settings kept in the data directory across restarts and reboots.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { APP_MAP, ROOT } from "../../tools/build.mjs";
import { CHARACTER_MODE, mode, runOnPty, see, type } from "./pty.mjs";
import { SANITIZER_ERROR, VARIANTS, assertClean, runHost, withTempDir } from "./xs.mjs";

const PROMPT = "xsclaw> ";
const manifest = JSON.parse(readFileSync(join(ROOT, "manifest.json"), "utf8"));

const withDataDir = withTempDir("xsclaw-firmware-");

function firmware(data, input, variant = "release") {
	return runHost(["--modules", APP_MAP, "--data", data], { variant, input });
}

for (const variant of VARIANTS) {
	test(`help, config set and status run, and end of input exits 0 [${variant}]`, withDataDir(async (data) => {
		const result = await firmware(data, "help\nconfig set llm.model x\nstatus\n", variant);
		assertClean(result);
		const { stdout } = result;
		assert.match(stdout, new RegExp(`^xsclaw ${manifest.config.version.replace(/\./g, "\\.")} .*\n  help `), "banner, then the answers (no prompt on a pipe)");
		assert.ok(!stdout.includes(PROMPT), "no prompt on a pipe");
		assert.ok(stdout.endsWith("\n"), "the last line ends with a newline");
		for (const line of ["help", "status", "reboot", "config get KEY", "config set KEY VALUE", "config unset KEY", "config show", "config describe [KEY]"])
			assert.ok(stdout.includes(`  ${line} `), `help lists ${line}`);
		assert.ok(stdout.includes("ok: llm.model = x\n"));
		assert.match(stdout, /uptime: 0d 00:00:\d\d\n/);
		assert.match(stdout, /heap: chunks [\d.]+ KiB of [\d.]+ KiB \(peak [\d.]+ KiB\), slots /);
	}));
}

test("storage that fails at boot leaves the firmware answering, with a warning, and the files untouched", withDataDir(async (data) => {
	// A file where the sessions directory belongs: opening the session store throws.
	mkdirSync(join(data, "files"), { recursive: true });
	writeFileSync(join(data, "files", "sessions"), "not a directory");
	const result = await firmware(data, "status\nask hello\n");
	assertClean(result);
	assert.match(result.stdout, /warning: sessions cannot be opened, so conversations are not saved this time \(.+\); check the storage, then reboot\n/);
	assert.match(result.stdout, /agent: IDLE/, "status runs");
	assert.match(result.stdout, /the LLM is not configured: use `config set llm\.api_key/, "ask is answered");
	assert.equal(readFileSync(join(data, "files", "sessions"), "utf8"), "not a directory", "the damaged entry is left for whoever repairs it");
}));

// On a terminal, keys arrive one by one: the console echoes and edits them. The
// kernel turns each "\n" the console writes into "\r\n"; `shown` drops the "\r"s.
const UP = "\x1b[A", BACKSPACE = "\x7f", CTRL_H = "\x08", CTRL_U = "\x15", CTRL_D = "\x04";
const shown = (run) => run.output.replace(/\r/g, "");

for (const variant of VARIANTS) {
	test(`on a terminal the console echoes, edits and recalls lines; Ctrl-D exits 0 and puts the terminal back [${variant}]`, withDataDir(async (data) => {
		const run = runOnPty(["--modules", APP_MAP, "--data", data], [
			see(PROMPT), mode("running"),
			type("config set llm.model one\r"), see("ok: llm.model = one"), see(PROMPT),
			type("status\r"), see("uptime:"), see(PROMPT),
			type(`${UP}${UP}\r`), see("ok: llm.model = one"), see(PROMPT),
			type(`config get llm.modex${BACKSPACE}l\r`), see("llm.model = one (set)"), see(PROMPT),
			type(`statux${CTRL_H}s\r`), see("uptime:"), see(PROMPT),
			type(`junk${CTRL_U}config show\r`), see("llm.model = one"), see(PROMPT),
			type(`not the end${CTRL_D}${CTRL_U}${CTRL_D}`),
		], { variant });
		assert.equal(run.failure, null, run.output + run.stderr);
		assert.equal(run.code, 0, run.stderr);
		assert.doesNotMatch(run.stderr, SANITIZER_ERROR);
		assert.deepEqual(run.modes.running, CHARACTER_MODE);
		assert.ok(run.restored, `the mode after exit is the mode before: ${JSON.stringify(run.modes.after)}`);
		const output = shown(run);
		assert.ok(output.includes(`\x1b[K${PROMPT}status\x1b[K${PROMPT}config set llm.model one\n`), "two up-arrows redraw the line twice");
		assert.equal(output.split("ok: llm.model = one\n").length - 1, 2, "the recalled command ran again");
		assert.ok(output.includes(`${PROMPT}config get llm.modex\b \bl\nllm.model = one (set)\n${PROMPT}`), "DEL erased a character");
		assert.ok(output.includes(`${PROMPT}statux\b \bs\nfirmware: xsclaw`), "BS erased a character");
		assert.ok(output.includes(`${PROMPT}junk\x1b[K${PROMPT}config show\n`), "Ctrl-U cleared the line");
		assert.doesNotMatch(output, /\^\[|\^D/, "the terminal itself echoed nothing");
		assert.ok(output.endsWith(`not the end\x1b[K${PROMPT}\n`), "Ctrl-D ended input on the empty line only, then a fresh line");
	}));
}

test("on a terminal, after reboot the console is still in character mode and echoes", withDataDir(async (data) => {
	const run = runOnPty(["--modules", APP_MAP, "--data", data], [
		see(PROMPT), type("config set llm.model kept\r"), see(PROMPT),
		type("reboot\r"), see("rebooting…"), see(PROMPT), mode("rebooted"),
		type("config get llm.model\r"), see("kept"), see(PROMPT),
		type(CTRL_D),
	]);
	assert.equal(run.failure, null, run.output + run.stderr);
	assert.equal(run.code, 0, run.stderr);
	assert.deepEqual(run.modes.rebooted, CHARACTER_MODE);
	assert.ok(run.restored);
	const [, afterBoot] = shown(run).split("rebooting…\n");
	assert.match(afterBoot, new RegExp(`^xsclaw .*\n${PROMPT}config get llm.model\nllm.model = kept \\(set\\)\n${PROMPT}\n$`), afterBoot);
}));

test("status shows the version in manifest.json's config", withDataDir(async (data) => {
	const result = await firmware(data, "status\n");
	assertClean(result);
	assert.ok(result.stdout.includes(`firmware: ${manifest.config.firmware} ${manifest.config.version} (lin)\n`), result.stdout);
}));

test("a setting is remembered across a restart with the same data directory", withDataDir(async (data) => {
	assertClean(await firmware(data, "config set llm.model x\n"));
	const second = await firmware(data, "config get llm.model\n");
	assertClean(second);
	assert.ok(second.stdout.includes("\nllm.model = x (set)\n"), second.stdout);
}));

test("an API key is never shown in full, in stdout or stderr", withDataDir(async (data) => {
	const first = await firmware(data, "config set llm.api_key sk-secret-1234\nconfig show\nconfig get llm.api_key\n");
	const second = await firmware(data, "config show\nconfig set llm.api_key\n");
	for (const result of [first, second]) {
		assertClean(result);
		assert.ok(!(result.stdout + result.stderr).includes("sk-secret"), result.stdout + result.stderr);
		assert.ok(result.stdout.includes("llm.api_key = ****1234 (set)\n"), result.stdout);
	}
}));

test("an unknown command gets a one-line hint", withDataDir(async (data) => {
	const result = await firmware(data, "frobnicate\n");
	assertClean(result);
	assert.ok(result.stdout.includes("unknown command: frobnicate — type help\n"), result.stdout);
}));

test("after reboot the rest of the input runs in the restarted firmware, data kept", withDataDir(async (data) => {
	const result = await firmware(data, "config set llm.model before-reboot\nreboot\nconfig get llm.model\nstatus\n");
	assertClean(result);
	const [beforeBoot, afterBoot] = result.stdout.split("rebooting…\n");
	assert.ok(afterBoot, `rebooted: ${result.stdout}`);
	assert.ok(beforeBoot.includes("ok: llm.model = before-reboot"));
	assert.match(afterBoot, /^xsclaw .*\nllm\.model = before-reboot \(set\)\n/, "a new banner, then the remembered value");
	assert.ok(afterBoot.includes("firmware: xsclaw"), "status ran after the reboot");
}));

test("unreadable settings are reported, left on disk, and the console still works", withDataDir(async (data) => {
	const file = join(data, "nvs", "config.kv");   // hosts/lin/src/keyvalue.c's namespace file
	mkdirSync(join(data, "nvs"), { recursive: true });
	writeFileSync(file, "not a key-value file");
	const result = await firmware(data, "config set llm.model x\nconfig get llm.model\nstatus\n");
	assertClean(result);
	assert.match(result.stdout, /^xsclaw .*\nwarning: settings cannot be read, so changes are not saved this time: .*corrupt/);
	assert.ok(result.stdout.includes("\nllm.model = x (set)\n"), "settings work in memory");
	assert.equal(readFileSync(file, "utf8"), "not a key-value file", "the damaged file is kept for repair");
}));

test("npm start runs the firmware on this terminal's stdin and stdout", withDataDir(async (data) => {
	const result = await new Promise((resolve, reject) => {
		const child = spawn("npm", ["start", "--silent", "--", "--data", data], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
		let stdout = "", stderr = "";
		child.stdout.on("data", (d) => (stdout += d));
		child.stderr.on("data", (d) => (stderr += d));
		const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
		child.on("error", reject);
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout, stderr });
		});
		child.stdin.end("config set llm.model works\nconfig get llm.model\n");
	});
	assert.equal(result.code, 0, result.stderr);
	assert.ok(result.stdout.includes("\nllm.model = works (set)\n"), result.stdout);
	const again = await firmware(data, "config get llm.model\n");
	assert.ok(again.stdout.includes("\nllm.model = works (set)\n"), "npm start used the --data directory given");
}));
