// A remote tool's result as the model reads it (mcp/client callOutcome): text
// content as it is; an image seen through the vision path (the viewer given:
// llm/runtime inferMedia in the firmware), at most MCP_IMAGES_PER_RESULT_MAX a
// result, its bytes decoded from base64 (util/base64 decode) and said to be not
// shown, with why, when they cannot be seen; other content described in a line.
import { test, assert } from "testing";
import { MCP_IMAGES_PER_RESULT_MAX } from "budgets";
import { callOutcome, type ImageViewer } from "mcp/client";
import { decode, encode } from "util/base64";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

test("base64 decode gives back what encode wrote, padded or not, and refuses what is not base64", () => {
	for (let n = 0; n < 40; n++) {
		const bytes = new Uint8Array(n).map((_, i) => (i * 151 + n * 7) & 0xFF);
		const text = encode(bytes);
		assert.deepEqual(decode(text), bytes, `${n} bytes`);
		assert.deepEqual(decode(text.replace(/=+$/, "")), bytes, `${n} bytes unpadded`);
	}
	assert.equal(decode(PNG).length, 70);
	assert.deepEqual(Array.from(decode(PNG).subarray(0, 4)), [0x89, 0x50, 0x4E, 0x47]);
	for (const bad of ["a", "abcde", "ab=c", "ab cd", "abc===", "é123", "ab\ncd", "ab=", "abc=d"]) {
		assert.throws(() => decode(bad), /^base64: /, RangeError);
	}
	assert.throws(() => decode(encode(new Uint8Array(12)), 11), /more than 11/);
	assert.equal(decode(encode(new Uint8Array(12)), 12).length, 12);
});

test("text is kept; an image is seen through the viewer, with its type and size", async () => {
	const seen: Array<{ size: number; mime: string | undefined; first: number }> = [];
	const viewer: ImageViewer = async (image) => {
		seen.push({ size: image.bytes.length, mime: image.mime, first: image.bytes[0] });
		return "a red LED, lit";
	};
	const outcome = await callOutcome({ content: [{ type: "text", text: "the camera:" }, { type: "image", data: PNG, mimeType: "image/png" }] }, viewer);
	assert.deepEqual(outcome, { content: "the camera:\n[image image/png, 70 bytes, as the vision model sees it: a red LED, lit]" });
	assert.deepEqual(seen, [{ size: 70, mime: "image/png", first: 0x89 }]);
	const error = await callOutcome({ content: [{ type: "image", data: PNG, mimeType: "image/png" }], isError: true }, viewer);
	assert.equal(error.is_error, true);
});

test(`at most ${MCP_IMAGES_PER_RESULT_MAX} images of a result are looked at; bad data, an empty image and a viewer's refusal are said, not thrown`, async () => {
	let calls = 0;
	const viewer: ImageViewer = async () => `picture ${++calls}`;
	const many = Array.from({ length: MCP_IMAGES_PER_RESULT_MAX + 2 }, () => ({ type: "image", data: PNG, mimeType: "image/png" }));
	const lines = (await callOutcome({ content: many }, viewer)).content.split("\n");
	assert.equal(calls, MCP_IMAGES_PER_RESULT_MAX);
	assert.equal(lines.length, many.length);
	assert.match(lines[0], /as the vision model sees it: picture 1\]$/);
	assert.match(lines.at(-1)!, new RegExp(`^\\[image image/png, about 7\\d bytes, not shown: only the first ${MCP_IMAGES_PER_RESULT_MAX} images of a result are looked at\\]$`));

	const bad = await callOutcome({ content: [{ type: "image", data: "not*base64", mimeType: "image/png" }, { type: "image", data: "" }] }, viewer);
	assert.deepEqual(bad.content.split("\n"), [
		"[image image/png, about 7 bytes, not shown: its data is not base64 (character 4 is not in the base64 alphabet)]",
		"[image of unknown type, not shown: it is empty]",
	]);
	const refused = await callOutcome({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }, async () => {
		throw new Error("the model m cannot see images (llm.supports_vision is false); nothing was sent");
	});
	assert.equal(refused.content, "[image image/png, 70 bytes, not shown: the model m cannot see images (llm.supports_vision is false); nothing was sent]");
});

test("without a viewer an image is described; audio, links and resources are described in a line", async () => {
	const outcome = await callOutcome({
		content: [
			{ type: "image", data: PNG, mimeType: "image/png" },
			{ type: "audio", data: "AAAA", mimeType: "audio/wav" },
			{ type: "resource_link", name: "log", uri: "file:///log.txt" },
			{ type: "resource", resource: { uri: "file:///a.txt", text: "inside a" } },
			{ type: "hologram" },
			"not an object",
		],
	});
	assert.deepEqual(outcome.content.split("\n"), [
		"[image image/png, about 72 bytes, not shown]",
		"[audio audio/wav, about 3 bytes, not shown]",
		"[resource log file:///log.txt]",
		"inside a",
		"[hologram content, not shown]",
	]);
	assert.equal((await callOutcome({ structuredContent: { t: 21 } })).content, '{"t":21}');
	assert.equal((await callOutcome({})).content, "(the tool answered with no content)");
});
