#!/usr/bin/env node
// Prints the compiled (XS bytecode) size of the app's modules and the host's
// peak XS heap at the console prompt. Run after a build: `npm run size`.
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

// Boots the firmware with no input: it prints its prompt, sees end of input and
// exits; --heap-report makes the host print its peak heap for the run.
export function heapAtPrompt() {
	const data = mkdtempSync(join(tmpdir(), "xsclaw-size-"));
	try {
		const r = spawnSync(hostBinary(), ["--modules", APP_MAP, "--data", data, "--heap-report", "1"], { input: "", encoding: "utf8", timeout: 30_000 });
		const m = /heap peak chunk (\d+) slot (\d+)/.exec(r.stderr);
		if (!m) throw new Error(`no heap report from the firmware (exit ${r.status}): ${r.stderr.slice(-400)}`);
		return { chunkPeak: Number(m[1]), slotPeak: Number(m[2]) };
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
		console.log(`peak XS heap at the prompt: chunks ${heap.chunkPeak} bytes, slots ${heap.slotPeak} bytes (${heap.chunkPeak + heap.slotPeak} in all)`);
		const device = deviceSize();
		console.log(device
			? `device (esp32/esp32s3, the npm run check:device image): preloaded ${device.preloadedBytes} bytes (${device.slots} instances, ${device.slots * DEVICE_SLOT_BYTES} bytes, and ${device.preloadedCode} bytes of code), plus ${device.moduleCode} bytes of bytecode of the modules not preloaded, in flash; ${device.keys} keys`
			: "device: no image yet: run npm run check:device, then npm run size again");
	}
}
