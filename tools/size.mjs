#!/usr/bin/env node
// Prints the compiled (XS bytecode) size of the app's modules, each
// machine's peak XS heap at the console prompt (main and agent), and the web
// console's pages in the image (their text against WEB_ASSETS_MAX_BYTES, the
// bytecode of the module that holds them, and on the device the flash their
// module takes after npm run check:device). Run after a build: `npm run size`.
//   node tools/size.mjs [--json]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { APP_MAP, ROOT, hostBinary, treeBudgets } from "./build.mjs";
import { DEVICE_SLOT_BYTES, deviceImage, imageFigures } from "./check-device.mjs";

// Bytecode per module, as the host's parser compiles it (code + symbols + hosts).
export function bytecodeSizes() {
	const out = execFileSync(hostBinary(), ["--modules", APP_MAP, "--sizes"], { encoding: "utf8" });
	const rows = out.trim().split("\n").map((line) => line.split("\t"));
	const total = Number(rows.find(([name]) => name === "total")[1]);
	const modules = rows.filter(([name]) => name !== "total").map(([name, size]) => ({ name, bytes: Number(size) }));
	return { modules, total };
}

/** The module that holds the web console's page, style and script (modules/main/channels/web/assets.ts). */
export const WEB_ASSETS_MODULE = "channels/web/assets";

/**
 * The web console's pages in the image: the UTF-8 bytes of the page, its style
 * and its script (as built into build/js), the budget, and the bytecode of
 * their module as the host compiles it (sizes: bytecodeSizes(), asked when not given).
 */
export async function webPagesSize(sizes = bytecodeSizes()) {
	const assets = await import(pathToFileURL(join(ROOT, "build", "js", "modules", "main", "channels", "web", "assets.js")).href);
	const text = {
		html: Buffer.byteLength(assets.PAGE_HTML), css: Buffer.byteLength(assets.STYLE_CSS), js: Buffer.byteLength(assets.APP_JS),
	};
	const module = sizes.modules.find((m) => m.name === WEB_ASSETS_MODULE);
	if (!module) throw new Error(`no ${WEB_ASSETS_MODULE} in the app's bytecode sizes`);
	const image = deviceImage();
	const device = image ? deviceModuleBytes(readFileSync(image, "utf8"), WEB_ASSETS_MODULE) : undefined;
	return { text: { ...text, total: text.html + text.css + text.js }, budget: (await treeBudgets()).WEB_ASSETS_MAX_BYTES, bytecode: module.bytes, device: device ?? null };
}

/** A module's bytecode in the device image (mc.xs.c's script table: code, size, name), undefined when it is not there. */
export function deviceModuleBytes(text, name) {
	const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	const m = new RegExp(`\\(txS1\\*\\)gxCode\\d+, (\\d+), NULL, 0, "${escaped}",`).exec(text);
	return m ? Number(m[1]) : undefined;
}

/** npm run size's line on them. */
export function webPagesLine(web) {
	return `web console pages: ${web.text.total} bytes of text (page ${web.text.html}, style ${web.text.css}, script ${web.text.js}) of WEB_ASSETS_MAX_BYTES ${web.budget}; ${web.bytecode} bytes of bytecode in ${WEB_ASSETS_MODULE}, the strings included; ${web.device === null ? "in the device image: run npm run check:device" : `${web.device} bytes of it in the device image's flash (esp32/esp32s3)`}`;
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
	const web = await webPagesSize(sizes);
	if (process.argv.includes("--json")) {
		console.log(JSON.stringify({ bytecode: sizes, heap, web, device: deviceSize() ?? null }));
	} else {
		for (const { name, bytes } of sizes.modules.sort((a, b) => b.bytes - a.bytes)) console.log(`${String(bytes).padStart(8)}  ${name}`);
		console.log(`${String(sizes.total).padStart(8)}  total bytecode (${sizes.modules.length} modules)`);
		for (const [machine, h] of Object.entries(heap)) {
			console.log(`peak XS heap at the prompt, ${machine} machine: chunks ${h.chunkPeak} bytes, slots ${h.slotPeak} bytes (${h.chunkPeak + h.slotPeak} in all)`);
		}
		console.log(webPagesLine(web));
		const device = deviceSize();
		console.log(device
			? `device (esp32/esp32s3, the npm run check:device image): preloaded ${device.preloadedBytes} bytes (${device.slots} instances, ${device.slots * DEVICE_SLOT_BYTES} bytes, and ${device.preloadedCode} bytes of code), plus ${device.moduleCode} bytes of bytecode of the modules not preloaded, in flash; ${device.keys} keys`
			: "device: no image yet: run npm run check:device, then npm run size again");
	}
}
