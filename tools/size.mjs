#!/usr/bin/env node
// Prints the compiled (XS bytecode) size of the app's modules and each
// machine's peak XS heap at the console prompt (main and agent). Run after a
// build: `npm run size`.
//   node tools/size.mjs [--json]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APP_MAP, hostBinary } from "./build.mjs";
import { DEVICE_SLOT_BYTES, deviceImage, imageFigures } from "./check-device.mjs";

// Bytecode per module, as the host's parser compiles it (code + symbols + hosts).
export function bytecodeSizes() {
	const out = execFileSync(hostBinary(), ["--modules", APP_MAP, "--sizes"], { encoding: "utf8" });
	const rows = out.trim().split("\n").map((line) => line.split("\t"));
	const total = Number(rows.find(([name]) => name === "total")[1]);
	const modules = rows.filter(([name]) => name !== "total").map(([name, size]) => ({ name, bytes: Number(size) }));
	return { modules, total };
}

// Boots the firmware and types `status` at the prompt: its "heap:" line is the
// main machine's XS heap, its "agent heap:" line the agent machine's (asked over
// the agent port), each with the peak since the machine started. Then input ends
// and the firmware exits.
const HEAP_LINE = /^(agent heap|heap): chunks [\d.]+ KiB of [\d.]+ KiB \(peak ([\d.]+) KiB\), slots [\d.]+ KiB of [\d.]+ KiB \(peak ([\d.]+) KiB\)$/gm;

export function heapAtPrompt() {
	const data = mkdtempSync(join(tmpdir(), "xsclaw-size-"));
	try {
		const r = spawnSync(hostBinary(), ["--modules", APP_MAP, "--data", data], { input: "status\n", encoding: "utf8", timeout: 30_000 });
		const figures = {};
		for (const m of r.stdout.replaceAll("xsclaw> ", "").matchAll(HEAP_LINE)) {
			figures[m[1] === "heap" ? "main" : "agent"] = { chunkPeak: Math.round(Number(m[2]) * 1024), slotPeak: Math.round(Number(m[3]) * 1024) };
		}
		if (!figures.main || !figures.agent) throw new Error(`no heap lines for both machines in status (exit ${r.status}): ${r.stdout.slice(-600)}${r.stderr.slice(-400)}`);
		return figures;
	} finally {
		rmSync(data, { recursive: true, force: true });
	}
}

// The device's image as npm run check:device last linked it: the bytecode of
// every module and the instances xsl preloaded (they live in flash on the board).
export function deviceSize() {
	const image = deviceImage();
	if (!image) return undefined;
	const figures = imageFigures(readFileSync(image, "utf8"));
	return { ...figures, preloadedBytes: figures.slots * DEVICE_SLOT_BYTES + figures.preloadedCode };
}

if (process.argv[1] && process.argv[1].endsWith("size.mjs")) {
	const sizes = bytecodeSizes();
	const heap = heapAtPrompt();
	if (process.argv.includes("--json")) {
		console.log(JSON.stringify({ bytecode: sizes, heap, device: deviceSize() ?? null }));
	} else {
		for (const { name, bytes } of sizes.modules.sort((a, b) => b.bytes - a.bytes)) console.log(`${String(bytes).padStart(8)}  ${name}`);
		console.log(`${String(sizes.total).padStart(8)}  total bytecode (${sizes.modules.length} modules)`);
		for (const [machine, h] of Object.entries(heap)) {
			console.log(`peak XS heap at the prompt, ${machine} machine: chunks ${h.chunkPeak} bytes, slots ${h.slotPeak} bytes (${h.chunkPeak + h.slotPeak} in all)`);
		}
		const device = deviceSize();
		console.log(device
			? `device (esp32/esp32s3, the npm run check:device image): preloaded ${device.preloadedBytes} bytes (${device.slots} instances, ${device.slots * DEVICE_SLOT_BYTES} bytes, and ${device.preloadedCode} bytes of code), plus ${device.moduleCode} bytes of bytecode of the modules not preloaded, in flash; ${device.keys} keys`
			: "device: no image yet: run npm run check:device, then npm run size again");
	}
}
