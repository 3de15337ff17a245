// Firmware-wide figures (SPEC §11):
//   app.bytecode_bytes   XS bytecode of the app's modules, as the host compiles them
//                        (tools/size.mjs); one value, it does not vary
//   boot.to_prompt_ms    process start -> the console ready on stdout (its banner line;
//                        on a pipe the console shows no prompt), fresh data
//                        directory, release host; includes the lin host's parsing
//                        of every module from source (the device runs preloaded
//                        bytecode from flash instead)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APP_MAP, hostBinary } from "../build.mjs";
import { bytecodeSizes } from "../size.mjs";

export const title = "firmware: bytecode size, boot to prompt";

const BOOT_RUNS = 20;
const BOOT_TIMEOUT_MS = 10_000;

function bootToPrompt(variant) {
	const data = mkdtempSync(join(tmpdir(), "xsclaw-boot-"));
	return new Promise((resolve, reject) => {
		const start = process.hrtime.bigint();
		const child = spawn(hostBinary(variant), ["--modules", APP_MAP, "--data", data], { stdio: ["pipe", "pipe", "ignore"] });
		let out = "";
		const READY = "type help for the commands\n";
		const timer = setTimeout(() => child.kill("SIGKILL"), BOOT_TIMEOUT_MS);
		child.stdout.on("data", (d) => {
			out += d;
			if (out.includes(READY)) {
				resolve(Number(process.hrtime.bigint() - start) / 1e6);
				child.stdin.end();
			}
		});
		child.on("error", reject);
		child.on("close", () => {
			clearTimeout(timer);
			rmSync(data, { recursive: true, force: true });
			if (!out.includes(READY)) reject(new Error(`the firmware's console never became ready: ${out.slice(-300)}`));
		});
	});
}

export async function run({ variant }) {
	const boots = [];
	for (let i = 0; i < BOOT_RUNS; i++) boots.push(await bootToPrompt(variant));
	return [
		{ name: "app.bytecode_bytes", unit: "bytes", values: [bytecodeSizes().total], p99: false },
		{ name: "boot.to_prompt_ms", unit: "ms", values: boots },
	];
}
