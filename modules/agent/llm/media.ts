// llm/media: turns an ImageSource into a PreparedImage for a backend, after the
// profile's checks: no images for a model without vision; only http(s) URLs for
// a model that fetches images itself (image_remote_url_only); local images (files
// under the data directory, or bytes) at most profile.image_max_bytes, of a type
// the providers take (JPEG, PNG, GIF, WebP — recognised by their first bytes).
// Files are read into a buffer from the injected BufferPool (PSRAM on the device);
// the backend base64-encodes them straight into the request body.
import { LlmError, type ImageSource, type ModelProfile, type PreparedImage } from "llm/types";
import type { BufferPool } from "util/buffers";
import type { Directory } from "util/io";

/** Reads files under the data directory (see fileReader for embedded:storage/files). */
export interface ImageFiles {
	/** Size in bytes; throws when the file does not exist. */
	size(path: string): number;
	/** The whole file into a buffer of `size` bytes from the pool. */
	read(path: string, buffers: BufferPool): ArrayBufferLike;
}

/** Images from a files directory (util/io files: the storage root). */
export function fileReader(root: Pick<Directory, "openFile">): ImageFiles {
	return {
		size(path) {
			const file = root.openFile({ path, mode: "r" });
			try {
				return file.status().size;
			} finally {
				file.close();
			}
		},
		read(path, buffers) {
			const file = root.openFile({ path, mode: "r" });
			try {
				const size = file.status().size;
				const buffer = buffers.allocate(size);
				const view = new Uint8Array(buffer, 0, size);
				let at = 0;
				while (at < size) {
					const n = file.read(view.subarray(at), at);
					if (!n) throw new Error(`short read at ${at} of ${size} bytes`);
					at += n;
				}
				return buffer;
			} finally {
				file.close();
			}
		},
	};
}

/** The MIME type of image bytes, or undefined when they are no supported image. */
export function sniffImage(bytes: ArrayBufferLike): string | undefined {
	const b = new Uint8Array(bytes, 0, Math.min(12, bytes.byteLength));
	const at = (i: number, ...values: number[]) => values.every((v, k) => b[i + k] === v);
	if (at(0, 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A)) return "image/png";
	if (at(0, 0xFF, 0xD8, 0xFF)) return "image/jpeg";
	if (at(0, 0x47, 0x49, 0x46, 0x38)) return "image/gif";
	if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp";
	return undefined;
}

const SUPPORTED = ["image/jpeg", "image/png", "image/gif", "image/webp"];

function checkPath(path: string): void {
	if (!path || path.startsWith("/") || path.split(/[\\/]/).some((p) => p === ".." || p === "") || path.includes("\0"))
		throw new LlmError("invalid", `image path "${path}" must be relative to the data directory, without ".." or empty parts`);
}

function kib(n: number): string {
	return `${Math.round(n / 1024)} KiB`;
}

/** Refuses, before anything is sent, an image the profile cannot take: any at all, or a local one. */
export function checkImageUse(profile: ModelProfile, local: boolean): void {
	if (!profile.supports_vision)
		throw new LlmError("unsupported", `the model ${profile.model} cannot see images (llm.supports_vision is false); nothing was sent`);
	if (local && profile.image_remote_url_only)
		throw new LlmError("unsupported", `the model ${profile.model} takes images by http(s) URL only (llm.image_remote_url_only); nothing was sent`);
}

export function prepareImage(
	image: ImageSource,
	profile: ModelProfile,
	files: ImageFiles | undefined,
	buffers: BufferPool,
): PreparedImage {
	checkImageUse(profile, !("url" in image));
	if ("url" in image) {
		if (!/^https?:\/\/\S+$/i.test(image.url)) throw new LlmError("invalid", "an image URL must start with http:// or https://");
		return { url: image.url };
	}
	const tooBig = (size: number) => new LlmError("unsupported", `the image is ${kib(size)}; at most ${kib(profile.image_max_bytes)} can be sent. Use a smaller image.`);
	let bytes: ArrayBufferLike;
	if ("path" in image) {
		checkPath(image.path);
		if (!files) throw new LlmError("unsupported", "reading image files is not available on this build");
		let size: number;
		try {
			size = files.size(image.path);
		} catch {
			throw new LlmError("invalid", `the image ${image.path} cannot be read: check that the file exists in the storage, and its path`);
		}
		if (size > profile.image_max_bytes) throw tooBig(size);
		if (!size) throw new LlmError("invalid", `the image ${image.path} is empty`);
		bytes = files.read(image.path, buffers);
	} else {
		bytes = image.bytes;
		if (bytes.byteLength > profile.image_max_bytes) throw tooBig(bytes.byteLength);
	}
	const mime = ("mime" in image && image.mime) ? image.mime.toLowerCase() : sniffImage(bytes);
	if (!mime || !SUPPORTED.includes(mime)) throw new LlmError("invalid", "the image is not a JPEG, PNG, GIF or WebP file");
	return { mime, bytes };
}
